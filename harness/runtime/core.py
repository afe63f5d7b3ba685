"""Runtime assembly: the context every tool sees (`ctx.agents`, `ctx.userQuestions`, ...)
and the three ways an agent comes to life: start, delegate, resume."""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Sequence
from typing import Any

from harness.runtime.llm import ChatClient
from harness.runtime.loop import run_agent
from harness.runtime.questions import UserQuestionService
from harness.runtime.registry import Agent, AgentRegistry, delegation_depth
from harness.runtime.sessions import SessionHeader, SessionStore
from harness.runtime.tools import Tool, default_tools
from harness.runtime.tools.exit_plan_mode import set_plan_mode
from harness.runtime.waits import WaitGraph


def _stay_registered() -> None:
    """Detach for a runtime assembled without a registry: nothing was entered."""


class Runtime:
    def __init__(
        self,
        *,
        chat: ChatClient,
        store: SessionStore,
        agents: AgentRegistry | None,
        questions: UserQuestionService | None,
        tools: Sequence[Tool] | None = None,
        max_turns: int = 32,
        plan_mode: Collection[str] = (),
        waits: WaitGraph | None = None,
        max_depth: int | None = 3,
    ) -> None:
        self.chat = chat
        # How deep delegation may nest (upstream's subagent tool's maxDepth, 3 by default);
        # None: no cap.
        self.max_depth = max_depth
        self.store = store
        self.agents = agents
        self.questions = questions
        # None: no user-questions service composed, so no ask_user_question either (upstream
        # registers that tool only beside the service); exit_plan_mode then says so.
        self.tools: dict[str, Tool] = {
            t.name: t for t in (tools or default_tools(user_questions=questions is not None))
        }
        # Computed once: the model-visible prefix is identical for every agent and request.
        self.schemas: list[dict[str, Any]] = [t.schema for t in self.tools.values()]
        self.max_turns = max_turns
        # Sessions that start in plan mode; a resumed session keeps what its log says.
        self.plan_mode = frozenset(plan_mode)
        self.waits = waits if waits is not None else WaitGraph()

    async def start(self, session_id: str, prompt: str) -> str:
        """Start a top-level runtime root in a new session."""
        session = self.store.create(SessionHeader(id=session_id))
        try:
            return await self._run(Agent(session_id, session), None, prompt)
        finally:
            self.store.flush()  # a top-level run's end is a phase end: its log is durable

    async def resume(self, session_id: str, prompt: str, owner: Agent | None = None) -> str:
        """Bring a stored session back as a new live agent.

        With no owner it is a runtime root, whatever lineage its header records.
        """
        session = self.store.open(session_id)
        session.append({"type": "session/resumed", "owner": owner.id if owner else None})
        try:
            return await self._run(Agent(session_id, session), owner, prompt)
        finally:
            self.store.flush()

    async def delegate(self, parent: Agent, name: str, prompt: str, call_id: str = "?") -> str:
        """One-shot delegation: the child lives inside the parent's scope, so the parent owns
        it until the child's run ends."""
        assert parent.session is not None
        depth = delegation_depth(parent) + 1  # durable: the budget survives a resume
        header = SessionHeader(
            id=name,
            parent_session=parent.session.header.id,
            origin="subagent",
            delegation_depth=depth,
        )
        session = self.store.create(header)
        with self.waits.awaiting(parent.id, f"subagent call {call_id}", name):
            # The child runs as a task of its own, which the parent awaits (cancelling the
            # parent cancels it). Awaited inline, a chain of delegations nests one coroutine
            # per level in a single task: Python's stack then grows with the depth, and
            # every exception raised anywhere below walks each level's exception state.
            child = Agent(name, session, depth)
            return await asyncio.ensure_future(self._run(child, parent, prompt))

    async def _run(self, agent: Agent, owner: Agent | None, prompt: str) -> str:
        assert agent.session is not None
        if agent.session.plan_mode is None and agent.id in self.plan_mode:
            set_plan_mode(agent, True)
        detach = self.agents.enter(agent, owner) if self.agents is not None else _stay_registered
        role = f"owned by {owner.id}" if owner is not None else "root"
        self.waits.labels[agent.id] = f"{agent.id} ({role})"
        try:
            return await run_agent(self, agent, prompt)
        finally:
            detach()
