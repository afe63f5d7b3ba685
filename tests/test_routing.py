"""Header-free routing and delegation dialects in the fake (harness/fake/routing.py and
dialect.py), request by request, as a runtime that sends no X-Harness-Agent would drive it."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from harness.fake import Call, ScriptedLLM, Turn
from harness.fake.dialect import Delegation, DialectError

SESSION = "x-session-id"
UPSTREAM = Delegation(
    "task", {"description": "{name}", "prompt": "{prompt}", "run_in_background": False}
)


def delegate(*children: tuple[str, str]) -> Turn:
    return Turn(calls=tuple(Call("subagent", {"name": n, "prompt": p}) for n, p in children))


def post(
    llm: ScriptedLLM, messages: list[dict[str, Any]], headers: dict[str, str] | None = None
) -> dict[str, Any]:
    request = httpx.Request(
        "POST",
        "http://fake.invalid/v1/chat/completions",
        json={"model": "m", "messages": messages},
        headers=headers or {},
    )
    body: dict[str, Any] = json.loads(llm.respond(request).content)
    return body


def reply(body: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = body["choices"][0]["message"]
    return message


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def tool(call_id: str, text: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def test_parallel_children_are_told_apart_by_their_prompts_in_any_order() -> None:
    llm = ScriptedLLM(
        {
            "parent": [delegate(("a", "Check gpu-pool."), ("b", "Check cpu-pool.")), Turn("done")],
            "a": [Turn("A done")],
            "b": [Turn("B done")],
        }
    )
    first = reply(post(llm, [user("Prepare.")]))
    assert [c["function"]["name"] for c in first["tool_calls"]] == ["subagent", "subagent"]
    # The second child asks first: the prompt decides, not the order of the calls.
    assert reply(post(llm, [user("Check cpu-pool.")]))["content"] == "B done"
    assert reply(post(llm, [user("Check gpu-pool.")]))["content"] == "A done"
    history = [user("Prepare."), first, tool("call_1", "A done"), tool("call_2", "B done")]
    assert reply(post(llm, history))["content"] == "done"
    assert llm.errors == [] and llm.unconsumed() == []


def test_a_grandchild_is_recognised_while_its_parent_waits() -> None:
    llm = ScriptedLLM(
        {
            "root": [delegate(("child", "Roll out.")), Turn("ROOT_DONE")],
            "child": [delegate(("grandchild", "Check CUDA.")), Turn("CHILD_DONE")],
            "grandchild": [Turn("GRANDCHILD_DONE")],
        },
        session_header=SESSION,
    )
    root_call = reply(post(llm, [user("Go.")], {SESSION: "session-1"}))
    child_call = reply(post(llm, [user("Task:\nRoll out.")], {SESSION: "u-2"}))
    done = post(llm, [user("Check CUDA.")], {SESSION: "u-3"})
    assert reply(done)["content"] == "GRANDCHILD_DONE"
    # Known keys keep their agent, whatever the content says.
    history = [user("Task:\nRoll out."), child_call, tool("call_2", "GRANDCHILD_DONE")]
    assert reply(post(llm, history, {SESSION: "u-2"}))["content"] == "CHILD_DONE"
    history = [user("Go."), root_call, tool("call_1", "CHILD_DONE")]
    assert reply(post(llm, history, {SESSION: "session-1"}))["content"] == "ROOT_DONE"
    assert llm.conversations() == {"session-1": "root", "u-2": "child", "u-3": "grandchild"}
    assert llm.errors == []


def test_content_parts_and_wrapped_prompts_are_read() -> None:
    llm = ScriptedLLM({"p": [delegate(("c", "Check the pool."))], "c": [Turn("ok")]})
    post(llm, [user("go")])
    parts = {"role": "user", "content": [{"type": "text", "text": "Your task: Check the pool."}]}
    assert reply(post(llm, [parts]))["content"] == "ok"


def test_without_a_key_a_conversation_is_known_by_the_replies_it_carries() -> None:
    llm = ScriptedLLM({"lead": [Turn("first"), Turn("second")], "other": [Turn("x")]})
    first = reply(post(llm, [user("hello")]))
    # A later request of the same conversation (say, a resumed session) goes on with lead,
    # although a fresh conversation would now be `other`, the next root.
    body = post(llm, [user("hello"), first, user("again")])
    assert reply(body)["content"] == "second"
    assert reply(post(llm, [user("hello")]))["content"] == "x"


def test_a_session_resumed_under_a_new_key_keeps_its_agent() -> None:
    llm = ScriptedLLM({"lead": [Turn("first"), Turn("second")]}, session_header=SESSION)
    first = reply(post(llm, [user("hello")], {SESSION: "old"}))
    assert reply(post(llm, [user("hello"), first, user("more")], {SESSION: "new"}))["content"] == (
        "second"
    )
    assert llm.conversations() == {"old": "lead", "new": "lead"}


def test_two_pending_delegations_with_one_prompt_are_a_named_error_not_a_guess() -> None:
    llm = ScriptedLLM(
        {
            "parent": [delegate(("a", "Check."), ("b", "Check."))],
            "a": [Turn("A")],
            "b": [Turn("B")],
        }
    )
    post(llm, [user("go")])
    body = post(llm, [user("Check.")])
    assert body["error"]["code"] == "ambiguous_delegation"
    assert "pending delegations to a and b ('Check.')" in body["error"]["message"]
    assert "give each delegation a prompt of its own" in body["error"]["message"]
    assert [type(e).__name__ for e in llm.errors] == ["AmbiguousDelegation"]


def test_a_conversation_no_rule_places_is_unroutable_and_says_why() -> None:
    llm = ScriptedLLM({"lead": [Turn("only")]}, session_header=SESSION)
    post(llm, [user("hello")], {SESSION: "k1"})
    body = post(llm, [user("someone else")], {SESSION: "k2"})
    assert body["error"]["code"] == "unroutable_request"
    message = body["error"]["message"]
    assert "x-session-id 'k2'" in message and "'someone else'" in message
    assert "no root phase is left (started: lead)" in message
    assert "\n" not in message


def test_roots_start_in_the_order_given() -> None:
    llm = ScriptedLLM({"a": [Turn("A")], "b": [Turn("B")]}, roots=["b", "a"])
    assert reply(post(llm, [user("1")]))["content"] == "B"
    assert reply(post(llm, [user("2")]))["content"] == "A"


def test_the_agent_header_still_wins() -> None:
    llm = ScriptedLLM({"a": [Turn("A")], "b": [Turn("B")]})
    assert reply(post(llm, [user("x")], {"X-Harness-Agent": "b"}))["content"] == "B"


def test_a_delegation_is_spelled_in_the_runtimes_dialect() -> None:
    scripted = {"name": "child", "prompt": "Literal {name} stays."}
    llm = ScriptedLLM(
        {"p": [Turn(calls=(Call("subagent", scripted, "d"),)), Turn("{{d.result}}")], "child": []},
        delegation=UPSTREAM,
    )
    (call,) = reply(post(llm, [user("go")]))["tool_calls"]
    assert call["function"]["name"] == "task"
    assert json.loads(call["function"]["arguments"]) == {
        "description": "child",
        "prompt": "Literal {name} stays.",
        "run_in_background": False,
    }
    # Templates still read the scripted arguments and the runtime's result.
    history = [user("go"), {"role": "assistant", "tool_calls": [call]}, tool(call["id"], "R")]
    assert reply(post(llm, history, {"X-Harness-Agent": "p"}))["content"] == "R"


def test_a_delegation_the_dialect_cannot_spell_is_malformed_arguments() -> None:
    llm = ScriptedLLM({"p": [Turn(calls=(Call("subagent", {"name": 3}),))]}, delegation=UPSTREAM)
    body = post(llm, [user("go")])
    assert body["error"]["code"] == "malformed_arguments"
    assert "needs a string name and prompt to be spelled as this runtime's task" in str(body)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ([], "write {tool: NAME, arguments: {...}}"),
        ({"tool": ""}, ".tool: the runtime's tool name, a string"),
        ({"arguments": []}, ".arguments: a JSON object template"),
        ({"arguments": {"description": "{name}"}}, "no string carries {prompt}"),
        ({"tool": "t", "extra": 1}, "write {tool: NAME"),
    ],
)
def test_a_bad_dialect_is_refused_by_name(value: Any, message: str) -> None:
    with pytest.raises(DialectError) as info:
        Delegation.from_json(value, "where")
    assert str(info.value).startswith("where") and message in str(info.value)


def test_a_dialect_round_trips_through_json() -> None:
    assert Delegation.from_json(UPSTREAM.to_json(), "x") == UPSTREAM
    assert Delegation.from_json({"tool": "subagent"}, "x") == Delegation()
