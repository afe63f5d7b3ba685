"""Scenarios as data: YAML files validated against `scenarios/schema.json`."""

from harness.scenario._load import (
    ScenarioError,
    clauses,
    load_all,
    load_paths,
    load_scenario,
    scenario_paths,
)
from harness.scenario._model import (
    AgentSpec,
    DirectAsk,
    Expect,
    Fault,
    Phase,
    Scenario,
    TextMatch,
    ToolErrorExpect,
    World,
)

__all__ = [
    "AgentSpec",
    "DirectAsk",
    "Expect",
    "Fault",
    "Phase",
    "Scenario",
    "ScenarioError",
    "TextMatch",
    "ToolErrorExpect",
    "World",
    "clauses",
    "load_all",
    "load_paths",
    "load_scenario",
    "scenario_paths",
]
