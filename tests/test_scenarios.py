"""Every scenario in scenarios/: its expectations hold, and its observation matches the
golden snapshot byte for byte."""

from __future__ import annotations

from typing import Any

from harness.run import run_scenario
from harness.scenario import Scenario


def test_expectations(scenario: Scenario) -> None:
    result = run_scenario(scenario)
    assert result.status == "pass", "\n".join(result.mismatches)


def test_snapshot(scenario: Scenario, scenario_snapshot: Any) -> None:
    assert run_scenario(scenario).observation.snapshot() == scenario_snapshot
