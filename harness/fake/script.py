"""Every way a script can be misused, one exception each: the fake records it and answers
HTTP 400 (401 for a foreign credential) with the wire's error body, whose `code` is the
exception's, and `param` the request field at fault when there is one."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness.scenario import Scenario


class ScriptError(Exception):
    """A request the script cannot answer. The message names the agent and the step."""

    code = "script_error"
    status = 400

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


class ForeignCredential(ScriptError):
    """A request carrying a credential other than the harness's sentinel key: a real key
    leaked into a keyless run. Its value is never repeated."""

    code = "invalid_api_key"
    status = 401


def script_error_text(error: ScriptError, scenario: Scenario) -> str:
    """A script error, ending with where to fix it: the scenario file and, when the error
    belongs to an agent, the JSON pointer of the step (or of the script, for a step that is
    not there)."""
    where = str(scenario.path)
    with contextlib.suppress(ValueError):
        where = str(scenario.path.resolve().relative_to(Path.cwd()))
    agent = scenario.agents.get(error.agent or "")
    if agent is not None:
        step = error.step or 0
        at = f"/agents/{agent.name}/script"
        where += f": {at}/{step - 1}" if 1 <= step <= len(agent.script) else f": {at}"
    return f"{error} ({where})"
