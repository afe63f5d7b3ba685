"""Observation -> verdict: does what happened match what the scenario expects? One line per
mismatch, saying what was expected and what was observed."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from harness.contract import Observation, json_equal
from harness.run._diff import Difference
from harness.runtime.questions import QUESTION_DEFAULTS, answers_text
from harness.scenario import AskedExpect, DirectExpect, Scenario, TextMatch


@dataclass
class Result:
    scenario: Scenario
    observation: Observation
    status: str  # pass | fail | error | skip
    mismatches: list[str] = field(default_factory=list)
    # compared | missing (a snapshots directory was given, the file was not there) | none
    golden: str = "none"
    # Where the observation differs from its golden snapshot, each in full.
    differences: list[Difference] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.scenario.id,
            "status": self.status,
            "golden": self.golden,
            "observed": self.observation.to_json(),
        }
        if self.mismatches:
            out["mismatches"] = self.mismatches
        if self.differences:
            out["differences"] = [d.to_json() for d in self.differences]
        return out


def judge(scenario: Scenario, obs: Observation) -> Result:
    if obs.outcome == "skipped":
        return Result(scenario, obs, "skip", [obs.error or "skipped"])
    if obs.adapter_error is not None:
        return Result(scenario, obs, "error", [obs.adapter_error])
    if obs.script_errors:
        return Result(scenario, obs, "error", list(obs.script_errors))
    expect = scenario.expect
    mismatches = []
    if obs.outcome != expect.outcome:
        why = f" ({obs.error})" if obs.error else ""
        mismatches.append(f"outcome: expected {expect.outcome}, observed {obs.outcome}{why}")
    if not json_equal(obs.answerer_calls, expect.answerer_calls):
        mismatches.append(
            f"answerer_calls: expected {expect.answerer_calls}, observed {obs.answerer_calls}"
        )
    wanted = [f"{e.agent or 'agentless'}.{e.tool}={e.code}" for e in expect.tool_errors]
    got = [f"{e['agent'] or 'agentless'}.{e['tool']}={e['code']}" for e in obs.tool_errors]
    if wanted != got:
        mismatches.append(
            f"tool_errors: expected [{', '.join(wanted)}], observed [{', '.join(got)}]"
        )
    elif expect.tool_errors:  # the codes agree: now the texts, where the scenario pins them
        mismatches += _matches(
            "tool_errors",
            {i: e.text for i, e in enumerate(expect.tool_errors) if e.text is not None},
            {i: e.get("text") for i, e in enumerate(obs.tool_errors)},
            suffix=".text",
        )
    if expect.handoffs is not None:
        texts = [h["tool_result"] for h in obs.handoffs]
        if len(texts) != len(expect.handoffs):
            mismatches.append(
                f"handoffs: expected {len(expect.handoffs)}, observed {len(texts)} {texts!r}"
            )
        else:
            mismatches += _matches(
                "handoffs", dict(enumerate(expect.handoffs)), dict(enumerate(texts))
            )
    mismatches += _matches("final", expect.final, obs.final)
    for name, active in expect.plan_mode.items():
        if not json_equal(obs.plan_mode.get(name, False), active):
            mismatches.append(
                f"plan_mode[{name}]: expected {active}, observed {obs.plan_mode.get(name, False)}"
            )
    if expect.direct is not None:
        mismatches += _direct(expect.direct, obs.direct)
    if expect.asked is not None:
        mismatches += _asked(expect.asked, obs.asked)
    return Result(scenario, obs, "fail" if mismatches else "pass", mismatches)


def _direct(expected: tuple[DirectExpect, ...], observed: list[dict[str, Any]]) -> list[str]:
    if len(observed) != len(expected):
        return [f"direct: expected {len(expected)} result(s), observed {len(observed)}"]
    out = []
    for i, (want, got) in enumerate(zip(expected, observed, strict=True)):
        error = got.get("error")
        shown = f"{error['code']}: {got['text']!r}" if error else f"answers {got['text']}"
        if want.answers is not None:
            text = answers_text(want.answers)
            if error is not None or got["text"] != text:
                out.append(f"direct[{i}]: expected answers {text}, observed {shown}")
        elif error is None or error["code"] != want.code:
            out.append(f"direct[{i}]: expected {want.code}, observed {shown}")
        elif want.text is not None and (why := want.text.mismatch(got["text"])):
            out.append(f"direct[{i}].text: {why}")
    return out


def _asked(expected: tuple[AskedExpect, ...], observed: list[dict[str, Any]]) -> list[str]:
    ids = [[q.get("id") for q in call["questions"]] for call in observed]
    if len(observed) != len(expected):
        return [f"asked: expected {len(expected)} call(s), observed {len(observed)} {ids}"]
    out = []
    for i, (want, got) in enumerate(zip(expected, observed, strict=True)):
        if want.caller_pinned and got.get("caller") != want.caller:
            out.append(
                f"asked[{i}].caller: expected {want.caller!r}, observed {got.get('caller')!r}"
            )
        wanted_ids = [q["id"] for q in want.questions]
        if wanted_ids != ids[i]:
            out.append(f"asked[{i}]: expected questions {wanted_ids}, observed {ids[i]}")
            continue
        for j, (question, shown) in enumerate(zip(want.questions, got["questions"], strict=True)):
            seen = {**QUESTION_DEFAULTS, **shown}
            for key, value in question.items():
                if not json_equal(seen.get(key), value):
                    out.append(
                        f"asked[{i}].questions[{j}].{key}: expected {_json(value)}, "
                        f"observed {_json(seen.get(key))}"
                    )
    return out


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _matches(
    what: str,
    expected: dict[Any, TextMatch],
    observed: dict[Any, str | None],
    suffix: str = "",
) -> list[str]:
    out = []
    for key, match in expected.items():
        why = match.mismatch(observed.get(key))
        if why:
            out.append(f"{what}[{key}]{suffix}: {why}")
    return out


# How a summary line names a plain error (code ""), such as exit_plan_mode's own refusals.
PLAIN = "Error"


def summary(result: Result, *, expected: bool) -> str:
    """A short human line for one side of the comparison."""
    if expected:
        e = result.scenario.expect
        errors = [f"{x.code or PLAIN}@{x.agent or 'agentless'}" for x in e.tool_errors]
        outcome, calls = e.outcome, e.answerer_calls
    else:
        o = result.observation
        errors = [f"{x['code'] or PLAIN}@{x['agent'] or 'agentless'}" for x in o.tool_errors]
        outcome, calls = o.outcome, o.answerer_calls
    return ", ".join([outcome, *errors, f"answerer={calls}"])
