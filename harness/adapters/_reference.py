"""The reference runtime (harness.runtime) as an adapter: the one every other is compared with."""

from __future__ import annotations

import platform
from pathlib import Path
from typing import TYPE_CHECKING

from harness._seam import RunOptions

if TYPE_CHECKING:
    from harness.run import Observation
    from harness.scenario import Scenario


class ReferenceAdapter:
    name = "reference"
    features: frozenset[str] | None = None  # it runs every feature
    expectations: Path | None = None  # and is expected to pass them all
    reference = True  # the golden snapshots are this runtime's own: held to all of each
    runtime = (
        f"keyless-harness reference runtime (harness.runtime) on Python {platform.python_version()}"
    )

    def run(self, scenario: Scenario, options: RunOptions) -> Observation:
        from harness.run import observe_scenario

        return observe_scenario(
            scenario, backstop=options.backstop, guard=options.guard, wire=options.wire
        )

    def close(self) -> None:
        """Nothing to release: every run builds and tears down its own world."""
