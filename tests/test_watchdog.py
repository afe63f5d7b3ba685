"""The backstop is a no-progress watchdog (harness.adapters._watchdog): a runtime that keeps
showing signs of life runs as long as it needs, on every kind of adapter, and one that shows
none for the backstop is stopped with what it was last seen doing. A slow runtime is not a
broken one."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from harness.adapters._watchdog import Watchdog
from harness.adapters.clis.adapter import CliAdapter
from harness.adapters.clis.run import CliRun
from harness.contract import RunOptions
from harness.fake import ScriptedLLM
from harness.run import run_scenario
from tests.conftest import SCENARIOS
from tests.helpers import busy_lead


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_it_counts_from_the_last_sign_of_life_not_from_the_start() -> None:
    clock = Clock()
    dog = Watchdog(10, "opencode", clock=clock)
    clock.now += 9
    dog.saw("writing on its stdout (step_start)")
    clock.now += 9  # 18 s since the start, 9 since the last sign of life
    assert not dog.expired()
    clock.now += 1
    assert dog.expired()
    assert dog.report() == (
        "backstop: opencode showed no progress for 10.0 s (the limit is 10 s without "
        "progress); it was last seen writing on its stdout (step_start); stopped, and "
        "nothing hung"
    )


def test_the_report_says_what_the_fake_holds() -> None:
    # A runtime that runs siblings one by one waits on a reply the fake holds: no hang it
    # can show, so the backstop's report says so.
    held = ["child-a's step 2 until child-b ends"]
    dog = Watchdog(5, "gemini", clock=Clock(), held=lambda: held)
    assert dog.report().endswith(
        "it was last seen starting; the fake holds child-a's step 2 until child-b ends; "
        "stopped, and nothing hung"
    )
    held.clear()
    assert dog.report().endswith("it was last seen starting; stopped, and nothing hung")


def test_a_counter_that_moves_is_progress_and_its_first_look_is_not() -> None:
    clock = Clock()
    dog = Watchdog(5, "qwen", clock=clock)
    clock.now += 4
    dog.requests(2)  # the first look: nothing to compare with, so no sign of life
    clock.now += 1
    assert dog.expired() and dog.doing == "starting"
    dog.requests(3)
    assert dog.idle() == 0 and dog.doing == "sending its request 3 to the fake"
    clock.now += 4
    dog.requests(3)  # looked at again, unchanged: no sign of life
    dog.stderr(0, "")
    dog.stderr(1, "x" * 200)
    assert dog.idle() == 0 and dog.doing == f"writing on its stderr ({'x' * 80})"


def test_the_reference_runs_past_its_backstop_while_the_fake_keeps_serving(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Each request waits 30 ms on the event loop before it is answered (as a model over a
    # network would), and there are 26 of them: 0.8 s in all, four times the backstop, and
    # never 0.2 s without one served.
    real = ScriptedLLM.__init__

    async def slow(agent: str, step: int) -> None:
        await asyncio.sleep(0.03)

    def init(self: ScriptedLLM, *args: Any, **kwargs: Any) -> None:
        real(self, *args, **kwargs)
        self.before_turn = slow  # awaited before each step is served

    monkeypatch.setattr(ScriptedLLM, "__init__", init)
    started = time.monotonic()
    observation = run_scenario(
        busy_lead(SCENARIOS["root-no-answerer"], 25), backstop=0.2
    ).observation
    assert time.monotonic() - started > 0.2
    assert (observation.outcome, observation.error) == ("completed", None)


# -- a CLI run, with a stand-in CLI that writes stream-json ----------------------------
CLI = r"""
import json, sys, time, urllib.request
mode, port = sys.argv[1], int(sys.argv[2])
for _ in range(10):  # 1 s in all
    if mode == "stderr":
        print("working", file=sys.stderr, flush=True)
    elif mode == "requests":
        request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/messages", data=b"{}")
        try:
            urllib.request.urlopen(request)
        except Exception:
            pass  # the fake refuses the body: it has reached the fake all the same
    time.sleep(0.1)
print(json.dumps({"type": "result", "is_error": False, "result": "done"}), flush=True)
"""


class StandIn(CliAdapter):
    """A CLI adapter whose CLI is a short Python script: nothing to install."""

    name = "claude-code"  # its dialect
    label = "a stand-in CLI"
    program = "stand-in"

    def __init__(self, root: Path, mode: str) -> None:
        self.mode = mode
        (root / "package.json").write_text(json.dumps({"dependencies": {}}))
        (root / "cli.py").write_text(CLI)
        super().__init__(root, offline=False)

    def _install(self) -> Path:
        return self.root / "cli.py"

    def argv(self, run: CliRun, root: str, prompt: str) -> list[str]:
        port = run.server.base_url.rsplit(":", 1)[1].split("/")[0]
        return [sys.executable, str(self.cli), self.mode, port]

    def environment(self, run: CliRun, home: Path, port: int) -> dict[str, str]:
        return self.bare_environment(run, home)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["stderr", "requests"])
def test_a_cli_that_shows_progress_runs_past_its_backstop(tmp_path: Path, mode: str) -> None:
    adapter = StandIn(tmp_path, mode)
    started = time.monotonic()
    observed = adapter.run(SCENARIOS["delegated-question-handoff"], RunOptions(backstop=0.5))
    assert time.monotonic() - started > 1.0
    assert (observed.outcome, observed.error) == ("completed", None)


@pytest.mark.slow
def test_a_cli_that_shows_none_is_stopped_saying_what_it_last_did(tmp_path: Path) -> None:
    adapter = StandIn(tmp_path, "silent")
    observed = adapter.run(SCENARIOS["delegated-question-handoff"], RunOptions(backstop=0.5))
    assert observed.outcome == "error"
    assert (observed.error or "").startswith("backstop: stand-in showed no progress for 0.")
    assert (observed.error or "").endswith(
        "(the limit is 0.5 s without progress); it was last seen starting its process for "
        "phase 1 (parent); stopped, and nothing hung"
    )


@pytest.mark.slow
def test_a_jsonl_adapter_that_shows_progress_runs_past_its_backstop_and_grace() -> None:
    from tests.process.test_adapters import started

    adapter = started("--misbehave", "slow")  # 1 s of stderr lines, then the result
    try:
        # 0.2 s and the test's 0.5 s of grace: 0.7 s without progress would stop it.
        observed = adapter.run(SCENARIOS["reregistered-id"], RunOptions(backstop=0.2))
    finally:
        adapter.close()
    assert (observed.outcome, observed.error, observed.adapter_error) == ("completed", None, None)
