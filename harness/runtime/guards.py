"""Where and how the caller check runs. The decision is `runtime-ownership`; every other
variant is TEST-ONLY: a faithful copy of an alternative the design document rejects, or of
the behaviour before the fix, kept so the scenarios can prove they would catch it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from harness.runtime.questions import (
    DELEGATED_CALLER,
    UserQuestionError,
    check_caller,
)
from harness.runtime.registry import Agent, AgentRegistry

# What the rejected depth guard said; it claimed an upward channel that does not exist.
HISTORICAL_DEPTH_MESSAGE = (
    "ask_user_question is unavailable to delegated subagents; delegate the question to the "
    "top-level agent"
)

Check = Callable[[AgentRegistry | None, Agent], None]


@dataclass(frozen=True)
class Guard:
    name: str
    check: Check | None
    # before-intent (the decision), after-intent, or tool (inside ask_user_question only)
    position: str = "before-intent"
    description: str = ""


def _delegation_depth(agents: AgentRegistry | None, agent: Agent) -> None:
    header = agent.session.header if agent.session is not None else None
    if header is not None and (header.delegation_depth or 0) > 0:
        raise UserQuestionError(DELEGATED_CALLER, HISTORICAL_DEPTH_MESSAGE)


def _id_equality(agents: AgentRegistry | None, agent: Agent) -> None:
    from harness.runtime.questions import CALLER_NOT_LIVE

    if agents is None or agents.get(agent.id) is None:
        raise UserQuestionError(CALLER_NOT_LIVE)
    if agent.id not in {root.id for root in agents.roots()}:
        raise UserQuestionError(DELEGATED_CALLER)


RUNTIME_OWNERSHIP = Guard(
    "runtime-ownership", check_caller, description="the decision: exact live root, in ask()"
)

GUARDS: dict[str, Guard] = {
    g.name: g
    for g in (
        RUNTIME_OWNERSHIP,
        Guard("none", None, description="before the fix: no caller check at all"),
        Guard(
            "delegation-depth",
            _delegation_depth,
            description="rejected: refuse when the durable header's delegation_depth > 0",
        ),
        Guard(
            "tool-only",
            check_caller,
            position="tool",
            description="rejected: checked inside ask_user_question only",
        ),
        Guard(
            "after-intent",
            check_caller,
            position="after-intent",
            description="ownership checked after intent validation",
        ),
        Guard(
            "id-equality",
            _id_equality,
            description="liveness and roots compared by id, not object identity",
        ),
    )
}


def guard_named(name: str) -> Guard:
    try:
        return GUARDS[name]
    except KeyError:
        known = ", ".join(GUARDS)
        raise ValueError(f"unknown guard {name!r}; choose one of: {known}") from None
