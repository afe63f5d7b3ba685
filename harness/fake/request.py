"""A Chat Completions request checked before it may consume a scripted step: a request the
real API would refuse is refused here too, with `param` naming the field, so a runtime
finds its mistake in its own test suite rather than in production.

Shape checks always apply (a step must never be spent on a request that cannot be
answered), and so do the conversation's, checked once the agent is known so the message
can name it: each message has a known role; a tool message answers a tool call of the
assistant message it follows; and an assistant message's tool calls are all answered
before anything else is said. The most common way to break this is to send tool results
without the assistant message that made the calls, which real APIs refuse. Strict mode,
`harness serve`'s default, adds what the real API demands but an in-process test may leave
out: a `model`, and only declared tools in a scripted reply.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl

import httpx

from harness.contract import SENTINEL_KEY
from harness.fake.script import (
    ForeignCredential,
    InvalidConversation,
    MalformedRequest,
    UndeclaredTool,
)

if TYPE_CHECKING:
    from harness.scenario import Turn

Problem = tuple[str | None, str]  # (param, message)
ROLES = ("system", "developer", "user", "assistant", "tool")


# Where a client puts a key: OpenAI's bearer token, Anthropic's and Azure's key headers,
# Google's. A proxy's credentials count too: nothing but loopback is ever spoken to.
CREDENTIAL_HEADERS = (
    "authorization", "proxy-authorization", "x-api-key", "api-key", "x-goog-api-key"
)  # fmt: skip


# Where a client puts a key in the query: Google's `?key=` (curl examples, LiteLLM).
CREDENTIAL_PARAMS = ("key",)

_CREDENTIALS = {name.encode("ascii"): name for name in CREDENTIAL_HEADERS}


def check_credentials(headers: httpx.Headers, agent: str | None, query: bytes = b"") -> None:
    """ForeignCredential unless every credential header is absent or carries exactly the
    sentinel key (as a bearer token in an authorization header), and so does every
    credential parameter of the `query` (the raw query string)."""
    if query:
        for param, value in parse_qsl(query.decode("latin-1")):
            if param in CREDENTIAL_PARAMS and value.strip() != SENTINEL_KEY:
                raise ForeignCredential(
                    f"query parameter {param} carries a credential that is not the harness's "
                    f"sentinel key; a keyless run sends none, or exactly {SENTINEL_KEY} "
                    "(harness.contract.SENTINEL_KEY)",
                    agent=agent,
                    param=param,
                )
    # One pass over the raw headers, not a lookup per name: each lookup walks them all.
    found: dict[str, list[str]] = {}
    for raw_name, raw_value in headers.raw:
        name = _CREDENTIALS.get(raw_name.lower())
        if name is not None:
            found.setdefault(name, []).append(raw_value.decode(headers.encoding))
    for name in CREDENTIAL_HEADERS:
        for value in found.get(name, ()):
            key = value.strip()
            if name.endswith("authorization") and key[:7].lower() == "bearer ":
                key = key[7:].strip()
            if key != SENTINEL_KEY:
                raise ForeignCredential(
                    f"header {name} carries a credential that is not the harness's sentinel "
                    f"key; a keyless run sends none, or exactly {SENTINEL_KEY} "
                    "(harness.contract.SENTINEL_KEY)",
                    agent=agent,
                    param=name,
                )


def check_request(body: Any, *, strict: bool, agent: str | None) -> None:
    """MalformedRequest for a body no step may be spent on; `agent` as the header names it."""
    problem = request_problem(body, strict=strict)
    if problem is not None:
        param, text = problem
        raise MalformedRequest(text, agent=agent, step=None, param=param)


def checked_messages(
    agent: str, step: int, body: dict[str, Any], history: Sequence[Any] | None
) -> list[Any]:
    """The request's messages, once they are a conversation a real API would take and, when
    `history` is given (the conversation as served), one that carries it on."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        raise MalformedRequest(
            f"agent {agent}, step {step}: body is not a chat completion request with 'messages'",
            agent=agent,
            step=step,
            param="messages",
        )
    wrong = conversation_problem(messages)
    if wrong is not None:
        raise InvalidConversation(
            f"agent {agent}, step {step}: {wrong}", agent=agent, step=step, param="messages"
        )
    if history is not None:
        broken = continuation_problem(history, messages)
        if broken is not None:
            raise InvalidConversation(
                f"agent {agent}, step {step}: {broken}", agent=agent, step=step, param="messages"
            )
    return messages


def check_declared(agent: str, step: int, message: dict[str, Any], body: dict[str, Any]) -> None:
    """UndeclaredTool when a scripted reply calls a tool the request declared none for."""
    missing = undeclared(message, body)
    if missing:
        declared = ", ".join(sorted(str(t["function"]["name"]) for t in body.get("tools") or ()))
        raise UndeclaredTool(
            f"agent {agent}, step {step}: the script calls {', '.join(missing)}, but the "
            f"request declared {'only ' + declared if declared else 'no tools'}; a real "
            "model can only call declared tools, so the runtime and the script disagree",
            agent=agent,
            step=step,
            param="tools",
        )


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


# -- the conversation ---------------------------------------------------------------------
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
