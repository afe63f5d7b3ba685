"""Process-local agent registry: which agents are live, and which live agent owns which.

Ownership here is the authority the guard consults. It is deliberately *not* the durable
session lineage: a session resumed by a host has a parent in its header but no owner here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness.runtime.sessions import Session


class AbortSignal:
    """Set once its owner no longer wants the work done: an agent's run was cancelled (its
    tool calls not yet dispatched are then skipped), or a caller no longer wants an answer."""

    __slots__ = ("_listeners", "aborted")

    def __init__(self, aborted: bool = False) -> None:
        self.aborted = aborted
        self._listeners: list[Callable[[], None]] = []

    def abort(self) -> None:
        if self.aborted:
            return  # fires once, as a DOM AbortSignal's abort event
        self.aborted = True
        listeners, self._listeners = self._listeners, []
        for listener in listeners:
            listener()

    def on_abort(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call `listener` once, when the signal fires (at once if it has): how a provider
        ends a wait nobody wants any more. Returns what removes it unfired."""
        if self.aborted:
            listener()
            return lambda: None
        self._listeners.append(listener)

        def remove() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return remove


class Agent:
    """A live agent. Identity is the object: a second object with the same id is a
    different caller, which is exactly what the stale same-id check relies on."""

    __slots__ = ("depth", "id", "plan_mode_next", "session", "signal")

    def __init__(self, id: str, session: Session | None = None, depth: int | None = None) -> None:
        self.id = id
        self.session = session
        # The delegation depth this run was started with (upstream's runtime option
        # `subagentDepth`: a delegated child's); None for a root or a resumed session, which
        # arrives with fresh options. It may deepen its header's count, never lower it.
        self.depth = depth
        # This run's abort signal, the very object every tool call of the run is handed
        # (as upstream's turn signal): fired, the calls not yet dispatched are skipped.
        self.signal = AbortSignal()
        # A plan-mode switch chosen during a step; it is logged when the next step starts.
        # Process-local, like upstream's pending selection: the log holds the mode itself.
        self.plan_mode_next: bool | None = None

    def __repr__(self) -> str:
        return f"Agent({self.id!r}) at {id(self):#x}"


def delegation_depth(agent: Agent) -> int:
    """An agent's delegation depth, as upstream's `delegationDepthOf`: its durable header's,
    or its run's when that is deeper (a header can be incomplete: depth 0 or absent)."""
    header = agent.session.header.delegation_depth if agent.session is not None else None
    return max(header or 0, agent.depth or 0)


class RegistryError(Exception):
    """The registry was used in a way that would corrupt who-owns-whom."""


@dataclass(frozen=True, eq=False)
class _Entry:
    agent: Agent
    owner: Agent | None


Agents = list[Agent]


class AgentRegistry:
    def __init__(self) -> None:
        # dict keeps insertion order, which is the registration order roots() promises.
        self._entries: dict[str, _Entry] = {}

    def enter(self, agent: Agent, owner: Agent | None = None) -> Callable[[], None]:
        """Record `agent` as live, owned by `owner` (None for a runtime root).

        Returns a detach function that removes exactly this entry: calling it twice, or
        after the id was re-registered by another object, leaves the registry alone.
        """
        if agent.id in self._entries:
            raise RegistryError(
                f"agent id {agent.id!r} is already registered; detach it before entering "
                "another agent with that id"
            )
        entry = _Entry(agent, owner)
        self._entries[agent.id] = entry

        def detach() -> None:
            if self._entries.get(agent.id) is entry:
                del self._entries[agent.id]

        return detach

    def get(self, id: str) -> Agent | None:
        entry = self._entries.get(id)
        return entry.agent if entry else None

    def owner_of(self, agent: Agent) -> Agent | None:
        entry = self._entries.get(agent.id)
        return entry.owner if entry and entry.agent is agent else None

    def roots(self) -> Agents:
        return [e.agent for e in self._entries.values() if e.owner is None]
