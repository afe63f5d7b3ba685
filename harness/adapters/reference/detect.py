"""Deadlock detection the moment nothing can run, in the spirit of Go's "all goroutines
are asleep" and testing/synctest: no wall-clock timeout involved.

A world runs on its own event loop. Before each iteration the loop checks whether any
work could ever happen again: a ready callback, a pending timer (other than the
backstop's), or a file descriptor being watched (other than the loop's own wake-up
pipe). If none, every remaining task is waiting on something only the program itself
could provide, and it never will. Work done in other threads is invisible here; the
backstop (no request served for that long: phases.py) exists for that (executor jobs
started through the loop are counted as work in flight).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

from harness.runtime.waits import Wait, WaitGraph


class DeadlockDetectingLoop(asyncio.SelectorEventLoop):
    def __init__(self) -> None:
        super().__init__()
        self.on_deadlock: Callable[[], None] | None = None
        self.ignored: set[asyncio.TimerHandle] = set()
        self._in_threads = 0  # executor jobs still running: their result will wake us
        self._run = 0

    def reset(self) -> None:
        """Forget one run's watch before the next run on this loop: a batch shares one loop,
        and a thread a cut-short run left behind must not keep the next one "busy"."""
        self.on_deadlock = None
        self.ignored.clear()
        self._in_threads = 0
        self._run += 1

    def run_in_executor(  # type: ignore[override]
        self, executor: Any, func: Any, *args: Any
    ) -> asyncio.Future[Any]:
        future = super().run_in_executor(executor, func, *args)
        self._in_threads += 1
        run = self._run

        def done(_: object) -> None:
            if run == self._run:
                self._in_threads -= 1

        future.add_done_callback(done)
        return future

    def _nothing_can_run(self) -> bool:
        # CPython's BaseEventLoop state; stable across 3.11-3.13, and checked by the tests.
        loop: Any = self
        if loop._ready or loop._stopping or self._in_threads:
            return False
        if any(not h.cancelled() and h not in self.ignored for h in loop._scheduled):
            return False
        return len(loop._selector.get_map()) <= 1  # only the self-pipe

    def _run_once(self) -> None:
        if self.on_deadlock is not None and self._nothing_can_run():
            callback, self.on_deadlock = self.on_deadlock, None
            callback()
        super()._run_once()  # type: ignore[misc]


def hang_report(
    waits: WaitGraph, held: Mapping[str, tuple[int, str]] | None = None
) -> dict[str, Any]:
    """The wait-for graph as chains from each waiter nobody waits on, one per path (a parent
    awaiting two concurrent children has two), plus any cycle. `held`: the steps the fake
    holds until another agent ends (agent -> (step, that agent)), waits the runtime cannot
    see, since to it they are model requests in flight."""
    edges: dict[str, list[Wait]] = {}
    for w in waits.waits():
        edges.setdefault(w.waiter, []).append(w)
    for agent, (step, other) in sorted((held or {}).items()):
        what = f"its step {step}, which the fake holds until {other} ends"
        edges.setdefault(agent, []).append(Wait(agent, what, other))
    targets = {w.target for ws in edges.values() for w in ws}
    chains, cycles = [], []
    starts = [n for n in edges if n not in targets] or list(edges)[:1]
    for start in starts:
        # Depth first, without recursion (a chain may be as deep as delegation goes); a path
        # is copied only where it branches.
        stack = [(start, [waits.label(start)], {start})]
        while stack:
            node, parts, seen = stack.pop()
            out = edges.get(node)
            if not out:
                chains.append(" ".join(parts))
                continue
            for i, wait in reversed(list(enumerate(out))):
                path, on = (parts, seen) if i == 0 else (list(parts), set(seen))
                path.append(f"--awaits {wait.what}--> {waits.label(wait.target)}")
                if wait.target in on:
                    cycles.append(" ".join(path) + " (cycle)")
                    continue
                on.add(wait.target)
                stack.append((wait.target, path, on))
    return {
        "graph": chains,
        "cycles": cycles,
        "stopped": {a: waits.positions[a] for a in sorted(waits.positions) if a in edges},
    }


def render_hang(report: dict[str, Any]) -> list[str]:
    lines = ["wait-for graph:"]
    lines += [f"  {chain}" for chain in report["graph"] + report["cycles"]]
    if report.get("stopped"):  # optional: a foreign runtime's adapter may not know it
        lines.append("where each agent stopped:")
        lines += [f"  {agent}: {where}" for agent, where in report["stopped"].items()]
    return lines
