"""A scenario's phases run on the reference runtime: world built, phases run in order on
one event loop (a batch's, if one is open), the observation read back from the durable
logs."""

from __future__ import annotations

import asyncio
from datetime import datetime
from pathlib import Path

import httpx

from harness.adapters._watchdog import Watchdog
from harness.adapters.reference.batch import run_on_loop
from harness.adapters.reference.detect import DeadlockDetectingLoop, hang_report
from harness.adapters.reference.direct import ask_live, run_direct
from harness.adapters.reference.observe import observe
from harness.adapters.reference.world import LiveWorld
from harness.contract import DEFAULT_BACKSTOP, FROZEN_AT, FROZEN_EPOCH, Observation, Wire
from harness.runtime.errors import AgentRunError
from harness.runtime.registry import Agent
from harness.runtime.sessions import SessionStore
from harness.scenario import Phase, Scenario

_FROZEN = datetime.fromisoformat(FROZEN_AT)


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
    alone (that many seconds in which the fake serves no request), as it would be without
    this harness. The durable logs are kept in memory, or as one JSONL file per session in
    `store_dir` (an existing directory, where no session of the scenario may exist yet); the
    observation is the same either way."""
    with SessionStore(store_dir, clock=lambda: _FROZEN) as store:
        world = LiveWorld.build(scenario, store, guard=guard, wire=wire, created=FROZEN_EPOCH)
        outcome, error = run_on_loop(_run_phases(world, backstop), detector=detector)
        unscripted = getattr(world.answerer, "unscripted", None)
        if unscripted is not None:  # the scenario's mistake, not the runtime's: said as such
            outcome, error = "error", f"UnscriptedQuestion: {unscripted}"
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
        world.hang = hang_report(world.waits, held=world.llm.holds.held)
        stop("hang")

    # The backstop: no request served for `backstop` seconds (harness.adapters._watchdog),
    # looked at a few times within it. Its timer never keeps the detector from seeing a hang.
    watchdog = Watchdog(backstop, "the reference runtime", clock=loop.time)
    detecting = loop if isinstance(loop, DeadlockDetectingLoop) else None
    backstop_handle: asyncio.TimerHandle | None = None

    def look() -> None:
        nonlocal backstop_handle
        if detecting is not None and backstop_handle is not None:
            detecting.ignored.discard(backstop_handle)
        watchdog.requests(world.llm.served)
        if watchdog.expired():
            stop("backstop")
            return
        backstop_handle = loop.call_later(min(backstop / 4, 1.0), look)
        if detecting is not None:
            detecting.ignored.add(backstop_handle)

    look()
    if detecting is not None:
        detecting.on_deadlock = on_deadlock
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
        return "error", watchdog.report(
            "something waits for an event the deadlock detector cannot see"
        )
    except AgentRunError as exc:
        return "error", str(exc)
    except Exception as exc:  # the runtime itself broke: report it, never a traceback
        return "error", f"{type(exc).__name__}: {exc}"
    finally:
        if backstop_handle is not None:
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
    for name in phase.alongside:
        # Live roots of the new runtime, owning nothing: whatever lineage the resumed
        # session's header names, only the registry says who owns it.
        assert runtime.agents is not None, "the loader refuses alongside without a registry"
        runtime.agents.enter(Agent(name))
        runtime.waits.labels[name] = f"{name} (root)"
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
