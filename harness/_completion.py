"""A scripted assistant message as a Chat Completions response: one JSON completion, or SSE
`chat.completion.chunk` events, as OpenAI-compatible APIs send them."""

from __future__ import annotations

import json
from typing import Any

import httpx

# The fake does not count tokens; the field is there because clients read it.
USAGE = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}


def reply(
    head: dict[str, Any], message: dict[str, Any], body: dict[str, Any], chunk: int | None
) -> httpx.Response:
    """`head` is the id, created and model; `body` the request (stream, stream_options);
    `chunk` characters per streamed delta (None: each string whole)."""
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    if body.get("stream"):
        options = body.get("stream_options") or {}
        usage = USAGE if isinstance(options, dict) and options.get("include_usage") else None
        events = chunks(head, message, finish, usage, chunk)
        text = "".join(f"data: {json.dumps(c, ensure_ascii=False)}\n\n" for c in events)
        return httpx.Response(
            200,
            content=(text + "data: [DONE]\n\n").encode(),
            headers={"content-type": "text/event-stream"},
        )
    return httpx.Response(
        200,
        json={
            **head,
            "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": USAGE,
        },
    )


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
        choice = {"index": 0, "delta": delta, "finish_reason": finish_reason}
        return {**head, "object": "chat.completion.chunk", "choices": [choice]}

    out = [event({"role": "assistant", "content": ""})]
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
