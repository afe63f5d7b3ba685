"""A request's conversation, checked as a real Chat Completions API checks it, so a runtime
that garbles its own history finds out here and not in production.

Each message has a known role; a tool message answers a tool call of the assistant message
it follows; and an assistant message's tool calls are all answered before anything else is
said. The most common way to break this is to send tool results without the assistant
message that made the calls, which real APIs refuse.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

ROLES = ("system", "developer", "user", "assistant", "tool")


def conversation_problem(messages: Sequence[Any]) -> str | None:
    """What is wrong with `messages` as a conversation, in one sentence; None if nothing."""
    if not messages:
        return "the request has no messages; send at least the task as a user message"
    open_calls: dict[str, int] = {}  # tool call id -> the assistant message that made it
    for i, message in enumerate(messages):
        where = f"message {i}"
        if not isinstance(message, dict):
            return f"{where} is not an object"
        role = message.get("role")
        if role not in ROLES:
            return f"{where} has role {role!r}; a message's role is one of {', '.join(ROLES)}"
        if role == "tool":
            call = message.get("tool_call_id")
            if call not in open_calls:
                return (
                    f"{where} (tool) answers tool call {call!r}, which the assistant message "
                    "before it did not make; send the assistant message with its tool_calls, "
                    "then one tool message per call"
                )
            del open_calls[call]
            continue
        if open_calls:
            unanswered = ", ".join(sorted(open_calls))
            return (
                f"{where} ({role}) comes while tool call(s) {unanswered} of message "
                f"{min(open_calls.values())} have no tool message; answer every tool call "
                "right after the assistant message that made it"
            )
        if role == "assistant":
            calls = message.get("tool_calls") or []
            if not isinstance(calls, list):
                return f"{where} (assistant) has tool_calls that are not a list"
            for call in calls:
                call_id = call.get("id") if isinstance(call, dict) else None
                if not isinstance(call_id, str):
                    return f"{where} (assistant) has a tool call without a string id"
                wrong = _call_problem(call)
                if wrong:
                    return f"{where} (assistant) tool call {call_id!r} {wrong}"
                open_calls[call_id] = i
    return None


def _call_problem(call: dict[str, Any]) -> str | None:
    """A tool call sent back as the API takes it: {id, type: function, function: {name,
    arguments}}, both strings; a runtime that drops one replays a history no API reads."""
    function = call.get("function")
    if call.get("type") != "function":
        return "needs type 'function'"
    if not isinstance(function, dict):
        return "needs a function object {name, arguments}"
    for key in ("name", "arguments"):
        if not isinstance(function.get(key), str):
            return f"needs function.{key} as a string"
    return None


def comparable(message: Any) -> tuple[Any, ...]:
    """A message as the model saw it, with the spellings runtimes vary in made equal: no
    content, null and "" are one; a tool call is its id, name and arguments."""
    if not isinstance(message, dict):
        return (repr(message),)
    calls = tuple(
        (
            c.get("id"),
            (c.get("function") or {}).get("name"),
            (c.get("function") or {}).get("arguments"),
        )
        for c in message.get("tool_calls") or ()
        if isinstance(c, dict)
    )
    return (message.get("role"), message.get("content") or "", calls, message.get("tool_call_id"))


def continuation_problem(served: Sequence[Any], messages: Sequence[Any]) -> str | None:
    """Whether `messages` carries on the conversation `served` (the last request's messages
    and the reply the fake gave it, system messages left out): a runtime must send its
    whole history back, the model's own reply included, unchanged."""
    sent = [m for m in messages if not (isinstance(m, dict) and m.get("role") == "system")]
    for i, (want, got) in enumerate(zip(served, sent, strict=False)):
        if comparable(want) != comparable(got):
            return (
                f"the history differs from what was served at message {i} (system messages "
                f"aside): expected {_brief(want)}, got {_brief(got)}; send the conversation "
                "back whole, the model's replies included, as the model saw it"
            )
    if len(sent) <= len(served):
        return (
            f"the history has {len(sent)} message(s), but {len(served)} were already served "
            "and a request adds at least one; send the whole conversation each time"
        )
    return None


def _brief(message: Any) -> str:
    role, content, calls, _ = comparable(message)
    said = f"{content[:60]!r}" if content else ""
    called = ", ".join(f"{name}({cid})" for cid, name, _ in calls)
    return f"{role}: {' '.join(filter(None, [said, called])) or '(empty)'}"
