"""The fake refuses, as a real Chat Completions API would, a conversation a runtime garbled."""

from __future__ import annotations

from typing import Any

import pytest

from harness._conversation import conversation_problem


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
    from harness._conversation import conversation_problem

    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "x"},
    ]
    assert conversation_problem(messages) == f"message 1 (assistant) tool call 'c1' {why}"
