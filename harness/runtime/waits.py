"""Who is waiting on what, right now: the runtime's own account of its blocking waits.

It costs a dict insert per wait and lets a deadlock be reported as a wait-for graph
(`parent --awaits subagent call call_1--> child --awaits answer to "q"--> answerer`)
instead of a bare timeout.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

# The node a question waits on: whichever provider the user-questions service holds. The
# runtime knows only that there is one, so it names it neutrally; whoever assembles the
# runtime may say more through `labels`, as for agents. A space keeps both names apart
# from any agent id a tool can make (subagent names are file-name-safe).
ANSWERER = "user-questions provider"
NO_ANSWERER = "no answerer"


@dataclass(frozen=True)
class Wait:
    waiter: str
    what: str
    target: str


class WaitGraph:
    def __init__(self) -> None:
        self._waits: dict[int, Wait] = {}
        self._next = 0
        self.labels: dict[str, str] = {}  # node -> "child (owned by parent)"
        self.positions: dict[str, str] = {}  # agent id -> where it is in its loop

    @contextmanager
    def awaiting(self, waiter: str, what: str, target: str) -> Iterator[None]:
        self._next += 1
        key = self._next
        self._waits[key] = Wait(waiter, what, target)
        try:
            yield
        finally:
            del self._waits[key]

    def waits(self) -> list[Wait]:
        return list(self._waits.values())

    def label(self, node: str) -> str:
        return self.labels.get(node, node)
