"""Direct, service-level phases: build the declared registry, make one ask() call.

For the cases a model cannot produce through a tool (a bad intent, an agentless call, an
id re-registered after detach), without giving up the real service and answerer.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from harness.adapters.reference.answerers import Dismissing
from harness.adapters.reference.guards import Guard
from harness.runtime.core import Runtime
from harness.runtime.questions import (
    AbortSignal,
    AskUserQuestionRequest,
    UserQuestionError,
    UserQuestionService,
    answers_text,
)
from harness.runtime.registry import Agent, AgentRegistry
from harness.runtime.sessions import SessionHeader, SessionStore
from harness.runtime.waits import ANSWERER, NO_ANSWERER, WaitGraph
from harness.scenario import DirectAsk


@dataclass(frozen=True)
class DirectResult:
    seq: int
    caller: str | None
    text: str
    error: dict[str, str] | None
    # Each `register` the phase made before its ask: None when accepted, else its error.
    registrations: tuple[dict[str, str] | None, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"seq": self.seq, "caller": self.caller, "text": self.text, "error": self.error}


def provider_calls(
    service: UserQuestionService, answerer: Any, calls: tuple[str, ...]
) -> tuple[dict[str, str] | None, ...]:
    """Register the world's provider as a host does, then make the phase's lifecycle calls:
    `register` a second provider, `dispose` the world's (a disposer may be called again)."""
    dispose = service.register(answerer) if answerer is not None else None
    registrations: list[dict[str, str] | None] = []
    for call in calls:
        if call == "dispose":
            assert dispose is not None, "the loader refuses dispose with answerer: none"
            dispose()
            continue
        try:
            service.register(Dismissing())
        except UserQuestionError as exc:
            registrations.append({"name": exc.name, "code": exc.code, "message": exc.message})
        else:
            registrations.append(None)
    return tuple(registrations)


async def run_direct(
    ask: DirectAsk,
    *,
    registry: bool,
    answerer: Any,
    guard: Guard,
    seq: int,
    store: SessionStore | None = None,
    waits: WaitGraph | None = None,
) -> DirectResult:
    agents = AgentRegistry() if registry else None
    objects: dict[str, Agent] = {}
    previous: dict[str, Agent] = {}
    detachers = {}

    def agent(name: str) -> Agent:
        # A declared header is a durable session's: made once, and found again by a later
        # phase or a re-entered object, as a resumed session would be.
        fields = ask.sessions.get(name)
        if fields is None or store is None:
            return Agent(name)
        if name not in store.ids():
            parent = fields.get("parent_session")
            origin = "subagent" if parent is not None else "root"
            store.create(SessionHeader(name, parent, origin, fields.get("delegation_depth")))
        return Agent(name, store.open(name))

    for name, owner in ask.live:
        objects[name] = agent(name)
        if agents is not None:
            detachers[name] = agents.enter(objects[name], objects[owner] if owner else None)
    owners = dict(ask.live)
    replaced = {}  # name -> the detach function of the entry reenter replaced
    for name in ask.reenter:
        previous[name] = objects[name]
        objects[name] = agent(name)
        if agents is not None:
            detachers[name]()
            replaced[name] = detachers[name]
            owner = owners[name]
            detachers[name] = agents.enter(objects[name], objects[owner] if owner else None)
    for name in ask.detach:
        if name in detachers:
            detachers[name]()
    for name in ask.detach_replaced:
        if name in replaced:
            replaced[name]()  # must leave the entry that now holds the id alone
    caller = None
    if ask.caller is not None and ask.stale:
        # The object this id had before it was re-entered, or one that was never entered.
        caller = previous.get(ask.caller) or agent(ask.caller)
    elif ask.caller is not None:
        caller = objects[ask.caller]
    service = guard.service(agents)
    registrations = provider_calls(service, answerer, ask.provider)
    owner = dict(ask.live).get(ask.caller) if ask.caller else None
    result = await _ask(service, ask, caller, owner, seq, waits, "direct ask phase")
    return replace(result, registrations=registrations)


async def ask_live(
    ask: DirectAsk, *, runtime: Runtime, seq: int, waits: WaitGraph | None = None
) -> DirectResult:
    """A direct ask made while a model phase runs (`while:`): the caller is the running
    runtime's live agent of that name, and the service is that runtime's own."""
    registry = runtime.agents
    live = registry.get(ask.caller) if registry is not None and ask.caller else None
    caller = None
    if ask.caller is not None:
        # Not live (yet, or any more), or a stale object asked for: a new object with the id.
        fresh = live is None or ask.stale
        caller = Agent(ask.caller, live.session if live else None) if fresh else live
    owner = registry.owner_of(live) if registry is not None and live is not None else None
    where = "direct ask while a model phase runs"
    # The loader refuses ask phases in a world without the service (user_questions: absent).
    assert runtime.questions is not None, "an ask phase needs a user-questions service"
    return await _ask(
        runtime.questions, ask, caller, owner.id if owner else None, seq, waits, where
    )


async def _ask(
    service: UserQuestionService,
    ask: DirectAsk,
    caller: Agent | None,
    owner: str | None,
    seq: int,
    waits: WaitGraph | None,
    where: str,
) -> DirectResult:
    request = AskUserQuestionRequest(
        questions=ask.questions, agent=caller, signal=AbortSignal(aborted=ask.aborted)
    )
    # The node a tool's ask waits on too: the world's graph labels it (world.wait_graph).
    target = ANSWERER if service.provider is not None else NO_ANSWERER
    who = ask.caller or "agentless call"
    if waits is not None:  # so a hung direct ask has a wait-for graph like a tool's
        role = "agentless" if not ask.caller else f"owned by {owner}" if owner else "root"
        waits.labels[who] = f"{who} ({role}{', stale object' if ask.stale else ''})"
        waits.positions[who] = f"{where} (seq {seq})"
    ids = ", ".join(f'"{q.id}"' for q in ask.questions)
    try:
        if waits is None:
            answers = await service.ask(request)
        else:
            with waits.awaiting(who, f"answer to {ids}", target):
                answers = await service.ask(request)
    except UserQuestionError as exc:
        return DirectResult(
            seq, ask.caller, f"Error: {exc.message}", {"name": exc.name, "code": exc.code}
        )
    return DirectResult(seq, ask.caller, answers_text(answers), None)
