"""The guard changes only the appended tool result: the model-visible prefix (system prompt
and tool schemas) is byte-identical with and without it, so KV-cache prefixes stay
reusable."""

from __future__ import annotations

import dataclasses
import json

from harness.adapters.reference.phases import observe_scenario
from harness.fake import CapturedRequest
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


def test_the_prefix_log_tells_tool_lists_apart_by_their_json_values() -> None:
    # Python's == takes true for 1 and 1 for 1.0; a KV cache does not, and neither may the
    # summary (its fast path compares marshal's type-exact encoding; a process-wide cache
    # of it must not leak one list's key to another).
    from harness.fake.record import PrefixLog

    def tools(strict: object) -> list[dict[str, object]]:
        return [{"type": "function", "function": {"name": "t", "strict": strict}}]

    def body(strict: object) -> dict[str, object]:
        return {"messages": [{"role": "system", "content": "p"}], "tools": tools(strict)}

    for a, b in [(True, 1), (1, 1.0), (False, 0), (True, "true")]:
        log = PrefixLog()
        log.add("x", body(a))
        log.add("y", body(b))
        assert log.summary()["tools"] == {"x": tools(a), "y": tools(b)}, (a, b)
        assert [type(t[0]["function"]["strict"]) for t in log.summary()["tools"].values()] == [
            type(a),
            type(b),
        ]
    same = PrefixLog()
    same.add("x", body(True))
    same.add("y", json.loads(json.dumps(body(True))))  # the same list, parsed anew
    assert same.summary() == {"system": {"x": "p", "y": "p"}, "tools": tools(True)}
    # Key order is not a difference: the canonical encoding sorts keys.
    same.add("z", {"messages": [], "tools": [{"function": {"strict": True, "name": "t"},
                                              "type": "function"}]})  # fmt: skip
    assert same.summary()["tools"] == tools(True)
