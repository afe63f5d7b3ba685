"""The runtime's fault-injection seam.

A scenario sometimes needs the runtime to be wrong in one precise way: a durable header
that is incomplete, or a tool call that carries a stale object instead of the live caller.
The runtime asks this object at exactly those points; the default changes nothing.
"""

from __future__ import annotations

from harness.runtime.registry import Agent
from harness.runtime.sessions import SessionHeader


class Faults:
    def header(self, header: SessionHeader) -> SessionHeader:
        """The header a new session is written with."""
        return header

    def caller(self, agent: Agent, tool: str) -> Agent:
        """The agent object a human-interaction tool forwards as the caller."""
        return agent

    def aborted(self, agent: Agent, tool: str) -> bool:
        """Whether a tool call's abort signal has already fired when the tool starts."""
        return False


NO_FAULTS = Faults()
