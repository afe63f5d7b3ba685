"""LangGraph with deepagents under test, in-process: a root made with create_deep_agent, its
children deepagents subagents reached by the `task` tool, the human channel LangGraph's
interrupt(). A child's interrupt surfaces at the top of the graph and the harness, as the
host, resumes it: the rule is broken and `live` held."""

from __future__ import annotations

import pytest

from harness.adapters import open_adapter
from harness.adapters.frameworks.adapter import DECLINED
from harness.contract import RunOptions
from harness.run import LIVE, RULE, UPSTREAM, judge
from tests.conftest import SCENARIOS


@pytest.fixture(scope="module")
def graph() -> object:
    return open_adapter("deepagents")


def test_a_childs_interrupt_reaches_the_host_who_resumes_it_declined(graph: object) -> None:
    scenario = SCENARIOS["delegated-question-handoff"]
    observed = graph.run(scenario, RunOptions())  # type: ignore[attr-defined]
    assert (observed.outcome, observed.answerer_calls, observed.tool_errors) == ("completed", 1, [])
    assert [call["caller"] for call in observed.asked] == ["child"]
    (handoff,) = observed.handoffs
    assert handoff["tool_result"] == "UNRESOLVED: Should deployment use the CUDA fallback?"
    assert judge(scenario, observed, LIVE).status == "pass"
    assert judge(scenario, observed, RULE).held == LIVE


def test_the_child_reads_what_the_host_resumed_it_with(graph: object) -> None:
    from harness.adapters.frameworks.adapter import answered

    # No scripted answer: the host's refusal; a scripted human's: upstream's answers text.
    assert answered(SCENARIOS["delegated-question-handoff"], [{"id": "cuda-fallback"}]) is None
    text = answered(SCENARIOS["live-root-answered"], [{"id": "cuda-fallback"}])
    assert text == '{"answers":[{"id":"cuda-fallback","selected":["No"]}]}'
    assert DECLINED.startswith("The user was not asked")


def test_a_roots_interrupt_is_answered_and_holds_upstream(graph: object) -> None:
    scenario = SCENARIOS["live-root-answered"]
    observed = graph.run(scenario, RunOptions())  # type: ignore[attr-defined]
    result = judge(scenario, observed, UPSTREAM)
    assert (result.status, result.held) == ("pass", UPSTREAM), result.mismatches


def test_a_child_that_delegates_again_is_skipped_with_why(graph: object) -> None:
    observed = graph.run(SCENARIOS["grandchild-refused"], RunOptions())  # type: ignore[attr-defined]
    assert observed.outcome == "skipped"
    assert "deepagents gives its subagents no task tool" in str(observed.error)
