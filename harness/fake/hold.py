"""Steps the fake holds back: a scripted step with `after: AGENT` is served only once that
agent's script has been served to its end. It is how a scenario makes siblings finish out
of their start order (the first child's last reply waits for the second child's), which a
fake that answers at once never does.

A hold waits on the fake's own progress, never on a clock. A request can be held on the
caller's event loop (`wait`), on a server's (`ServerThread`), or in a thread of a
synchronous client (`wait_sync`); whichever thread serves the awaited agent's last step
releases it (`ended`).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Mapping, Sequence

from harness.scenario import Turn


class Holds:
    def __init__(self, scripts: Mapping[str, Sequence[Turn]]) -> None:
        # (agent, step) -> the agent whose script must end first
        self.after = {
            (agent, step): turn.after
            for agent, turns in scripts.items()
            for step, turn in enumerate(turns, 1)
            if turn.after is not None
        }
        self._lock = threading.Lock()
        self._done: set[str] = set()
        self._release: dict[str, list[Callable[[], None]]] = {}
        # agent -> (its step held, the agent it waits for): read for a wait-for graph
        self.held: dict[str, tuple[int, str]] = {}

    def __bool__(self) -> bool:
        return bool(self.after)

    def ended(self, agent: str) -> None:
        """`agent`'s script has been served to its end: release the steps held for it."""
        with self._lock:
            self._done.add(agent)
            release = self._release.pop(agent, [])
        for wake in release:
            wake()

    async def wait(self, agent: str, step: int) -> None:
        other = self.after.get((agent, step)) if self.after else None
        if other is None:
            return
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = loop.create_future()

        def release() -> None:
            if not ready.done():
                ready.set_result(None)

        def wake() -> None:
            loop.call_soon_threadsafe(release)

        if self._register(agent, step, other, wake):
            try:
                await ready
            finally:
                self.held.pop(agent, None)

    def wait_sync(self, agent: str, step: int) -> None:
        other = self.after.get((agent, step)) if self.after else None
        if other is None:
            return
        ready = threading.Event()
        if self._register(agent, step, other, ready.set):
            try:
                ready.wait()
            finally:
                self.held.pop(agent, None)

    def _register(self, agent: str, step: int, other: str, wake: Callable[[], None]) -> bool:
        """Whether the step must wait (it is then registered as held)."""
        with self._lock:
            if other in self._done:
                return False
            self._release.setdefault(other, []).append(wake)
            self.held[agent] = (step, other)
            return True

    def describe(self) -> list[str]:
        """Each step held now, for a report: `child-a's step 2 until child-b ends`."""
        return [
            f"{agent}'s step {step} until {other} ends"
            for agent, (step, other) in sorted(self.held.items())
        ]
