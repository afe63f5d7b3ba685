"""opencode, the CLI (adapters/opencode), headless, as a runtime under test: installed from
its lockfile, keyless and offline; a child's question observed coming back as a completed
call of opencode's `invalid` tool (no error: a known failure of the rule, with the issues
that report the hang it replaced), its title request turned off or answered as a side
request, and what headless opencode cannot express skipped with the reason."""

from __future__ import annotations

import contextlib
import json
import shutil
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest

from harness.adapters._offline import unavailable
from harness.adapters.clis.opencode.adapter import Opencode
from harness.adapters.clis.opencode.observe import STORE, Events
from harness.cli import main
from harness.contract import SENTINEL_KEY, Observation, RunOptions
from harness.run import RULE, UPSTREAM, judge
from tests.clis._shared import SharedClis
from tests.conftest import SCENARIOS

pytestmark = pytest.mark.skipif(
    shutil.which("npm") is None or shutil.which("node") is None,
    reason="opencode installs with npm (its postinstall runs on node); .ci/run says SKIPPED "
    "loudly then",
)
UNAVAILABLE = (
    "The arguments provided to the tool are invalid: Model tried to call unavailable tool "
    "'question'. Available tools: bash, edit, glob, grep, invalid, read, skill, webfetch, write."
)
TASK_RESULT = (
    '<task id="child" state="completed">\n<task_result>\n'
    "UNRESOLVED: Should deployment use the CUDA fallback?\n</task_result>\n</task>"
)


@pytest.fixture(scope="module")
def opencode(shared_clis: SharedClis) -> Opencode:
    # The session's: a scenario another test ran on it is not run again.
    adapter: Opencode = shared_clis.get("opencode")
    return adapter


@pytest.fixture(scope="module")
def handoff(opencode: Opencode) -> Observation:
    """delegated-question-handoff on opencode, once for the tests that read it."""
    return opencode.run(SCENARIOS["delegated-question-handoff"], RunOptions())


def _requests(observed: Observation, agent: str) -> list[dict[str, Any]]:
    return [r.body for r in observed.requests if r.agent == agent]


def _tools(request: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in request.get("tools") or ()]


@pytest.mark.cli
def test_it_runs_the_pinned_cli_offline_where_linux_allows(
    opencode: Opencode, tmp_path: Path
) -> None:
    lock = json.loads((opencode.root / "package-lock.json").read_text("utf-8"))
    pinned = lock["packages"]["node_modules/opencode-ai"]
    assert pinned["version"] == "1.18.33" and pinned["integrity"].startswith("sha512-")
    home = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(tmp_path)}  # not the user's
    shown = subprocess.run([opencode.cli, "--version"], capture_output=True, text=True, env=home)
    assert shown.stdout.strip() == "1.18.33"
    # Even --version makes its dirs under $HOME: why the install gets a home of its own.
    assert (tmp_path / ".local" / "share" / "opencode").is_dir()
    assert (opencode.root / ".install-home" / ".local" / "share" / "opencode").is_dir()
    assert opencode.offline is (unavailable() is None)


@pytest.mark.cli
def test_the_dialect_reaches_it_as_task_and_question(handoff: Observation) -> None:
    # The parent's task call as opencode's task {description, prompt, subagent_type} ...
    parent = _requests(handoff, "parent")
    (task,) = [c for m in parent[1]["messages"] for c in m.get("tool_calls") or ()]
    assert task["function"]["name"] == "task"
    prompt = SCENARIOS["delegated-question-handoff"].agents["parent"].script[0].calls[0]
    assert json.loads(task["function"]["arguments"]) == {
        "description": "child", "prompt": prompt.args["prompt"], "subagent_type": "general",
    }  # fmt: skip
    # ... and the child's ask as a question call, which its tools (no question, no task)
    # do not have: opencode rewrote it in the child's history as its `invalid` tool.
    child = _requests(handoff, "child")
    assert "question" not in _tools(child[0]) and "task" not in _tools(child[0])
    (call,) = [c for m in child[1]["messages"] for c in m.get("tool_calls") or ()]
    assert call["function"]["name"] == "invalid"
    assert json.loads(call["function"]["arguments"])["tool"] == "question"
    answer = child[1]["messages"][-1]
    assert (answer["role"], answer["tool_call_id"], answer["content"]) == (
        "tool", call["id"], UNAVAILABLE,
    )  # fmt: skip


@pytest.mark.cli
def test_a_childs_ask_comes_back_unasked_and_not_as_an_error(handoff: Observation) -> None:
    # Headless, `opencode run` denies question to every session, a child's too (the hang of
    # #11899 and PR #13974 otherwise): the child's call completes as an `invalid` call, so
    # the rule's error is missing.
    assert (handoff.outcome, handoff.answerer_calls, handoff.tool_errors) == ("completed", 0, [])
    assert handoff.handoffs == [
        {"parent": "parent", "child": "child", "tool_result": TASK_RESULT,
         "child_final": "UNRESOLVED: Should deployment use the CUDA fallback?"}
    ]  # fmt: skip
    assert handoff.final == {
        "child": "UNRESOLVED: Should deployment use the CUDA fallback?",
        "parent": "PARENT_COMPLETED",
    }
    result = judge(SCENARIOS["delegated-question-handoff"], handoff, RULE)
    assert (result.status, result.held) == ("fail", "none")
    assert result.mismatches == [
        "tool_errors: expected [child.ask_user_question=DELEGATED_CALLER], observed []"
    ]
    # Keyless: the sentinel as its bearer token, on every request.
    tokens = {v for r in handoff.requests for k, v in r.headers if k.lower() == "authorization"}
    assert tokens == {f"Bearer {SENTINEL_KEY}"}


@pytest.mark.cli
def test_the_title_request_is_off_when_quiet_and_a_side_request_when_not(
    opencode: Opencode, handoff: Observation
) -> None:
    # Quiet: `--title` names the session, and opencode asks the model for no title.
    assert handoff.side_requests == []
    assert all(r.body.get("tools") for r in handoff.requests)
    assert len(handoff.requests) == 4
    # Loud: opencode asks for a title on the side, when it gets to it (it may exit first:
    # the request is not awaited), and whenever it comes it moves no script.
    loud = Opencode(opencode.root, opencode.offline, quiet=False)
    observed = loud.run(SCENARIOS["delegated-question-handoff"], RunOptions())
    assert all(s.startswith("session title generation") for s in observed.side_requests)
    assert (observed.outcome, observed.handoffs, observed.final, observed.script_errors) == (
        "completed", handoff.handoffs, handoff.final, [],
    )  # fmt: skip


def test_a_title_request_is_answered_beside_the_scripts() -> None:
    # The request as opencode sends it (no tools; its user message asks for a title),
    # answered from the dialect without consuming the root's turn, whenever it comes.
    import httpx

    from harness.fake import BASE_URL, ScriptedLLM
    from harness.fake.dialect import Dialect

    scenario = SCENARIOS["delegated-question-handoff"]
    llm = ScriptedLLM({n: a.script for n, a in scenario.agents.items()},
                      dialect=Dialect.load("opencode"), roots=scenario.roots())  # fmt: skip
    asked = "Generate a title for this conversation:\n" + str(scenario.phases[0].prompt)
    title = {"model": "scripted", "messages": [
        {"role": "system", "content": "You are a title generator."},
        {"role": "user", "content": asked},
    ]}  # fmt: skip
    with httpx.Client(transport=httpx.MockTransport(llm.router().handler)) as client:
        said = client.post(f"{BASE_URL}/chat/completions", json=title).json()
    assert said["choices"][0]["message"]["content"] == "Scripted session"
    assert llm.progress() == {"parent": 0, "child": 0} and llm.errors == []
    assert llm.side[0].startswith("session title generation")


@pytest.mark.cli
def test_a_roots_ask_is_unasked_too_and_a_root_to_be_answered_is_skipped(
    opencode: Opencode,
) -> None:
    observed = opencode.run(SCENARIOS["root-no-answerer"], RunOptions())
    assert (observed.outcome, observed.tool_errors, observed.answerer_calls) == ("completed", [], 0)
    lead = _requests(observed, "lead")
    assert "question" not in _tools(lead[0])
    assert lead[1]["messages"][-1]["content"] == UNAVAILABLE.replace(
        "skill, webfetch", "skill, task, todowrite, webfetch"
    )
    skipped = opencode.run(SCENARIOS["live-root-answered"], RunOptions())
    assert (skipped.outcome, skipped.error) == (
        "skipped",
        "lead, a root, is to be answered, and headless opencode has no human channel: "
        "`opencode run` denies question and plan_exit to every session",
    )


@pytest.mark.cli
@pytest.mark.skipif(
    unavailable() is not None, reason=f"no loopback-only namespace: {unavailable()}"
)
def test_a_scenario_runs_offline_and_writes_nothing_in_the_users_home(opencode: Opencode) -> None:
    home = Path.home()
    dirs = [home / ".local" / "share", home / ".config", home / ".cache", home / ".local" / "state"]

    def seen() -> set[str]:
        return {str(p) for d in dirs if d.is_dir() for p in d.iterdir()}

    before = seen()
    adapter = Opencode(opencode.root, offline=True)
    assert adapter.runtime.endswith("offline (a network namespace with only loopback)")
    observed = adapter.run(SCENARIOS["plan-mode-root-no-answerer"], RunOptions())
    assert (observed.outcome, observed.tool_errors, observed.final) == (
        "completed", [], {"lead": "LEAD_COMPLETED"},
    )  # fmt: skip
    # Its plan agent (a root in plan mode) has no plan_exit headless either.
    lead = _requests(observed, "lead")
    assert "plan_exit" not in _tools(lead[0]) and "task" in _tools(lead[0])
    assert "unavailable tool 'plan_exit'" in lead[1]["messages"][-1]["content"]
    assert seen() == before


def test_the_store_is_read_in_the_scenarios_names(tmp_path: Path) -> None:
    # Only the root's events are in the stream; a child's parts are in the store, its name
    # from the task call that started it, its unavailable call read as the tool it asked for.
    events = Events(root="parent", roots=["parent"])
    events.read({"type": "step_start", "sessionID": "ses_root", "part": {}})
    events.read({"type": "step_finish", "sessionID": "ses_root", "part": {"reason": "stop"}})
    assert events.result == {"is_error": False, "reason": "stop"}
    _store(tmp_path / STORE)
    events.finish(tmp_path)
    assert events.calls["call_2"].agent == "child" and events.calls["call_2"].tool == "question"
    assert events.calls["call_3"].tool == "bash"
    assert events.tool_errors == [
        {"agent": "child", "tool": "bash", "code": "", "name": "Error", "text": "denied: child"}
    ]
    assert events.handoffs == [{"parent": "parent", "child": "child", "child_final": "DONE",
                                "tool_result": "<task id=\"child\">DONE</task>"}]  # fmt: skip
    assert events.final == {"child": "DONE", "parent": "OK"}
    errored = Events(root="lead", roots=["lead"])
    errored.read({"type": "error", "sessionID": "s", "error": {"data": {"message": "no API"}}})
    assert errored.result == {"is_error": True, "result": "no API"}


def _store(path: Path) -> None:
    """A store of opencode's shape: a root that delegates, a child that asks and fails."""
    path.parent.mkdir(parents=True)
    assistant = json.dumps({"role": "assistant"})
    task = {
        "type": "tool",
        "tool": "task",
        "callID": "call_1",
        "state": {
            "status": "completed",
            "input": {"description": "child", "prompt": "p"},
            "output": '<task id="ses_kid">DONE</task>',
            "metadata": {"sessionId": "ses_kid"},
        },
    }
    invalid = {
        "type": "tool",
        "tool": "invalid",
        "callID": "call_2",
        "state": {
            "status": "completed",
            "input": {"tool": "question", "error": "unavailable"},
            "output": UNAVAILABLE,
        },
    }
    failed = {
        "type": "tool",
        "tool": "bash",
        "callID": "call_3",
        "state": {"status": "error", "input": {"command": "x"}, "error": "denied: ses_kid"},
    }
    parts = [("ses_root", "m1", task), ("ses_kid", "m2", invalid), ("ses_kid", "m2", failed),
             ("ses_kid", "m3", {"type": "text", "text": "DONE"}),
             ("ses_root", "m4", {"type": "text", "text": "OK"})]  # fmt: skip
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute("CREATE TABLE session (id, parent_id, title, time_created)")
        db.execute("CREATE TABLE message (id, session_id, data)")
        db.execute("CREATE TABLE part (id, message_id, session_id, time_created, data)")
        db.executemany(
            "INSERT INTO session VALUES (?, ?, ?, ?)",
            [("ses_root", None, "t", 1), ("ses_kid", "ses_root", "child (@general subagent)", 2)],
        )
        db.executemany("INSERT INTO message VALUES (?, ?, ?)",
                       [(m, s, assistant) for s, m, _ in parts])  # fmt: skip
        db.executemany(
            "INSERT INTO part VALUES (?, ?, ?, ?, ?)",
            [(f"p{i}", m, s, i, json.dumps(p)) for i, (s, m, p) in enumerate(parts)],
        )
        db.commit()


@pytest.mark.cli
@pytest.mark.corpus
@pytest.mark.timeout(600)  # two scenarios at two levels: seconds alone, more under load
def test_the_cli_judges_its_known_failure_at_both_levels(
    capsys: pytest.CaptureFixture[str], cli_runs_shared: SharedClis
) -> None:
    ids = ["delegated-question-handoff", "plan-mode-child-refused"]
    assert main(["run", "--adapter", "opencode", "--level", "rule", *ids]) == 0
    shown = capsys.readouterr().out
    for sid in ids:
        line = next(x for x in shown.splitlines() if x.split()[2:3] == [sid])
        assert line.startswith("KNOWN FAIL")
    assert "known: opencode headless (`opencode run`, 1.18.33) breaks the rule here" in shown
    assert "PR #13974" in shown
    assert main(["run", "--adapter", "opencode", "--level", UPSTREAM, *ids]) == 0
    upstream = capsys.readouterr().out
    assert upstream.count("KNOWN FAIL") == 2 and "NEW FAIL" not in upstream


def test_a_postinstall_writes_in_the_installs_own_home(tmp_path: Path) -> None:
    # opencode-ai's postinstall runs `opencode --version`, which makes its config dirs
    # under $HOME and the XDG dirs: every install's environment points them inside the
    # adapter's folder, never at the user's home.
    import os

    from harness.adapters._npm import install, npm_settings

    lock = tmp_path / "package-lock.json"
    lock.write_text("{}\n")
    (tmp_path / "node_modules").mkdir()
    postinstall = ["sh", "-c", 'mkdir -p "$HOME/.opencode" "$XDG_CONFIG_HOME/opencode"']
    install("opencode", tmp_path, "npm install", postinstall, lock,
            env={**os.environ, **npm_settings(tmp_path)})  # fmt: skip
    home = tmp_path / ".install-home"
    assert (home / ".opencode").is_dir() and (home / ".config" / "opencode").is_dir()
