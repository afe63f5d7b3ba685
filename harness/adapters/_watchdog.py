"""The backstop, as a no-progress watchdog: a runtime is stopped only when it has done
nothing observable for `RunOptions.backstop` seconds, never because a scenario has taken
long. A busy machine makes a runtime slow, not broken: each sign of life (a process
started, a line it wrote, a request that reached the fake, an answer it was sent) starts
the count again.

Hangs are not this module's business: they are decided by quiescence (the wait-for graph)
the moment nothing can run. The watchdog ends what quiescence cannot see, and says what the
runtime was last seen doing and for how long it has done nothing since.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable


class Watchdog:
    """Counts the seconds since the runtime last did something observable.

    `saw(doing)` notes a sign of life now; `watch(name, value, doing)` notes one if a
    counter the caller polls (requests at the fake, lines on stderr) has moved since the
    last look. `doing` is a phrase for the report ("sending its request 3 to the fake")."""

    def __init__(
        self,
        limit: float,
        program: str,
        *,
        clock: Callable[[], float] = time.monotonic,
        held: Callable[[], list[str]] | None = None,
    ) -> None:
        self.limit = limit
        self.program = program  # how the report names the runtime
        # The steps the fake holds now (harness.fake.hold), for the report: a runtime that
        # runs siblings one by one waits on a held reply, which is no hang it can show.
        self._held = held
        self._clock = clock
        self._last = clock()
        self._doing = "starting"
        self._marks: dict[str, Hashable] = {}

    def saw(self, doing: str) -> None:
        self._last = self._clock()
        self._doing = doing

    def watch(self, name: str, value: Hashable, doing: str) -> None:
        """A sign of life if `value` differs from the last look's (the first look only
        notes it: it has nothing to differ from)."""
        if name not in self._marks:
            self._marks[name] = value
        elif self._marks[name] != value:
            self._marks[name] = value
            self.saw(doing)

    def requests(self, received: int) -> None:
        """The fake's count of requests that reached it, looked at again."""
        self.watch("requests", received, f"sending its request {received} to the fake")

    def stderr(self, lines: int, last: str) -> None:
        """A process's count of stderr lines, and its last, looked at again."""
        self.watch("stderr", lines, f"writing on its stderr ({last[:80]})")

    def idle(self) -> float:
        """Seconds since the last sign of life."""
        return self._clock() - self._last

    def expired(self) -> bool:
        return self.idle() >= self.limit

    @property
    def doing(self) -> str:
        """What the runtime was last seen doing."""
        return self._doing

    def report(self, outcome: str = "stopped, and nothing hung") -> str:
        """The one line an observation's error carries when the watchdog fired."""
        held = self._held() if self._held is not None else []
        holding = f"; the fake holds {'; '.join(held)}" if held else ""
        return (
            f"backstop: {self.program} showed no progress for {self.idle():.1f} s (the limit is "
            f"{self.limit:g} s without progress); it was last seen {self.doing}{holding}; "
            f"{outcome}"
        )
