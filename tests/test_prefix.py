"""The guard changes only the appended tool result: the model-visible prefix (system prompt
and tool schemas) is byte-identical with and without it, so KV-cache prefixes stay
reusable."""

from __future__ import annotations

import dataclasses
import json

from harness.fake import CapturedRequest
from harness.run import observe_scenario
from harness.runtime.questions import Answer
from harness.scenario import World
from harness.scenario._model import Reply
from tests.conftest import SCENARIOS


def child_requests(guarded: bool) -> list[CapturedRequest]:
    scenario = SCENARIOS["zero-depth-live-child"]
    if not guarded:
        # Without the guard the question reaches the human; a scripted one answers, so the
        # unguarded run completes instead of hanging.
        answers = {"cuda-fallback": Reply((Answer("cuda-fallback", ("Yes",)),))}
        scenario = dataclasses.replace(scenario, world=World(answerer="scripted", answers=answers))
    observation = observe_scenario(scenario, guard=None if guarded else "none")
    assert observation.outcome == "completed"
    assert observation.answerer_calls == (0 if guarded else 1)
    return [r for r in observation.requests if r.agent == "child"]


def test_prefix_is_byte_identical_with_and_without_the_guard() -> None:
    guarded, unguarded = child_requests(True), child_requests(False)
    assert len(guarded) == len(unguarded) == 2
    # The child's first request is the same bytes exactly: same system prompt, same tools.
    assert guarded[0].raw == unguarded[0].raw
    system = guarded[0].body["messages"][0]
    assert system["role"] == "system" and "delegated a task to you" in system["content"]
    names = [t["function"]["name"] for t in guarded[0].body["tools"]]
    assert names == ["ask_user_question", "exit_plan_mode", "subagent"]


def test_next_request_differs_only_in_the_appended_tool_result() -> None:
    guarded, unguarded = child_requests(True)[1].body, child_requests(False)[1].body
    *g_prefix, g_last = guarded["messages"]
    *u_prefix, u_last = unguarded["messages"]
    assert json.dumps(g_prefix) == json.dumps(u_prefix)
    assert {k: v for k, v in guarded.items() if k != "messages"} == {
        k: v for k, v in unguarded.items() if k != "messages"
    }
    assert g_last["role"] == u_last["role"] == "tool"
    assert g_last["tool_call_id"] == u_last["tool_call_id"]
    assert g_last["content"].startswith("Error: human interaction is unavailable")
    assert u_last["content"] == '{"answers":[{"id":"cuda-fallback","selected":["Yes"]}]}'


def test_snapshots_pin_the_prefix() -> None:
    observation = observe_scenario(SCENARIOS["delegated-question-handoff"])
    prefix = observation.snapshot()["model_prefix"]
    assert set(prefix["system"]) == {"parent", "child"}
    assert isinstance(prefix["tools"], list)  # one list: every request carried the same tools
