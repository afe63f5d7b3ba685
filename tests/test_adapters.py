"""Adapters: the JSON-lines protocol end to end with a small adapter in a second process
(tests/jsonl_adapter.py), every way such a process can break the protocol, known-failure
files, and choosing an adapter by name, command or module:factory."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.adapters import (
    AdapterError,
    Expectations,
    ExpectationsError,
    JsonLinesAdapter,
    ReferenceAdapter,
    RunOptions,
    open_adapter,
)
from harness.cli import main
from harness.contract import DEFAULT_BACKSTOP
from harness.run import DEFAULT_BACKSTOP as RUN_BACKSTOP
from harness.run import portable, run_scenario
from harness.scenario import scenarios_version
from tests.conftest import SCENARIOS

ROOT = Path(__file__).parents[1]
SNAPSHOTS = ROOT / "snapshots"
COMMAND = [sys.executable, "-m", "tests.jsonl_adapter"]
SERVICE = sorted(s.id for s in SCENARIOS.values() if "service" in s.features)


def started(*flags: str, hello_timeout: float = 10.0) -> JsonLinesAdapter:
    adapter = JsonLinesAdapter(
        "py", [*COMMAND, *flags], cwd=ROOT, hello_timeout=hello_timeout, grace=0.5
    )
    adapter.open(scenarios_version())
    return adapter


@pytest.fixture(scope="module")
def second_process() -> Iterator[JsonLinesAdapter]:
    adapter = started()
    try:
        yield adapter
    finally:
        adapter.close()


@pytest.mark.parametrize("service_id", SERVICE)
def test_a_second_process_meets_the_golden_snapshots(
    second_process: JsonLinesAdapter, service_id: str
) -> None:
    result = run_scenario(SCENARIOS[service_id], adapter=second_process, golden=SNAPSHOTS)
    assert result.status == "pass", "\n".join(result.mismatches)
    # The portable part is what the golden snapshot holds, texts and all.
    golden = json.loads((SNAPSHOTS / f"{service_id}.json").read_text("utf-8"))
    assert portable(result.observation.snapshot()) == portable(golden)


def test_the_hello_names_the_adapter_and_its_features(second_process: JsonLinesAdapter) -> None:
    assert second_process.name == "py"
    assert second_process.features == {
        "service",
        "intent",
        "no-registry",
        "no-answerer",
        "provider-lifecycle",
    }


def test_a_scenario_needing_more_is_skipped_naming_the_features(
    second_process: JsonLinesAdapter,
) -> None:
    result = run_scenario(SCENARIOS["stale-same-id-object"], adapter=second_process)
    assert result.status == "skip"
    assert result.mismatches == ["py does not run assembled, faults scenarios"]


def test_an_adapter_may_skip_what_it_cannot_run() -> None:
    # It announces assembled, so the harness sends the scenario; the adapter declines it.
    adapter = started("--features", "service,intent,no-registry,no-answerer,assembled")
    try:
        result = run_scenario(SCENARIOS["live-root-answered"], adapter=adapter)
    finally:
        adapter.close()
    assert result.status == "skip"  # the adapter itself said it needs a model
    assert result.mismatches == ["needs a model"]


def test_a_different_text_fails_naming_the_place() -> None:
    adapter = started("--misbehave", "reword")
    try:
        result = run_scenario(SCENARIOS["reregistered-id"], adapter=adapter, golden=SNAPSHOTS)
    finally:
        adapter.close()
    assert result.status == "fail"  # the codes agree; the model-visible text does not
    pinned, direct, tool_error = result.mismatches
    assert pinned.startswith("tool_errors[0].text: expected exactly 'Error: human interaction")
    assert direct.startswith('snapshot.direct[0].text: expected "Error: human interaction requires')
    assert tool_error.startswith("snapshot.tool_errors[0].text: expected ")
    assert direct.endswith('supplied!"') and tool_error.endswith('supplied!"')


def test_models_are_served_on_loopback_to_the_adapter() -> None:
    adapter = started("--probe-model", "--features", "assembled")
    try:
        result = run_scenario(SCENARIOS["live-root-answered"], adapter=adapter)
    finally:
        adapter.close()
    (request,) = result.observation.requests  # one real HTTP request reached the fake
    assert request.agent == "lead" and request.step == 1
    assert "ask_user_question" in (result.observation.final["lead"] or "")
    # It stopped after one turn, so the rest of the script is reported, not ignored.
    assert result.status == "error"
    assert "agent lead: 1 scripted step(s) never requested" in result.mismatches[0]


def test_a_runtimes_own_ids_and_dialect_reach_the_fake_and_come_back_as_names() -> None:
    dialect = {"tool": "task", "arguments": {"description": "{name}", "prompt": "{prompt}"}}
    flags = ["--session-header", "x-probe-session", "--delegation", json.dumps(dialect)]
    adapter = started("--probe-model", "--features", "assembled", *flags)
    try:
        assert adapter.session_header == "x-probe-session"
        result = run_scenario(SCENARIOS["delegated-question-handoff"], adapter=adapter)
    finally:
        adapter.close()
    (request,) = result.observation.requests
    # No X-Harness-Agent: the fake assigned the new session to the first root phase...
    assert request.agent == "parent" and dict(request.headers)["x-probe-session"]
    # ...and the adapter's report, keyed by its own session id, reads as the scenario's name.
    (said,) = json.loads(result.observation.final["parent"] or "")
    assert said["function"]["name"] == "task"
    assert json.loads(said["function"]["arguments"]) == {
        "description": "child",
        "prompt": "Check the deployment environment and decide whether the CUDA fallback "
        "is needed.",
    }


@pytest.mark.parametrize(
    ("hello", "message"),
    [
        (
            ["--session-header", " "],
            "hello: session_header: expected a header name (an HTTP "
            'token) or null, got " " (scenarios/protocol.json)',
        ),
        (["--delegation", '{"tool": 3}'], "hello: delegation.tool: expected a string, got 3"),
        # What the schema cannot say, the dialect's parser does.
        (
            ["--delegation", '{"arguments": {"task": "{name}"}}'],
            "hello.delegation.arguments: no string carries {prompt}",
        ),
    ],
)
def test_a_bad_routing_declaration_refuses_the_adapter(
    hello: list[str], message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)  # the schema is named relative to the working directory
    with pytest.raises(AdapterError, match=r"^adapter py: ") as info:
        started(*hello)
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ("--misbehave crash", "the adapter process exited (status 3) before its result for"),
        ("--misbehave garbage", "not a JSON line: 'this is not json'"),
        ("--misbehave silent", "no result for reregistered-id within 0.8 s"),
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
        options = RunOptions(backstop=0.3 if "silent" in flags else DEFAULT_BACKSTOP)
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
    return f"jsonl:{sys.executable} -m tests.jsonl_adapter --crash-on {','.join(ids)}"


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


def test_module_factory_loads_a_python_adapter() -> None:
    adapter = open_adapter("harness.adapters:ReferenceAdapter")
    assert isinstance(adapter, ReferenceAdapter) and adapter.features is None
    assert DEFAULT_BACKSTOP == RUN_BACKSTOP


# -- known failures ----------------------------------------------------------------------
def expectations(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "expectations.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_verdicts_against_known_failures(tmp_path: Path) -> None:
    path = expectations(tmp_path, "scenarios:\n  a: {expected: fail, reason: upstream differs}\n")
    known = Expectations.load(path, {"a", "b"})
    assert known.verdict("a", "fail") == ("KNOWN FAIL", True)
    assert known.verdict("a", "error") == ("KNOWN FAIL", True)
    assert known.verdict("a", "pass") == ("NEW PASS", False)
    assert known.verdict("b", "fail") == ("NEW FAIL", False)
    assert known.verdict("b", "pass") == ("PASS", True)
    assert known.verdict("b", "skip") == ("SKIP", True)
    assert Expectations.none().verdict("b", "error") == ("ERROR", False)


def test_a_bad_expectations_file_says_what_to_fix(tmp_path: Path) -> None:
    path = expectations(
        tmp_path,
        "scenarios:\n  gone: {expected: fail, reason: x}\n  a: {expected: pass}\n"
        "  b: {expected: fail, reason: ''}\n",
    )
    with pytest.raises(ExpectationsError) as info:
        Expectations.load(path, {"a", "b"})
    assert info.value.problems == [
        f"{path}: /scenarios/gone: no scenario has this id; remove the entry",
        f"{path}: /scenarios/a: write {{expected: fail, reason: ...}}",
        f"{path}: /scenarios/b/reason: say why this runtime fails it",
    ]


def test_the_cli_prints_new_fail_and_new_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(ROOT)
    spec = f"jsonl:{sys.executable} -m tests.jsonl_adapter --misbehave bad-observation"
    path = expectations(
        tmp_path, "scenarios:\n  owner-detached-child: {expected: fail, reason: known}\n"
    )
    ids = ["owner-detached-child", "reregistered-id"]
    assert main(["run", "--adapter", spec, "--expectations", str(path), *ids]) == 1
    runtime, *out = capsys.readouterr().out.splitlines()
    assert runtime == "runtime: py: the reference service"
    assert out[0].startswith("KNOWN FAIL owner-detached-child")
    assert "      known: known" in out
    assert next(line for line in out if line.startswith("NEW FAIL")).startswith(
        "NEW FAIL   reregistered-id"
    )
    assert out[-1] == "0 passed, 2 failed (2 of them errors; 1 known fail; 1 new fail)"
    spec = f"jsonl:{sys.executable} -m tests.jsonl_adapter"
    assert main(["run", "--adapter", spec, "--expectations", str(path), *ids]) == 1
    _, *out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("NEW PASS   owner-detached-child")
    assert out[-1] == "2 passed, 0 failed (1 new pass)"


def test_the_cli_runs_a_second_process_and_counts_skips(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(ROOT)
    spec = f"jsonl:{sys.executable} -m tests.jsonl_adapter"
    assert main(["run", "--adapter", spec]) == 0
    out = capsys.readouterr().out.splitlines()
    skipped = len(SCENARIOS) - len(SERVICE)
    assert out[-1] == f"{len(SERVICE)} passed, 0 failed, {skipped} skipped"
    assert main(["run", "--adapter", spec, "--guard", "none"]) == 2
    assert "--guard is a test seam of the reference runtime" in capsys.readouterr().err


def test_pytest_runs_the_scenarios_on_the_chosen_adapter() -> None:
    spec = f"jsonl:{sys.executable} -m tests.jsonl_adapter"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
         "tests/test_scenarios.py", "--harness-adapter", spec, "-k", "json and not session"],
        cwd=ROOT, capture_output=True, text=True, env={**os.environ, "CI": "true"}, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    # Both tests of every service scenario pass; every other scenario is skipped, by feature.
    service, others = len(SERVICE), len(SCENARIOS) - len(SERVICE)
    assert f"{2 * service} passed, {2 * others} skipped" in done.stdout.splitlines()[-1]


def test_a_report_in_the_runtimes_own_ids_and_tool_names_reads_in_the_scenarios() -> None:
    from harness.adapters._reported import observation
    from harness.fake import ScriptedLLM
    from harness.fake.dialect import Delegation

    llm = ScriptedLLM({}, delegation=Delegation("task", {"prompt": "{prompt}"}))
    llm.routes.keys.update({"session-1": "parent", "uuid-2": "child"})
    error = {"agent": "uuid-2", "tool": "task", "code": "X", "name": "E", "text": "Error: x"}
    handoff = {"parent": "session-1", "child": "uuid-2", "child_final": "f", "tool_result": "f"}
    data = {
        "outcome": "completed",
        "answerer_calls": 0,
        "asked": [],
        "direct": [],
        "tool_errors": [error, {**error, "agent": "unknown-3", "tool": "ask_user_question"}],
        "handoffs": [handoff],
        "final": {"session-1": "done", "uuid-2": "f"},
        "plan_mode": {"uuid-2": True},
    }
    observed = observation(SCENARIOS["delegated-question-handoff"], data, llm)
    assert [(e["agent"], e["tool"]) for e in observed.tool_errors] == [
        ("child", "subagent"),
        ("unknown-3", "ask_user_question"),  # an id the fake never saw stays as reported
    ]
    assert (observed.handoffs[0]["parent"], observed.handoffs[0]["child"]) == ("parent", "child")
    assert observed.final == {"parent": "done", "child": "f"}
    assert observed.plan_mode == {"child": True}


def test_node_dsh_is_found_beside_the_scenarios_a_checkout_vendors(tmp_path: Path) -> None:
    from harness.adapters._node_dsh import adapter_dir

    assert adapter_dir(None) == ROOT / "adapters" / "node-dsh"
    (tmp_path / "scenarios").mkdir()
    # Without one beside them, the harness's own checkout's.
    assert adapter_dir(tmp_path / "scenarios") == ROOT / "adapters" / "node-dsh"
    vendored = tmp_path / "adapters" / "node-dsh"
    vendored.mkdir(parents=True)
    (vendored / "adapter.mjs").write_text("", "utf-8")
    assert adapter_dir(tmp_path / "scenarios") == vendored


def test_a_jsonl_command_may_set_its_environment_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    adapter = open_adapter(
        f"jsonl:ADAPTER_RUNTIME_NOTE='set, as env would' {sys.executable} -m tests.jsonl_adapter"
    )
    try:
        assert adapter.name == "py" and getattr(adapter, "runtime", "") == "set, as env would"
    finally:
        adapter.close()


def test_a_process_gone_before_its_line_is_sent_is_reported_as_gone_before_the_reply() -> None:
    # Whether the harness notices an exited adapter on writing its line or on reading the
    # reply is a race; the report is the same either way (it once flaked in CI).
    from harness.adapters._jsonl import _Process
    from harness.adapters._reported import ProtocolError

    proc = _Process([sys.executable, "-c", "import sys; sys.exit(5)"], None, None)
    assert proc.popen.wait(5) == 5
    with pytest.raises(ProtocolError) as raised:
        for _ in range(100):  # the first write may land in the pipe's buffer
            proc.send({"type": "hello", "padding": "x" * 65536}, awaiting="hello")
    assert str(raised.value) == "the adapter process exited (status 5) before its hello"
