"""Which scripted agent a request is for, whether or not the runtime says.

Parent and child share one endpoint, so the fake must tell their requests apart. The
reference runtime names the agent in `X-Harness-Agent`; a real runtime does not, and no
scenario may depend on a header only this harness knows. So a request is routed, in order:

1. by `X-Harness-Agent`, when present: that agent;
2. by its conversation key, when the key is known: the agent it was assigned. The key is a
   header the runtime does send (`session_header`, e.g. `x-deepseek-harness-session-id`);
   without one, a conversation is known by the replies it carries (a tool call id or a
   text the fake gave exactly one agent);
3. otherwise it is a new conversation, assigned by content: a child whose pending
   delegation's prompt is in the request's user messages; else a session resumed under a
   new key (it carries an agent's replies); else the next root phase.

The delegation prompt is what ties a child to its parent's call: every runtime sends it to
the child, because it is the child's task. Two pending delegations whose prompts both match
cannot be told apart, and the fake says so instead of guessing. (Which tool spelling a
delegation travels in is harness.fake.dialect's.)
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness.contract import AGENT_HEADER
from harness.fake.dialect import DELEGATION_TOOL
from harness.fake.script import (
    AmbiguousDelegation,
    MalformedRequest,
    ScriptError,
    UnroutableRequest,
)

if TYPE_CHECKING:
    import httpx

    from harness.scenario import Turn

# Request extension: the agent routing decided on, or the error it raised.
_PLACED = "harness.agent"


def default_roots(scripts: Mapping[str, Sequence[Turn]]) -> list[str]:
    """Agents no scripted delegation names, in script order: the roots a caller of the fake
    starts, when it does not list them."""
    children = {
        c.args.get("name")
        for turns in scripts.values()
        for turn in turns
        for c in turn.calls
        if c.tool == DELEGATION_TOOL and isinstance(c.args, Mapping)
    }
    return [name for name in scripts if name not in children]


@dataclass(frozen=True)
class _Pending:
    child: str
    prompt: str
    parent: str


class Routes:
    """The fake's routing table: conversation keys, pending delegations, roots to come."""

    def __init__(self, roots: Sequence[str], session_header: str | None = None) -> None:
        self.session_header = session_header
        self.keys: dict[str, str] = {}  # conversation key -> agent, as assigned
        self._roots = deque(roots)
        self._started: list[str] = []
        self._pending: list[_Pending] = []
        self._call_owner: dict[str, str] = {}  # issued tool call id -> agent
        self._text_owners: dict[str, set[str]] = {}  # issued text -> agents it was given to

    def place(self, request: httpx.Request, body: Any) -> str:
        """The request's agent. Routing by content assigns keys and claims delegations, so
        it is decided once per request and kept on it (a hook may ask before the answer)."""
        placed = request.extensions.get(_PLACED)
        if placed is None:
            try:
                placed = self._route(request, body)
            except ScriptError as exc:
                placed = exc
            request.extensions[_PLACED] = placed
        if isinstance(placed, ScriptError):
            raise placed
        return str(placed)

    def _route(self, request: httpx.Request, body: Any) -> str:
        agent = request.headers.get(AGENT_HEADER)
        if agent is not None:
            return str(agent)
        messages = body.get("messages") if isinstance(body, dict) else None
        if not isinstance(messages, list):
            raise MalformedRequest(
                "body is not a chat completion request with 'messages', so no agent can be "
                "told from it"
            )
        return self.agent_for(self.key_of(request.headers), messages)

    def key_of(self, headers: Mapping[str, str]) -> str | None:
        if self.session_header is None:
            return None
        return headers.get(self.session_header)

    def agent_for(self, key: str | None, messages: Sequence[Any]) -> str:
        """The agent a request without `X-Harness-Agent` is for; remembers new keys."""
        if key is not None and key in self.keys:
            return self.keys[key]
        carried = self._carrier(messages)
        if key is None and carried is not None:
            agent = carried  # no key: a conversation is known by the replies it carries
        else:
            agent = self._delegated(messages) or carried or self._next_root(key, messages)
        if key is not None:
            self.keys[key] = agent
        return agent

    def issued(self, agent: str, message: Mapping[str, Any], delegations: Sequence[Any]) -> None:
        """Record a reply given to `agent`: its call ids and text identify the conversation
        later, and each delegation in it waits for its child's first request."""
        for call in message.get("tool_calls") or ():
            self._call_owner[call["id"]] = agent
        text = message.get("content")
        if text:
            self._text_owners.setdefault(text, set()).add(agent)
        for child, prompt in delegations:
            self._pending.append(_Pending(child, prompt, agent))

    def owner(self, call_id: str) -> str | None:
        """The agent a reply carrying the call `call_id` was given to."""
        return self._call_owner.get(call_id)

    # -- assignment by content ---------------------------------------------------------
    def _carrier(self, messages: Sequence[Any]) -> str | None:
        """The agent whose replies the conversation carries: the latest assistant message
        that identifies exactly one agent decides."""
        for message in reversed(messages):
            if not isinstance(message, dict) or message.get("role") != "assistant":
                continue
            calls = message.get("tool_calls")
            for call in calls if isinstance(calls, list) else ():
                owner = (
                    self._call_owner.get(str(call.get("id"))) if isinstance(call, dict) else None
                )
                if owner is not None:
                    return owner
            owners = self._text_owners.get(message_text(message.get("content")), set())
            if len(owners) == 1:
                return next(iter(owners))
        return None

    def _delegated(self, messages: Sequence[Any]) -> str | None:
        said = _user_texts(messages)
        found = [p for p in self._pending if any(p.prompt in text for text in said)]
        children = sorted({p.child for p in found})
        if len(children) > 1:
            raise AmbiguousDelegation(
                "a new conversation's user messages contain the prompts of pending delegations "
                f"to {' and '.join(children)} ({_quote(found[0].prompt)}); give each delegation "
                "a prompt of its own, or have the runtime send X-Harness-Agent"
            )
        if not found:
            return None
        self._pending = [p for p in self._pending if p.child != found[0].child]
        return found[0].child

    def _next_root(self, key: str | None, messages: Sequence[Any]) -> str:
        if self._roots:
            root = self._roots.popleft()
            self._started.append(root)
            return root
        pending = ", ".join(f"{p.child} {_quote(p.prompt)}" for p in self._pending) or "none"
        started = ", ".join(self._started) or "none"
        via = f"{self.session_header} {key!r}" if key is not None else "no session header"
        users = _user_texts(messages)
        raise UnroutableRequest(
            f"a new conversation ({via}; first user message {_quote(users[0] if users else '')}) "
            f"is no pending delegation's child (pending: {pending}) and no root phase is left "
            f"(started: {started}); send the delegation prompt verbatim in the child's user "
            "message, or name the agent in X-Harness-Agent"
        )


def _user_texts(messages: Sequence[Any]) -> list[str]:
    return [
        message_text(m.get("content"))
        for m in messages
        if isinstance(m, dict) and m.get("role") == "user"
    ]


def message_text(content: Any) -> str:
    """A message's text: a string, or the text parts of a list of content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
    return ""


def _quote(text: str, width: int = 60) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= width else flat[: width - 3] + "...")
