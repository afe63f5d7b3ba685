"""Conformance levels: `live` (nothing hangs and no question is lost), `rule` (the behaviour
the decision asks for, in any words) and `upstream` (also upstream's codes, exact texts and
goldens). Each result holds the highest level it meets; `--level` says which one gates. The
runtime that keeps the rule in other words is the reference under the `other-words` guard
(harness.adapters.reference.guards); the one that forwards a child's question to the human
end is the reference with no caller check (`none`) and a human who answers it."""

from __future__ import annotations

import dataclasses
import functools
import json
from pathlib import Path
from typing import Any

import pytest

from harness.adapters import ReferenceAdapter
from harness.adapters.reference.guards import GUARDS, OTHER_WORDS_MESSAGE
from harness.cli import main
from harness.cli._options import LEVEL_NAMES
from harness.contract import Observation, RunOptions
from harness.run import LEVELS, LIVE, RULE, UPSTREAM, judge, run_scenario
from harness.run._mutants import mutant_matrix
from tests.conftest import SCENARIOS

ROOT = Path(__file__).parents[1]
HANDOFF = "delegated-question-handoff"
QUESTION = "UNRESOLVED: Should deployment use the CUDA fallback?"


@functools.cache
def observed(scenario_id: str, guard: str | None = None) -> Observation:
    with ReferenceAdapter() as reference:
        return reference.run(SCENARIOS[scenario_id], RunOptions(guard=guard))


def held(obs: Observation, level: str = UPSTREAM) -> tuple[str, str | None, list[str]]:
    result = judge(SCENARIOS[obs.scenario_id], obs, level)
    return result.status, result.held, result.mismatches


def test_the_cli_knows_the_levels_lowest_first() -> None:
    assert LEVEL_NAMES == LEVELS == (LIVE, RULE, UPSTREAM)


def test_the_reference_holds_upstream() -> None:
    assert held(observed(HANDOFF)) == ("pass", UPSTREAM, [])
    assert held(observed(HANDOFF), RULE) == ("pass", UPSTREAM, [])


def test_other_words_hold_the_rule_and_not_upstream() -> None:
    obs = observed(HANDOFF, "other-words")
    (error,) = obs.tool_errors
    assert (error["code"], error["text"]) == ("", "Error: " + OTHER_WORDS_MESSAGE)
    status, level, mismatches = held(obs)
    assert (status, level) == ("fail", RULE)
    assert mismatches == [
        "tool_errors: expected [child.ask_user_question=DELEGATED_CALLER], "
        "observed [child.ask_user_question=Error]"
    ]
    result = judge(SCENARIOS[HANDOFF], obs, RULE)
    assert (result.status, result.held, result.mismatches) == ("pass", RULE, [])
    assert result.above == [(UPSTREAM, mismatches[0])]  # still said, just not failing


def test_a_handoff_wrapped_in_the_runtimes_own_words_holds_the_rule() -> None:
    obs = observed(HANDOFF)
    wrapped = [{**h, "tool_result": f"Subagent finished.\n{QUESTION}\n(2 turns)"}
               for h in obs.handoffs]  # fmt: skip
    status, level, mismatches = held(dataclasses.replace(obs, handoffs=wrapped), RULE)
    assert (status, level, mismatches) == ("pass", RULE, [])
    # One that lost the question is not even live: the question is lost.
    lost = [{**h, "tool_result": "Subagent finished."} for h in obs.handoffs]
    status, level, mismatches = held(dataclasses.replace(obs, handoffs=lost), RULE)
    assert (status, level) == ("fail", "none")
    assert mismatches[0].startswith("handoffs[0]: expected exactly")


@pytest.mark.parametrize(
    ("change", "why"),
    [
        # opencode's kind: the child's ask neither refused as an error nor put to anyone.
        ({"tool_errors": []}, "tool_errors: expected [child.ask_user_question=DELEGATED_CALLER]"),
        ({"outcome": "hang", "error": "waits"}, "outcome: expected completed, observed hang"),
        ({"outcome": "error", "error": "crashed"}, "outcome: expected completed, observed error"),
    ],
    ids=["question-lost", "hang", "crash"],
)
def test_what_loses_a_question_or_hangs_fails_at_every_level(
    change: dict[str, object], why: str
) -> None:
    obs = dataclasses.replace(observed(HANDOFF, "other-words"), **change)  # type: ignore[arg-type]
    for level in LEVELS:
        status, at, mismatches = held(obs, level)
        assert (status, at) == ("fail", "none")
        assert any(m.startswith(why) for m in mismatches), mismatches


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"answerer_calls": 1}, "answerer_calls: expected 0, observed 1"),
        ({"final": {"child": QUESTION, "parent": None}}, "final[parent]: nothing was said"),
    ],
    ids=["human-reached", "parent-silent"],
)
def test_what_breaks_the_rule_alone_holds_live(change: dict[str, object], why: str) -> None:
    obs = dataclasses.replace(observed(HANDOFF, "other-words"), **change)  # type: ignore[arg-type]
    assert held(obs, LIVE) == ("pass", LIVE, [])
    status, at, mismatches = held(obs, RULE)
    assert (status, at) == ("fail", LIVE)
    assert any(m.startswith(why) for m in mismatches), mismatches


def forwarded(answerer: str = "scripted") -> Observation:
    """delegated-question-handoff on a runtime with no caller check, whose human end
    answers the child's question: a runtime that forwards it up, as openai-agents and
    langgraph do (issue 48)."""
    from harness.runtime.questions import Answer
    from harness.scenario._model import Reply

    scenario = SCENARIOS[HANDOFF]
    answers = {"cuda-fallback": Reply(items=(Answer("cuda-fallback", ("No",)),))}
    world = dataclasses.replace(scenario.world, answerer=answerer, answers=answers)
    with ReferenceAdapter() as reference:
        return reference.run(dataclasses.replace(scenario, world=world), RunOptions(guard="none"))


def test_a_runtime_that_forwards_a_childs_question_holds_live_not_the_rule() -> None:
    obs = forwarded()
    assert (obs.outcome, obs.tool_errors, obs.answerer_calls) == ("completed", [], 1)
    assert [call["caller"] for call in obs.asked] == ["child"]
    assert held(obs, LIVE) == ("pass", LIVE, [])
    status, at, mismatches = held(obs, RULE)
    assert (status, at) == ("fail", LIVE)
    assert mismatches[:2] == [
        "answerer_calls: expected 0, observed 1",
        "tool_errors: expected [child.ask_user_question=DELEGATED_CALLER], observed []",
    ]
    # Forwarded to a human end that never answers, the same runtime hangs: not live.
    assert held(forwarded("tripwire"), LIVE)[:2] == ("fail", "none")


def test_a_golden_is_upstream_only(tmp_path: Path) -> None:
    golden = tmp_path / f"{HANDOFF}.json"
    pinned = json.loads((ROOT / "snapshots" / golden.name).read_text("utf-8"))
    golden.write_text(json.dumps({**pinned, "answerer_calls": 7}), "utf-8")
    for level, status in ((RULE, "pass"), (UPSTREAM, "fail")):
        result = run_scenario(SCENARIOS[HANDOFF], golden=tmp_path, level=level)
        assert (result.status, result.held) == (status, RULE)
        assert result.differences


def test_other_words_is_no_mutant() -> None:
    assert GUARDS["other-words"].keeps_rule
    assert "other-words" not in mutant_matrix([SCENARIOS[HANDOFF]]).guards


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    status = main(["run", "--json", *args])
    return status, json.loads(capsys.readouterr().out)


def test_level_rule_gates_the_whole_corpus_in_other_words(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, report = run_json(capsys, "--guard", "other-words", "--level", "rule")
    assert (status, report["level"]) == (0, RULE)
    results = report["scenarios"]
    levels = {r["id"]: r["level"] for r in results}
    assert set(levels.values()) == {RULE, UPSTREAM}
    # Whatever holds only the rule says where it differs from upstream.
    for r in results:
        if r["level"] == RULE:
            assert r["above_level"] and all(a["level"] == UPSTREAM for a in r["above_level"])
    status, report = run_json(capsys, "--guard", "other-words")
    assert (status, report["level"]) == (1, UPSTREAM)
    failed = {r["id"] for r in report["scenarios"] if r["status"] == "fail"}
    assert failed == {sid for sid, level in levels.items() if level == RULE}


def test_text_junit_and_github_show_the_level(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from junitparser import JUnitXml, Properties

    monkeypatch.chdir(ROOT)
    junit = tmp_path / "junit.xml"
    args = ["run", "--guard", "other-words", "--junit", str(junit), "--format", "github"]
    assert main([*args, HANDOFF, "live-root-answered"]) == 1
    out = capsys.readouterr().out.splitlines()
    line = next(x for x in out if x.startswith("FAIL ") and HANDOFF in x)
    assert line.split()[1:3] == [HANDOFF, RULE]
    assert "levels held: 1 upstream, 1 rule, 0 live, 0 none (gating on upstream)" in out
    (annotation,) = [x for x in out if x.startswith("::error ")]
    assert f"title={HANDOFF}%3A FAIL (holds rule)::" in annotation
    suite: Any = next(iter(JUnitXml.fromfile(str(junit))))
    assert {p.name: p.value for p in suite.properties()}["level"] == UPSTREAM
    cases = {case.name: case for case in suite}
    for name, level in ((HANDOFF, RULE), ("live-root-answered", UPSTREAM)):
        # junitparser reads a testcase's properties as a child element of its own.
        properties = cases[name].child(Properties)
        assert {p.name: p.value for p in properties} == {"level": level}


PLUGIN_TEST = f"""
from tests.conftest import SCENARIOS


def test_handoff(harness_run):
    result = harness_run(SCENARIOS[{HANDOFF!r}]).result
    print("HELD", result.status, result.held)
    assert result.status == "pass", result.mismatches
"""


@pytest.mark.parametrize(("level", "code"), [(RULE, 0), (UPSTREAM, 1)])
def test_the_plugin_gates_harness_run_on_harness_level(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, level: str, code: int
) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.syspath_prepend(str(ROOT))
    pytester.makepyfile(test_level=PLUGIN_TEST)
    args = ("-p", "harness.pytest_plugin", "-s", "--guard", "other-words")
    result = pytester.runpytest_inprocess(*args, f"--harness-level={level}")
    assert result.ret == code, result.stdout.str()
    result.stdout.fnmatch_lines([f"*HELD {'pass' if code == 0 else 'fail'} rule"])


def test_the_page_shows_the_level_and_what_a_rule_run_let_pass(tmp_path: Path) -> None:
    args = ["run", "--guard", "other-words", "--level", "rule", "--html", str(tmp_path)]
    assert main([*args, HANDOFF, "live-root-answered"]) == 0
    page = (tmp_path / "report.html").read_text("utf-8")
    assert page.count('<td class="level">rule</td>') == 1
    assert page.count('<td class="level">upstream</td>') == 1
    assert '<ul class="above"><li>upstream: tool_errors: expected' in page


# A root's answer in the runtime's own words (Claude Code's AskUserQuestion result).
OWN_WORDS = (
    'Your questions have been answered: "Should deployment use the CUDA fallback?"="{label}". '
    "You can now continue with these answers in mind."
)


def test_a_roots_answer_in_the_runtimes_own_words_holds_the_rule() -> None:
    # The script says "ANSWERED: {{ask.result}}": the result is the runtime's wording of
    # the answer, which the rule does not pin; the script's own words and the label chosen
    # must still be there.
    obs = observed("live-root-answered")
    own: dict[str, str | None] = {"lead": "ANSWERED: " + OWN_WORDS.format(label="No")}
    status, level, mismatches = held(dataclasses.replace(obs, final=own), RULE)
    assert (status, level, mismatches) == ("pass", RULE, [])
    for wrong in ("ANSWERED: " + OWN_WORDS.format(label="Yes"), OWN_WORDS.format(label="No")):
        status, level, mismatches = held(dataclasses.replace(obs, final={"lead": wrong}), RULE)
        assert (status, level) == ("fail", LIVE), wrong
        assert mismatches[0].startswith("final[lead]: expected exactly"), mismatches


def test_typed_text_must_reach_the_root_for_the_rule() -> None:
    obs = observed("live-root-answered-custom")
    typed = "Only gpu-pool, after the maintenance window."
    own: dict[str, str | None] = {
        "lead": f'ANSWERED: Your questions have been answered: "Which pools?"="{typed}".'
    }
    assert held(dataclasses.replace(obs, final=own), RULE)[:2] == ("pass", RULE)
    lost: dict[str, str | None] = {
        "lead": 'ANSWERED: Your questions have been answered: "Which pools?"="".'
    }
    assert held(dataclasses.replace(obs, final=lost), RULE)[:2] == ("fail", LIVE)


def test_a_plan_reviews_result_is_the_runtimes_own_words() -> None:
    # "{{plan.result}}" alone: nothing of upstream's wording is the rule's.
    obs = observed("plan-mode-root-approved")
    own: dict[str, str | None] = {
        "lead": "User has approved exiting plan mode. You can now proceed."
    }
    assert held(dataclasses.replace(obs, final=own), RULE)[:2] == ("pass", RULE)
    assert held(dataclasses.replace(obs, final=own))[:2] == ("fail", RULE)


def test_a_final_text_that_is_no_human_tools_result_is_read_as_before() -> None:
    # delegated-question-handoff's parent says PARENT_COMPLETED: contained, no more.
    obs = observed(HANDOFF)
    final = {**obs.final, "parent": "Done: PARENT_COMPLETED"}
    assert held(dataclasses.replace(obs, final=final), RULE)[:2] == ("pass", RULE)
    final = {**obs.final, "parent": "Done."}
    assert held(dataclasses.replace(obs, final=final), RULE)[:2] == ("fail", LIVE)


def test_a_final_text_carrying_handoffs_reads_them_as_the_handoffs_rule_does() -> None:
    # parallel-children-refused's parent says "PARENT_COMPLETED: {{a.result}} | {{b.result}}":
    # each result is a handoff, which the rule lets the runtime wrap in words of its own,
    # so long as it carries the child's result.
    obs = observed("parallel-children-refused")
    a = "UNRESOLVED: Should gpu-pool use the CUDA fallback?"
    b = "UNRESOLVED: How many threads should cpu-pool use?"
    wrapped = {**obs.final, "parent": f"PARENT_COMPLETED: {a}\n(agent a) | {b}\n(agent b)"}
    assert held(dataclasses.replace(obs, final=wrapped), RULE)[:2] == ("pass", RULE)
    lost = {**obs.final, "parent": f"PARENT_COMPLETED: {a} | (agent b)"}
    status, level, mismatches = held(dataclasses.replace(obs, final=lost), RULE)
    assert (status, level) == ("fail", LIVE)  # the parent's words: the handoffs carried it
    assert mismatches[0].startswith("final[parent]: expected exactly")


def test_level_live_gates_the_corpus_and_a_hang_fails_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, report = run_json(capsys, "--level", "live")
    assert (status, report["level"]) == (0, LIVE)
    assert {r["level"] for r in report["scenarios"]} == {UPSTREAM}
    # With no caller check, a child's question reaches a human end that never answers: the
    # run hangs, which no level lets pass (exit 3: a scenario hung).
    status, report = run_json(capsys, "--guard", "none", "--level", "live", HANDOFF)
    assert (status, report["scenarios"][0]["level"]) == (3, "none")
