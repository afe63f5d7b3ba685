"""Test answerers: the human end of the user-questions service.

- `ScriptedHuman` answers from the scenario, like a person at the keyboard.
- `Tripwire` must never be reached; reaching it stops the run.
- `Unreachable` accepts the question and never answers, like a UI that cannot show a
  child's question. It is what turns a missing guard into a hang.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from harness.runtime.questions import Answer, AskUserQuestionRequest


@dataclass(frozen=True)
class AnswerCall:
    agent: str | None
    question_ids: tuple[str, ...]


class TripwireReached(Exception):
    """A refused caller got through to the human channel."""


class UnscriptedQuestion(Exception):
    """The scripted human was asked something the scenario gives no answer for."""


@dataclass
class _Recording:
    calls: list[AnswerCall] = field(default_factory=list)

    def _record(self, request: AskUserQuestionRequest) -> AnswerCall:
        call = AnswerCall(
            agent=request.agent.id if request.agent else None,
            question_ids=tuple(q.id for q in request.questions),
        )
        self.calls.append(call)
        return call


@dataclass
class ScriptedHuman(_Recording):
    answers: Mapping[str, Answer] = field(default_factory=dict)
    kind = "scripted"

    async def answer(self, request: AskUserQuestionRequest) -> Sequence[Answer]:
        self._record(request)
        missing = [q.id for q in request.questions if q.id not in self.answers]
        if missing:
            raise UnscriptedQuestion(
                f"scripted human has no answer for question(s) {', '.join(missing)}; add them "
                "under world.answers"
            )
        return [self.answers[q.id] for q in request.questions]


@dataclass
class Tripwire(_Recording):
    kind = "tripwire"

    async def answer(self, request: AskUserQuestionRequest) -> Sequence[Answer]:
        call = self._record(request)
        who = f"agent {call.agent}" if call.agent else "an agentless call"
        raise TripwireReached(
            f"tripwire answerer reached by {who} asking {', '.join(call.question_ids)}; "
            "the guard should have refused it before dispatch"
        )


@dataclass
class Unreachable(_Recording):
    kind = "unreachable"

    async def answer(self, request: AskUserQuestionRequest) -> Sequence[Answer]:
        self._record(request)
        await asyncio.Event().wait()  # nobody will ever set it
        raise AssertionError("unreachable")
