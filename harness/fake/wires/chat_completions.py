"""A scripted assistant message as a Chat Completions response: one JSON completion, or SSE
`chat.completion.chunk` events then `data: [DONE]`, as OpenAI-compatible APIs send them;
and OpenAI's error shape for a request the fake refuses.
"""

from __future__ import annotations

import json
import math
from typing import Any

from harness.fake.wires import Answer, Endpoint

# Clients read these; the values are the fake's own, fixed so every run is the same bytes.
SYSTEM_FINGERPRINT = "fp_keyless_harness"
SSE_TYPE = "text/event-stream; charset=utf-8"
JSON_TYPE = "application/json; charset=utf-8"

# json.dumps(value, ensure_ascii=False), without building an encoder per chunk or the cycle
# check plain JSON data does not need: a stream encodes several per reply.
_encode = json.JSONEncoder(ensure_ascii=False, check_circular=False).encode
_DONE = b"data: [DONE]\n\n"


def estimate_tokens(text: str) -> int:
    """The documented estimate behind `usage`: one token per four characters, rounded up.
    Deterministic and never zero for non-empty text; nobody should read it as a count."""
    return math.ceil(len(text) / 4)


def usage(request: dict[str, Any], message: dict[str, Any]) -> dict[str, int]:
    prompt = sum(
        estimate_tokens(m["content"] if isinstance(m.get("content"), str) else json.dumps(m))
        for m in request.get("messages") or []
        if isinstance(m, dict)
    )
    said = message.get("content") or ""
    said += "".join(c["function"]["arguments"] for c in message.get("tool_calls") or ())
    completion = estimate_tokens(said)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _sse(events: list[dict[str, Any]]) -> tuple[bytes, ...]:
    """The stream as written: one `data:` line per event, then `[DONE]`."""
    return (*(f"data: {_encode(event)}\n\n".encode() for event in events), _DONE)


def _json(status: int, body: dict[str, Any]) -> Answer:
    return Answer(status, JSON_TYPE, (_encode(body).encode(),))


def error(status: int, message: str, code: str, param: str | None = None) -> Answer:
    """OpenAI's error shape: {"error": {"message", "type", "param", "code"}}."""
    kind = "server_error" if status >= 500 else "invalid_request_error"
    return _json(
        status, {"error": {"message": message, "type": kind, "param": param, "code": code}}
    )


def conversation(body: Any, *, strict: bool, agent: str | None) -> Any:
    """The request as the checks read it: as sent, since they are this wire's own."""
    return body


def reply(
    request: dict[str, Any],
    message: dict[str, Any],
    *,
    serial: int,
    created: int,
    model: str,
    chunk: int | None,
) -> Answer:
    """The completion answering `request` (the parsed, checked request: its stream,
    stream_options, messages and model) with `message`. `serial` numbers the completion's
    id, `created` is its time, `model` the name sent when the request gives none, `chunk`
    characters per streamed delta (None: each string whole)."""
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    head = {
        "id": f"chatcmpl-{serial}",
        "created": created,
        "model": request.get("model", model),
        "system_fingerprint": SYSTEM_FINGERPRINT,
    }
    counted = usage(request, message)
    if request.get("stream"):
        options = request.get("stream_options") or {}
        wanted = counted if options.get("include_usage") else None
        events = chunks(head, message, finish, wanted, chunk)
        return Answer(200, SSE_TYPE, _sse(events), streamed=True)
    choice = {
        "index": 0,
        "message": {**message, "refusal": None},
        "logprobs": None,
        "finish_reason": finish,
    }
    return _json(200, {**head, "object": "chat.completion", "choices": [choice], "usage": counted})


def pieces(text: str, chunk: int | None) -> list[str]:
    size = chunk or len(text) or 1
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def chunks(
    head: dict[str, Any],
    message: dict[str, Any],
    finish: str,
    usage: dict[str, int] | None,
    chunk: int | None = None,
) -> list[dict[str, Any]]:
    """SSE chat.completion.chunk events as OpenAI-compatible APIs send them: the role,
    content deltas, each tool call's index/id/name then its argument fragments, the
    finish reason, and a usage chunk when asked for."""

    def event(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        return {**head, "object": "chat.completion.chunk", "choices": [choice]}

    out = [event({"role": "assistant", "content": "", "refusal": None})]
    if message.get("content"):
        out += [event({"content": piece}) for piece in pieces(message["content"], chunk)]
    for index, call in enumerate(message.get("tool_calls") or ()):
        first = {
            "index": index,
            "id": call["id"],
            "type": "function",
            "function": {"name": call["function"]["name"], "arguments": ""},
        }
        out.append(event({"tool_calls": [first]}))
        for piece in pieces(call["function"]["arguments"], chunk):
            fragment = {"index": index, "function": {"arguments": piece}}
            out.append(event({"tool_calls": [fragment]}))
    out.append(event({}, finish))
    if usage is not None:
        out.append({**head, "object": "chat.completion.chunk", "choices": [], "usage": usage})
    return out


PATH = "/chat/completions"  # below the base URL
ENDPOINT = Endpoint("chat_completions", PATH, conversation, reply, error)
