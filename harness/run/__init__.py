"""The runner: scenario -> world -> run -> observation -> verdict."""

from harness._seam import DEFAULT_BACKSTOP, Wire
from harness.run._diff import Difference, differences, json_equal
from harness.run._judge import Result, judge, summary
from harness.run._observe import Observation, portable, snapshot_text
from harness.run._runner import (
    FROZEN_AT,
    batch,
    effective_guard,
    observe_scenario,
    run_scenario,
    run_scenarios,
)

__all__ = [
    "DEFAULT_BACKSTOP",
    "FROZEN_AT",
    "Difference",
    "Observation",
    "Result",
    "Wire",
    "batch",
    "differences",
    "effective_guard",
    "json_equal",
    "judge",
    "observe_scenario",
    "portable",
    "run_scenario",
    "run_scenarios",
    "snapshot_text",
    "summary",
]
