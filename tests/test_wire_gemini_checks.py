"""The fake's Gemini API wire without an SDK: the GenerateContentResponse and its SSE
chunks, the request checks (each malformed body one 400 naming its field, before a step),
the translation into the conversation the checks read, the history check reading that
translation, Google's keys (header or `?key=`), and `harness serve`'s ASGI app routing
/v1/models/{model}:generateContent. The SDK-driven delegations are in
tests/test_wire_gemini.py, whose helpers these share."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from harness.contract import SENTINEL_KEY
from harness.fake import Call, MalformedRequest, ScriptedLLM, Turn
from harness.fake.asgi import FakeApp
from harness.fake.wires import gemini_generate
from tests.test_wire_anthropic import ASK, PROMPT
from tests.test_wire_gemini import (
    GENERATE_URL,
    MODEL,
    OBJECT,
    STREAM_URL,
    TOOLS,
    answer,
    body,
    fake,
    user,
)


def post(llm: ScriptedLLM, sent: Any, url: str = GENERATE_URL, **headers: str) -> httpx.Response:
    return llm.respond(httpx.Request("POST", url, json=sent, headers=headers))


def test_the_reply_is_a_generate_content_response_with_the_fakes_call_id() -> None:
    calls = (Call("subagent", {"name": "child", "prompt": PROMPT}),)
    llm = fake({"lead": [Turn(say="On it.", calls=calls)]})
    reply = post(llm, body(tools=TOOLS))
    assert reply.headers["content-type"] == "application/json; charset=utf-8"
    arguments = json.dumps(calls[0].args, separators=(",", ":"))
    said = -(-len("On it." + arguments) // 4)  # the estimate: 4 characters a token
    assert reply.json() == {
        "candidates": [{"content": {"role": "model", "parts": [
            {"text": "On it."},
            {"functionCall": {"name": "subagent", "args": calls[0].args, "id": "call_1"}},
        ]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": said,
                          "totalTokenCount": 1 + said},
        "modelVersion": MODEL, "responseId": "resp_1",
    }  # fmt: skip


def test_the_stream_sends_text_deltas_then_every_call_whole() -> None:
    calls = (Call("ask_user_question", ASK), Call("ask_user_question", {"questions": []}))
    llm = fake({"lead": [Turn(say="Asking twice.", calls=calls)]}, chunk=4)
    reply = post(llm, body(tools=TOOLS), STREAM_URL)
    assert reply.headers["content-type"] == "text/event-stream; charset=utf-8"
    frames = reply.text.split("\r\n\r\n")
    assert frames.pop() == ""  # each event ends with a blank line, and nothing follows
    events = [json.loads(f.removeprefix("data: ")) for f in frames if f.startswith("data: ")]
    assert len(events) == len(frames) == 5  # 13 characters in 4s, then the calls
    parts = [e["candidates"][0]["content"]["parts"] for e in events]
    assert parts[:4] == [[{"text": t}] for t in ("Aski", "ng t", "wice", ".")]
    assert parts[4] == [{"functionCall": {"name": c.tool, "args": c.args, "id": f"call_{n}"}}
                        for n, c in enumerate(calls, start=1)]  # fmt: skip
    assert [e["candidates"][0].get("finishReason") for e in events] == [None] * 4 + ["STOP"]
    assert {e["responseId"] for e in events} == {"resp_1"}
    # The prompt's count on every chunk, the whole usage on the last.
    assert [sorted(e["usageMetadata"]) for e in events[3:]] == [
        ["promptTokenCount", "totalTokenCount"],
        ["candidatesTokenCount", "promptTokenCount", "totalTokenCount"],
    ]


CALL = {"functionCall": {"name": "n", "args": {}, "id": "c1"}}


@pytest.mark.parametrize(
    ("sent", "param"),
    [
        (["go"], None),
        ({}, "contents"),
        (body(contents=[]), "contents"),
        (body(cachedContent="cachedContents/abc"), "cachedContent"),
        (body(systemInstruction="be brief"), "systemInstruction"),
        (body(system_instruction={"parts": [{"inlineData": {}}]}), "systemInstruction"),
        (body(contents=["go"]), "contents.0"),
        (body(contents=[{"role": "assistant", "parts": [{"text": "x"}]}]), "contents.0"),
        (body(contents=[{"role": "user", "parts": []}]), "contents.0.parts"),
        (body(contents=[user({"text": 3})]), "contents.0.parts.0"),
        (body(contents=[user(CALL)]), "contents.0.parts.0"),
        (body(contents=[user("go"), {"role": "model", "parts": [answer("n", "x")]}]),
         "contents.1.parts.0"),
        (body(contents=[user("go"), {"role": "model", "parts": [{"functionCall": {}}]}]),
         "contents.1.parts.0"),
        (body(contents=[user("go"), {"role": "model", "parts": [
            {"functionCall": {"name": "n", "args": '{"a":1}'}}]}]), "contents.1.parts.0"),
        (body(contents=[user({"functionResponse": {"name": "n", "response": "done"}})]),
         "contents.0.parts.0"),
        (body(contents=[user({"function_response": {"name": "n", "response": {}, "id": 7}})]),
         "contents.0.parts.0"),
        (body(tools={"functionDeclarations": []}), "tools"),
        (body(tools=[{"functionDeclarations": {"name": "n"}}]), "tools.0.functionDeclarations"),
        (body(tools=[{"googleSearch": {}}, {"functionDeclarations": [{"description": "d"}]}]),
         "tools.1.functionDeclarations.0"),
        (body(tools=[{"functionDeclarations": [{"name": "n", "parameters": OBJECT,
                                                "parametersJsonSchema": OBJECT}]}]),
         "tools.0.functionDeclarations.0"),
    ],
)  # fmt: skip
def test_a_body_that_is_no_generate_content_request_is_refused_before_a_step(
    sent: Any, param: str | None
) -> None:
    llm = fake({"lead": [Turn.text("hi")]})
    reply = post(llm, sent)
    assert reply.status_code == 400
    error = reply.json()["error"]
    assert (error["code"], error["status"]) == (400, "INVALID_ARGUMENT")
    assert error["message"].startswith(f"{param}: " if param else "the body is")
    assert reply.headers["x-harness-error-code"] == "malformed_request"
    assert reply.headers.get("x-harness-error-param") == param
    (refused,) = llm.errors
    assert isinstance(refused, MalformedRequest) and refused.step is None
    assert llm.prefixes.summary() == {}  # nothing of it reached the prefix log
    assert len(llm.unconsumed()) == 1


def test_a_gemini_conversation_is_translated_into_the_one_the_checks_read() -> None:
    said = {"role": "model", "parts": [
        {"text": "thinking...", "thought": True}, {"text": "On "}, {"text": "it."},
        {"functionCall": {"name": "subagent", "args": {"a": "é"}, "id": "call_1"},
         "thoughtSignature": "c2ln"},
        {"function_call": {"name": "subagent", "args": {"b": 1}}},  # no id: paired by name
    ]}  # fmt: skip
    sent = body(
        system_instruction={"parts": [{"text": "be "}, {"text": "brief"}]},
        tools=[{"googleSearch": {}}, {"functionDeclarations": [
            {"name": "subagent", "description": "Delegate", "parameters_json_schema": OBJECT},
            {"name": "noop"}]}],
        contents=[user("go"), said, user(answer("subagent", "done", "call_1"), {"text": "and"},
                  {"functionResponse": {"name": "subagent", "response": {"n": 1, "m": 2}}})],
    )  # fmt: skip
    bound = gemini_generate.ENDPOINT.at(f"/v1beta/models/{MODEL}:streamGenerateContent")

    def function(call_id: str, arguments: str) -> dict[str, Any]:
        return {"id": call_id, "type": "function",
                "function": {"name": "subagent", "arguments": arguments}}  # fmt: skip

    assert bound.conversation(sent, strict=True, agent=None) == {
        "model": MODEL,  # the model and the stream are the path's
        "stream": True,
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "go"},
            # The thought is left out; an id-less call gets its name and part index.
            {"role": "assistant", "content": "On it.", "tool_calls": [
                function("call_1", '{"a":"é"}'), function("subagent#4", '{"b":1}')]},
            # A response of one string is that string; another, its JSON.
            {"role": "tool", "tool_call_id": "call_1", "content": "done"},
            {"role": "user", "content": "and"},
            {"role": "tool", "tool_call_id": "subagent#4", "content": '{"n":1,"m":2}'},
        ],
        # Only the function declarations: no script can call the built-in tool.
        "tools": [{"type": "function", "function": {"name": "subagent",
                   "description": "Delegate", "parameters": OBJECT}},
                  {"type": "function", "function": {"name": "noop"}}],
    }  # fmt: skip


def test_the_history_check_reads_the_translation() -> None:
    llm = fake({"lead": [Turn.text("hi"), Turn.text("again")]})
    served = post(llm, body()).json()["candidates"][0]["content"]
    tampered = {**served, "parts": [{"text": "hello"}]}
    refused = post(llm, body(contents=[user("go"), tampered, user("more")]), **{
        "X-Harness-Agent": "lead"})  # placed by name: no text matches  # fmt: skip
    error = refused.json()["error"]
    assert (refused.status_code, refused.headers["x-harness-error-code"]) == (
        400, "invalid_conversation"
    )  # fmt: skip
    assert error["message"].startswith(
        "agent lead, step 2: the history differs from what was served at message 1 "
    )
    again = post(llm, body(contents=[user("go"), served, user("more")]))  # as served
    assert again.json()["candidates"][0]["content"]["parts"] == [{"text": "again"}]


@pytest.mark.parametrize(
    ("headers", "query", "refused"),
    [({"x-goog-api-key": SENTINEL_KEY}, f"?key={SENTINEL_KEY}", None),
     ({"x-goog-api-key": "AIza0123"}, "", "x-goog-api-key"),
     ({}, "?key=AIza0123", "key")],
    ids=["sentinel", "foreign-header", "foreign-query"],
)  # fmt: skip
def test_a_google_key_is_the_sentinel_or_refused(
    headers: dict[str, str], query: str, refused: str | None
) -> None:
    llm = fake({"lead": [Turn.text("hi")]})
    with httpx.Client(transport=httpx.MockTransport(llm.router().handler)) as client:
        reply = client.post(GENERATE_URL + query, json=body(), headers=headers)
    if refused is None:
        assert reply.json()["candidates"][0]["content"]["parts"] == [{"text": "hi"}]
        return
    error = reply.json()["error"]
    assert (reply.status_code, error["status"]) == (401, "UNAUTHENTICATED")
    assert reply.headers["x-harness-error-param"] == refused
    assert "AIza0123" not in reply.text  # a leaked key is never repeated
    assert llm.unconsumed() != []


def test_harness_serve_routes_the_gemini_wire() -> None:
    llm = ScriptedLLM({"lead": [Turn.text(t) for t in ("a", "b", "c")]}, strict=True)

    async def ask() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=FakeApp(llm, log=lambda line: None))
        async with httpx.AsyncClient(
            transport=transport, base_url="http://fake", headers={"X-Harness-Agent": "lead"}
        ) as client:
            return [
                await client.post(f"/v1/models/{MODEL}:generateContent", json=body()),
                await client.post(f"/v1beta/models/{MODEL}:streamGenerateContent", json=body()),
                await client.post(f"/v1/v1beta/models/{MODEL}:generateContent", json=body()),
                await client.get(f"/v1/models/{MODEL}:generateContent"),
                await client.post(f"/v1/models/{MODEL}:countTokens", json=body()),
            ]

    plain, streamed, nested, wrong, nowhere = asyncio.run(ask())
    assert plain.json()["candidates"][0]["content"]["parts"] == [{"text": "a"}]
    assert streamed.text.startswith('data: {"candidates": [{"content": {"parts": [{"text": "b"')
    assert nested.json()["modelVersion"] == MODEL and llm.errors == []
    assert (wrong.status_code, wrong.headers["allow"]) == (405, "POST")
    assert wrong.json()["error"]["message"] == (
        f"GET is not allowed on /v1/models/{MODEL}:generateContent; "
        f"POST /v1/models/{MODEL}:generateContent"
    )
    assert nowhere.status_code == 404
    assert nowhere.json()["error"]["message"] == (
        f"no route /v1/models/{MODEL}:countTokens; POST one of /v1/chat/completions, "
        "/v1/messages, /v1/responses, /v1/models/{model}:generateContent"
    )
