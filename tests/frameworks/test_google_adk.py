"""Google ADK under test, in-process, two ways: each child an AgentTool, whose pause is lost
(google/adk-python #7245), and each a single-turn sub-agent, whose pause reaches the host."""

from __future__ import annotations

import pytest

from harness.adapters import open_adapter
from harness.contract import RunOptions
from harness.run import LIVE, RULE, UPSTREAM, judge
from tests.conftest import SCENARIOS


@pytest.fixture(scope="module", params=["google-adk", "google-adk-single-turn"])
def adk(request: pytest.FixtureRequest) -> object:
    return open_adapter(request.param)


def test_an_agent_tools_pause_is_lost_and_a_single_turn_childs_reaches_the_host(
    adk: object,
) -> None:
    scenario = SCENARIOS["delegated-question-handoff"]
    observed = adk.run(scenario, RunOptions())  # type: ignore[attr-defined]
    assert (observed.outcome, observed.tool_errors) == ("completed", [])
    (handoff,) = observed.handoffs
    if adk.name == "google-adk":  # type: ignore[attr-defined]
        assert observed.asked == []
        assert "stopped waiting on unresolved long-running tool call(s)" in handoff["tool_result"]
        assert handoff["child_final"] is None  # the child never ran again
        assert judge(scenario, observed, LIVE).status != "pass"  # the script is left unfinished
    else:
        assert [a["caller"] for a in observed.asked] == ["child"]
        assert handoff["tool_result"] == "UNRESOLVED: Should deployment use the CUDA fallback?"
        assert judge(scenario, observed, RULE).held == LIVE


def test_children_with_dashed_names_are_agents_named_as_identifiers(adk: object) -> None:
    observed = adk.run(SCENARIOS["parallel-children-refused"], RunOptions())  # type: ignore[attr-defined]
    assert (
        sorted(h["child"] for h in observed.handoffs)
        == ["child-a", "child-b"][: len(observed.handoffs)]
    )
    if adk.name == "google-adk-single-turn":  # type: ignore[attr-defined]
        # Two pauses at once: the second child is resumed with its call unanswered.
        assert observed.outcome == "error" and "INVALID_ARGUMENT" in str(observed.error)
        assert [a["caller"] for a in observed.asked] == ["child-a", "child-b"]


def test_a_roots_pause_is_answered_and_holds_upstream(adk: object) -> None:
    scenario = SCENARIOS["live-root-answered"]
    observed = adk.run(scenario, RunOptions())  # type: ignore[attr-defined]
    result = judge(scenario, observed, UPSTREAM)
    assert (result.status, result.held) == ("pass", UPSTREAM), result.mismatches
