"""Adapters that break: every way a second process can break the JSON-lines protocol (a
crash, garbage, silence, a bad observation, a refusal, a bad hello, a missing command, a
failed restart), each an error naming the adapter and costing only the scenario it
happened in; and adapter specs that cannot be opened, each one line. The protocol working
end to end is tests/process/test_adapters.py."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from harness.adapters import AdapterError, RunOptions, open_adapter
from harness.cli import main
from harness.contract import DEFAULT_BACKSTOP
from tests.conftest import SCENARIOS
from tests.process.test_adapters import ROOT, started


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ("--misbehave crash", "the adapter process exited (status 3) before its result for"),
        ("--misbehave garbage", "not a JSON line: 'this is not json'"),
        ("--misbehave silent",
         "no result for reregistered-id after 0.6 s without progress (the backstop and a "
         "grace); it was last seen being sent its run line, for the result for reregistered-id"),
        ("--misbehave bad-observation",
         'result for reregistered-id: observation.answerer_calls: expected an integer, got "many"'),
        ("--misbehave refuse", "adapter py: it could not run reregistered-id: refusing on purpose"),
        ("--omit answerer_calls",
         "result for reregistered-id: observation: missing 'answerer_calls' "
         "(scenarios/protocol.json)"),
    ],
)  # fmt: skip
def test_a_broken_adapter_is_an_error_naming_it(
    flags: str, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    adapter = started(*flags.split())
    try:
        # Only the silent adapter needs waiting out, so only its limit is short: the others
        # answer, and a loaded machine may take a while to, which must not read as silence.
        options = RunOptions(backstop=0.1 if "silent" in flags else DEFAULT_BACKSTOP)
        observation = adapter.run(SCENARIOS["reregistered-id"], options)
        after = adapter.run(SCENARIOS["reregistered-id"], options)
    finally:
        adapter.close()
    assert observation.outcome == "error"
    assert observation.error is not None and observation.error.startswith("adapter py: ")
    assert message in observation.error
    assert observation.adapter_error == observation.error  # judged as an error, not a fail
    if "crash" in flags:
        assert "its stderr ends: adapter: crashing on purpose" in observation.error
    # The next run gets a new process, which breaks the same way: not "stopped earlier".
    assert after.error is not None and message in after.error


CRASHES, AFTER = "reregistered-id", ["owner-detached-child", "service-no-provider"]


def crashing_on(*ids: str) -> str:
    return f"jsonl:{sys.executable} -m tests.process.jsonl_adapter --crash-on {','.join(ids)}"


def test_a_crash_costs_the_scenario_it_happened_in_and_no_more(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from junitparser import Error, JUnitXml

    monkeypatch.chdir(ROOT)
    ids = [AFTER[0], CRASHES, AFTER[1]]
    assert main(["run", "--adapter", crashing_on(CRASHES), *ids]) == 1
    lines = capsys.readouterr().out.splitlines()
    shown = {w[1]: w[0] for w in map(str.split, lines) if len(w) > 1 and w[1] in ids}
    assert shown == {AFTER[0]: "PASS", CRASHES: "ERROR", AFTER[1]: "PASS"}
    (crashed,) = (n for n, line in enumerate(lines) if line.startswith("ERROR"))
    detail = lines[crashed + 1].strip()
    assert detail.startswith(
        f"adapter py: the adapter process exited (status 4) before its result for {CRASHES}; "
        "its stderr ends: adapter: started (pid "
    )
    assert lines[-1] == "2 passed, 1 failed (1 of them errors)"
    junit = tmp_path / "results.xml"
    machine = ["--json", "--junit", str(junit)]
    assert main(["run", "--adapter", crashing_on(CRASHES), *machine, *ids]) == 1
    statuses = {s["id"]: s["status"] for s in json.loads(capsys.readouterr().out)["scenarios"]}
    assert statuses == {AFTER[0]: "pass", CRASHES: "error", AFTER[1]: "pass"}
    (suite,) = JUnitXml.fromfile(str(junit))
    cases = {case.name: case for case in suite}
    (error,) = cases[CRASHES].result
    assert isinstance(error, Error) and "exited (status 4)" in error.message
    assert cases[AFTER[0]].is_passed and cases[AFTER[1]].is_passed


def test_the_stderr_shown_for_a_crash_is_the_crashed_processes() -> None:
    first, then, second = CRASHES, AFTER[0], AFTER[1]
    adapter = started("--crash-on", f"{first},{second}")
    try:
        crashed, passed, crashed_again = (
            adapter.run(SCENARIOS[i], RunOptions()) for i in (first, then, second)
        )
    finally:
        adapter.close()
    assert passed.outcome == "completed"
    pid = re.search(rf"adapter: crashing on {first} \(pid (\d+)\)", crashed.error or "")
    again = re.search(rf"adapter: crashing on {second} \(pid (\d+)\)", crashed_again.error or "")
    assert pid and again and pid[1] != again[1], (crashed.error, crashed_again.error)
    # Each report shows what its own process wrote last, and nothing of the other's.
    assert (crashed.error or "").endswith(
        f"its stderr ends: adapter: started (pid {pid[1]}) | adapter: crashing on {first} "
        f"(pid {pid[1]})"
    )
    assert (crashed_again.error or "").endswith(
        f"its stderr ends: adapter: started (pid {again[1]}) | adapter: crashing on {second} "
        f"(pid {again[1]})"
    )


def test_a_restart_that_fails_is_that_scenarios_error_and_is_not_retried() -> None:
    adapter = started("--crash-on", CRASHES)
    try:
        adapter.run(SCENARIOS[CRASHES], RunOptions())
        # From now on the command starts a process that never says hello.
        never = "import sys; print('cannot start today', file=sys.stderr); sys.exit(5)"
        adapter.command = [sys.executable, "-c", never]
        restart, later = (adapter.run(SCENARIOS[i], RunOptions()) for i in AFTER)
    finally:
        adapter.close()
    assert restart.adapter_error == (
        f"adapter py: starting a new process (the last one stopped during {CRASHES}): the "
        "adapter process exited (status 5) before its hello; its stderr ends: cannot start today"
    )
    assert later.adapter_error == (
        f"adapter py: no process: starting a new one for {AFTER[0]} failed, so it is not tried "
        "again"
    )


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        ("protocol-2", "hello: protocol: expected 1, got 2"),
        ("no-hello", "no hello within 0.5 s"),
        ("hello-error", "it answered hello with an error: this adapter runs scenarios 9.x only"),
    ],
)
def test_a_bad_hello_refuses_the_adapter(flag: str, message: str) -> None:
    # A short hello limit only where there is no hello to wait for: a Python process starting
    # on a loaded machine can take longer than 0.5 s to say a wrong one.
    with pytest.raises(AdapterError, match=message):
        started("--misbehave", flag, hello_timeout=0.5 if flag == "no-hello" else 30.0)


def test_a_missing_command_is_named() -> None:
    with pytest.raises(AdapterError, match="cannot start no-such-runtime"):
        open_adapter("jsonl:no-such-runtime --flag")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("nonsense", "unknown adapter 'nonsense'; use reference, node-dsh"),
        ("harness.nowhere:make", "cannot load it"),
        ("json:dumps", "json:dumps: cannot load it: TypeError"),
        ("json:JSONDecoder", "JSONDecoder\\(\\) returned JSONDecoder, which lacks"),
        ("jsonl:node 'unclosed", "No closing quotation; quote it as a shell would"),
        ("jsonl:FLAG=1", "needs a command after 'jsonl:'"),
    ],
)
def test_a_bad_spec_is_one_line(spec: str, message: str) -> None:
    with pytest.raises(AdapterError, match=message):
        open_adapter(spec)


def test_a_process_gone_before_its_line_is_sent_is_reported_as_gone_before_the_reply() -> None:
    # Whether the harness notices an exited adapter on writing its line or on reading the
    # reply is a race; the report is the same either way (it once flaked in CI).
    from harness.adapters._reported import ProtocolError
    from harness.adapters.process.jsonl import _Process

    proc = _Process([sys.executable, "-c", "import sys; sys.exit(5)"], None, None)
    assert proc.popen.wait(5) == 5
    with pytest.raises(ProtocolError) as raised:
        for _ in range(100):  # the first write may land in the pipe's buffer
            proc.send({"type": "hello", "padding": "x" * 65536}, awaiting="hello")
    assert str(raised.value) == "the adapter process exited (status 5) before its hello"
