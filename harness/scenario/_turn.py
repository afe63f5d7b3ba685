"""What a script says: one agent's scripted replies, the data a scenario loads and the fake
LLM replays. Kept here, below the fake, so loading scenarios imports no HTTP stack."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Call:
    tool: str
    args: Mapping[str, Any]
    label: str | None = None


@dataclass(frozen=True)
class Turn:
    """One scripted assistant reply: text, tool calls, or both."""

    say: str | None = None
    calls: tuple[Call, ...] = ()
    # The agent whose script must end before this reply is served (the fake holds it).
    after: str | None = None

    @classmethod
    def text(cls, text: str) -> Turn:
        return cls(say=text)

    @classmethod
    def tool(cls, tool: str, args: Mapping[str, Any], label: str | None = None) -> Turn:
        return cls(calls=(Call(tool, args, label),))
