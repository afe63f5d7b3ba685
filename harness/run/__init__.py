"""The runner: scenario -> world -> run -> observation -> verdict."""

from harness.run._observe import Observation, snapshot_text
from harness.run._runner import (
    DEFAULT_BACKSTOP,
    FROZEN_AT,
    Result,
    judge,
    observe_scenario,
    frozen_time,
    run_scenario,
    run_scenarios,
    summary,
)

__all__ = [
    "DEFAULT_BACKSTOP",
    "FROZEN_AT",
    "Observation",
    "Result",
    "judge",
    "observe_scenario",
    "frozen_time",
    "run_scenario",
    "run_scenarios",
    "snapshot_text",
    "summary",
]
