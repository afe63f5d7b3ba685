"""Test-only faults, composed around the reference runtime from outside.

A scenario sometimes needs the runtime's surroundings to be wrong in one precise way: a
durable header that is incomplete (an agent's `session:`), or a human-interaction tool
call that carries a stale object instead of the live caller, or an agent whose run is
aborted as the reply carrying such a call arrives (`faults:`). The runtime has no hook for
any of it. It is handed a store that writes the overridden header (`HeaderOverrides`),
tools that hand the wrapped tool the faulty context (`FaultyTool`), and a model client that
fires the agent's run signal when that reply comes (`AbortsOnCall`); a scenario without
faults gets the runtime's own store, tools and client, untouched.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from harness.runtime.llm import ChatClient, Reply
from harness.runtime.registry import Agent, AgentRegistry
from harness.runtime.sessions import Event, Session, SessionHeader, SessionStore
from harness.runtime.tools import Tool, ToolContext, ToolResult
from harness.scenario import Scenario

STALE_CALLER, ABORTED = "stale-caller", "aborted"


class ScenarioFaults:
    """What a scenario injects: header overrides by session id, and (agent, tool) pairs
    whose calls carry a stale caller, or whose run is aborted before such a call."""

    def __init__(self, scenario: Scenario) -> None:
        self.headers: dict[str, dict[str, Any]] = {
            name: a.session for name, a in scenario.agents.items() if a.session
        }
        self.stale = {(f.agent, f.tool) for f in scenario.faults if f.kind == STALE_CALLER}
        self.aborted = {(f.agent, f.tool) for f in scenario.faults if f.kind == ABORTED}

    def store(self, store: SessionStore) -> SessionStore:
        """The store a runtime process is handed: `store` itself, or with the overrides."""
        return HeaderOverrides(store, self.headers) if self.headers else store

    def chat(self, chat: ChatClient, agents: AgentRegistry | None) -> ChatClient:
        """The model client a runtime process is handed: `chat` itself, or one that aborts
        the runs the faults name."""
        return AbortsOnCall(chat, agents, frozenset(self.aborted)) if self.aborted else chat

    def tools(self, tools: Sequence[Tool]) -> list[Tool]:
        """`tools` with every tool a fault names wrapped (the loader lets a fault name only
        the tools that forward their caller to ask(), whichever guard supplies them)."""
        return [self._wrapped(t) for t in tools]

    def _wrapped(self, tool: Tool) -> Tool:
        stale = frozenset(agent for agent, name in self.stale if name == tool.name)
        return FaultyTool(tool, stale) if stale else tool


class HeaderOverrides(SessionStore):
    """A world's store as one runtime process sees it: `create()` writes a new session's
    header with the scenario's overrides for that id; every other call is the world's
    store's own. The session comes from the world's store, so its events are written
    there, in the one sequence of the world.

    A subclass so the runtime takes it as the store it is; it holds no logs of its own,
    which is why it delegates every method (a test checks none is left to the base).
    """

    def __init__(self, store: SessionStore, headers: Mapping[str, dict[str, Any]]) -> None:
        # No super().__init__(): the world's store keeps the logs, the clock and the seq.
        self._store = store
        self._headers = headers

    def create(self, header: SessionHeader) -> Session:
        return self._store.create(header.with_overrides(self._headers.get(header.id, {})))

    @property
    def root(self) -> Path | None:
        return self._store.root

    def open(self, id: str) -> Session:
        return self._store.open(id)

    def ids(self) -> list[str]:
        return self._store.ids()

    def read(self, id: str) -> list[Event]:
        return self._store.read(id)

    def text(self, id: str) -> str:
        return self._store.text(id)

    def flush(self) -> None:
        self._store.flush()

    def close(self) -> None:
        self._store.close()

    def __enter__(self) -> HeaderOverrides:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def next_seq(self) -> int:
        return self._store.next_seq()

    def _write(self, id: str, event: Event) -> Event:
        return self._store._write(id, event)


@dataclass(frozen=True)
class FaultyTool:
    """A human-interaction tool whose calls, for the agents named, arrive with a stale
    same-id Agent object as the caller (never entered in the registry).

    The loop makes each call's context right before `tool.run`, after the unknown-tool and
    argument checks, and nothing else reads it: swapping the caller here, at `run`, is what
    the runtime's own hook used to do at that point.
    """

    tool: Tool
    stale: frozenset[str]  # agent ids whose calls carry a stale object

    @property
    def name(self) -> str:
        return self.tool.name

    @property
    def schema(self) -> dict[str, Any]:
        return self.tool.schema  # the same object: the model-visible prefix is unchanged

    @property
    def concurrency_safe(self) -> bool:
        return self.tool.concurrency_safe

    async def run(self, ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
        live = ctx.agent
        if live.id not in self.stale:
            return await self.tool.run(ctx, args)
        # Same id, same session, different object: never entered in the registry.
        stale = Agent(live.id, live.session)
        try:
            return await self.tool.run(replace(ctx, agent=stale), args)
        finally:
            # The stale object stands in as the caller only. A plan-mode switch the call
            # chose is the running agent's next step (the loop logs it from the live
            # object), as it was when the fault touched the caller alone.
            if stale.plan_mode_next is not None:
                live.plan_mode_next = stale.plan_mode_next


class AbortsOnCall(ChatClient):
    """The model client, but the reply that carries a call of a tool a fault names, for the
    agent it names, fires that agent's run signal as it arrives: upstream's abort landing
    between a reply and its dispatch, so the loop dispatches none of that reply's calls.

    A subclass so the runtime takes it as the client it is; it holds no connection of its
    own, so it takes none of the base's (no super().__init__).
    """

    def __init__(
        self, chat: ChatClient, agents: AgentRegistry | None, aborted: frozenset[tuple[str, str]]
    ) -> None:
        self._chat, self._agents, self._aborted = chat, agents, aborted

    async def complete(
        self, *, agent: str, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]
    ) -> Reply:
        reply = await self._chat.complete(agent=agent, messages=messages, tools=tools)
        named = any((agent, call.name) in self._aborted for call in reply.tool_calls)
        live = self._agents.get(agent) if named and self._agents is not None else None
        if live is not None:
            live.signal.abort()
        return reply
