"""The fake's OpenAI Responses wire without an SDK: the SSE events and their framing, the
request checks (a body that is no Responses request, the stateful fields the fake refuses)
and the translation into the conversation the checks read, the history check reading that
translation, and `harness serve`'s ASGI app routing /v1/responses. The SDK-driven
delegation is in tests/test_wire_responses.py, whose helpers these share."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from harness.fake import MalformedRequest, ScriptedLLM, Turn
from harness.fake.asgi import FakeApp
from harness.fake.wires import openai_responses
from tests.test_wire_responses import OBJECT, RESPONSES_URL, TOOLS, body, fake, output


def post(llm: ScriptedLLM, sent: Any, agent: str | None = None) -> httpx.Response:
    headers = {} if agent is None else {"X-Harness-Agent": agent}
    return llm.respond(httpx.Request("POST", RESPONSES_URL, json=sent, headers=headers))


def test_each_event_is_framed_with_its_name_and_numbered_in_order() -> None:
    llm = fake({"lead": [Turn.text("hello")]}, created=7)
    response = post(llm, body(stream=True))
    assert response.headers["content-type"] == "text/event-stream; charset=utf-8"
    frames = response.text.split("\n\n")
    assert frames.pop() == ""  # every frame ends with a blank line, and no [DONE] follows
    names, events = [], []
    for frame in frames:
        event, data = frame.split("\n")
        assert event.startswith("event: ") and data.startswith("data: ")
        names.append(event.removeprefix("event: "))
        events.append(json.loads(data.removeprefix("data: ")))
        assert events[-1]["type"] == names[-1]
    assert names == [
        "response.created", "response.in_progress", "response.output_item.added",
        "response.content_part.added", "response.output_text.delta",
        "response.output_text.done", "response.content_part.done",
        "response.output_item.done", "response.completed",
    ]  # fmt: skip
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    created, completed = events[0]["response"], events[-1]["response"]
    # Announced without output or usage, completed with both, under one id.
    assert (created["status"], created["output"], created["usage"]) == ("in_progress", [], None)
    assert completed["status"] == "completed" and completed["id"] == created["id"] == "resp_1"
    assert completed["output"][0]["content"][0]["text"] == "hello"
    assert completed["usage"]["output_tokens"] == 2


@pytest.mark.parametrize(
    ("sent", "param"),
    [
        (["go"], None),
        (body(previous_response_id="resp_1"), "previous_response_id"),
        (body(conversation="conv_1"), "conversation"),
        (body(instructions=["x"]), "instructions"),
        ({"model": "m"}, "input"),
        (body(input=["go"]), "input.0"),
        (body(input=[{"type": "web_search_call"}]), "input.0"),
        (body(input=[{"role": "tool", "content": "x"}]), "input.0"),
        (body(input=[{"role": "user", "content": 3}]), "input.0"),
        (body(input=[{"role": "user", "content": [{"type": "input_text"}]}]), "input.0"),
        (body(input=[{"type": "function_call", "name": "n", "arguments": "{}"}]), "input.0"),
        (body(input=[{"type": "function_call_output", "output": "x"}]), "input.0"),
        (body(input=[output("call_1", 3)]), "input.0"),  # type: ignore[arg-type]  # not a string
        (body(tools=[{"name": "n"}]), "tools"),
        (body(tools=[{"type": "function"}]), "tools"),
    ],
)  # fmt: skip
def test_a_body_that_is_no_responses_request_is_refused_before_a_step(
    sent: Any, param: str | None
) -> None:
    llm = fake({"lead": [Turn.text("hi")]})
    answer = post(llm, sent)
    assert answer.status_code == 400
    error = answer.json()["error"]  # OpenAI's error shape, the Chat Completions wire's
    assert (error["code"], error["param"], error["type"]) == (
        "malformed_request",
        param,
        "invalid_request_error",
    )
    (refused,) = llm.errors
    assert isinstance(refused, MalformedRequest) and refused.step is None
    assert llm.prefixes.summary() == {}  # nothing of it reached the prefix log
    assert len(llm.unconsumed()) == 1


def test_a_responses_conversation_is_translated_into_the_one_the_checks_read() -> None:
    call = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "subagent",
            "arguments": '{"a":"é"}', "status": "completed"}  # fmt: skip
    said = {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
            "content": [{"type": "output_text", "text": "On ", "annotations": []},
                        {"type": "refusal", "refusal": "no"},
                        {"type": "output_text", "text": "it.", "annotations": []}]}  # fmt: skip
    parts = [{"type": "input_text", "text": "and?"}]
    sent = body(instructions="be brief", stream=True, tools=[TOOLS[0], {"type": "web_search"}],
                input=[
                    {"role": "developer", "content": "rules"},
                    {"role": "user", "content": "go"},
                    {"type": "reasoning", "id": "rs_1", "summary": []},
                    said, call, {**call, "call_id": "call_2"},
                    output("call_1", "done"), output("call_2", "also"),
                    {"type": "function_call", "call_id": "call_3", "name": "n", "arguments": "{}"},
                    {"type": "message", "role": "user", "content": parts},
                ])  # fmt: skip

    def function(call_id: str, name: str, arguments: str) -> dict[str, Any]:
        return {"id": call_id, "type": "function",
                "function": {"name": name, "arguments": arguments}}  # fmt: skip

    assert openai_responses.conversation(sent, strict=True, agent=None) == {
        "model": "m",
        "stream": True,
        "instructions": "be brief",
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "developer", "content": "rules"},
            {"role": "user", "content": "go"},
            # The reasoning item is left out; the calls join the message they follow.
            {"role": "assistant", "content": "On it.", "tool_calls": [
                function("call_1", "subagent", '{"a":"é"}'),
                function("call_2", "subagent", '{"a":"é"}')]},
            {"role": "tool", "tool_call_id": "call_1", "content": "done"},
            {"role": "tool", "tool_call_id": "call_2", "content": "also"},
            # A call after a tool message is an assistant message of its own.
            {"role": "assistant", "content": None, "tool_calls": [function("call_3", "n", "{}")]},
            {"role": "user", "content": parts},
        ],
        # Only the function tool: no script can call the built-in one.
        "tools": [{"type": "function", "function": {"name": "subagent",
                   "description": "Delegate a task", "parameters": OBJECT}}],
    }  # fmt: skip


def test_the_history_check_reads_the_translation() -> None:
    llm = fake({"lead": [Turn.text("hi"), Turn.text("again")]})
    first = post(llm, body()).json()
    (said,) = first["output"]
    tampered = {**said, "content": [{**said["content"][0], "text": "hello"}]}
    history = [{"role": "user", "content": "go"}, tampered, {"role": "user", "content": "more"}]
    refused = post(llm, body(input=history), agent="lead")  # placed by name: no text matches
    assert refused.status_code == 400
    error = refused.json()["error"]
    assert error["code"] == "invalid_conversation"
    assert error["message"].startswith(
        "agent lead, step 2: the history differs from what was served at message 1 "
    )
    # The conversation as served goes through.
    history[1] = said
    assert post(llm, body(input=history)).json()["output"][0]["content"][0]["text"] == "again"


def test_harness_serve_routes_the_responses_wire() -> None:
    llm = ScriptedLLM({"lead": [Turn.text("hi"), Turn.text("again")]}, strict=True)

    async def ask() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=FakeApp(llm, log=lambda line: None))
        async with httpx.AsyncClient(
            transport=transport, base_url="http://fake", headers={"X-Harness-Agent": "lead"}
        ) as client:
            return [
                await client.post("/v1/responses", json=body()),
                await client.post("/responses", json=body(stream=True)),  # a base URL without /v1
                await client.get("/v1/responses"),
                await client.post("/v1/response", json=body()),
            ]

    plain, streamed, wrong, nowhere = asyncio.run(ask())
    assert plain.json()["output"][0]["content"][0]["text"] == "hi"
    assert streamed.text.startswith("event: response.created\n")
    assert "again" in streamed.text and '"type": "response.completed"' in streamed.text
    assert (wrong.status_code, wrong.headers["allow"]) == (405, "POST")
    assert wrong.json()["error"]["message"] == (
        "GET is not allowed on /v1/responses; POST /v1/responses"
    )
    assert nowhere.status_code == 404
    assert nowhere.json()["error"]["message"] == (
        "no route /v1/response; POST one of /v1/chat/completions, /v1/messages, /v1/responses, "
        "/v1/models/{model}:generateContent"
    )
