from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from harness.runtime.questions import AskUserQuestionRequest, UserQuestionError
from harness.runtime.waits import ANSWERER, NO_ANSWERER

if TYPE_CHECKING:
    from collections.abc import Sequence

    from harness.runtime.core import Runtime
    from harness.runtime.questions import AbortSignal, Answer, Question
    from harness.runtime.registry import Agent


@dataclass(frozen=True)
class ToolErrorInfo:
    name: str
    code: str


@dataclass(frozen=True)
class ToolResult:
    content: str
    error: ToolErrorInfo | None = None
    # Set on a subagent handoff, so the parent's durable result names the child it came from.
    child: str | None = None

    @property
    def is_error(self) -> bool:
        return self.error is not None

    @classmethod
    def failed(cls, name: str, code: str, message: str) -> ToolResult:
        # The code stays out of the model-visible text, as upstream does; it lives in the
        # durable event only.
        return cls(content=f"Error: {message}", error=ToolErrorInfo(name, code))


class ToolArgumentError(Exception):
    """The model's arguments do not fit the tool's schema."""


@dataclass(frozen=True)
class ToolContext:
    runtime: Runtime
    agent: Agent
    call_id: str
    signal: AbortSignal


class Tool(Protocol):
    @property
    def name(self) -> str: ...

    # Upstream's isConcurrencySafe: consecutive calls of such tools in one reply run
    # together; any other call runs alone, after the ones before it finish.
    @property
    def concurrency_safe(self) -> bool: ...

    @property
    def schema(self) -> dict[str, Any]: ...

    async def run(self, ctx: ToolContext, args: dict[str, Any]) -> ToolResult: ...


async def ask_user(
    ctx: ToolContext, tool: str, questions: Sequence[Question]
) -> Sequence[Answer] | ToolResult:
    """The path both human-interaction consumers share: forward the caller and the call's
    abort signal to ctx.userQuestions.ask(), recording the wait so a deadlock can name it.

    A UserQuestionError comes back as the failed tool result, unchanged, so every consumer
    shows the model the same text.
    """
    request = AskUserQuestionRequest(questions=questions, agent=ctx.agent, signal=ctx.signal)
    try:
        return await _ask(ctx, tool, request)
    except UserQuestionError as exc:
        return ToolResult.failed(exc.name, exc.code, exc.message)


async def _ask(ctx: ToolContext, tool: str, request: AskUserQuestionRequest) -> Sequence[Answer]:
    questions = ctx.runtime.questions
    # Only composed beside a service (see Runtime); exit_plan_mode checks before asking.
    assert questions is not None, f"{tool} asked with no user-questions service composed"
    target = ANSWERER if questions.provider is not None else NO_ANSWERER
    ids = ", ".join(f'"{q.id}"' for q in request.questions)
    with ctx.runtime.waits.awaiting(ctx.agent.id, f"answer to {ids}", target):
        return await questions.ask(request)


def function_schema(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


def require_str(args: dict[str, Any], key: str, where: str) -> str:
    value = args.get(key)
    if not isinstance(value, str) or not value:
        raise ToolArgumentError(f"{where}: '{key}' must be a non-empty string")
    return value
