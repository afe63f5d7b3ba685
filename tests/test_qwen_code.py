"""Qwen Code, the CLI (adapters/qwen-code), headless, as a runtime under test: installed
from its lockfile, keyless and offline; a child's ask observed coming back as a plain,
non-error result (a known failure of the rule, with the issues that report it), what it
keeps of the rule in its own words, and what headless Qwen Code cannot express skipped
with the reason."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.adapters._offline import unavailable
from harness.adapters._qwen_code import QwenCode, adapter_dir
from harness.cli import main
from harness.contract import SENTINEL_KEY, RunOptions
from harness.run import RULE, judge
from tests.conftest import SCENARIOS

pytestmark = pytest.mark.skipif(
    shutil.which("npm") is None or shutil.which("node") is None,
    reason="Qwen Code installs with npm and runs on node; .ci/run says SKIPPED loudly then",
)
NOT_ASKED = (
    "Cannot ask user questions in non-interactive mode without ACP support. Please run in "
    "interactive mode or enable ACP mode to use this tool."
)


@pytest.fixture(scope="module")
def qwen() -> Iterator[QwenCode]:
    adapter = QwenCode(adapter_dir(None))
    yield adapter
    adapter.close()


def test_it_runs_the_pinned_cli_offline_where_linux_allows(qwen: QwenCode, tmp_path: Path) -> None:
    lock = json.loads((qwen.root / "package-lock.json").read_text("utf-8"))
    pinned = lock["packages"]["node_modules/@qwen-code/qwen-code"]
    assert pinned["version"] == "0.15.10" and pinned["integrity"].startswith("sha512-")
    home = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(tmp_path)}  # not the user's
    shown = subprocess.run([qwen.cli, "--version"], capture_output=True, text=True, env=home)
    assert shown.stdout.strip() == "0.15.10"
    assert qwen.offline is (unavailable() is None)


def test_a_childs_ask_comes_back_unasked_and_not_as_an_error(qwen: QwenCode) -> None:
    # What QwenLM/qwen-code #7126 and #7835 are about, headless: the child keeps its ask
    # tool and is answered with a plain result, so the rule's error is missing.
    scenario = SCENARIOS["delegated-question-handoff"]
    observed = qwen.run(scenario, RunOptions())
    assert (observed.outcome, observed.answerer_calls, observed.tool_errors) == ("completed", 0, [])
    (handoff,) = observed.handoffs
    assert handoff["tool_result"] == "UNRESOLVED: Should deployment use the CUDA fallback?"
    assert observed.final["parent"] == "PARENT_COMPLETED"
    result = judge(scenario, observed, RULE)
    assert (result.status, result.held) == ("fail", "none")
    assert result.mismatches == [
        "tool_errors: expected [child.ask_user_question=DELEGATED_CALLER], observed []"
    ]
    # Keyless: the sentinel as its bearer token, on every request.
    tokens = {v for r in observed.requests for k, v in r.headers if k.lower() == "authorization"}
    assert tokens == {f"Bearer {SENTINEL_KEY}"}


def test_a_childs_events_are_read_from_its_stream(tmp_path: Path) -> None:
    from harness.adapters._claude_observe import Stream

    # Qwen Code tags a child's events with its agent call: the child's ask is the child's,
    # and its plain result is no error.
    stream = Stream(delegation="agent", children_in_stream=True, root="parent")
    stream.read(
        {
            "type": "assistant",
            "parent_tool_use_id": None,
            "message": {
                "content": [
                    {
                        "type": "tool_use",
                        "id": "call_1",
                        "name": "agent",
                        "input": {"description": "child"},
                    }
                ]
            },
        }
    )
    stream.read(
        {
            "type": "assistant",
            "parent_tool_use_id": "call_1",
            "message": {
                "content": [
                    {"type": "tool_use", "id": "call_2", "name": "ask_user_question", "input": {}}
                ]
            },
        }
    )
    stream.read(
        {
            "type": "user",
            "parent_tool_use_id": "call_1",
            "message": {
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "call_2",
                        "is_error": False,
                        "content": NOT_ASKED,
                    }
                ]
            },
        }
    )
    stream.finish(tmp_path)
    assert stream.calls["call_2"].agent == "child"
    assert stream.tool_errors == []


def test_its_plan_tool_is_declined_in_its_own_words(qwen: QwenCode) -> None:
    scenario = SCENARIOS["plan-mode-child-refused"]
    observed = qwen.run(scenario, RunOptions())
    (error,) = observed.tool_errors
    assert (error["agent"], error["tool"], error["code"]) == ("child", "exit_plan_mode", "")
    assert error["text"] == (
        'Qwen Code requires permission to use "exit_plan_mode", but that permission was '
        "declined (non-interactive mode cannot prompt for confirmation)."
    )
    assert judge(scenario, observed, RULE).status == "pass"


def test_a_root_to_be_answered_is_skipped_headless(qwen: QwenCode) -> None:
    observed = qwen.run(SCENARIOS["live-root-answered"], RunOptions())
    assert (observed.outcome, observed.error) == (
        "skipped",
        "lead, a root, is to be answered, and headless Qwen Code has no human channel: its "
        "ask comes back unasked",
    )


@pytest.mark.timeout(300)  # the corpus, about 20 s alone
def test_the_cli_judges_it_at_both_levels(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--adapter", "qwen-code", "--level", "rule", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    verdicts = {r["id"]: (r["status"], r["verdict"]) for r in report["scenarios"]}
    assert verdicts["delegated-question-handoff"] == ("fail", "KNOWN FAIL")
    assert verdicts["plan-mode-child-refused"] == ("pass", "PASS")
    assert main(["run", "--adapter", "qwen-code"]) == 0  # upstream: every failure known


def test_an_install_that_changes_the_lockfile_is_refused(tmp_path: Path) -> None:
    # npm install (where npm ci cannot be used) must install the lockfile as it is.
    from harness.adapters._npm import install
    from harness.contract import AdapterError

    lock = tmp_path / "package-lock.json"
    lock.write_text("{}\n")
    (tmp_path / "node_modules").mkdir()
    rewrite = ["sh", "-c", "echo '{\"changed\": true}' > package-lock.json"]
    with pytest.raises(AdapterError) as info:
        install("qwen-code", tmp_path, "npm install", rewrite, lock)
    assert str(info.value) == (
        "adapter qwen-code: npm install changed package-lock.json; restore it"
    )
    assert not (tmp_path / "node_modules" / ".keyless-harness-lock").exists()
