"""Every scenario in scenarios/: its expectations hold, and its observation matches the
golden snapshot byte for byte."""

from __future__ import annotations

from typing import Any

from harness.run import Wire, run_scenario
from harness.scenario import Scenario


def test_expectations(scenario: Scenario, harness_guard: str | None, wire: Wire) -> None:
    result = run_scenario(scenario, guard=harness_guard, wire=wire)
    assert result.status == "pass", "\n".join(result.mismatches)


def test_snapshot(
    scenario: Scenario, scenario_snapshot: Any, harness_guard: str | None, wire: Wire
) -> None:
    observation = run_scenario(scenario, guard=harness_guard, wire=wire).observation
    assert observation.snapshot() == scenario_snapshot
