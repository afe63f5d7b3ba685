"""Pydantic AI under test, in-process: a root's approval reaches the host; a child's is
lost, by a crash of the whole run (children typed str) or in silence (children typed
[str, DeferredToolRequests])."""

from __future__ import annotations

import pytest

from harness.adapters import open_adapter
from harness.contract import RunOptions
from harness.run import LIVE, UPSTREAM, judge
from tests.conftest import SCENARIOS


@pytest.fixture(scope="module", params=["pydantic-ai", "pydantic-ai-deferred"])
def pai(request: pytest.FixtureRequest) -> object:
    return open_adapter(request.param)


def test_a_childs_approval_is_lost_by_a_crash_or_in_silence(pai: object) -> None:
    scenario = SCENARIOS["delegated-question-handoff"]
    observed = pai.run(scenario, RunOptions())  # type: ignore[attr-defined]
    assert observed.asked == [] and observed.tool_errors == []
    if pai.name == "pydantic-ai":  # type: ignore[attr-defined]
        assert observed.outcome == "error"
        assert str(observed.error).startswith("UserError: A deferred tool call was present")
    else:
        assert observed.outcome == "completed"
        (handoff,) = observed.handoffs
        assert '"tool_name":"ask_user_question"' in handoff["tool_result"]  # the pending call
        assert handoff["child_final"] is None
    assert judge(scenario, observed, LIVE).status != "pass"


def test_a_roots_approval_is_answered_and_holds_upstream(pai: object) -> None:
    scenario = SCENARIOS["live-root-answered"]
    observed = pai.run(scenario, RunOptions())  # type: ignore[attr-defined]
    result = judge(scenario, observed, UPSTREAM)
    assert (result.status, result.held) == ("pass", UPSTREAM), result.mismatches
