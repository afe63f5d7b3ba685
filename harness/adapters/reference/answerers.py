"""Test answerers: the human end of the user-questions service.

- `ScriptedHuman` answers from the scenario, like a person at the keyboard.
- `Tripwire` must never be reached. Once reached it records the call and never answers,
  as a UI that cannot show a child's question would: the deadlock detector then stops the
  run at once and reports who waits on whom.
- `Unreachable` accepts the question and never answers, like a UI that cannot show a
  child's question. It is what turns a missing guard into a hang.
- `Dismissing` is the second provider a direct ask phase registers (`provider: [register]`):
  its human closes every question, so reaching it is told apart from reaching the world's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from harness.runtime.questions import (
    ASK_ABORTED,
    ASK_CANCELLED,
    Answer,
    AskUserQuestionRequest,
    Question,
    UserQuestionError,
)
from harness.scenario._model import Reply


@dataclass(frozen=True)
class AnswerCall:
    agent: str | None
    question_ids: tuple[str, ...]
    questions: tuple[Question, ...] = ()  # exactly what the answerer was shown

    def to_json(self) -> dict[str, object]:
        return {"caller": self.agent, "questions": [q.to_json() for q in self.questions]}


class UnscriptedQuestion(Exception):
    """The scripted human was asked something the scenario gives no answer for."""


class ProviderFailure(Exception):
    """A provider that broke (`fail` in world.answers): an error that is no
    UserQuestionError, which the runtime must turn into a tool error, as upstream's does."""

    def __init__(self) -> None:
        super().__init__("the user-questions provider failed")


@dataclass
class _Recording:
    calls: list[AnswerCall] = field(default_factory=list)

    def _record(self, request: AskUserQuestionRequest) -> AnswerCall:
        call = AnswerCall(
            agent=request.agent.id if request.agent else None,
            question_ids=tuple(q.id for q in request.questions),
            questions=tuple(request.questions),
        )
        self.calls.append(call)
        return call


@dataclass
class ScriptedHuman(_Recording):
    answers: Mapping[str, Reply] = field(default_factory=dict)
    delay: float = 0.0  # seconds before the human answers; a late answer is not a hang
    # Set when it was asked what the scenario gives no answer for: the run is then an error
    # that says so, whatever the runtime made of the exception (a provider's failure is a
    # tool error to it, as to upstream's).
    unscripted: str | None = None
    kind = "scripted"

    async def answer(self, request: AskUserQuestionRequest) -> Sequence[Answer]:
        self._record(request)
        if self.delay:
            await asyncio.sleep(self.delay)
        missing = [q.id for q in request.questions if q.id not in self.answers]
        if missing:
            self.unscripted = (
                f"scripted human has no answer for question(s) {', '.join(missing)}; add them "
                "under world.answers"
            )
            raise UnscriptedQuestion(self.unscripted)
        replies = [self.answers[q.id] for q in request.questions]
        if any(r.failed for r in replies):
            raise ProviderFailure
        if any(r.interrupted for r in replies):
            await interrupted(request)
        if any(r.aborted for r in replies):
            raise UserQuestionError(ASK_ABORTED)
        if any(r.dismissed for r in replies):
            # Closing the question rejects the whole wait, as upstream's UI does.
            raise UserQuestionError(ASK_CANCELLED)
        return [item for r in replies for item in r.items]


async def interrupted(request: AskUserQuestionRequest) -> None:
    """The human stops the asking agent's run while its question is shown (Esc, say): the
    host fires that run's signal, and the provider, which honours the request's signal as
    upstream's web provider does, ends its wait with ASK_ABORTED when that fires. A runtime
    that hands the provider another signal, or none, leaves it waiting: a hang."""
    fired: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def fire() -> None:
        if not fired.done():
            fired.set_result(None)

    signal = request.signal
    remove = signal.on_abort(fire) if signal is not None else None
    try:
        if request.agent is not None:
            request.agent.signal.abort()  # the host's hold on the run it started
        await fired
    finally:
        if remove is not None:
            remove()
    raise UserQuestionError(ASK_ABORTED)


@dataclass
class Tripwire(_Recording):
    kind = "tripwire"

    async def answer(self, request: AskUserQuestionRequest) -> Sequence[Answer]:
        self._record(request)
        await asyncio.Event().wait()  # the hang the guard exists to prevent
        raise AssertionError("unreachable")


@dataclass
class Unreachable(_Recording):
    kind = "unreachable"

    async def answer(self, request: AskUserQuestionRequest) -> Sequence[Answer]:
        self._record(request)
        await asyncio.Event().wait()  # nobody will ever set it
        raise AssertionError("unreachable")


class Dismissing:
    """A second provider, never counted: its human closes every question (ASK_CANCELLED).
    An ask that reaches it shows that it replaced the world's provider."""

    async def answer(self, request: AskUserQuestionRequest) -> Sequence[Answer]:
        raise UserQuestionError(ASK_CANCELLED)
