"""A request a runtime makes beside its agents' turns (the dialect's `side`): a title, a memory
summary, which it has no setting to turn off. The fake answers it without consuming a
script, so it never passes for an agent's turn."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


class SideError(ValueError):
    """A declared side request that cannot be used; the message names where and why."""


@dataclass(frozen=True)
class Side:
    """A request a runtime makes beside its agents' turns (a title, a memory summary),
    which it has no setting to turn off: known by declaring no tools (`no_tools`) and by a
    text one of its messages contains (`contains`), both when both are given; answered
    with `reply` and routed to no agent, so it consumes no scripted step."""

    about: str
    reply: str
    no_tools: bool = False
    contains: str | None = None

    def matches(self, conversation: Mapping[str, Any]) -> bool:
        if self.no_tools and conversation.get("tools"):
            return False
        if self.contains is not None:
            texts = [_message_text(m) for m in conversation.get("messages") or ()]
            return any(self.contains in t for t in texts)
        return True

    @classmethod
    def from_json(cls, value: Any, where: str) -> Side:
        keys = {"about", "reply", "no_tools", "contains"}
        if not isinstance(value, dict) or set(value) - keys or not {"about", "reply"} <= set(value):
            raise SideError(f"{where}: write {{about, reply, no_tools?, contains?}}")
        about, reply = value["about"], value["reply"]
        no_tools, contains = value.get("no_tools", False), value.get("contains")
        if not all(isinstance(v, str) and v for v in (about, reply)):
            raise SideError(f"{where}: about and reply are non-empty strings")
        if not isinstance(no_tools, bool) or not isinstance(contains, str | None):
            raise SideError(f"{where}: no_tools is true or false, contains a string")
        if not no_tools and not contains:
            raise SideError(f"{where}: say how it is known: no_tools, contains, or both")
        return cls(about, reply, no_tools, contains)


def _message_text(message: Any) -> str:
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""
