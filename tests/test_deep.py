"""A delegation chain 1,000 agents deep runs to completion, and its depth costs no stack:
each child runs as a task of its own (harness.runtime.core.Runtime.delegate), so the
chain nests tasks, not one coroutine frame per level."""

from __future__ import annotations

import sys

import pytest

from benchmarks._generated import tree
from harness.run import run_scenario

# Stack the run needs whatever its depth: pytest's frames, the runner, the event loop, one
# agent's tool call and its model request. A chain awaited inline needed five frames a level,
# over 5,000 for this one.
HEADROOM = 400


@pytest.fixture
def shallow_stack() -> object:
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(HEADROOM)
    try:
        yield
    finally:
        sys.setrecursionlimit(before)


@pytest.mark.usefixtures("shallow_stack")
def test_a_chain_1000_deep_completes_on_a_shallow_stack() -> None:
    result = run_scenario(tree(1, 1000))
    assert result.status == "pass", result.mismatches[:3]
    assert result.observation.tool_errors[0]["agent"] == "n1000"
    assert [h["child"] for h in result.observation.handoffs][:2] == ["n1000", "n999"]
