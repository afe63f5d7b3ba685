"""Adapters: the JSON-lines protocol end to end with a small adapter in a second process
(tests/process/jsonl_adapter.py), known-failure files, and choosing an adapter by name, command or
module:factory. Every way such a process can break the protocol is
tests/process/test_adapter_faults.py."""

from __future__ import annotations

import json
import os
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
    open_adapter,
)
from harness.cli import main
from harness.contract import DEFAULT_BACKSTOP
from harness.run import DEFAULT_BACKSTOP as RUN_BACKSTOP
from harness.run import portable, run_scenario
from harness.scenario import scenarios_version
from tests.conftest import SCENARIOS

ROOT = Path(__file__).parents[2]
SNAPSHOTS = ROOT / "snapshots"
COMMAND = [sys.executable, "-m", "tests.process.jsonl_adapter"]
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
    assert second_process.features == frozenset(
        {"service", "intent", "no-registry", "no-answerer", "provider-lifecycle"}
    )


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
    spec = f"jsonl:{sys.executable} -m tests.process.jsonl_adapter --misbehave bad-observation"
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
    spec = f"jsonl:{sys.executable} -m tests.process.jsonl_adapter"
    assert main(["run", "--adapter", spec, "--expectations", str(path), *ids]) == 1
    _, *out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("NEW PASS   owner-detached-child")
    assert out[-1] == "2 passed, 0 failed (1 new pass)"


def test_the_cli_runs_a_second_process_and_counts_skips(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(ROOT)
    spec = f"jsonl:{sys.executable} -m tests.process.jsonl_adapter"
    assert main(["run", "--adapter", spec]) == 0
    out = capsys.readouterr().out.splitlines()
    skipped = len(SCENARIOS) - len(SERVICE)
    assert out[-1] == f"{len(SERVICE)} passed, 0 failed, {skipped} skipped"
    assert main(["run", "--adapter", spec, "--guard", "none"]) == 2
    assert "--guard is a test seam of the reference runtime" in capsys.readouterr().err


def test_pytest_runs_the_scenarios_on_the_chosen_adapter() -> None:
    spec = f"jsonl:{sys.executable} -m tests.process.jsonl_adapter"
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
    from harness.adapters.process.node_dsh import adapter_dir

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
        "jsonl:ADAPTER_RUNTIME_NOTE='set, as env would' "
        f"{sys.executable} -m tests.process.jsonl_adapter"
    )
    try:
        assert adapter.name == "py" and getattr(adapter, "runtime", "") == "set, as env would"
    finally:
        adapter.close()
