"""The user-questions service: the one seam every human-interaction consumer shares.

`ask_user_question`, `exit_plan_mode` and direct programmatic callers all come through
`UserQuestionService.ask()`, so the delegated-caller guard lives here and nowhere else.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from harness.runtime.registry import AbortSignal as AbortSignal  # the request's, re-exported
from harness.runtime.registry import Agent, AgentRegistry

ASK_ABORTED = "ASK_ABORTED"
EMPTY_QUESTIONS = "EMPTY_QUESTIONS"
CALLER_NOT_LIVE = "CALLER_NOT_LIVE"
DELEGATED_CALLER = "DELEGATED_CALLER"
BAD_INTENT = "BAD_INTENT"
NO_PROVIDER = "NO_PROVIDER"
DUPLICATE_PROVIDER = "DUPLICATE_PROVIDER"
# Not the service's: a provider throws it when the human closes the question instead of
# answering. The text is upstream's UI host's.
ASK_CANCELLED = "ASK_CANCELLED"

# Exact upstream strings. The DELEGATED_CALLER text is consumer-neutral on purpose: it names
# no tool, and it points at the one return path that exists (the child's final result).
MESSAGES: dict[str, str] = {
    ASK_ABORTED: "ask_user_question was aborted before the user answered",
    EMPTY_QUESTIONS: "ask_user_question requires at least one question",
    CALLER_NOT_LIVE: (
        "human interaction requires the exact live calling agent when an agent is supplied"
    ),
    DELEGATED_CALLER: (
        "human interaction is unavailable while the calling agent is owned by another live "
        "agent; include the unresolved question or decision in the child agent's final result"
    ),
    NO_PROVIDER: "no user-questions provider is registered",
    DUPLICATE_PROVIDER: "a user-questions provider is already registered",
    ASK_CANCELLED: "the user cancelled ask_user_question",
}


class UserQuestionError(Exception):
    name = "UserQuestionError"

    def __init__(self, code: str, message: str | None = None) -> None:
        self.code = code
        self.message = message if message is not None else MESSAGES[code]
        super().__init__(self.message)


@dataclass(frozen=True)
class Option:
    label: str
    description: str | None = None
    # Any other keys the model gave the option, in its order: upstream passes an option
    # object to the provider unchanged.
    extra: tuple[tuple[str, Any], ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"label": self.label}
        if self.description is not None:
            out["description"] = self.description
        return {**out, **dict(self.extra)}


@dataclass(frozen=True)
class Intent:
    kind: str
    approve: str


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    header: str | None = None
    options: tuple[Option, ...] = ()
    # Sent only when true: upstream's tool at rc.8 passes no multiSelect for a false one
    # (live-root-questions-as-given, on node-dsh).
    multi_select: bool = False
    detail: str | None = None
    intent: Intent | None = None

    def to_json(self) -> dict[str, object]:
        """As the ask_user_question tool takes it; fields at their defaults are left out."""
        out: dict[str, object] = {"id": self.id, "question": self.question}
        if self.header is not None:
            out["header"] = self.header
        if self.options:
            out["options"] = [o.to_json() for o in self.options]
        if self.multi_select:
            out["multi_select"] = True
        if self.detail is not None:
            out["detail"] = self.detail
        if self.intent is not None:
            out["intent"] = {"kind": self.intent.kind, "approve": self.intent.approve}
        return out


# What a question's left-out fields mean (see Question.to_json).
QUESTION_DEFAULTS: dict[str, object] = {
    "header": None,
    "options": [],
    "multi_select": False,
    "detail": None,
    "intent": None,
}


@dataclass(frozen=True)
class Answer:
    id: str
    selected: tuple[str, ...] = ()
    custom: str | None = None

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"id": self.id, "selected": list(self.selected)}
        if self.custom is not None:
            out["custom"] = self.custom
        return out


def answers_text(answers: Sequence[Answer]) -> str:
    """The model-visible success text of a question batch."""
    return json.dumps(
        {"answers": [a.to_json() for a in answers]}, ensure_ascii=False, separators=(",", ":")
    )


@dataclass(frozen=True)
class AskUserQuestionRequest:
    questions: Sequence[Question]
    agent: Agent | None = None
    signal: AbortSignal | None = None


class Answerer(Protocol):
    """Whoever can put a question in front of a human: a UI, a CLI, or a test double."""

    async def answer(self, request: AskUserQuestionRequest) -> Sequence[Answer]: ...


@dataclass
class UserQuestionService:
    agents: AgentRegistry | None
    provider: Answerer | None = None

    def register(self, provider: Answerer) -> Callable[[], None]:
        if self.provider is not None:
            raise UserQuestionError(DUPLICATE_PROVIDER)
        self.provider = provider

        def unregister() -> None:
            if self.provider is provider:
                self.provider = None

        return unregister

    async def ask(self, request: AskUserQuestionRequest) -> Sequence[Answer]:
        """The document's rule, in its order: aborted, empty, the caller (only when one is
        supplied), intents, then the provider. The caller comes before intent validation
        and dispatch, so an owned child never creates a UI wait."""
        check_not_aborted(request)
        check_not_empty(request)
        if request.agent is not None:
            self.check_caller(request.agent)
        check_intents(request)
        return await self.dispatch(request)

    def check_caller(self, agent: Agent) -> None:
        check_caller(self.agents, agent)

    async def dispatch(self, request: AskUserQuestionRequest) -> Sequence[Answer]:
        if self.provider is None:
            raise UserQuestionError(NO_PROVIDER)
        return await self.provider.answer(request)


def check_not_aborted(request: AskUserQuestionRequest) -> None:
    if request.signal is not None and request.signal.aborted:
        raise UserQuestionError(ASK_ABORTED)


def check_not_empty(request: AskUserQuestionRequest) -> None:
    if not request.questions:
        raise UserQuestionError(EMPTY_QUESTIONS)


def check_intents(request: AskUserQuestionRequest) -> None:
    for question in request.questions:
        check_intent(question)


def check_caller(agents: AgentRegistry | None, agent: Agent) -> None:
    """Admit only the exact live object that the registry lists as a root.

    Identity, not id: a stale object carrying a live id must not borrow that agent's
    standing. Ownership, not lineage: a resumed session with a parent in its header is a
    root here, and a live child with depth 0 in its header is still owned.
    """
    if agents is None or agents.get(agent.id) is not agent:
        raise UserQuestionError(CALLER_NOT_LIVE)
    if not any(root is agent for root in agents.roots()):
        raise UserQuestionError(DELEGATED_CALLER)


def check_intent(question: Question) -> None:
    intent = question.intent
    if intent is None:
        return
    if not any(option.label == intent.approve for option in question.options):
        raise UserQuestionError(
            BAD_INTENT,
            f"question {question.id} declares intent {intent.kind} whose approve label "
            f"{json.dumps(intent.approve, ensure_ascii=False)} names none of its options",
        )
    if question.detail is None:  # present, as upstream checks (=== undefined); "" is present
        raise UserQuestionError(
            BAD_INTENT,
            f"question {question.id} declares intent {intent.kind} without the detail it reviews",
        )
