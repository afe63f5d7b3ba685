"""The guards: how the user-questions service checks its caller. One is the decision; the
others are TEST-ONLY copies of the alternatives the design document rejects and of the
behaviour before the fix, kept so the scenarios can prove they would catch each one
(`harness mutants`, the guard matrix), and one (`other-words`) that keeps the rule in
words of its own, as a foreign runtime does: what the `rule` conformance level accepts.

The reference runtime knows none of this. A guard is a whole user-questions pipeline
handed to it from outside: a service class (a subclass that replaces the caller check, or
the order of the checks) and, where the alternative lives in a tool, the tool set. The
decision is the runtime's own `UserQuestionService` and default tools, so what the
scenarios gate is exactly the code a real runtime runs. The faults a scenario injects
(faults.py) are composed around whichever guard runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from harness.runtime.questions import (
    CALLER_NOT_LIVE,
    DELEGATED_CALLER,
    Answer,
    AskUserQuestionRequest,
    UserQuestionError,
    UserQuestionService,
    check_caller,
    check_intents,
    check_not_aborted,
    check_not_empty,
)
from harness.runtime.registry import Agent
from harness.runtime.tools import (
    AskUserQuestionTool,
    ExitPlanModeTool,
    SubagentTool,
    Tool,
    ToolContext,
    ToolResult,
)
from harness.runtime.tools.ask_user_question import parse_questions
from harness.runtime.tools.exit_plan_mode import APPROVE, REVIEW_ID
from harness.scenario import DEFAULT_GUARD

# What the rejected depth guard said; it claimed an upward channel that does not exist.
HISTORICAL_DEPTH_MESSAGE = (
    "ask_user_question is unavailable to delegated subagents; delegate the question to the "
    "top-level agent"
)


# What a runtime that keeps the rule in its own words says instead (Claude Code refuses a
# subagent's AskUserQuestion in words of this kind, with no code).
OTHER_WORDS_MESSAGE = (
    "human interaction is not available inside subagents. Complete the task with the tools "
    "provided and return the unresolved question to the orchestrator in your final result."
)


@dataclass(frozen=True)
class Guard:
    name: str
    description: str
    service: type[UserQuestionService] = UserQuestionService
    tools: Callable[[], Sequence[Tool]] | None = None  # None: the runtime's default tools
    # A variant that still keeps the rule (in other words): no mutant for the matrix to
    # kill, but what `--level rule` must accept and `upstream` must not.
    keeps_rule: bool = False


class _PlainRefusal(UserQuestionError):
    name = "Error"  # a plain error, as a runtime without upstream's error class reports it


class _OtherWords(UserQuestionService):
    """The decision, refused in other words: the same callers refused, each as a plain
    error with no code and another text."""

    def check_caller(self, agent: Agent) -> None:
        try:
            super().check_caller(agent)
        except UserQuestionError as exc:
            raise _PlainRefusal("", OTHER_WORDS_MESSAGE) from exc


class _NoCallerCheck(UserQuestionService):
    """Before the fix: whoever asks reaches the provider."""

    def check_caller(self, agent: Agent) -> None:
        return None


class _DelegationDepth(UserQuestionService):
    """Rejected: lineage instead of ownership. It refuses a resumed root whose header says
    depth 1, admits a live child whose header says 0 (or nothing), and its message claims
    an upward channel."""

    def check_caller(self, agent: Agent) -> None:
        header = agent.session.header if agent.session is not None else None
        if header is not None and (header.delegation_depth or 0) > 0:
            raise UserQuestionError(DELEGATED_CALLER, HISTORICAL_DEPTH_MESSAGE)


class _IdEquality(UserQuestionService):
    """Liveness and roots compared by id, not object identity: a stale object borrows the
    standing of the live agent with its id."""

    def check_caller(self, agent: Agent) -> None:
        if self.agents is None or self.agents.get(agent.id) is None:
            raise UserQuestionError(CALLER_NOT_LIVE)
        if agent.id not in {root.id for root in self.agents.roots()}:
            raise UserQuestionError(DELEGATED_CALLER)


class _AfterIntent(UserQuestionService):
    """Ownership checked after intent validation: a child with a bad intent learns about its
    intent rather than that it may not ask at all."""

    async def ask(self, request: AskUserQuestionRequest) -> Sequence[Answer]:
        check_not_aborted(request)
        check_not_empty(request)
        check_intents(request)
        if request.agent is not None:
            self.check_caller(request.agent)
        return await self.dispatch(request)


class _CheckedAskUserQuestion(AskUserQuestionTool):
    """Rejected: the caller refused inside ask_user_question alone, so exit_plan_mode and
    direct callers, which share ctx.userQuestions.ask(), are not."""

    async def run(self, ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
        parse_questions(args)  # a malformed call is still told so first
        try:
            # ctx.agent is whoever the call carries: under a stale-caller fault, the stale
            # object the fault's tool wrapper handed in (faults.py), as ask() would see it.
            check_caller(ctx.runtime.agents, ctx.agent)
        except UserQuestionError as exc:
            return ToolResult.failed(exc.name, exc.code, exc.message)
        return await super().run(ctx, args)


def _tool_only_tools() -> list[Tool]:
    return [_CheckedAskUserQuestion(), ExitPlanModeTool(), SubagentTool()]


class _ApproveAny(ExitPlanModeTool):
    """Not a caller check but the plan review's verdict: approved whenever Approve is among
    the selections, so typed feedback, a second choice or a duplicate item still carries
    out a plan the human did not cleanly approve."""

    def approves(self, answers: Sequence[Answer]) -> bool:
        return any(a.id == REVIEW_ID and APPROVE in a.selected for a in answers)


def _approve_any_tools() -> list[Tool]:
    return [AskUserQuestionTool(), _ApproveAny(), SubagentTool()]


RUNTIME_OWNERSHIP = Guard(DEFAULT_GUARD, "the decision: exact live root, in ask()")

GUARDS: dict[str, Guard] = {
    g.name: g
    for g in (
        RUNTIME_OWNERSHIP,
        Guard("none", "before the fix: no caller check at all", _NoCallerCheck),
        Guard(
            "delegation-depth",
            "rejected: refuse when the durable header's delegation_depth > 0",
            _DelegationDepth,
        ),
        Guard(
            "tool-only",
            "rejected: checked inside ask_user_question only",
            _NoCallerCheck,
            _tool_only_tools,
        ),
        Guard("after-intent", "ownership checked after intent validation", _AfterIntent),
        Guard(
            "id-equality",
            "liveness and roots compared by id, not object identity",
            _IdEquality,
        ),
        Guard(
            "approve-any",
            "the plan review approved whenever Approve is among the selections",
            UserQuestionService,
            _approve_any_tools,
        ),
        Guard(
            "other-words",
            "the decision in other words: its refusals as plain errors, no code, another text",
            _OtherWords,
            keeps_rule=True,
        ),
    )
}


def guard_named(name: str) -> Guard:
    try:
        return GUARDS[name]
    except KeyError:
        known = ", ".join(GUARDS)
        raise ValueError(f"unknown guard {name!r}; choose one of: {known}") from None
