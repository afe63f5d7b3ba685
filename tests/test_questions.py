"""UserQuestionService: every code, the exact upstream messages, the check order, and that
the provider is never invoked on a rejection."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from harness.runtime.questions import (
    MESSAGES,
    AbortSignal,
    Answer,
    AskUserQuestionRequest,
    Intent,
    Option,
    Question,
    UserQuestionError,
    UserQuestionService,
)
from harness.runtime.registry import Agent, AgentRegistry

Q = Question(
    "cuda-fallback",
    "Should deployment use the CUDA fallback?",
    options=(Option("Yes"), Option("No")),
)
BAD_APPROVE = Question(
    "plan-review",
    "Approve?",
    options=(Option("Keep planning"),),
    detail="# Plan",
    intent=Intent("plan-review", "Approve"),
)
NO_DETAIL = Question(
    "plan-review", "Approve?", options=(Option("Approve"),), intent=Intent("plan-review", "Approve")
)

# Quoted from ../shared/reference/upstream-behaviour.md; a change here is a contract change.
UPSTREAM = {
    "ASK_ABORTED": "ask_user_question was aborted before the user answered",
    "EMPTY_QUESTIONS": "ask_user_question requires at least one question",
    "CALLER_NOT_LIVE": "human interaction requires the exact live calling agent when an agent "
    "is supplied",
    "DELEGATED_CALLER": "human interaction is unavailable while the calling agent is owned by "
    "another live agent; include the unresolved question or decision in the child agent's "
    "final result",
    "NO_PROVIDER": "no user-questions provider is registered",
    "DUPLICATE_PROVIDER": "a user-questions provider is already registered",
    # A provider's, not the service's: upstream's UI host rejects a closed question so.
    "ASK_CANCELLED": "the user cancelled ask_user_question",
}


class Recorder:
    def __init__(self) -> None:
        self.requests: list[AskUserQuestionRequest] = []

    async def answer(self, request: AskUserQuestionRequest) -> Sequence[Answer]:
        self.requests.append(request)
        return [Answer(q.id, ("Yes",)) for q in request.questions]


def world() -> tuple[AgentRegistry, Agent, Agent, Recorder, UserQuestionService]:
    reg = AgentRegistry()
    root, child = Agent("parent"), Agent("child")
    reg.enter(root)
    reg.enter(child, owner=root)
    provider = Recorder()
    return reg, root, child, provider, UserQuestionService(reg, provider)


def ask(service: UserQuestionService, **kw: object) -> Sequence[Answer]:
    return asyncio.run(service.ask(AskUserQuestionRequest(**kw)))  # type: ignore[arg-type]


def code_of(service: UserQuestionService, **kw: object) -> str:
    with pytest.raises(UserQuestionError) as info:
        ask(service, **kw)
    assert info.value.message == str(info.value)
    return info.value.code


def test_messages_are_the_upstream_strings() -> None:
    assert MESSAGES == UPSTREAM


def test_live_root_is_answered_with_the_request_unchanged() -> None:
    _, root, _, provider, service = world()
    request = AskUserQuestionRequest(questions=[Q], agent=root)
    assert asyncio.run(service.ask(request)) == [Answer("cuda-fallback", ("Yes",))]
    assert provider.requests == [request] and provider.requests[0] is request


def test_zero_depth_live_child_is_delegated_caller() -> None:
    # The registry knows nothing of depth: ownership alone refuses it.
    _, _, child, provider, service = world()
    assert code_of(service, questions=[Q], agent=child) == "DELEGATED_CALLER"
    assert provider.requests == []


def test_missing_registry_is_caller_not_live() -> None:
    provider = Recorder()
    service = UserQuestionService(None, provider)
    assert code_of(service, questions=[Q], agent=Agent("parent")) == "CALLER_NOT_LIVE"
    assert provider.requests == []


def test_stale_same_id_object_is_caller_not_live() -> None:
    _, _, _, provider, service = world()
    assert code_of(service, questions=[Q], agent=Agent("parent")) == "CALLER_NOT_LIVE"
    assert code_of(service, questions=[Q], agent=Agent("child")) == "CALLER_NOT_LIVE"
    assert provider.requests == []


def test_unregistered_id_is_caller_not_live() -> None:
    _, _, _, provider, service = world()
    assert code_of(service, questions=[Q], agent=Agent("ghost")) == "CALLER_NOT_LIVE"
    assert provider.requests == []


def test_child_whose_owner_detached_is_still_delegated() -> None:
    reg = AgentRegistry()
    parent, child = Agent("parent"), Agent("child")
    detach_parent = reg.enter(parent)
    reg.enter(child, owner=parent)
    detach_parent()
    provider = Recorder()
    service = UserQuestionService(reg, provider)
    assert code_of(service, questions=[Q], agent=child) == "DELEGATED_CALLER"
    assert provider.requests == []


@pytest.mark.parametrize("with_registry", [True, False])
def test_agentless_call_skips_the_guard(with_registry: bool) -> None:
    provider = Recorder()
    service = UserQuestionService(AgentRegistry() if with_registry else None, provider)
    assert ask(service, questions=[Q]) == [Answer("cuda-fallback", ("Yes",))]
    assert len(provider.requests) == 1


def test_abort_is_checked_first_then_empty_batch() -> None:
    _, _, child, provider, service = world()
    aborted = AbortSignal()
    aborted.abort()
    assert code_of(service, questions=[], agent=child, signal=aborted) == "ASK_ABORTED"
    assert code_of(service, questions=[], agent=child) == "EMPTY_QUESTIONS"
    assert code_of(service, questions=[Q], agent=child, signal=AbortSignal()) == "DELEGATED_CALLER"
    assert provider.requests == []


def test_ownership_is_checked_before_intent() -> None:
    _, root, child, provider, service = world()
    assert code_of(service, questions=[BAD_APPROVE], agent=child) == "DELEGATED_CALLER"
    assert code_of(service, questions=[BAD_APPROVE], agent=Agent("x")) == "CALLER_NOT_LIVE"
    assert code_of(service, questions=[BAD_APPROVE], agent=root) == "BAD_INTENT"
    assert provider.requests == []


def test_bad_intent_messages() -> None:
    _, root, _, _, service = world()
    with pytest.raises(UserQuestionError) as info:
        ask(service, questions=[BAD_APPROVE], agent=root)
    assert info.value.message == (
        'question plan-review declares intent plan-review whose approve label "Approve" '
        "names none of its options"
    )
    with pytest.raises(UserQuestionError) as info:
        ask(service, questions=[Q, NO_DETAIL], agent=root)
    assert info.value.message == (
        "question plan-review declares intent plan-review without the detail it reviews"
    )


def test_no_provider_comes_after_the_guard() -> None:
    reg, root, child, _, _ = world()
    service = UserQuestionService(reg)
    assert code_of(service, questions=[Q], agent=child) == "DELEGATED_CALLER"
    assert code_of(service, questions=[Q], agent=root) == "NO_PROVIDER"


def test_duplicate_provider() -> None:
    service = UserQuestionService(None)
    unregister = service.register(Recorder())
    with pytest.raises(UserQuestionError) as info:
        service.register(Recorder())
    assert info.value.code == "DUPLICATE_PROVIDER"
    unregister()
    service.register(Recorder())
