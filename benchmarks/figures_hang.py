"""Figure 4, hang-detection latency: from the moment the delegation's last runnable step
parks in the answerer to the run's report, for the harness's deadlock detector and for a
1 s wall-clock timeout."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from benchmarks._measure import Stats, now
from benchmarks._report import Check, Section, num
from benchmarks.figures_delegation import scenario
from harness.adapters.reference import ReferenceAdapter
from harness.adapters.reference.answerers import Tripwire, Unreachable
from harness.adapters.reference.batch import batch
from harness.run import run_scenario
from harness.runtime.questions import Answer, AskUserQuestionRequest
from harness.scenario import Scenario

REACHED: list[float] = []  # when an answerer was last reached, on the real clock


@contextmanager
def stamped(*classes: type[Tripwire] | type[Unreachable]) -> Iterator[None]:
    """Record the moment each answerer is reached: its answer() is the last step that runs
    before the run can only hang."""
    originals = {cls: cls.answer for cls in classes}

    def wrap(cls: type[Tripwire] | type[Unreachable]) -> Any:
        original = originals[cls]

        async def answer(self: Tripwire, request: AskUserQuestionRequest) -> Sequence[Answer]:
            REACHED.append(now())
            return await original(self, request)  # type: ignore[arg-type]

        return answer

    try:
        for cls in classes:
            cls.answer = wrap(cls)  # type: ignore[method-assign]
        yield
    finally:
        for cls, original in originals.items():
            cls.answer = original  # type: ignore[method-assign]


def detector(sc: Scenario, guard: str | None, runs: int) -> tuple[Stats, Stats]:
    """Wall time of run_scenario, and time from the answerer being reached to its return."""
    walls, latencies = [], []
    with batch(), stamped(Tripwire, Unreachable):
        for _ in range(runs + 2):  # the first two warm up
            REACHED.clear()
            start = now()
            result = run_scenario(sc, guard=guard)
            end = now()
            if result.observation.outcome != "hang" or len(REACHED) != 1:
                raise AssertionError(f"{sc.id}: expected a hang, got {result.observation.error}")
            walls.append(end - start)
            latencies.append(end - REACHED[0])
    return Stats.of(walls[2:]), Stats.of(latencies[2:])


def timeout_detector(sc: Scenario, timeout: float, runs: int) -> tuple[Stats, Stats]:
    """The same run without the deadlock detector (`detector=False`): only the backstop, a
    wall-clock timeout, can end the hang."""
    walls, latencies = [], []
    with batch(), stamped(Tripwire):
        for _ in range(runs):
            REACHED.clear()
            start = now()
            result = run_scenario(
                sc, guard="none", backstop=timeout, adapter=ReferenceAdapter(detector=False)
            )
            end = now()
            if not (result.observation.error or "").startswith("backstop:"):
                raise AssertionError(f"{sc.id}: expected the backstop, got {result.observation}")
            walls.append(end - start)
            latencies.append(end - REACHED[0])
    return Stats.of(walls), Stats.of(latencies)


def measure(*, quick: bool, repeats: int, timeout_runs: int) -> Section:
    zero, before = scenario(), scenario("hang-before-the-fix")
    runs = 5 if quick else repeats
    timeout = 0.1 if quick else 1.0
    zero_wall, zero_latency = detector(zero, "none", runs)
    before_wall, before_latency = detector(before, None, runs)
    slow_wall, slow_latency = timeout_detector(zero, timeout, 1 if quick else timeout_runs)
    section = Section(
        "4. Hang-detection latency",
        "Under guard `none` the child's question reaches the answerer, which never answers: "
        "nothing can run any more. Latency is from the answerer's `answer()` being entered "
        "(timestamped by wrapping `Tripwire.answer` / `Unreachable.answer`; the last runnable "
        "step) to `run_scenario` returning its report (hang detected, tasks cancelled, "
        "observation read back, judged). Runs: `zero-depth-live-child` with "
        "`guard='none'` (tripwire answerer) and `hang-before-the-fix` (unreachable answerer). "
        "Comparison: the same run of `zero-depth-live-child` under guard `none` with "
        f"`detector=False` and `backstop={timeout:g}`: a plain event loop, where only the "
        "wall-clock backstop ends the hang.",
    )
    section.stats_table(
        [
            ("zero-depth-live-child, guard none: latency", zero_latency),
            ("zero-depth-live-child, guard none: whole run", zero_wall),
            ("hang-before-the-fix: latency", before_latency),
            ("hang-before-the-fix: whole run", before_wall),
            (f"backstop ({timeout:g} s), no detector: latency", slow_latency),
            (f"backstop ({timeout:g} s), no detector: whole run", slow_wall),
        ]
    )
    shown = f"{num(zero_latency.median * 1e3)} ms"
    section.checks.append(
        Check("4 hang-detection latency (zero-depth-live-child, guard none)",
              zero_latency.median, 0.050, shown, "<= 50 ms")
    )  # fmt: skip
    section.ratios += [
        (f"backstop ({timeout:g} s), no detector / deadlock detector (latency)",
         slow_latency.median / zero_latency.median),
        ("hang-before-the-fix / zero-depth guard none (latency)",
         before_latency.median / zero_latency.median),
    ]  # fmt: skip
    if quick:
        section.notes.append(f"--quick: a {timeout:g} s timeout instead of 1 s")
    return section
