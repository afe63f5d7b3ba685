"""The runner: scenarios -> adapter -> observations -> verdicts, with goldens compared.

It knows only the contract: the reference runtime is one adapter among others
(harness.adapters.reference), and the default when none is named."""

from harness.contract import (
    DEFAULT_BACKSTOP,
    LEVELS,
    Observation,
    Wire,
    json_equal,
    portable,
    snapshot_text,
)
from harness.run._diff import Difference, differences
from harness.run._judge import LIVE, RULE, UPSTREAM, Result, judge, summary
from harness.run._loop import Ran, run_loop
from harness.run._runner import compare_golden, effective_guard, run_scenario, run_scenarios

__all__ = [
    "DEFAULT_BACKSTOP",
    "LEVELS",
    "LIVE",
    "RULE",
    "UPSTREAM",
    "Difference",
    "Observation",
    "Ran",
    "Result",
    "Wire",
    "compare_golden",
    "differences",
    "effective_guard",
    "json_equal",
    "judge",
    "portable",
    "run_loop",
    "run_scenario",
    "run_scenarios",
    "snapshot_text",
    "summary",
]
