"""Direct, service-level phases: build the declared registry, make one ask() call.

For the cases a model cannot produce through a tool (a bad intent, an agentless call, an
id re-registered after detach), without giving up the real service and answerer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.runtime.guards import Guard
from harness.runtime.questions import (
    AbortSignal,
    AskUserQuestionRequest,
    UserQuestionError,
    UserQuestionService,
    answers_text,
)
from harness.runtime.registry import Agent, AgentRegistry
from harness.scenario import DirectAsk


@dataclass(frozen=True)
class DirectResult:
    seq: int
    caller: str | None
    text: str
    error: dict[str, str] | None

    def to_json(self) -> dict[str, Any]:
        return {"seq": self.seq, "caller": self.caller, "text": self.text, "error": self.error}


async def run_direct(
    ask: DirectAsk, *, registry: bool, answerer: Any, guard: Guard, seq: int
) -> DirectResult:
    agents = AgentRegistry() if registry else None
    objects: dict[str, Agent] = {}
    previous: dict[str, Agent] = {}
    detachers = {}
    for name, owner in ask.live:
        objects[name] = Agent(name)
        if agents is not None:
            detachers[name] = agents.enter(objects[name], objects[owner] if owner else None)
    owners = dict(ask.live)
    for name in ask.reenter:
        previous[name] = objects[name]
        objects[name] = Agent(name)
        if agents is not None:
            detachers[name]()
            owner = owners[name]
            detachers[name] = agents.enter(objects[name], objects[owner] if owner else None)
    for name in ask.detach:
        if name in detachers:
            detachers[name]()
    caller = None
    if ask.caller is not None and ask.stale:
        # The object this id had before it was re-entered, or one that was never entered.
        caller = previous.get(ask.caller) or Agent(ask.caller)
    elif ask.caller is not None:
        caller = objects[ask.caller]
    request = AskUserQuestionRequest(
        questions=ask.questions, agent=caller, signal=AbortSignal(aborted=ask.aborted)
    )
    try:
        answers = await UserQuestionService(agents, answerer, guard=guard).ask(request)
    except UserQuestionError as exc:
        return DirectResult(
            seq, ask.caller, f"Error: {exc.message}", {"name": exc.name, "code": exc.code}
        )
    return DirectResult(seq, ask.caller, answers_text(answers), None)
