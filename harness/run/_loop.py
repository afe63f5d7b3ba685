"""The one run loop: the chosen scenarios on one adapter, each judged against its own
expectations and its golden snapshot (run_scenario), then read against the adapter's known
failures. `harness run`, `harness report`, `harness snapshot` and the pytest plugin's
`harness_run` fixture all go through it, so they judge alike."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from harness.adapters import Expectations
from harness.contract import Adapter, RunOptions
from harness.run._judge import UPSTREAM, Result
from harness.run._runner import run_scenario
from harness.scenario import Scenario

# The real clock, for the results' timings, out of reach of a test that freezes time with
# freezegun (it swaps every module attribute that is a clock function, not a dict's value).
_REAL = {"clock": time.perf_counter}


@dataclass(frozen=True)
class Ran:
    """One scenario's result as the known-failures file reads it: its label (`PASS`,
    `KNOWN FAIL`, `NEW FAIL`, ...), whether that is acceptable, and the real seconds it
    took (scenario time is frozen; this is not)."""

    result: Result
    label: str
    acceptable: bool
    seconds: float


def run_loop(
    scenarios: Iterable[Scenario],
    adapter: Adapter,
    options: RunOptions | None = None,
    *,
    golden: Path | None = None,
    require_golden: bool = False,
    expectations: Expectations | None = None,
    level: str = UPSTREAM,
) -> Iterator[Ran]:
    """Run each scenario on `adapter`, in order, and yield it judged.

    `options` are the run's backstop, requested guard (applied as effective_guard
    says) and wire. With `golden` (a snapshots directory) each observation is compared with
    its golden snapshot; with `require_golden`, a scenario without one fails. Each result
    is labelled by `expectations` (none: only a pass or a skip is acceptable). The adapter
    is the caller's: opened before, closed after, by whoever opened it. Each is judged at
    conformance `level`: `rule` or `upstream` (harness.run._judge)."""
    options = RunOptions() if options is None else options
    known = Expectations.none() if expectations is None else expectations
    clock = _REAL["clock"]
    for scenario in scenarios:
        began = clock()
        result = run_scenario(
            scenario,
            adapter=adapter,
            backstop=options.backstop,
            guard=options.guard,
            wire=options.wire,
            golden=golden,
            require_golden=require_golden,
            level=level,
        )
        label, acceptable = known.verdict(scenario.id, result.status, level)
        yield Ran(result, label, acceptable, clock() - began)
