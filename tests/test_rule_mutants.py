"""Hand-written mutants of the rule's check order in `UserQuestionService.ask()`, each of
which the shipped corpus must kill through the runtime's own path (no test variant, no
guard object): mutation testing once found that `harness run` never ran that path, so none
of these turned it red (issue 14). benchmarks/MUTATION.md has the whole picture."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

import pytest

from harness.adapters.reference.batch import batch
from harness.run import run_scenario
from harness.runtime.questions import (
    NO_PROVIDER,
    Answer,
    AskUserQuestionRequest,
    UserQuestionError,
    UserQuestionService,
    check_intents,
    check_not_aborted,
    check_not_empty,
)
from tests.conftest import SCENARIOS

Ask = Callable[[UserQuestionService, AskUserQuestionRequest], Awaitable[Sequence[Answer]]]


def _caller(self: UserQuestionService, request: AskUserQuestionRequest) -> None:
    if request.agent is not None:
        self.check_caller(request.agent)


async def deleted(self: UserQuestionService, r: AskUserQuestionRequest) -> Sequence[Answer]:
    check_not_aborted(r)
    check_not_empty(r)
    check_intents(r)
    return await self.dispatch(r)


async def before_aborted(self: UserQuestionService, r: AskUserQuestionRequest) -> Sequence[Answer]:
    _caller(self, r)
    check_not_aborted(r)
    check_not_empty(r)
    check_intents(r)
    return await self.dispatch(r)


async def before_empty(self: UserQuestionService, r: AskUserQuestionRequest) -> Sequence[Answer]:
    check_not_aborted(r)
    _caller(self, r)
    check_not_empty(r)
    check_intents(r)
    return await self.dispatch(r)


async def after_intent(self: UserQuestionService, r: AskUserQuestionRequest) -> Sequence[Answer]:
    check_not_aborted(r)
    check_not_empty(r)
    check_intents(r)
    _caller(self, r)
    return await self.dispatch(r)


async def after_provider(self: UserQuestionService, r: AskUserQuestionRequest) -> Sequence[Answer]:
    check_not_aborted(r)
    check_not_empty(r)
    check_intents(r)
    if self.provider is None:
        raise UserQuestionError(NO_PROVIDER)
    _caller(self, r)
    return await self.dispatch(r)


@pytest.mark.parametrize(
    "mutant", [deleted, before_aborted, before_empty, after_intent, after_provider],
    ids=lambda f: f.__name__,
)  # fmt: skip
def test_the_corpus_kills_each_reordering_of_the_rule(
    mutant: Ask, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(UserQuestionService, "ask", mutant)
    with batch():  # one event loop for the corpus, as `harness run` runs it
        killed = [s.id for s in SCENARIOS.values() if run_scenario(s).status != "pass"]
    assert killed, f"{mutant.__name__} survives every scenario"


def test_unmutated_the_corpus_passes() -> None:
    with batch():
        failed = [s.id for s in SCENARIOS.values() if run_scenario(s).status != "pass"]
    assert failed == []
