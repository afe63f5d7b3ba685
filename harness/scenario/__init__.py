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
    DEFAULT_GUARD,
    FEATURES,
    AgentSpec,
    AskedExpect,
    DirectAsk,
    DirectExpect,
    Expect,
    Fault,
    Phase,
    Scenario,
    TextMatch,
    ToolErrorExpect,
    World,
)
from harness.scenario._turn import Call, Turn
from harness.scenario._version import scenarios_version

__all__ = [
    "DEFAULT_GUARD",
    "FEATURES",
    "AgentSpec",
    "AskedExpect",
    "Call",
    "DirectAsk",
    "DirectExpect",
    "Expect",
    "Fault",
    "Phase",
    "Scenario",
    "ScenarioError",
    "TextMatch",
    "ToolErrorExpect",
    "Turn",
    "World",
    "clauses",
    "load_all",
    "load_paths",
    "load_scenario",
    "scenario_paths",
    "scenarios_version",
]
