"""One event loop for many scenarios: a loop costs more to make and close than a small
scenario costs to run, so a batch keeps one per detector setting and runs each scenario's
coroutine on it, with one Ctrl-C handler for the whole batch."""

from __future__ import annotations

import asyncio
import contextvars
import signal
import threading
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from harness.adapters.reference.detect import DeadlockDetectingLoop

T = TypeVar("T")


class Batch:
    """One open batch: its event loops (by whether they detect deadlocks), the run on them
    now, and on the main thread its Ctrl-C handler."""

    def __init__(self) -> None:
        self.runners: dict[bool, asyncio.Runner] = {}
        self.running: asyncio.Task[Any] | None = None
        self.interrupts = 0
        self._sigint: Any = None

    def loop(self, detector: bool) -> asyncio.AbstractEventLoop:
        if detector not in self.runners:
            factory = DeadlockDetectingLoop if detector else None
            self.runners[detector] = asyncio.Runner(loop_factory=factory)
        return self.runners[detector].get_loop()

    # asyncio.Runner.run installs and restores a SIGINT handler around every run, a
    # twentieth of a small scenario's time; a batch runs its scenarios on the loop itself
    # and does the same once: the first Ctrl-C cancels the run in progress, which then
    # raises KeyboardInterrupt; a second one, or one between runs, interrupts at once.
    def watch_sigint(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
            return  # someone else's handler: leave Ctrl-C to it, as asyncio.Runner does
        handler = self._on_sigint  # one bound method: unwatch_sigint looks for it by identity
        try:
            signal.signal(signal.SIGINT, handler)
        except ValueError:  # an embedded interpreter without signals (as asyncio.Runner)
            return
        self._sigint = handler

    def unwatch_sigint(self) -> None:
        if self._sigint is not None and signal.getsignal(signal.SIGINT) is self._sigint:
            signal.signal(signal.SIGINT, signal.default_int_handler)
        self._sigint = None

    def _on_sigint(self, signum: int, frame: Any) -> None:
        self.interrupts += 1
        task = self.running
        if self.interrupts == 1 and task is not None and not task.done():
            task.cancel()
            task.get_loop().call_soon_threadsafe(lambda: None)  # wake a loop in select()
            return
        raise KeyboardInterrupt()

    def close(self) -> None:
        self.unwatch_sigint()
        for runner in self.runners.values():
            runner.close()

    @contextmanager
    def entered(self) -> Iterator[None]:
        """This batch as the thread's for one run (unless a batch() is open already: its
        loops serve). An adapter keeps its batch between runs; made current and watching
        Ctrl-C only while a run lasts, it leaves nothing on the thread in between, so
        whatever runs there next (another adapter, a test) finds the thread as it was."""
        if _batches.current is not None:
            yield
            return
        _batches.current = self
        self.watch_sigint()
        try:
            yield
        finally:
            self.unwatch_sigint()
            _batches.current = None


class _Batches(threading.local):
    """Per thread (an event loop runs in one): the open batch, if any."""

    def __init__(self) -> None:
        self.current: Batch | None = None


_batches = _Batches()


@contextmanager
def batch() -> Iterator[None]:
    """Run every scenario inside on one event loop (per detector setting), as `harness
    run` does: a loop costs more to make and close than a small scenario costs to run.
    Re-entrant. Each run still starts clean: its own context variables, no task of an
    earlier run left on the loop, the detector's watch reset. Ctrl-C interrupts the run
    in progress with KeyboardInterrupt, as asyncio.run would."""
    if _batches.current is not None:
        yield
        return
    current = _batches.current = Batch()
    current.watch_sigint()
    try:
        yield
    finally:
        _batches.current = None
        current.close()


def run_on_loop(main: Coroutine[Any, Any, T], *, detector: bool) -> T:
    """Run one scenario's coroutine: on the batch's loop inside a batch(), else on a loop
    of its own."""
    current = _batches.current
    if current is None:
        factory = DeadlockDetectingLoop if detector else None
        with asyncio.Runner(loop_factory=factory) as runner:
            return runner.run(main)
    loop = current.loop(detector)
    task = loop.create_task(main, context=contextvars.copy_context())
    current.running, current.interrupts = task, 0
    try:
        return loop.run_until_complete(task)
    except asyncio.CancelledError:
        if current.interrupts and task.uncancel() == 0:
            raise KeyboardInterrupt() from None
        raise
    finally:
        current.running = None
        _settle(loop)


def _settle(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel what a run left behind (a hung run's waiters) before the loop's next run."""
    if isinstance(loop, DeadlockDetectingLoop):
        loop.reset()
    left = asyncio.all_tasks(loop)
    for task in left:
        task.cancel()
    if left:  # as asyncio.run does when its run ends
        loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
