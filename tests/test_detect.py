"""The deadlock detector: it fires the moment nothing can run, and only then."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import re
import signal
import threading
import time
from collections.abc import Iterator, Sequence

import pytest

from harness.adapters.reference import ReferenceAdapter
from harness.adapters.reference.answerers import ScriptedHuman
from harness.adapters.reference.batch import batch
from harness.adapters.reference.batch import run_on_loop as _run_on_loop
from harness.adapters.reference.detect import DeadlockDetectingLoop, hang_report
from harness.cli import main
from harness.run import run_scenario, snapshot_text
from harness.runtime.questions import Answer, AskUserQuestionRequest
from harness.runtime.waits import WaitGraph
from harness.scenario import World
from tests.conftest import SCENARIOS
from tests.helpers import busy_lead

CHAIN = (
    "parent (root) --awaits subagent call call_1--> child (owned by parent) --awaits answer to "
    '"cuda-fallback"--> unreachable answerer'
)


def test_unreachable_answerer_is_a_hang_reported_at_once_with_its_graph() -> None:
    started = time.monotonic()
    result = run_scenario(SCENARIOS["hang-before-the-fix"], backstop=30)
    assert time.monotonic() - started < 2  # the detector, not the 30 s backstop
    observation = result.observation
    assert (observation.outcome, result.status) == ("hang", "pass")
    assert observation.hang == {
        "graph": [CHAIN],
        "cycles": [],
        "stopped": {
            "child": "turn 1, tool call call_2 (ask_user_question)",
            "parent": "turn 1, tool call call_1 (subagent)",
        },
    }
    assert observation.error == f"hang: nothing can run; {CHAIN}"


def test_a_true_cycle_is_detected_on_the_loop_and_reported() -> None:
    fired: list[bool] = []

    async def main() -> None:
        loop = asyncio.get_running_loop()
        assert isinstance(loop, DeadlockDetectingLoop)
        a_done, b_done = asyncio.Event(), asyncio.Event()

        async def a() -> None:
            await b_done.wait()
            a_done.set()

        async def b() -> None:
            await a_done.wait()
            b_done.set()

        task = asyncio.current_task()
        assert task is not None

        def on_deadlock() -> None:
            fired.append(True)
            task.cancel()

        loop.on_deadlock = on_deadlock
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.gather(a(), b())

    with asyncio.Runner(loop_factory=DeadlockDetectingLoop) as runner:
        runner.run(main())
    assert fired == [True]

    graph = WaitGraph()
    with graph.awaiting("a", "b's result", "b"), graph.awaiting("b", "a's result", "a"):
        report = hang_report(graph)
    assert report["cycles"] == ["a --awaits b's result--> b --awaits a's result--> a (cycle)"]


def test_a_waiter_with_two_waits_has_a_chain_for_each_and_a_branch_may_cycle() -> None:
    graph = WaitGraph()
    with (
        graph.awaiting("parent", "call_1", "a"),
        graph.awaiting("parent", "call_2", "b"),
        graph.awaiting("a", "q", "human"),
        graph.awaiting("b", "x", "parent"),
    ):
        report = hang_report(graph)
    # Every node is waited on, so the first waiter starts; its other branch is no cycle.
    assert report["graph"] == ["parent --awaits call_1--> a --awaits q--> human"]
    assert report["cycles"] == [
        "parent --awaits call_2--> b --awaits x--> parent (cycle)",
    ]
    graph = WaitGraph()
    with (
        graph.awaiting("parent", "call_1", "a"),
        graph.awaiting("parent", "call_2", "b"),
        graph.awaiting("a", "q", "human"),
    ):
        report = hang_report(graph)
    assert report["graph"] == [
        "parent --awaits call_1--> a --awaits q--> human",
        "parent --awaits call_2--> b",
    ]


def test_an_answer_that_arrives_later_is_not_a_hang() -> None:
    scenario = SCENARIOS["resumed-depth-one-root"]
    late = dataclasses.replace(
        scenario, world=dataclasses.replace(scenario.world, answer_delay_ms=50)
    )
    result = run_scenario(late)
    assert result.observation.outcome == "completed" and result.status == "pass"


def test_a_long_progressing_run_is_not_a_hang() -> None:
    observation = run_scenario(busy_lead(SCENARIOS["root-no-answerer"], 25)).observation
    assert observation.outcome == "completed"
    assert [e["code"] for e in observation.tool_errors] == ["UNKNOWN_TOOL"] * 25


def test_without_the_detector_a_hang_is_left_to_the_backstop() -> None:
    result = run_scenario(
        SCENARIOS["hang-before-the-fix"], backstop=0.2, adapter=ReferenceAdapter(detector=False)
    )
    observation = result.observation
    assert (observation.outcome, observation.hang) == ("error", None)
    # How long exactly, and which request it saw last, depend on when its timer looked.
    assert re.fullmatch(
        r"backstop: the reference runtime showed no progress for \d+\.\d s \(the limit is "
        r"0\.2 s without progress\); it was last seen sending its request [12] to the fake; "
        r"something waits for an event the deadlock detector cannot see",
        observation.error or "",
    )
    assert result.status == "fail"  # the scenario expects the detector's hang


def test_a_reference_adapter_keeps_its_loop_but_leaves_nothing_on_the_thread_between_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A session-long adapter (the pytest plugin's) must not leave a batch open or a Ctrl-C
    # handler installed between its runs: a test that runs next on the same thread would
    # find a batch() already open (and so a no-op), and Ctrl-C no longer its own.
    made: list[DeadlockDetectingLoop] = []
    init = DeadlockDetectingLoop.__init__

    def counted(self: DeadlockDetectingLoop) -> None:
        made.append(self)
        init(self)

    monkeypatch.setattr(DeadlockDetectingLoop, "__init__", counted)
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    adapter = ReferenceAdapter()
    try:
        for sid in ("live-root-answered", "zero-depth-live-child"):
            assert run_scenario(SCENARIOS[sid], adapter=adapter).status == "pass"
            assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
            with batch():  # a batch of its own, not the adapter's left open
                assert run_scenario(SCENARIOS[sid]).status == "pass"
        assert len(made) == 3 and not made[0].is_closed()  # the adapter's, and two batches'
    finally:
        adapter.close()
        signal.signal(signal.SIGINT, before)
    assert made[0].is_closed()


def test_a_batch_shares_a_loop_yet_each_run_starts_clean(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A hang leaves waiters on the loop; they are cancelled before the next run, which must
    # observe exactly what it observes alone.
    order = ["hang-before-the-fix", "resumed-depth-one-root", "hang-before-the-fix"]
    alone = [snapshot_text(run_scenario(SCENARIOS[sid]).observation.snapshot()) for sid in order]
    made: list[DeadlockDetectingLoop] = []
    init = DeadlockDetectingLoop.__init__

    def counted(self: DeadlockDetectingLoop) -> None:
        made.append(self)
        init(self)

    monkeypatch.setattr(DeadlockDetectingLoop, "__init__", counted)
    with batch():
        batched = [
            snapshot_text(run_scenario(SCENARIOS[sid]).observation.snapshot()) for sid in order
        ]
        plain = run_scenario(
            SCENARIOS["resumed-depth-one-root"], adapter=ReferenceAdapter(detector=False)
        )
        assert not made[0].is_closed()
        # Disarmed between runs: no stale callback, no pile of ignored backstop timers.
        assert (made[0].on_deadlock, made[0].ignored) == (None, set())
    assert batched == alone
    assert len(made) == 1 and made[0].is_closed()
    assert plain.status == "pass"


def test_what_a_run_leaves_on_a_batch_loop_is_cancelled_before_the_next() -> None:
    # The runtime awaits everything it starts, but code embedded in it may not.
    cancelled: list[str] = []

    async def leaves_a_task() -> None:
        async def forever() -> None:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                cancelled.append("forever")
                raise

        asyncio.get_running_loop().create_task(forever())
        await asyncio.sleep(0)

    async def alone() -> int:
        return len(asyncio.all_tasks())

    with batch():
        _run_on_loop(leaves_a_task(), detector=True)
        assert cancelled == ["forever"]
        assert _run_on_loop(alone(), detector=True) == 1


@pytest.fixture
def default_sigint() -> Iterator[None]:
    # A batch takes Ctrl-C over only from Python's default handler (xdist's workers may
    # have set another).
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


@pytest.mark.usefixtures("default_sigint")
def test_ctrl_c_in_a_batch_interrupts_the_run_in_progress_and_the_batch_goes_on() -> None:
    # A batch runs its scenarios on the loop itself, so it handles Ctrl-C as asyncio.Runner
    # would for each run: the run in progress is cancelled and raises KeyboardInterrupt.
    stopped: list[str] = []

    async def interrupted() -> None:
        signal.raise_signal(signal.SIGINT)
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            stopped.append("cancelled")
            raise

    with batch():
        assert signal.getsignal(signal.SIGINT) is not signal.default_int_handler
        with pytest.raises(KeyboardInterrupt):
            _run_on_loop(interrupted(), detector=True)
        assert stopped == ["cancelled"]
        assert run_scenario(SCENARIOS["zero-depth-live-child"]).status == "pass"
        with pytest.raises(KeyboardInterrupt):  # between runs: at once
            signal.raise_signal(signal.SIGINT)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


class ThreadedHuman(ScriptedHuman):
    """Answers from another thread, well after the backstop has fired: a wait the loop
    cannot see into, which only the backstop can end."""

    async def answer(self, request: AskUserQuestionRequest) -> Sequence[Answer]:
        # Timed from the question, not from the test's start, so a slow start of the run
        # cannot eat the margin.
        release = threading.Event()
        threading.Timer(0.3, release.set).start()
        await asyncio.get_running_loop().run_in_executor(None, release.wait, 5)
        return []


def test_waits_in_threads_are_left_to_the_backstop(monkeypatch: object) -> None:
    import harness.adapters.reference.world as world_module

    monkeypatch.setattr(world_module, "make_answerer", lambda s: ThreadedHuman())  # type: ignore[attr-defined]
    world = World(answerer="scripted")  # the human is ThreadedHuman, patched in above
    scenario = dataclasses.replace(SCENARIOS["live-root-answered"], world=world)
    result = run_scenario(scenario, backstop=0.1)
    assert result.observation.outcome == "error"
    assert (result.observation.error or "").startswith("backstop: the reference runtime showed")


def test_run_exits_3_on_an_unexpected_hang_and_prints_the_graph(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["run", "zero-depth-live-child", "--guard", "none"]) == 3
    out = capsys.readouterr().out
    assert "observed: hang, answerer=1" in out
    assert CHAIN.replace("unreachable answerer", "tripwire answerer") in out
    assert "child: turn 1, tool call call_2 (ask_user_question)" in out


def test_repro_prints_the_transcript_then_the_graph(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["repro", "zero-depth-live-child", "--guard", "none"]) == 3
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "zero-depth-live-child under guard none"
    assert "child   assistant calls ask_user_question(call_2)" in lines[6]
    assert lines.index("outcome: hang") < lines.index("wait-for graph:")
    assert main(["repro", "zero-depth-live-child"]) == 0
    out = capsys.readouterr().out
    assert "ask_user_question(call_2) -> [DELEGATED_CALLER] Error: human interaction" in out
    assert out.splitlines()[-2:] == ["outcome: completed", "verdict: pass"]
