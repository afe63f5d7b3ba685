"""A delegation chain 1,000 agents deep runs to completion: the runner gives the runtime's
recursive delegation path the stack it needs (harness.run._runner.stack_budget)."""

from __future__ import annotations

import sys

from benchmarks._generated import tree
from harness.run import run_scenario
from harness.run._runner import FRAMES_PER_LEVEL, delegation_depth


def test_a_chain_1000_deep_completes_and_the_limit_is_put_back() -> None:
    chain = tree(1, 1000)
    assert delegation_depth(chain) == 1000
    before = sys.getrecursionlimit()
    result = run_scenario(chain)
    assert result.status == "pass", result.mismatches[:3]
    assert result.observation.tool_errors[0]["agent"] == "n1000"
    assert sys.getrecursionlimit() == before


def test_the_budget_is_what_the_chain_needs() -> None:
    # Measured 5.1-5.5 frames per level; a budget under that would not hold.
    assert FRAMES_PER_LEVEL >= 6
    assert delegation_depth(tree(3, 2)) == 2 and delegation_depth(tree(1, 0)) == 0
