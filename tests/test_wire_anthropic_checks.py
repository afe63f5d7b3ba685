"""The fake's Anthropic Messages wire without an SDK: the SSE events of a step with several
tool calls and their framing, the request checks (a body that is no Messages request, text
before a tool result) and the translation into the conversation the checks read, and
`harness serve`'s ASGI app answering in Anthropic's shape. The SDK-driven delegation is in
tests/test_wire_anthropic.py, whose scripts and helpers these share."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from harness.fake import Call, MalformedRequest, ScriptedLLM, Turn
from harness.fake.asgi import FakeApp, Limits
from harness.fake.wires import anthropic_messages
from tests.test_wire_anthropic import (
    ASK,
    CHILD_SYSTEM,
    GO,
    MESSAGES_URL,
    OBJECT,
    TOOLS,
    body,
    fake,
    sdk,
    tool_result,
)


def test_a_step_with_two_tool_calls_streams_increasing_indices() -> None:
    calls = (Call("ask_user_question", ASK), Call("ask_user_question", {"questions": []}))
    llm = fake({"lead": [Turn(say="Asking twice.", calls=calls)]}, chunk=8)
    events = list(sdk(llm).messages.create(**body(tools=TOOLS, stream=True)))
    texts = ["Asking twice.", json.dumps(ASK, separators=(",", ":")), '{"questions":[]}']

    def block(index: int) -> list[tuple[str, int | None]]:
        deltas = -(-len(texts[index]) // 8)  # one per 8 characters (the fake's chunk)
        return [("content_block_start", index), *[("content_block_delta", index)] * deltas,
                ("content_block_stop", index)]  # fmt: skip

    assert [(e.type, getattr(e, "index", None)) for e in events] == [
        ("message_start", None), *block(0), *block(1), *block(2),
        ("message_delta", None), ("message_stop", None),
    ]  # fmt: skip
    starts = [e.content_block for e in events if e.type == "content_block_start"]
    assert [b.type for b in starts] == ["text", "tool_use", "tool_use"]
    assert [(b.id, b.name, b.input) for b in starts[1:]] == [
        ("toolu_1", "ask_user_question", {}),
        ("toolu_2", "ask_user_question", {}),
    ]
    joined = [
        "".join(getattr(e.delta, "partial_json", "") or getattr(e.delta, "text", "")
                for e in events if e.type == "content_block_delta" and e.index == i)
        for i in range(3)
    ]  # fmt: skip
    assert joined == texts
    (delta,) = [e for e in events if e.type == "message_delta"]
    assert (delta.delta.stop_reason, delta.delta.stop_sequence) == ("tool_use", None)
    assert delta.usage.output_tokens == -(-len("".join(texts)) // 4)


def test_each_event_is_framed_with_its_name() -> None:
    llm = fake({"lead": [Turn.text("hello")]})
    response = llm.respond(httpx.Request("POST", MESSAGES_URL, json=body(stream=True)))
    assert response.headers["content-type"] == "text/event-stream; charset=utf-8"
    frames = response.text.split("\n\n")
    assert frames.pop() == ""
    names = []
    for frame in frames:
        event, data = frame.split("\n")
        assert event.startswith("event: ") and data.startswith("data: ")
        names.append(event.removeprefix("event: "))
        assert json.loads(data.removeprefix("data: "))["type"] == names[-1]
    assert names == ["message_start", "content_block_start", "content_block_delta",
                     "content_block_stop", "message_delta", "message_stop"]  # fmt: skip


@pytest.mark.parametrize(
    ("sent", "param"),
    [
        ({"model": "m", "messages": GO}, "max_tokens"),  # strict: the real API needs one
        (body(messages="go"), "messages"),
        (body(messages=[{"role": "tool", "content": "x"}]), "messages.0"),
        (body(messages=[{"role": "system", "content": [{"type": "image"}]}]), "messages.0.content"),
        (body(system=3), "system"),
        (body(messages=[{"role": "user", "content": [
            {"type": "tool_use", "id": "t", "name": "n", "input": {}}]}]), "messages.0.content.0"),
        (body(tools=[{"input_schema": {}}]), "tools"),
    ],
)  # fmt: skip
def test_a_body_that_is_no_messages_request_is_refused_before_a_step(
    sent: dict[str, Any], param: str
) -> None:
    llm = fake({"lead": [Turn.text("hi")]})
    answer = llm.respond(httpx.Request("POST", MESSAGES_URL, json=sent))
    assert answer.status_code == 400
    assert answer.headers["x-harness-error-code"] == "malformed_request"
    assert answer.headers["x-harness-error-param"] == param
    assert answer.json()["type"] == "error"
    (error,) = llm.errors
    assert isinstance(error, MalformedRequest) and error.step is None
    assert llm.prefixes.summary() == {}  # nothing of it reached the prefix log
    assert len(llm.unconsumed()) == 1


def test_a_messages_conversation_is_translated_into_the_one_the_checks_read() -> None:
    thinking = {"type": "thinking", "thinking": "hm", "signature": "s"}
    use = {"type": "tool_use", "id": "toolu_1", "name": "subagent", "input": {"b": 1, "a": "é"}}
    done = tool_result("toolu_1", [{"type": "text", "text": "done"}], is_error=True)
    sent = body(system=CHILD_SYSTEM, tools=TOOLS[:1], stream=True, messages=[
        *GO,
        {"role": "assistant", "content": [thinking, {"type": "text", "text": "On it."}, use]},
        {"role": "user", "content": [done, {"type": "text", "text": "and?"}]},
    ])  # fmt: skip
    call = {"id": "toolu_1", "type": "function",
            "function": {"name": "subagent", "arguments": '{"b":1,"a":"é"}'}}  # fmt: skip
    assert anthropic_messages.conversation(sent, strict=True, agent=None) == {
        "model": "m",
        "stream": True,
        "messages": [
            {"role": "system", "content": CHILD_SYSTEM},
            *GO,
            {"role": "assistant", "content": "On it.", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "toolu_1", "content": done["content"]},
            {"role": "user", "content": [{"type": "text", "text": "and?"}]},
        ],
        "tools": [{"type": "function", "function": {"name": "subagent",
                   "description": "Delegate a task", "parameters": OBJECT}}],
    }  # fmt: skip


def test_text_before_a_tool_result_is_refused_as_anthropic_refuses_it() -> None:
    llm = fake({"lead": [Turn.tool("ask_user_question", ASK), Turn.text("hi")]})
    first = llm.respond(httpx.Request("POST", MESSAGES_URL, json=body(tools=TOOLS))).json()
    late = [{"type": "text", "text": "here:"}, tool_result("toolu_1", "yes")]
    history = [*GO, {"role": "assistant", "content": first["content"]},
               {"role": "user", "content": late}]  # fmt: skip
    refused = llm.respond(
        httpx.Request("POST", MESSAGES_URL, json=body(messages=history, tools=TOOLS))
    )
    assert refused.status_code == 400
    assert refused.json()["error"]["message"].startswith(
        "agent lead, step 2: message 2 (user) comes while tool call(s) toolu_1 of message 1 "
        "have no tool message"
    )


def test_harness_serve_answers_the_messages_wire_in_its_shape() -> None:
    # Two conversations of one agent, each starting anew: named in the header, and no
    # history check.
    llm = ScriptedLLM({"lead": [Turn.text("hi"), Turn.text("again")]}, strict=True)

    async def ask() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=FakeApp(llm, log=lambda line: None))
        small = httpx.ASGITransport(app=FakeApp(llm, Limits(max_body=16), log=lambda line: None))
        async with httpx.AsyncClient(transport=small, base_url="http://fake") as client:
            large = await client.post("/v1/messages", json=body())
        async with httpx.AsyncClient(
            transport=transport, base_url="http://fake", headers={"X-Harness-Agent": "lead"}
        ) as client:
            return [
                await client.post("/v1/messages?beta=true", json=body()),
                await client.post("/v1/messages", json=body(stream=True)),
                await client.get("/v1/messages"),
                large,
            ]

    plain, streamed, wrong, large = asyncio.run(ask())
    assert plain.json()["content"] == [{"type": "text", "text": "hi"}]
    assert streamed.text.startswith("event: message_start\n")
    assert streamed.text.endswith('event: message_stop\ndata: {"type": "message_stop"}\n\n')
    assert "again" in streamed.text
    assert (wrong.status_code, wrong.headers["allow"]) == (405, "POST")
    refusal = "GET is not allowed on /v1/messages; POST /v1/messages"
    assert wrong.json() == {"type": "error", "error": {"type": "invalid_request_error",
                                                       "message": refusal}}  # fmt: skip
    assert wrong.headers["x-harness-error-code"] == "method_not_allowed"
    assert (large.status_code, large.json()["error"]["type"]) == (413, "request_too_large")
    assert large.headers["x-harness-error-code"] == "request_too_large"


def test_claude_codes_mid_conversation_system_messages_are_served() -> None:
    # As Claude Code 2.1.197 sends them (tests/fixtures/cli-requests/claude-code.json): a
    # reminder before the task in the first user message, system messages among the others
    # (the mid-conversation-system beta), and its own tool names (the claude-code dialect).
    from harness.fake.dialect import Dialect
    from tests.conftest import SCENARIOS

    scenario = SCENARIOS["delegated-question-handoff"]
    dialect = Dialect.load("claude-code")
    llm = ScriptedLLM({n: a.script for n, a in scenario.agents.items()}, dialect=dialect,
                      strict=True, check_history=True)  # fmt: skip
    declared = [{"name": n, "description": "", "input_schema": OBJECT}
                for n in ("Agent", "AskUserQuestion")]  # fmt: skip
    reminder = {"type": "text", "text": "<system-reminder>today</system-reminder>"}

    def post(messages: list[Any]) -> Any:
        sent = body(tools=declared, messages=messages)
        answer = llm.respond(httpx.Request("POST", f"{MESSAGES_URL}?beta=true", json=sent))
        assert answer.status_code == 200, answer.text
        return answer.json()

    agents = {"role": "system", "content": "Available agent types: general-purpose"}
    root = [{"role": "user", "content": [reminder, {"type": "text", "text": "Prepare it."}]},
            agents]  # fmt: skip
    (use,) = post(root)["content"]
    assert (use["name"], use["input"]["subagent_type"]) == ("Agent", "general-purpose")
    task = {"type": "text", "text": use["input"]["prompt"]}
    child = [{"role": "user", "content": [reminder, task]}, agents]
    (ask,) = post(child)["content"]
    assert ask["name"] == "AskUserQuestion"
    refused = tool_result(ask["id"], "No such tool available: AskUserQuestion.", is_error=True)
    later = {"role": "system", "content": [{"type": "text", "text": "A reminder."}]}
    said = post([*child, {"role": "assistant", "content": [ask]},
                 {"role": "user", "content": [refused]}, later])  # fmt: skip
    assert said["content"][0]["text"].startswith("UNRESOLVED: ")
    assert [r.agent for r in llm.requests] == ["parent", "child", "child"]
    assert llm.errors == []
