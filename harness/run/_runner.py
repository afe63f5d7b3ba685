"""Run scenarios on an adapter and judge them: scenario -> adapter -> observation ->
verdict, with the golden snapshot compared. Every runtime goes the same way, the
reference included; this module knows only the contract."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path

from harness.adapters.reference import ReferenceAdapter
from harness.contract import (
    APIS,
    DEFAULT_BACKSTOP,
    Adapter,
    Observation,
    RunOptions,
    Wire,
    is_reference,
    missing_features,
    portable,
)
from harness.run._diff import json_differences, summaries
from harness.run._judge import UPSTREAM, Result, judge
from harness.scenario import DEFAULT_GUARD, Scenario


def effective_guard(scenario: Scenario, requested: str | None) -> str:
    """The caller check a scenario runs under. Its own `guard:` is part of what it means
    (`hang-before-the-fix` is the behaviour before the fix), so it always wins; a requested
    guard (`--guard`) applies to the scenarios that leave theirs at the decision."""
    if scenario.guard != DEFAULT_GUARD:
        return scenario.guard
    return requested or DEFAULT_GUARD


def run_scenario(
    scenario: Scenario,
    *,
    adapter: Adapter | None = None,
    backstop: float = DEFAULT_BACKSTOP,
    guard: str | None = None,
    wire: Wire = Wire(),
    golden: Path | None = None,
    require_golden: bool = False,
    level: str = UPSTREAM,
) -> Result:
    """Run one scenario on `adapter` and judge it (no adapter: a reference runtime of its
    own, closed after the run). `guard` is a requested guard, applied as effective_guard
    says. With `golden` (a snapshots directory), its snapshot is compared too, whenever the
    scenario runs under its own guard (another guard's observation is not what the golden
    pins): all of it for the reference runtime, the portable part for any other; with
    `require_golden`, a scenario that has no snapshot there fails. The result is judged at
    conformance `level` (harness.run._judge: a golden is an upstream-level expectation)."""
    if adapter is None:
        with _reference() as own:
            return run_scenario(
                scenario, adapter=own, backstop=backstop, guard=guard, wire=wire,
                golden=golden, require_golden=require_golden, level=level,
            )  # fmt: skip
    guard = effective_guard(scenario, guard)
    missing = missing_features(adapter, scenario)
    if missing:
        reason = f"{adapter.name} does not run {', '.join(missing)} scenarios"
        skipped = Observation.empty(scenario.id, "skipped", reason)
        return Result(scenario, skipped, "skip", [reason], level=level)
    observation = adapter.run(scenario, RunOptions(backstop, guard, wire))
    result = judge(scenario, observation, level)
    if result.status == "skip" or golden is None or guard != scenario.guard:
        return result
    return compare_golden(result, observation, golden / f"{scenario.id}.json", adapter=adapter,
                          require=require_golden, whole=wire.api == APIS[0])  # fmt: skip


def compare_golden(
    result: Result,
    observation: Observation,
    snapshot: Path,
    *,
    adapter: Adapter,
    require: bool,
    whole: bool = True,
) -> Result:
    """Hold `observation` to its golden `snapshot` file, as run_scenario does (`whole`:
    the reference on the goldens' own API, Chat Completions, is held to all of it)."""
    if not snapshot.is_file():
        result.golden = "missing"
        if require:
            result.add([(UPSTREAM,
                f"no golden snapshot {snapshot}; `harness snapshot {result.scenario.id}` writes "
                "it from the reference runtime"
            )])  # fmt: skip
        return result
    result.golden = "compared"
    expected, observed = json.loads(snapshot.read_text(encoding="utf-8")), observation.snapshot()
    # The goldens are the reference runtime's own: it is held to all of each, durable logs
    # and model prefix included. Any other runtime, and the reference on another API (whose
    # call ids and request bytes are that API's), is held to the portable part.
    if not (whole and is_reference(adapter)):
        expected, observed = portable(expected), portable(observed)
    found = json_differences(expected, observed)
    if found:  # a golden pins upstream's texts: the rule does not look at it
        result.differences = found
        result.add([(UPSTREAM, line) for line in summaries(found)])
    return result


def run_scenarios(
    scenarios: Iterable[Scenario],
    *,
    adapter: Adapter | None = None,
    backstop: float = DEFAULT_BACKSTOP,
    guard: str | None = None,
    wire: Wire = Wire(),
    golden: Path | None = None,
    require_golden: bool = False,
    level: str = UPSTREAM,
) -> Iterator[Result]:
    """run_scenario for each, on one adapter (no adapter: one reference runtime for them
    all, which runs them on one event loop, closed at the end)."""
    if adapter is None:
        with _reference() as own:
            yield from run_scenarios(
                scenarios, adapter=own, backstop=backstop, guard=guard, wire=wire,
                golden=golden, require_golden=require_golden, level=level,
            )  # fmt: skip
        return
    for scenario in scenarios:
        yield run_scenario(
            scenario,
            adapter=adapter,
            backstop=backstop,
            guard=guard,
            wire=wire,
            golden=golden,
            require_golden=require_golden,
            level=level,
        )


def _reference() -> ReferenceAdapter:
    return ReferenceAdapter()
