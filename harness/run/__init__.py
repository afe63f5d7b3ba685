"""The runner: scenario -> world -> run -> observation -> verdict."""

from harness._seam import DEFAULT_BACKSTOP, Wire
from harness.run._judge import Result, judge, summary
from harness.run._observe import Observation, differences, portable, snapshot_text
from harness.run._runner import (
    FROZEN_AT,
    batch,
    observe_scenario,
    run_scenario,
    run_scenarios,
)

__all__ = [
    "DEFAULT_BACKSTOP",
    "FROZEN_AT",
    "Observation",
    "Result",
    "Wire",
    "batch",
    "differences",
    "judge",
    "observe_scenario",
    "portable",
    "run_scenario",
    "run_scenarios",
    "snapshot_text",
    "summary",
]
