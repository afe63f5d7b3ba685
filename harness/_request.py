"""A Chat Completions request checked before it may consume a scripted step: a request the
real API would refuse is refused here too, with `param` naming the field, so a runtime
finds its mistake in its own test suite rather than in production.

Shape checks always apply (a step must never be spent on a request that cannot be
answered), and so do the conversation's (harness._conversation, checked once the agent is
known, so the message can name it). Strict mode, `harness serve`'s default, adds what the
real API demands but an in-process test may leave out: a `model`, and only declared tools
in a scripted reply.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness._script import Turn

Problem = tuple[str | None, str]  # (param, message)


def request_problem(body: Any, *, strict: bool) -> Problem | None:
    if not isinstance(body, dict):
        kind = "no JSON" if body is None else f"a JSON {type(body).__name__}"
        return None, f"the body is {kind}, not a chat completion request object"
    model = body.get("model")
    if strict and (not isinstance(model, str) or not model):
        return "model", "you must provide a model parameter (any non-empty string)"
    if "stream" in body and not isinstance(body["stream"], bool | None):
        return "stream", "'stream' must be true or false"
    options = body.get("stream_options")
    if options is not None and not isinstance(options, dict):
        return "stream_options", "'stream_options' must be an object such as {include_usage: true}"
    tools = body.get("tools")
    if tools is not None and (
        not isinstance(tools, list) or not all(declared_name(t) is not None for t in tools)
    ):
        return "tools", "'tools' must be an array of {type: function, function: {name, ...}}"
    return None


def declared_name(tool: Any) -> str | None:
    function = tool.get("function") if isinstance(tool, dict) else None
    name = function.get("name") if isinstance(function, dict) else None
    return name if isinstance(name, str) else None


def undeclared(message: dict[str, Any], body: dict[str, Any]) -> list[str]:
    """The tool calls in a scripted reply that the request declared no tool for."""
    declared = {declared_name(t) for t in body.get("tools") or ()}
    names = [c["function"]["name"] for c in message.get("tool_calls") or ()]
    return [name for name in names if name not in declared]


def parsed(content: bytes) -> Any:
    """The request body as JSON, or None when it is none."""
    try:
        return json.loads(content)
    except (ValueError, RecursionError):  # not JSON, or nested deeper than Python parses
        return None


def describe(body: Any) -> str:
    """A request in a few words, for an error message: its last message, clipped."""
    if not isinstance(body, dict) or not body.get("messages"):
        return "(no messages)"
    last = body["messages"][-1]
    if not isinstance(last, dict):
        return "(malformed last message)"
    content = last.get("content")
    text = content if isinstance(content, str) else json.dumps(content)
    if len(text) > 120:
        text = text[:117] + "..."
    return f"{len(body['messages'])} messages, last {last.get('role')}: {text!r}"


def describe_turn(turn: Turn) -> str:
    if turn.calls:
        return "call " + ", ".join(c.tool for c in turn.calls)
    return f"say {turn.say!r}"
