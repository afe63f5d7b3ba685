"""What the runtime's chat client puts on the wire and how it reads a stream back, byte by
byte: the request defaults, the agent header in both modes, and SSE read as the spec
defines it (found missing by mutation testing; see benchmarks/MUTATION.md)."""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

from harness.contract import AGENT_HEADER
from harness.runtime.llm import ChatClient, ChatError, Reply

MESSAGES = [{"role": "user", "content": "go"}]
TOOLS = [{"type": "function", "function": {"name": "ask_user_question"}}]


def exchange(
    answer: Callable[[httpx.Request], httpx.Response],
    *,
    stream: bool,
    base: str,
    agent_header: str | None = AGENT_HEADER,
) -> tuple[Reply | ChatError, httpx.Request]:
    seen: list[httpx.Request] = []

    async def handler(request: httpx.Request) -> httpx.Response:
        await request.aread()
        seen.append(request)
        return answer(request)

    async def go() -> Reply:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
            client = ChatClient(http, base_url=base, stream=stream, agent_header=agent_header)
            return await client.complete(agent="child", messages=MESSAGES, tools=TOOLS)

    try:
        reply: Reply | ChatError = asyncio.run(go())
    except ChatError as exc:
        reply = exc
    return reply, seen[0]


def completion(request: httpx.Request) -> httpx.Response:
    message = {"role": "assistant", "content": "hi"}
    return httpx.Response(200, json={"choices": [{"message": message}]})


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_the_request_says_what_a_chat_completion_needs(stream: bool) -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        if not stream:
            return completion(request)
        return sse(['{"choices":[{"delta":{"content":"hi"}}]}', "[DONE]"])

    reply, request = exchange(answer, stream=stream, base="http://fake.invalid/v1/")
    assert reply == Reply(content="hi", tool_calls=())
    assert str(request.url) == "http://fake.invalid/v1/chat/completions"  # one '/' only
    assert request.headers[AGENT_HEADER] == "child"  # streamed or not
    body = json.loads(request.content)
    expected: dict[str, Any] = {"model": "scripted", "messages": MESSAGES, "tools": TOOLS,
                                "tool_choice": "auto"}  # fmt: skip
    if stream:
        expected |= {"stream": True, "stream_options": {"include_usage": True}}
    assert body == expected


def test_the_agent_is_named_only_in_a_header_the_host_chose() -> None:
    # The runtime has no header name of its own: the harness's is configured from outside.
    assert inspect.signature(ChatClient).parameters["agent_header"].default is None
    _, request = exchange(
        completion, stream=False, base="http://fake.invalid/v1", agent_header=None
    )
    assert "child" not in dict(request.headers).values()
    _, request = exchange(
        completion, stream=False, base="http://fake.invalid/v1", agent_header="X-Calling-Agent"
    )
    assert request.headers["X-Calling-Agent"] == "child"
    assert AGENT_HEADER not in request.headers


def sse(
    events: list[str],
    *,
    split: int | None = None,
    prefix: str = "data: ",
    eol: str = "\n",
    content_type: str = "text/event-stream",
) -> httpx.Response:
    raw = "".join(f"{prefix}{e}{eol}{eol}" for e in events).encode()
    size = split or len(raw)

    async def pieces() -> AsyncIterator[bytes]:
        for i in range(0, len(raw), size):
            yield raw[i : i + size]

    return httpx.Response(200, headers={"content-type": content_type}, content=pieces())


CALL_IN_PARTS = [
    '{"choices":[{"delta":{"role":"assistant","content":""}}]}',
    # The name first, the id only in a later delta: both are kept.
    '{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"ask_user_question","arguments":""}}]}}]}',
    '{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"call_7","function":{"arguments":"{\\"a\\":"}}]}}]}',
    '{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\\"é\\u2028\\"}"}}]}}]}',
    "[DONE]",
]  # fmt: skip


@pytest.mark.parametrize("split", [None, 1, 7])
@pytest.mark.parametrize("prefix", ["data: ", "data:"])
@pytest.mark.parametrize("eol", ["\n", "\r\n", "\r"], ids=["lf", "crlf", "cr"])
def test_a_stream_is_read_as_sse_defines_it(split: int | None, prefix: str, eol: str) -> None:
    reply, _ = exchange(lambda r: sse(CALL_IN_PARTS, split=split, prefix=prefix, eol=eol),
                        stream=True, base="http://fake.invalid/v1")  # fmt: skip
    assert isinstance(reply, Reply), reply
    (call,) = reply.tool_calls
    assert (call.id, call.name) == ("call_7", "ask_user_question")
    assert json.loads(call.arguments) == {"a": "é\u2028"}


def test_a_stream_is_utf8_whatever_its_charset_says() -> None:
    # The SSE spec: "Event streams are always decoded as UTF-8"; OpenAI's SDKs do the same.
    answer = sse(CALL_IN_PARTS, split=1, content_type="text/event-stream; charset=latin-1")
    reply, _ = exchange(lambda r: answer, stream=True, base="http://fake.invalid/v1")
    assert isinstance(reply, Reply), reply
    assert json.loads(reply.tool_calls[0].arguments) == {"a": "é\u2028"}


@pytest.mark.parametrize("split", [None, 1])
def test_bytes_that_are_not_utf8_read_as_replacement_characters(split: int | None) -> None:
    # The SSE spec decodes with "UTF-8 decode" (WHATWG Encoding): each invalid sequence is
    # U+FFFD, and the stream goes on; a malformed byte must not end the reply.
    raw = b'data: {"choices":[{"delta":{"content":"h\xffi \xe2\x82"}}]}\n\ndata: [DONE]\n\n'
    size = split or len(raw)

    async def pieces() -> AsyncIterator[bytes]:
        for i in range(0, len(raw), size):
            yield raw[i : i + size]

    answer = httpx.Response(200, headers={"content-type": "text/event-stream"}, content=pieces())
    reply, _ = exchange(lambda r: answer, stream=True, base="http://fake.invalid/v1")
    assert reply == Reply(content="h\ufffdi \ufffd", tool_calls=())


def test_a_last_line_without_its_line_end_is_read() -> None:
    # The stream stops right after "data: [DONE]", its line end never sent.
    raw = b'data: {"choices":[{"delta":{"content":"hi"}}]}\n\ndata: [DONE]'
    answer = httpx.Response(200, headers={"content-type": "text/event-stream"}, content=raw)
    reply, _ = exchange(lambda r: answer, stream=True, base="http://fake.invalid/v1")
    assert reply == Reply(content="hi", tool_calls=())


@pytest.mark.parametrize(
    ("events", "why"),
    [
        (['{"choices":[{"delta":{"content":"hi"}}]}'], "stream ended without data: [DONE]"),
        (['{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c","function":{"arguments":"{}"}}]}}]}',
          "[DONE]"], "tool call at index 0 never received its id and name"),
    ],
    ids=["no-done", "no-name"],
)  # fmt: skip
def test_a_broken_stream_is_a_chat_error_naming_what_broke(events: list[str], why: str) -> None:
    reply, _ = exchange(lambda r: sse(events), stream=True, base="http://fake.invalid/v1")
    assert isinstance(reply, ChatError)
    url = "http://fake.invalid/v1/chat/completions"
    assert str(reply) == f"malformed chat completion from {url}: ValueError({why!r})"


def test_a_stream_cut_off_inside_its_last_data_line_has_no_done() -> None:
    # Its last line has no line end and is no [DONE]: taken as data, and still no [DONE].
    raw = b'data: {"choices":[{"delta":{"content":"hi"}}]}\n\ndata: {"choices":[]}'
    answer = httpx.Response(200, headers={"content-type": "text/event-stream"}, content=raw)
    reply, _ = exchange(lambda r: answer, stream=True, base="http://fake.invalid/v1")
    assert isinstance(reply, ChatError) and "stream ended without data: [DONE]" in str(reply)


def test_a_reply_whose_content_is_no_string_is_a_chat_error_saying_so() -> None:
    message = {"role": "assistant", "content": 5}
    answer = httpx.Response(200, json={"choices": [{"message": message}]})
    reply, _ = exchange(lambda r: answer, stream=False, base="http://fake.invalid/v1")
    assert str(reply) == (
        "malformed chat completion from http://fake.invalid/v1/chat/completions: "
        "TypeError('message content is int, not a string')"
    )


def test_a_request_that_cannot_be_sent_is_a_chat_error_naming_the_endpoint() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    for stream in (False, True):
        reply, _ = exchange(refuse, stream=stream, base="http://fake.invalid/v1")
        assert str(reply) == (
            "request to http://fake.invalid/v1/chat/completions failed: connection refused"
        )


@pytest.mark.parametrize("split", [None, 5])
def test_what_follows_done_is_read_to_the_end_and_ignored(split: int | None) -> None:
    # As OpenAI's SDKs do: the stream is consumed, so httpx's stream generators finish
    # inside the call instead of leaving their closing to the event loop.
    raw = "".join(f"data: {e}\n\n" for e in ['{"choices":[{"delta":{"content":"hi"}}]}',
                                              "[DONE]", '{"choices":[{"delta":{"content":"x"}}]}',
                                              "not even json"]).encode()  # fmt: skip
    sent: list[int] = []

    async def pieces() -> AsyncIterator[bytes]:
        for i in range(0, len(raw), split or len(raw)):
            sent.append(i)
            yield raw[i : i + (split or len(raw))]

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"},
                              content=pieces())  # fmt: skip

    reply, _ = exchange(answer, stream=True, base="http://fake.invalid/v1")
    assert reply == Reply(content="hi", tool_calls=())
    assert len(sent) == len(range(0, len(raw), split or len(raw)))  # every piece was read


def test_a_server_that_goes_on_after_done_is_cut_off() -> None:
    # 4 MiB after [DONE], in 1 KiB pieces: read up to the runtime's limit, then dropped.
    piece = b"data: " + b"x" * 1016 + b"\n\n"
    read: list[int] = []

    async def pieces() -> AsyncIterator[bytes]:
        yield b'data: {"choices":[{"delta":{"content":"hi"}}]}\n\ndata: [DONE]\n\n'
        for i in range(4096):
            read.append(i)
            yield piece

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"},
                              content=pieces())  # fmt: skip

    reply, _ = exchange(answer, stream=True, base="http://fake.invalid/v1")
    assert reply == Reply(content="hi", tool_calls=())
    assert 64 <= len(read) <= 80  # 64 KiB and a little: not the 4 MiB sent


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_a_delegation_leaves_no_response_for_the_cycle_collector(stream: bool) -> None:
    # httpx links a response and its stream both ways; the client unlinks each response it
    # has read, so a thousand-agent tree does not hold every body until a collection.
    import gc
    from pathlib import Path

    from harness.run import Wire, run_scenario
    from harness.scenario import load_scenario

    scenario = load_scenario(Path(__file__).parents[1] / "scenarios" / "zero-depth-live-child.yaml")
    gc.disable()
    # Everything alive now is set aside, so the collection below looks at what the run
    # made and nothing else (with the SDKs imported, a whole collection takes ~0.15 s).
    gc.freeze()
    flags = gc.get_debug()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        assert run_scenario(scenario, wire=Wire(stream=stream)).status == "pass"
        gc.collect()
        left = [type(o).__name__ for o in gc.garbage if isinstance(o, httpx.Response)]
    finally:
        gc.garbage.clear()
        gc.set_debug(flags)
        gc.unfreeze()
        gc.enable()
    assert left == []
