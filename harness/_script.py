"""What a script says, and every way a script can be misused: the data a scenario loads and
the fake LLM replays. Kept apart from the fake itself so loading scenarios does not import
an HTTP stack."""

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

    @classmethod
    def text(cls, text: str) -> Turn:
        return cls(say=text)

    @classmethod
    def tool(cls, tool: str, args: Mapping[str, Any], label: str | None = None) -> Turn:
        return cls(calls=(Call(tool, args, label),))


class ScriptError(Exception):
    """A request the script cannot answer. The message names the agent and the step."""

    code = "script_error"

    def __init__(
        self,
        message: str,
        *,
        agent: str | None = None,
        step: int | None = None,
        param: str | None = None,
    ):
        super().__init__(message)
        self.agent = agent
        self.step = step
        self.param = param  # the request field at fault, as OpenAI's errors name it


class UnroutableRequest(ScriptError):
    """A request no routing rule places: no agent header, no known conversation, no pending
    delegation's prompt, and no root phase left."""

    code = "unroutable_request"


class AmbiguousDelegation(ScriptError):
    """A new conversation that two pending delegations' prompts both match."""

    code = "ambiguous_delegation"


class UnknownAgent(ScriptError):
    code = "unknown_agent"


class ScriptExhausted(ScriptError):
    code = "script_exhausted"


class UnresolvedTemplate(ScriptError):
    code = "unresolved_template"


class MalformedRequest(ScriptError):
    code = "malformed_request"


class InvalidConversation(ScriptError):
    """A request whose messages a real API would refuse: an unknown role, a tool result
    with no tool call before it, or a tool call left unanswered."""

    code = "invalid_conversation"


class UndeclaredTool(ScriptError):
    """The script calls a tool the request did not declare (strict mode): a real model
    cannot, so the script and the runtime disagree about the tools."""

    code = "undeclared_tool"


class MalformedArguments(ScriptError):
    """A scripted call whose arguments cannot travel as a JSON object."""

    code = "malformed_arguments"


class UnconsumedSteps(ScriptError):
    code = "unconsumed_steps"
