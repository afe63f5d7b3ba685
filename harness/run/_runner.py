"""Run a scenario and judge it: scenario -> world -> run -> observation -> verdict."""

from __future__ import annotations

import asyncio
import contextvars
import json
import signal
import threading
from collections.abc import Coroutine, Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import httpx

from harness._seam import DEFAULT_BACKSTOP, Wire
from harness.guards import RUNTIME_OWNERSHIP
from harness.run._detect import DeadlockDetectingLoop, hang_report
from harness.run._diff import json_differences, summaries
from harness.run._direct import ask_live, run_direct
from harness.run._judge import Result, judge
from harness.run._observe import Observation, observe, portable
from harness.run._world import LiveWorld
from harness.runtime.errors import AgentRunError
from harness.runtime.registry import Agent
from harness.runtime.sessions import SessionStore
from harness.scenario import Phase, Scenario

if TYPE_CHECKING:
    from harness._seam import Adapter

# Every run's clock, handed to the store (event timestamps) and the fake (completion
# times): nothing a run observes reads the wall clock, so no clock needs patching
# (tests/test_runner.py runs the corpus under freezegun at two far-apart instants to
# prove it).
FROZEN_AT = "2026-01-01T00:00:00+00:00"
_FROZEN = datetime.fromisoformat(FROZEN_AT)
FROZEN_EPOCH = int(_FROZEN.timestamp())

T = TypeVar("T")


class _Batch:
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


class _Batches(threading.local):
    """Per thread (an event loop runs in one): the open batch, if any."""

    def __init__(self) -> None:
        self.current: _Batch | None = None


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
    current = _batches.current = _Batch()
    current.watch_sigint()
    try:
        yield
    finally:
        _batches.current = None
        current.close()


def _run_on_loop(main: Coroutine[Any, Any, T], *, detector: bool) -> T:
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


def effective_guard(scenario: Scenario, requested: str | None) -> str:
    """The caller check a scenario runs under. Its own `guard:` is part of what it means
    (`hang-before-the-fix` is the behaviour before the fix), so it always wins; a requested
    variant (`--guard`) applies to the scenarios that leave theirs at the decision."""
    if scenario.guard != RUNTIME_OWNERSHIP.name:
        return scenario.guard
    return requested or RUNTIME_OWNERSHIP.name


def run_scenario(
    scenario: Scenario,
    *,
    backstop: float = DEFAULT_BACKSTOP,
    guard: str | None = None,
    wire: Wire = Wire(),
    adapter: Adapter | None = None,
    golden: Path | None = None,
    require_golden: bool = False,
    detector: bool = True,
) -> Result:
    """Run one scenario on `adapter` (default: the reference runtime) and judge it. `guard`
    is a requested variant, applied as effective_guard says. With `golden` (a snapshots
    directory), its snapshot is compared too, whenever the scenario runs under its own
    guard (a variant's observation is not what the golden pins): all of it for the
    reference runtime, the portable part for any other; with `require_golden`, a scenario
    that has no snapshot there fails. `detector` as for observe_scenario."""
    guard = effective_guard(scenario, guard)
    if adapter is None:
        observation = observe_scenario(
            scenario, backstop=backstop, guard=guard, wire=wire, detector=detector
        )
    else:
        from harness._seam import RunOptions, missing_features

        missing = missing_features(adapter, scenario)
        if missing:
            reason = f"{adapter.name} does not run {', '.join(missing)} scenarios"
            return Result(
                scenario, Observation.empty(scenario.id, "skipped", reason), "skip", [reason]
            )
        observation = adapter.run(scenario, RunOptions(backstop, guard, wire))
    result = judge(scenario, observation)
    if result.status == "skip" or golden is None or guard != scenario.guard:
        return result
    snapshot = golden / f"{scenario.id}.json"
    if not snapshot.is_file():
        result.golden = "missing"
        if require_golden:
            result.mismatches.append(
                f"no golden snapshot {snapshot}; `harness snapshot {scenario.id}` writes it from "
                "the reference runtime"
            )
            result.status = "fail" if result.status == "pass" else result.status
        return result
    result.golden = "compared"
    expected, observed = json.loads(snapshot.read_text(encoding="utf-8")), observation.snapshot()
    # The goldens are the reference runtime's own: it is held to all of each, durable logs
    # and model prefix included. Any other runtime is held to the portable part.
    if adapter is not None and not getattr(adapter, "reference", False):
        expected, observed = portable(expected), portable(observed)
    found = json_differences(expected, observed)
    if found:
        result.differences = found
        result.mismatches += summaries(found)
        result.status = "fail" if result.status == "pass" else result.status
    return result


def run_scenarios(
    scenarios: Iterable[Scenario],
    *,
    backstop: float = DEFAULT_BACKSTOP,
    guard: str | None = None,
    wire: Wire = Wire(),
    adapter: Adapter | None = None,
    golden: Path | None = None,
    require_golden: bool = False,
    detector: bool = True,
) -> Iterator[Result]:
    """run_scenario for each, as one batch()."""
    with batch():
        for scenario in scenarios:
            yield run_scenario(
                scenario,
                backstop=backstop,
                guard=guard,
                wire=wire,
                adapter=adapter,
                golden=golden,
                require_golden=require_golden,
                detector=detector,
            )


def observe_scenario(
    scenario: Scenario,
    *,
    backstop: float = DEFAULT_BACKSTOP,
    guard: str | None = None,
    wire: Wire = Wire(),
    detector: bool = True,
    store_dir: Path | None = None,
) -> Observation:
    """Run one scenario under `guard` (default: the scenario's own, normally the decision).

    `detector=False` runs it on a plain event loop: a hang is then found by the `backstop`
    (in seconds) alone, as it would be without this harness. The durable logs are kept in
    memory, or as one JSONL file per session in `store_dir` (an existing directory, where
    no session of the scenario may exist yet); the observation is the same either way."""
    with SessionStore(store_dir, clock=lambda: _FROZEN) as store:
        world = LiveWorld.build(scenario, store, guard=guard, wire=wire, created=FROZEN_EPOCH)
        outcome, error = _run_on_loop(_run_phases(world, backstop), detector=detector)
        return observe(world, outcome, error)


async def _run_phases(world: LiveWorld, backstop: float) -> tuple[str, str | None]:
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    stopped_by: list[str] = []

    def stop(reason: str) -> None:
        stopped_by.append(reason)
        task.cancel()

    def on_deadlock() -> None:
        # Read the graph now, before cancellation unwinds the waits it describes.
        world.hang = hang_report(world.waits)
        stop("hang")

    backstop_handle = loop.call_later(backstop, stop, "backstop")
    if isinstance(loop, DeadlockDetectingLoop):
        loop.ignored.add(backstop_handle)
        loop.on_deadlock = on_deadlock
    _ask_during_run(world)
    try:
        async with world.http() as http:
            for phase in world.scenario.phases:
                if phase.ask is None or phase.ask.during is None:
                    await _run_phase(world, phase, http)
    except asyncio.CancelledError:
        if not stopped_by:
            raise
        if stopped_by[0] == "hang":
            chains = world.hang["graph"] + world.hang["cycles"] if world.hang else []
            return "hang", "hang: nothing can run; " + ("; ".join(chains) or "no recorded waits")
        return "error", (
            f"backstop: the scenario was still running after {backstop:g} s; something "
            "waits for an event the deadlock detector cannot see"
        )
    except AgentRunError as exc:
        return "error", str(exc)
    except Exception as exc:  # the runtime itself broke: report it, never a traceback
        return "error", f"{type(exc).__name__}: {exc}"
    finally:
        backstop_handle.cancel()
    return "completed", None


def _ask_during_run(world: LiveWorld) -> None:
    """Ask phases with `while:` run inside a model phase, right before the fake serves the
    named agent that step, against the runtime running then."""
    pending = [(i, p.ask) for i, p in enumerate(world.scenario.phases) if p.ask and p.ask.during]
    if not pending:
        return

    async def before_turn(agent: str, step: int) -> None:
        for entry in [e for e in pending if e[1].during == (agent, step)]:
            pending.remove(entry)
            assert world.live is not None, "a model phase is running"
            seq = world.store.next_seq()
            world.direct.append(
                await ask_live(entry[1], runtime=world.live, seq=seq, waits=world.waits)
            )

    world.llm.before_turn = before_turn

    def never_asked() -> list[str]:
        return [
            f"ask phase {i + 1} (while {a.during[0]} before step {a.during[1]}) never ran: "
            f"{a.during[0]} never asked for step {a.during[1]}"
            for i, a in pending
            if a.during is not None
        ]

    world.never_asked = never_asked


async def _run_phase(world: LiveWorld, phase: Phase, http: httpx.AsyncClient) -> None:
    if phase.ask is not None:
        world.direct.append(
            await run_direct(
                phase.ask,
                registry=world.scenario.world.registry,
                answerer=world.answerer,
                guard=world.guard,
                seq=world.store.next_seq(),
                store=world.store,
                waits=world.waits,
            )
        )
        return
    runtime = world.live = world.runtime(http)
    if phase.kind == "start":
        await runtime.start(str(phase.agent), phase.prompt)
    elif phase.owner is None:
        await runtime.resume(str(phase.agent), phase.prompt)
    else:
        # The host's live agent, entered as a root, resumes the session inside its scope.
        owner = Agent(phase.owner)
        assert runtime.agents is not None, "the loader refuses an owner without a registry"
        runtime.agents.enter(owner)
        runtime.waits.labels[owner.id] = f"{owner.id} (root)"
        await runtime.resume(str(phase.agent), phase.prompt, owner=owner)
