"""The agent CLIs' readers, on recorded output of the real CLIs (tests/fixtures/cli-output,
written by `python -m tests.clis.record`): no CLI is installed or started. Each recording
must still be of today's scenario and of the CLI version its lockfile pins; read back by
its CLI's reader it must give what the live run observed; judged as `harness matrix` judges
it, it must give adapters/matrix.json's cell. What tests/clis/test_claude_code.py,
test_qwen_code.py, test_opencode.py and test_codex.py assert of what a reader extracted
from a live run is asserted here again, of the replays."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from harness.contract import Observation, json_equal
from harness.run import RULE, UPSTREAM, judge
from tests.clis._recorded import (
    CLIS,
    COMMAND,
    FIXTURES,
    READ,
    REPO,
    cell,
    corpus,
    judged,
    load,
    matrix_cells,
    matrix_runtimes,
    pins,
    recordings,
    refresh,
    replay,
    replayed_observation,
    scenario_sha256,
)

RECORDINGS = recordings()
# An empty fixtures folder is one failing test, not zero tests.
PARAMS = [pytest.param(p, id=f"{p.parent.name}/{p.stem}") for p in RECORDINGS] or [
    pytest.param(None, id="no-recordings")
]


def _recording(path: Path | None) -> tuple[Path, dict[str, Any]]:
    if path is None:
        pytest.fail(f"no recordings in {FIXTURES}; write them with `{COMMAND}`")
    return path, load(path)


def _differing(replayed: dict[str, Any], live: dict[str, Any], keys: Any) -> list[str]:
    """Each key whose value differs, as JSON, with both sides (clipped)."""
    return [
        f"{k}: replayed {json.dumps(replayed.get(k))[:300]}, live {json.dumps(live.get(k))[:300]}"
        for k in keys
        if not json_equal(replayed.get(k), live.get(k))
    ]


def _shown(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def _replayed(name: str, sid: str, tmp_path: Path) -> Observation:
    path = FIXTURES / name / f"{sid}.json"
    if not path.is_file():
        pytest.fail(f"{_shown(path)}: no such recording; write it with `{refresh(name, sid)}`")
    return replay(load(path), corpus()[sid], tmp_path)


# -- the recordings are of today's scenarios and pins ------------------------------------
def test_every_cli_has_a_recording_of_every_scenario_it_runs() -> None:
    assert RECORDINGS, f"no recordings in {FIXTURES}; write them with `{COMMAND}`"
    cells = matrix_cells()
    for name in CLIS:
        ran = {sid for sid, c in cells[name].items() if not c.startswith("skip")}
        have = {p.stem for p in RECORDINGS if p.parent.name == name}
        assert have == ran, (
            f"{name}: adapters/matrix.json runs {sorted(ran - have)} with no recording, and "
            f"skips {sorted(have - ran)} recorded; write them again with `{refresh(name)}`"
        )


@pytest.mark.parametrize("path", PARAMS)
def test_a_recording_is_of_the_scenario_as_it_is_today(path: Path | None) -> None:
    path, recording = _recording(path)
    sid = recording["scenario"]["id"]
    assert path.stem == sid and path.parent.name == recording["adapter"]
    scenario = corpus().get(sid)
    assert scenario is not None, f"{_shown(path)}: no scenario {sid} today; delete the file"
    assert recording["scenario"]["sha256"] == scenario_sha256(scenario), (
        f"{_shown(path)}: recorded from another {recording['scenario']['file']}; record it "
        f"again with `{recording['command']}`"
    )


@pytest.mark.parametrize("path", PARAMS)
def test_a_recording_is_of_the_pinned_cli(path: Path | None) -> None:
    path, recording = _recording(path)
    name = recording["adapter"]
    assert recording["pins"] == pins(name), (
        f"{_shown(path)}: recorded with {recording['pins']}, adapters/{name}/package-lock.json "
        f"pins {pins(name)}; record it again with `{refresh(name)}`"
    )
    versions = [f"{package} {version}" for package, version in recording["pins"].items()]
    assert all(v in recording["runtime"] for v in versions), recording["runtime"]


# -- read back, it is what the live run observed -----------------------------------------
@pytest.mark.parametrize("path", PARAMS)
def test_its_reader_reads_it_as_the_live_run_did(path: Path | None, tmp_path: Path) -> None:
    path, recording = _recording(path)
    scenario = corpus()[recording["scenario"]["id"]]
    replayed = replayed_observation(replay(recording, scenario, tmp_path), tmp_path)
    live = recording["observation"]
    differ = _differing(replayed, live, READ)
    assert not differ, f"{_shown(path)}: the reader reads it otherwise now: " + "; ".join(differ)
    # The rest is the run's, as recorded, but for the asks: normalised again by the reader.
    differ = _differing(replayed, live, sorted(set(live) | set(replayed)))
    assert not differ, f"{_shown(path)}: not what the live run observed: " + "; ".join(differ)


@pytest.mark.parametrize("path", PARAMS)
def test_judged_it_holds_its_matrix_cell(path: Path | None, tmp_path: Path) -> None:
    path, recording = _recording(path)
    name, sid = recording["adapter"], recording["scenario"]["id"]
    assert recording["runtime"] == matrix_runtimes()[name], (
        f"{_shown(path)}: recorded on {recording['runtime']}, adapters/matrix.json ran "
        f"{matrix_runtimes()[name]}; make both again"
    )
    scenario = corpus()[sid]
    observed = replay(recording, scenario, tmp_path)
    want = matrix_cells()[name][sid]
    assert cell(name, scenario, observed) == want
    # At the rule level, the run the CI recipe gates on, it is acceptable as its
    # expectations file reads it, and holds the same level.
    upstream = judged(name, scenario, observed, UPSTREAM)
    rule = judged(name, scenario, observed, RULE)
    assert rule.acceptable, (rule.label, rule.result.mismatches)
    assert rule.result.held == upstream.result.held


# -- what the live tests assert of the readers, of the replays --------------------------
UNRESOLVED = "UNRESOLVED: Should deployment use the CUDA fallback?"


def _said(observed: Observation, agent: str, kind: str) -> list[dict[str, Any]]:
    return [e for e in observed.sessions.get(agent, []) if e["type"] == kind]


# Qwen Code at its pin (0.24.4): a subagent is offered no ask tool (QwenLM/qwen-code PR
# #8219). What 0.15.10 did, the hang among it, tests/clis/test_qwen_code.py runs live.
UNKNOWN_ASK = 'Tool "ask_user_question" not found'


@pytest.mark.parametrize("sid", ["child-no-answerer", "delegated-question-handoff"])
def test_qwen_refuses_a_childs_ask_as_an_unknown_tool(sid: str, tmp_path: Path) -> None:
    observed = _replayed("qwen-code", sid, tmp_path)
    assert (observed.outcome, observed.answerer_calls) == ("completed", 0)
    (error,) = observed.tool_errors
    assert (error["agent"], error["tool"], error["code"]) == ("child", "ask_user_question", "")
    assert error["text"].startswith(UNKNOWN_ASK)
    (handoff,) = observed.handoffs
    assert handoff["tool_result"] == UNRESOLVED
    assert observed.final["parent"] == "PARENT_COMPLETED"
    result = judge(corpus()[sid], observed, RULE)
    assert (result.status, result.held) == ("pass", RULE)
    # The child's ask is the child's (Qwen Code tags its events with the agent call).
    (ask,) = [c for e in _said(observed, "child", "message/assistant") for c in e["tool_calls"]]
    assert ask["name"] == "ask_user_question"


def test_qwen_refuses_a_childs_plan_review_as_the_caller_it_is(tmp_path: Path) -> None:
    observed = _replayed("qwen-code", "plan-mode-child-refused", tmp_path)
    (error,) = observed.tool_errors
    assert (error["agent"], error["tool"], error["code"]) == ("child", "exit_plan_mode", "")
    assert error["text"].startswith("exit_plan_mode is not available inside subagents")
    assert judge(corpus()["plan-mode-child-refused"], observed, RULE).status == "pass"


def test_qwen_hosted_a_roots_ask_reaches_the_host_and_its_answer_the_root(
    tmp_path: Path,
) -> None:
    observed = _replayed("qwen-code", "live-root-answered", tmp_path)
    assert (observed.outcome, observed.answerer_calls) == ("completed", 1)
    (asked,) = observed.asked
    assert asked["caller"] == "lead"
    assert [q["id"] for q in asked["questions"]] == ["cuda-fallback"]
    assert observed.final["lead"] == (
        "ANSWERED: User has provided the following answers:\n\n**Question**: No"
    )
    assert judge(corpus()["live-root-answered"], observed, RULE).status == "pass"


CLAUDE_NAMED = (
    "delegated-question-handoff",
    "grandchild-refused",
    "plan-mode-child-refused",
    "live-root-answered",
    "zero-depth-live-child",
    "parallel-children-refused",
)


@pytest.mark.parametrize("sid", CLAUDE_NAMED)
def test_claude_keeps_the_rule_in_its_own_words(sid: str, tmp_path: Path) -> None:
    observed = _replayed("claude-code", sid, tmp_path)
    result = judge(corpus()[sid], observed, RULE)
    assert (result.status, result.held, result.mismatches) == ("pass", RULE, [])
    assert judge(corpus()[sid], observed, UPSTREAM).status == "fail"
    # Normalised: no subagent id, uuid, duration or temporary path in what is compared.
    shown = json.dumps(observed.to_json())
    assert not re.search(r"\b[0-9a-f]{16,}\b|/tmp/|duration_ms: [1-9]", shown), shown


def test_claude_refuses_a_childs_ask_and_hands_the_question_back(tmp_path: Path) -> None:
    observed = _replayed("claude-code", "delegated-question-handoff", tmp_path)
    (error,) = observed.tool_errors
    assert (error["agent"], error["tool"], error["code"]) == ("child", "ask_user_question", "")
    assert "AskUserQuestion is not available inside subagents" in error["text"]
    (handoff,) = observed.handoffs
    assert handoff["child_final"] == UNRESOLVED
    assert handoff["tool_result"].startswith(handoff["child_final"] + "\nagentId: child ")
    assert observed.final["parent"] == "PARENT_COMPLETED"


@pytest.mark.parametrize("sid", ["parallel-children-refused", "child-empty-batch"])
def test_claude_refuses_a_childs_ask_before_reading_its_shape(sid: str, tmp_path: Path) -> None:
    observed = _replayed("claude-code", sid, tmp_path)
    assert observed.tool_errors and all(
        "AskUserQuestion is not available inside subagents" in e["text"]
        for e in observed.tool_errors
    ), observed.tool_errors
    assert judge(corpus()[sid], observed, RULE).status == "pass"


def test_claude_reads_a_roots_ask_and_its_answer(tmp_path: Path) -> None:
    claude_answered_its_root(_replayed("claude-code", "live-root-answered", tmp_path))


def claude_answered_its_root(observed: Observation) -> None:
    """live-root-answered on Claude Code, live or replayed (tests/clis/test_claude_code.py): the
    root's ask reaches the human, and the scripted answer comes back to it."""
    assert (observed.outcome, observed.answerer_calls) == ("completed", 1)
    options = [{"label": "Yes", "description": "Yes"}, {"label": "No", "description": "No"}]
    assert observed.asked == [{"caller": "lead", "questions": [{
        "id": "cuda-fallback", "question": "Should deployment use the CUDA fallback?",
        "header": "cuda-fallback", "options": options}]}]  # fmt: skip
    assert observed.final["lead"] == (
        'ANSWERED: Your questions have been answered: "Should deployment use the CUDA '
        'fallback?"="No". You can now continue with these answers in mind.'
    )


def test_claude_reads_a_plan_review_approved_or_denied(tmp_path: Path) -> None:
    approved = _replayed("claude-code", "plan-mode-root-approved", tmp_path / "approved")
    assert (approved.outcome, approved.answerer_calls, approved.tool_errors) == ("completed", 1, [])
    kept = _replayed("claude-code", "plan-mode-root-keep-planning", tmp_path / "kept")
    (error,) = kept.tool_errors
    assert (error["agent"], error["tool"]) == ("lead", "exit_plan_mode")
    assert error["text"] == "Add a rollback step."


OPENCODE_UNAVAILABLE = (
    "The arguments provided to the tool are invalid: Model tried to call unavailable tool "
    "'question'. Available tools: bash, edit, glob, grep, invalid, read, skill, webfetch, write."
)
TASK_RESULT = (
    '<task id="child" state="completed">\n<task_result>\n'
    "UNRESOLVED: Should deployment use the CUDA fallback?\n</task_result>\n</task>"
)


def test_opencode_reads_a_childs_ask_as_its_invalid_tool_completed(tmp_path: Path) -> None:
    observed = _replayed("opencode", "delegated-question-handoff", tmp_path)
    recording = load(FIXTURES / "opencode" / "delegated-question-handoff.json")
    (store,) = recording["files"].values()
    assert '"tool":"invalid"' in store["sqlite"]  # as opencode stored it
    assert (observed.outcome, observed.answerer_calls, observed.tool_errors) == ("completed", 0, [])
    assert observed.handoffs == [
        {"parent": "parent", "child": "child", "tool_result": TASK_RESULT,
         "child_final": UNRESOLVED}
    ]  # fmt: skip
    assert observed.final == {"child": UNRESOLVED, "parent": "PARENT_COMPLETED"}
    # Read as a call of the tool the child asked for, completed: no error.
    (call,) = [c for e in _said(observed, "child", "message/assistant") for c in e["tool_calls"]]
    assert call["name"] == "question"
    (answer,) = _said(observed, "child", "tool/result")
    assert (answer["tool"], answer["is_error"], answer["content"]) == (
        "question", False, OPENCODE_UNAVAILABLE,
    )  # fmt: skip
    result = judge(corpus()["delegated-question-handoff"], observed, RULE)
    assert (result.status, result.held) == ("fail", "none")
    assert result.mismatches == [
        "tool_errors: expected [child.ask_user_question=DELEGATED_CALLER], observed []"
    ]


def test_opencode_reads_a_roots_ask_unasked_too(tmp_path: Path) -> None:
    observed = _replayed("opencode", "root-no-answerer", tmp_path)
    assert (observed.outcome, observed.tool_errors, observed.answerer_calls) == ("completed", [], 0)
    (answer,) = _said(observed, "lead", "tool/result")
    assert (answer["tool"], answer["content"]) == (
        "question",
        OPENCODE_UNAVAILABLE.replace("skill, webfetch", "skill, task, todowrite, webfetch"),
    )


def test_opencode_reads_its_plan_agent_without_plan_exit(tmp_path: Path) -> None:
    observed = _replayed("opencode", "plan-mode-root-no-answerer", tmp_path)
    assert (observed.outcome, observed.tool_errors, observed.final) == (
        "completed", [], {"lead": "LEAD_COMPLETED"},
    )  # fmt: skip
    (answer,) = _said(observed, "lead", "tool/result")
    assert (answer["tool"], answer["is_error"]) == ("plan_exit", False)
    assert "unavailable tool 'plan_exit'" in answer["content"]


CODEX_ROOT_ONLY = "request_user_input can only be used by the root thread"
CODEX_HANDOFF = (
    '{"status":{"child":{"completed":"UNRESOLVED: Should deployment use the CUDA fallback?"}},'
    '"timed_out":false}'
)


def test_codex_reads_a_childs_ask_refused_by_its_caller_check(tmp_path: Path) -> None:
    observed = _replayed("codex", "delegated-question-handoff", tmp_path)
    assert (observed.outcome, observed.answerer_calls) == ("completed", 0)
    assert observed.tool_errors == [{"agent": "child", "tool": "ask_user_question", "code": "",
                                     "name": "Error", "is_error": True,
                                     "text": CODEX_ROOT_ONLY}]  # fmt: skip
    handoff = {"parent": "parent", "child": "child", "tool_result": CODEX_HANDOFF,
               "child_final": UNRESOLVED}  # fmt: skip
    assert observed.handoffs == [handoff]
    assert observed.final == {"parent": "PARENT_COMPLETED", "child": UNRESOLVED}
    scenario = corpus()["delegated-question-handoff"]
    assert judge(scenario, observed, RULE).status == "pass"
    upstream = judge(scenario, observed, UPSTREAM)
    assert (upstream.status, upstream.held) == ("fail", "rule")


def test_codex_reads_a_roots_ask_refused_in_default_mode(tmp_path: Path) -> None:
    observed = _replayed("codex", "root-no-answerer", tmp_path)
    assert (observed.outcome, observed.answerer_calls) == ("completed", 0)
    (error,) = observed.tool_errors
    assert (error["agent"], error["tool"], error["code"]) == ("lead", "ask_user_question", "")
    assert error["text"] == "request_user_input is unavailable in Default mode"
    assert judge(corpus()["root-no-answerer"], observed, RULE).status == "pass"
