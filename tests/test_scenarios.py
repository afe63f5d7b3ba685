"""Every scenario in scenarios/, on the runtime under test (`--harness-adapter`, default the
reference runtime): its expectations hold, and its observation matches the golden snapshot,
byte for byte for the reference, in its portable part for any other runtime.

Each runs through the plugin's `harness_run`, the run loop `harness run` uses. A scenario
needing a feature the adapter lacks is skipped, with the feature named; one its
known-failures file lists is a strict xfail, so a fix there (a NEW PASS) fails the run too.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.adapters import Adapter, Expectations, ReferenceAdapter
from harness.run import UPSTREAM, Ran, Result, Wire, differences, portable
from harness.scenario import Scenario

# One run per scenario, guard, wire and adapter, shared by the two tests that judge it: the
# run is deterministic (tests/test_runner.py pins 50 repeats to the same bytes), so running
# it twice would only double the suite's time. Keyed by the code under test too: mutmut
# forks each mutant's test run from a process that has already filled this cache, and names
# the mutant in MUTANT_UNDER_TEST; a run cached for other code must not judge this one.
# mutmut's first pass ("stats") records which tests execute which runtime functions, and
# runs only those tests against each mutant; a cached run would credit the code to the
# first test alone, so that pass never shares a run.
_RUNS: dict[tuple[str, str | None, Wire, int, str], Ran] = {}


def run(
    request: pytest.FixtureRequest,
    scenario: Scenario,
    harness_run: Callable[..., Ran],
    adapter: Adapter,
    expectations: Expectations,
    guard: str | None,
    wire: Wire,
) -> Result:
    under_test = os.environ.get("MUTANT_UNDER_TEST", "")
    key = (scenario.id, guard, wire, id(adapter), under_test)
    if key not in _RUNS or under_test == "stats":
        _RUNS[key] = harness_run(scenario, wire)
    result = _RUNS[key].result
    if result.status == "skip":
        pytest.skip(result.mismatches[0])  # a feature this runtime does not have, by design
    reason = expectations.reason(scenario.id, result.level)
    if reason is not None:
        request.applymarker(pytest.mark.xfail(reason=reason, strict=True))
    return result


def test_expectations(
    request: pytest.FixtureRequest,
    scenario: Scenario,
    harness_run: Callable[..., Ran],
    harness_adapter: Adapter,
    harness_expectations: Expectations,
    harness_guard: str | None,
    wire: Wire,
) -> None:
    result = run(
        request, scenario, harness_run, harness_adapter, harness_expectations, harness_guard, wire
    )
    assert result.status == "pass", "\n".join(result.mismatches)


def test_snapshot(
    request: pytest.FixtureRequest,
    scenario: Scenario,
    harness_snapshot_dir: Path,
    harness_run: Callable[..., Ran],
    harness_adapter: Adapter,
    harness_expectations: Expectations,
    harness_guard: str | None,
    wire: Wire,
) -> None:
    result = run(
        request, scenario, harness_run, harness_adapter, harness_expectations, harness_guard, wire
    )
    observed = result.observation.snapshot()
    if isinstance(harness_adapter, ReferenceAdapter):
        # Requested only here, where syrupy compares: a test that sets scenario_snapshot up
        # and compares nothing fails the run with that golden reported unused.
        assert observed == request.getfixturevalue("scenario_snapshot")
        return
    if result.level != UPSTREAM:  # as `harness run --level rule`: compared, not gated
        pytest.skip(
            f"the golden snapshot is an upstream-level expectation; gating on {result.level}"
        )
    golden = json.loads((harness_snapshot_dir / f"{scenario.id}.json").read_text("utf-8"))
    found = differences(portable(golden), portable(observed), limit=20)
    assert not found, "\n".join(found)
