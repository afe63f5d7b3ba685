"""The fake refuses, as a real Chat Completions API would, a conversation a runtime garbled."""

from __future__ import annotations

from typing import Any

import pytest

from harness.fake.request import conversation_problem


def call(call_id: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": "t", "arguments": "{}"}}


USER = {"role": "user", "content": "go"}
CALLS = {"role": "assistant", "content": None, "tool_calls": [call("c1"), call("c2")]}


def result(call_id: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": "r"}


def test_a_well_formed_conversation_passes() -> None:
    system = {"role": "system", "content": "s"}
    assert conversation_problem([system, USER, CALLS, result("c1"), result("c2"), USER]) is None


@pytest.mark.parametrize(
    ("messages", "problem"),
    [
        ([], "the request has no messages; send at least the task as a user message"),
        (["hi"], "message 0 is not an object"),
        (
            [{"role": "robot", "content": "x"}],
            "message 0 has role 'robot'; a message's role is one of system, developer, user, "
            "assistant, tool",
        ),
        (
            [USER, result("c1")],
            "message 1 (tool) answers tool call 'c1', which the assistant message before it did "
            "not make",
        ),
        (
            [USER, CALLS, result("c1"), USER],
            "message 3 (user) comes while tool call(s) c2 of message 1 have no tool message; "
            "answer every tool call right after the assistant message that made it",
        ),
        (
            [USER, CALLS, result("c1"), result("c1")],
            "message 3 (tool) answers tool call 'c1', which the assistant message before it did "
            "not make",
        ),
        (
            [USER, {"role": "assistant", "tool_calls": {"id": "c1"}}],
            "message 1 (assistant) has tool_calls that are not a list",
        ),
    ],
)
def test_a_garbled_conversation_says_what_is_wrong(messages: list[Any], problem: str) -> None:
    found = conversation_problem(messages)
    assert found is not None and found.startswith(problem)


@pytest.mark.parametrize(
    ("call", "why"),
    [
        ({"id": "c1", "function": {"name": "t", "arguments": "{}"}}, "needs type 'function'"),
        ({"id": "c1", "type": "function"}, "needs a function object {name, arguments}"),
        ({"id": "c1", "type": "function", "function": {"arguments": "{}"}},
         "needs function.name as a string"),
        ({"id": "c1", "type": "function", "function": {"name": "t", "arguments": {}}},
         "needs function.arguments as a string"),
    ],
)  # fmt: skip
def test_a_replayed_tool_call_must_keep_its_whole_shape(call: dict[str, object], why: str) -> None:
    from harness.fake.request import conversation_problem

    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "x"},
    ]
    assert conversation_problem(messages) == f"message 1 (assistant) tool call 'c1' {why}"


SERVED: list[dict[str, Any]] = [
    {"role": "user", "content": "go"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "t", "arguments": "{}"}}]},
]  # fmt: skip


def test_a_request_must_carry_on_the_conversation_as_served() -> None:
    from harness.fake.request import continuation_problem

    ok = [{"role": "system", "content": "any prompt"}, *SERVED,
          {"role": "tool", "tool_call_id": "call_1", "content": "r"}]  # fmt: skip
    assert continuation_problem(SERVED, ok) is None
    assert continuation_problem(SERVED, [*ok[:2], {**ok[2], "content": ""}, ok[3]]) is None
    dropped = [ok[0], {"role": "user", "content": ""}, *ok[2:]]
    assert continuation_problem(SERVED, dropped) == (
        "the history differs from what was served at message 0 (system messages aside): "
        "expected user: 'go', got user: (empty); send the conversation back whole, the "
        "model's replies included, as the model saw it"
    )
    renamed = [*ok[:2], {**ok[2], "tool_calls": [{**SERVED[1]["tool_calls"][0], "id": "x"}]}]
    assert "at message 1" in (continuation_problem(SERVED, [*renamed, ok[3]]) or "")
    assert "already served" in (continuation_problem(SERVED, ok[:3]) or "")


def test_the_fake_refuses_a_garbled_history_only_when_asked() -> None:
    import httpx

    from harness.fake import InvalidConversation, ScriptedLLM, Turn

    def ask(llm: ScriptedLLM, messages: list[dict[str, object]]) -> int:
        request = httpx.Request("POST", "http://fake/v1/chat/completions",
                                headers={"X-Harness-Agent": "a"},
                                json={"model": "m", "messages": messages})  # fmt: skip
        return llm.respond(request).status_code

    for check, status in ((True, 400), (False, 200)):
        llm = ScriptedLLM({"a": [Turn.text("one"), Turn.text("two")]}, check_history=check)
        assert ask(llm, [{"role": "user", "content": "go"}]) == 200
        # The model's "one" is missing from the history the runtime sends back.
        assert (
            ask(llm, [{"role": "user", "content": "go"}, {"role": "user", "content": "more"}])
            == status
        )
        assert [type(e) for e in llm.errors] == ([InvalidConversation] if check else [])


@pytest.mark.parametrize("keep", [0, 32])
def test_a_finished_agent_asked_again_is_told_its_history_is_wrong(
    keep: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Beyond the last KEEP_FINISHED finished agents the fake keeps an agent's history
    # compressed; either way it is what a further request is checked against, before the
    # script runs out.
    import httpx

    monkeypatch.setattr("harness.fake.reply.KEEP_FINISHED", keep)

    from harness.fake import InvalidConversation, ScriptedLLM, ScriptExhausted, Turn

    def ask(llm: ScriptedLLM, messages: list[dict[str, object]]) -> None:
        request = httpx.Request("POST", "http://fake/v1/chat/completions",
                                headers={"X-Harness-Agent": "a"},
                                json={"model": "m", "messages": messages})  # fmt: skip
        llm.respond(request)

    go: dict[str, object] = {"role": "user", "content": "go"}
    llm = ScriptedLLM({"a": [Turn.text("done")]}, check_history=True)
    ask(llm, [go])
    ask(llm, [go, {"role": "assistant", "content": "not what was said"}, go])
    ask(llm, [go, {"role": "assistant", "content": "done"}, go])
    assert [type(e) for e in llm.errors] == [InvalidConversation, ScriptExhausted]
    assert "expected assistant: 'done', got assistant: 'not what" in str(llm.errors[0])
