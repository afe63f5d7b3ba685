"""Anthropic Messages (POST {base}/messages; Claude Code's `?beta=true` query is ignored).

The request is translated at the edge into the conversation the rest of the fake already
checks, routes, compares with its history and logs the prefix of: a Chat Completions-shaped
body (`conversation`). So request checks, content routing (the child's first user message
carries the delegation prompt), the history check and the prefix log stay one
implementation. The reply goes the other way: the rendered turn, an assistant message in
Chat Completions shape, becomes one JSON `message`, or the SSE events Anthropic streams;
and a refused request gets Anthropic's error shape, with the fake's error code in a header.

What does not carry over, and why:
- the message numbers in an `invalid_conversation` error count the translated messages: a
  user message holding tool results is one `tool` message per `tool_result` block (and a
  `user` one for its other blocks, in their order), and `system` is message 0;
- `stream_options` is no Messages field: usage is always sent;
- a `system` message among the others (the `mid-conversation-system` beta Claude Code
  sends) is a Chat Completions system message where it stands, which the history check
  passes over as it does every system message;
- a tool_result's `is_error` is not carried: no check could read it (Chat Completions has
  no such flag); a template's `{{label.result}}` is the result's text, error or not;
- `thinking` and `redacted_thinking` blocks of an assistant message are left out: the fake
  never sends any, so they are no part of the conversation it served;
- the history check compares a `tool_use`'s `input` re-encoded as the fake encodes
  arguments (in the order sent): a runtime that reorders its keys is told its history
  differs, as a Chat Completions runtime that rewrites an arguments string is;
- Anthropic's ordering rules (the first message a user one, no two assistant messages in a
  row) are not checked: Chat Completions has none, so there is no shared check to apply;
- the prefix log keeps each tool's name, description and input_schema (as a function's
  name, description and parameters), not other keys such as `cache_control`; `system` is
  kept as sent, string or blocks.
"""

from __future__ import annotations

import json
from typing import Any

from harness.fake.script import MalformedRequest
from harness.fake.wires import Answer, Endpoint
from harness.fake.wires.chat_completions import JSON_TYPE, SSE_TYPE, pieces, usage

PATH = "/messages"  # below the base URL
# Where an error's fake-specific detail goes: the body keeps Anthropic's shape, {type,
# error: {type, message}}, and the message the same text as on the Chat Completions wire.
CODE_HEADER = "x-harness-error-code"
PARAM_HEADER = "x-harness-error-param"
TOOL_USE_PREFIX = "toolu_"  # the fake's tool call ids, as Anthropic spells them

_encode = json.JSONEncoder(ensure_ascii=False, check_circular=False).encode
_ERROR_TYPES = {
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}
# A system message among the others is the `mid-conversation-system` beta, which Claude
# Code sends (its agent list, reminders after tool results): a string or text blocks.
_ROLES = ("user", "assistant", "system")


# -- the request ----------------------------------------------------------------------
def conversation(body: Any, *, strict: bool, agent: str | None) -> dict[str, Any]:
    """The Chat Completions-shaped body the fake's checks and routing read: `model` and
    `stream` as sent, `system` as the first message, each message translated, each tool as
    a function. MalformedRequest, before any step is spent, for a body that is no Messages
    request (`agent` as the agent header names it; `param` the field at fault)."""
    problem = _problem(body, strict=strict)
    if problem is not None:
        param, text = problem
        raise MalformedRequest(text, agent=agent, step=None, param=param)
    out = {key: body[key] for key in ("model", "stream") if key in body}
    system = body.get("system")
    messages: list[dict[str, Any]] = (
        [] if system is None else [{"role": "system", "content": system}]
    )
    for message in body["messages"]:
        messages += _translated(message)
    out["messages"] = messages
    if body.get("tools") is not None:
        out["tools"] = [_function(tool) for tool in body["tools"]]
    return out


def _problem(body: Any, *, strict: bool) -> tuple[str | None, str] | None:
    """(param, message) for a body no step may be spent on; None if it is a Messages
    request. `model` and `stream` are checked on the translation, as on the other wire."""
    if not isinstance(body, dict):
        kind = "no JSON" if body is None else f"a JSON {type(body).__name__}"
        return None, f"the body is {kind}, not a messages request object"
    tokens = body.get("max_tokens")
    if strict and (type(tokens) is not int or tokens < 1):
        return "max_tokens", "max_tokens: a positive integer is required"
    system = body.get("system")
    if system is not None and not isinstance(system, str) and not _texts(system):
        return "system", "'system' must be a string or an array of {type: text, text} blocks"
    messages = body.get("messages")
    if not isinstance(messages, list):
        return "messages", "body is not a messages request with 'messages'"
    for i, message in enumerate(messages):
        where = f"messages.{i}"
        if not isinstance(message, dict) or message.get("role") not in _ROLES:
            return where, f"{where}: a message is {{role: user, assistant or system, content}}"
        content = message.get("content")
        if isinstance(content, str):
            continue
        if message["role"] == "system" and not _texts(content):
            return f"{where}.content", f"{where}.content: a system message is text"
        if not isinstance(content, list):
            return f"{where}.content", f"{where}.content: a string or an array of blocks"
        for j, block in enumerate(content):
            wrong = _block_problem(message["role"], block)
            if wrong is not None:
                return f"{where}.content.{j}", f"{where}.content.{j}: {wrong}"
    tools = body.get("tools")
    if tools is not None and (
        not isinstance(tools, list)
        or not all(isinstance(t, dict) and isinstance(t.get("name"), str) for t in tools)
    ):
        return "tools", "'tools' must be an array of {name, description, input_schema}"
    return None


def _texts(blocks: Any) -> bool:
    return isinstance(blocks, list) and all(
        isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        for b in blocks
    )


def _block_problem(role: str, block: Any) -> str | None:
    kind = block.get("type") if isinstance(block, dict) else None
    if not isinstance(kind, str):
        return "a content block is an object with a string type"
    if kind == "text" and not isinstance(block.get("text"), str):
        return "a text block needs a string text"
    if kind == "tool_use":
        if role != "assistant":
            return "a tool_use block belongs in an assistant message"
        if not isinstance(block.get("id"), str) or not isinstance(block.get("name"), str):
            return "a tool_use block needs a string id and name"
        if not isinstance(block.get("input"), dict):
            return "a tool_use block's input is an object"
    if kind == "tool_result":
        if role != "user":
            return "a tool_result block belongs in a user message"
        if not isinstance(block.get("tool_use_id"), str):
            return "a tool_result block needs a string tool_use_id"
        result = block.get("content")
        if result is not None and not isinstance(result, str | list):
            return "a tool_result's content is a string or an array of blocks"
    return None


def _translated(message: dict[str, Any]) -> list[dict[str, Any]]:
    """One Messages message as the Chat Completions messages it amounts to."""
    role, content = message["role"], message["content"]
    if isinstance(content, str) or role == "system":
        return [{"role": role, "content": content}]
    if role == "assistant":
        said = [b["text"] for b in content if b["type"] == "text"]
        out: dict[str, Any] = {"role": "assistant", "content": "".join(said) if said else None}
        calls = [_call(b) for b in content if b["type"] == "tool_use"]
        if calls:
            out["tool_calls"] = calls
        return [out]
    # A user message: each tool_result a tool message, the blocks between them user ones.
    translated: list[dict[str, Any]] = []
    parts: list[Any] = []
    for block in content:
        if block["type"] != "tool_result":
            parts.append(block)
            continue
        if parts:
            translated.append({"role": "user", "content": parts})
            parts = []
        result = block.get("content") or ""
        translated.append({"role": "tool", "tool_call_id": block["tool_use_id"], "content": result})
    if parts or not translated:
        translated.append({"role": "user", "content": parts})
    return translated


def _call(block: dict[str, Any]) -> dict[str, Any]:
    # Encoded as the fake encodes a scripted call's arguments (harness.fake.reply).
    arguments = json.dumps(block["input"], ensure_ascii=False, separators=(",", ":"))
    return {
        "id": block["id"],
        "type": "function",
        "function": {"name": block["name"], "arguments": arguments},
    }


def _function(tool: dict[str, Any]) -> dict[str, Any]:
    function = {"name": tool["name"]}
    if "description" in tool:
        function["description"] = tool["description"]
    if "input_schema" in tool:
        function["parameters"] = tool["input_schema"]
    return {"type": "function", "function": function}


# -- the answer -----------------------------------------------------------------------
def error(status: int, message: str, code: str, param: str | None = None) -> Answer:
    """Anthropic's error shape, {"type": "error", "error": {"type", "message"}}; the fake's
    code (and the field at fault, if any) in the `x-harness-error-code` (-param) header."""
    kind = _ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
    body = {"type": "error", "error": {"type": kind, "message": message}}
    headers = ((CODE_HEADER, code),) + (((PARAM_HEADER, param),) if param else ())
    return Answer(status, JSON_TYPE, (_encode(body).encode(),), headers=headers)


def blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The rendered turn's content blocks: its text (if any), then each tool call."""
    out: list[dict[str, Any]] = []
    if message.get("content"):
        out.append({"type": "text", "text": message["content"]})
    for call in message.get("tool_calls") or ():
        function = call["function"]
        tool_use = {"type": "tool_use", "id": call["id"], "name": function["name"]}
        out.append({**tool_use, "input": json.loads(function["arguments"])})
    return out


def reply(
    request: dict[str, Any],
    message: dict[str, Any],
    *,
    serial: int,
    created: int,
    model: str,
    chunk: int | None,
) -> Answer:
    """The message answering `request` (the translated, checked request: its stream,
    messages and model) with `message`. `serial` numbers its id (`msg_N`), `model` the name
    sent when the request gives none, `chunk` characters per streamed delta (None: each
    string whole); a message carries no time, so `created` is not sent. Usage is the Chat
    Completions wire's estimate, under Anthropic's names."""
    stop = "tool_use" if message.get("tool_calls") else "end_turn"
    counted = usage(request, message)
    head = {
        "id": f"msg_{serial}",
        "type": "message",
        "role": "assistant",
        "model": request.get("model", model),
    }
    if request.get("stream"):
        sent = events(
            head, message, stop, counted["prompt_tokens"], counted["completion_tokens"], chunk
        )
        return Answer(200, SSE_TYPE, tuple(_sse(name, data) for name, data in sent), streamed=True)
    spent = {
        "input_tokens": counted["prompt_tokens"],
        "output_tokens": counted["completion_tokens"],
    }
    body = {**head, "content": blocks(message), "stop_reason": stop, "stop_sequence": None,
            "usage": spent}  # fmt: skip
    return Answer(200, JSON_TYPE, (_encode(body).encode(),))


def _sse(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {_encode(data)}\n\n".encode()


def events(
    head: dict[str, Any],
    message: dict[str, Any],
    stop: str,
    input_tokens: int,
    output_tokens: int,
    chunk: int | None = None,
) -> list[tuple[str, dict[str, Any]]]:
    """The stream as (event name, data): message_start, per block a content_block_start, its
    deltas and a content_block_stop (blocks numbered by `index` from 0, the text first), then
    message_delta with the stop reason and usage, and message_stop. No `ping`: clients must
    take one, and need none."""
    start = {**head, "content": [], "stop_reason": None, "stop_sequence": None,
             "usage": {"input_tokens": input_tokens, "output_tokens": 0}}  # fmt: skip
    out: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": start})
    ]
    opened: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []  # (block, its deltas)
    if message.get("content"):
        texts = pieces(message["content"], chunk)
        opened.append(
            ({"type": "text", "text": ""}, [{"type": "text_delta", "text": t} for t in texts])
        )
    for call in message.get("tool_calls") or ():
        function = call["function"]
        block = {"type": "tool_use", "id": call["id"], "name": function["name"], "input": {}}
        parts = pieces(function["arguments"], chunk)
        opened.append((block, [{"type": "input_json_delta", "partial_json": p} for p in parts]))
    for index, (block, deltas) in enumerate(opened):
        at = {"index": index}
        out.append(("content_block_start",
                    {"type": "content_block_start", **at, "content_block": block}))  # fmt: skip
        out += [("content_block_delta", {"type": "content_block_delta", **at, "delta": d})
                for d in deltas]  # fmt: skip
        out.append(("content_block_stop", {"type": "content_block_stop", **at}))
    delta = {"stop_reason": stop, "stop_sequence": None}
    out.append(("message_delta", {"type": "message_delta", "delta": delta,
                                  "usage": {"output_tokens": output_tokens}}))  # fmt: skip
    out.append(("message_stop", {"type": "message_stop"}))
    return out


ENDPOINT = Endpoint(
    "anthropic_messages", PATH, conversation, reply, error, call_prefix=TOOL_USE_PREFIX
)
