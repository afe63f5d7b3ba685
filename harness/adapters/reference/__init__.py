"""The reference runtime (harness.runtime) as an adapter: the one every other is compared
with, and whose observations the golden snapshots are.

It builds each scenario's world around the runtime (the scripted fake, the human end, the
durable store, the guard and faults composed from outside), runs the phases on an event
loop that detects deadlocks, and reads the observation back from the durable logs. Its
modules are imported on first run: naming the adapter costs nothing.
"""

from __future__ import annotations

import platform
from pathlib import Path
from typing import TYPE_CHECKING

from harness.contract import Observation, RunOptions

if TYPE_CHECKING:
    from harness.adapters.reference.batch import Batch
    from harness.scenario import Scenario


class ReferenceAdapter:
    """`detector=False` runs each scenario on a plain event loop: a hang is then found by
    the backstop alone, as it would be without this harness.

    The scenarios it runs share one event loop per detector setting (a batch), made at
    the first run and closed by close(): a loop costs more to make than a small scenario
    to run. Between runs nothing of it is left on the thread (no current batch, no Ctrl-C
    handler)."""

    name = "reference"
    features: frozenset[str] | None = None  # it runs every feature
    expectations: Path | None = None  # and is expected to pass them all
    reference = True  # the golden snapshots are this runtime's own: held to all of each
    runtime = (
        f"keyless-harness reference runtime (harness.runtime) on Python {platform.python_version()}"
    )

    def __init__(self, *, detector: bool = True) -> None:
        self.detector = detector
        self._batch: Batch | None = None

    def run(self, scenario: Scenario, options: RunOptions) -> Observation:
        from harness.adapters.reference.batch import Batch
        from harness.adapters.reference.phases import observe_scenario

        if self._batch is None:
            self._batch = Batch()
        with self._batch.entered():
            return observe_scenario(
                scenario,
                backstop=options.backstop,
                guard=options.guard,
                wire=options.wire,
                detector=self.detector,
            )

    def close(self) -> None:
        """Close the batch's event loops. Idempotent; a later run opens a new batch."""
        if self._batch is not None:
            batch, self._batch = self._batch, None
            batch.close()

    def __enter__(self) -> ReferenceAdapter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
