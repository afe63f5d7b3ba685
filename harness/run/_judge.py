"""Observation -> verdict: does what happened match what the scenario expects? One line per
mismatch, saying what was expected and what was observed.

Each expectation belongs to a conformance level (INTERPRETING.md, "Conformance levels"):
`live` is what any runtime must do for nothing to hang and no question to be lost (the run
ends as expected, each human call of an owned child fails back to it as an error or reaches
the human end as a question, roots are answered); `rule` is the behaviour the design
document decides (the child's call fails as an error tool result, no human is reached, the
parent completes, the handoff carries the question); `upstream` adds upstream's codes,
error names, exact texts and check order, and the golden snapshot. A result holds the
highest level all of whose expectations it meets, and is judged at the level the run gates
on: what it misses above that level is still reported (`above`), but does not fail it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from harness.contract import LEVELS, Observation, json_equal
from harness.fake.dialect import ASK_TOOL, DELEGATION_TOOL, PLAN_TOOL
from harness.run._diff import Difference
from harness.runtime.questions import QUESTION_DEFAULTS, answers_text
from harness.scenario import AskedExpect, DirectExpect, Scenario, TextMatch

LIVE, RULE, UPSTREAM = LEVELS  # lowest first: each includes every expectation of those below
NONE = "none"  # held by a result that misses even `live`
# How a line names a plain error (code ""), such as exit_plan_mode's own refusals.
PLAIN = "Error"

# (level, mismatch): a mismatch with the level of the expectation it breaks.
Found = list[tuple[str, str]]


@dataclass
class Result:
    scenario: Scenario
    observation: Observation
    status: str  # pass | fail | error | skip, at the level the run gates on
    # What fails it at that level, one line each.
    mismatches: list[str] = field(default_factory=list)
    # compared | missing (a snapshots directory was given, the file was not there) | none
    golden: str = "none"
    # Where the observation differs from its golden snapshot, each in full.
    differences: list[Difference] = field(default_factory=list)
    # The level gated on, the highest level held (NONE: not even the rule; None: not
    # judged, a skip or an error), and what it misses above the gated level, each with the
    # level of the expectation it breaks.
    level: str = UPSTREAM
    held: str | None = None
    above: Found = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.scenario.id,
            "status": self.status,
            "golden": self.golden,
            "level": self.held,
            "observed": self.observation.to_json(),
        }
        if self.mismatches:
            out["mismatches"] = self.mismatches
        if self.above:
            out["above_level"] = [{"level": lv, "mismatch": m} for lv, m in self.above]
        if self.differences:
            out["differences"] = [d.to_json() for d in self.differences]
        return out

    def add(self, found: Found) -> None:
        """Judge `found` at this result's level: a mismatch at or below it fails the result,
        one above it is reported; the level held drops below each level missed."""
        for level, message in found:
            if LEVELS.index(level) <= LEVELS.index(self.level):
                self.mismatches.append(message)
            else:
                self.above.append((level, message))
            if self.held is not None:
                self.held = min(self.held, _below(level), key=_ORDER.index)
        if self.status == "pass" and self.mismatches:
            self.status = "fail"


_ORDER = (NONE, *LEVELS)


def _below(level: str) -> str:
    """The highest level a result can hold once it misses an expectation at `level`."""
    return _ORDER[_ORDER.index(level) - 1]


def judge(scenario: Scenario, obs: Observation, level: str = UPSTREAM) -> Result:
    """`obs` judged against `scenario`'s expectations at `level` (one of LEVELS)."""
    if obs.outcome == "skipped":
        return Result(scenario, obs, "skip", [obs.error or "skipped"], level=level)
    if obs.adapter_error is not None:
        return Result(scenario, obs, "error", [obs.adapter_error], level=level)
    if obs.script_errors:
        return Result(scenario, obs, "error", list(obs.script_errors), level=level)
    result = Result(scenario, obs, "pass", level=level, held=UPSTREAM)
    result.add(expectations(scenario, obs))
    return result


def expectations(scenario: Scenario, obs: Observation) -> Found:
    """Every expectation `obs` misses, each with its level."""
    expect = scenario.expect
    found: Found = []
    if obs.outcome != expect.outcome:
        why = f" ({obs.error})" if obs.error else ""
        found.append((LIVE, f"outcome: expected {expect.outcome}, observed {obs.outcome}{why}"))
    if not json_equal(obs.answerer_calls, expect.answerer_calls):
        # Fewer: a question the human end was to answer never reached it. More: a question
        # reached it that the rule refuses (a runtime that forwards it up), which is live.
        fewer = isinstance(obs.answerer_calls, int) and obs.answerer_calls < expect.answerer_calls
        found.append((LIVE if fewer else RULE,
            f"answerer_calls: expected {expect.answerer_calls}, observed {obs.answerer_calls}"
        ))  # fmt: skip
    found += _tool_errors(scenario, obs)
    if expect.handoffs is not None:
        texts = [h["tool_result"] for h in obs.handoffs]
        # A handoff that does not carry the child's question has lost it: not live.
        if len(texts) != len(expect.handoffs):
            found.append((LIVE,
                f"handoffs: expected {len(expect.handoffs)}, observed {len(texts)} {texts!r}"
            ))  # fmt: skip
        else:
            expected = dict(enumerate(expect.handoffs))
            found += _texts("handoffs", expected, dict(enumerate(texts)), carrier=LIVE)
    readings = {
        agent: rule_reading(scenario, agent, match) for agent, match in expect.final.items()
    }
    found += _texts("final", expect.final, obs.final, readings)
    for name, active in expect.plan_mode.items():
        if not json_equal(obs.plan_mode.get(name, False), active):
            found.append((UPSTREAM,
                f"plan_mode[{name}]: expected {active}, observed {obs.plan_mode.get(name, False)}"
            ))  # fmt: skip
    if expect.direct is not None:
        found += _direct(expect.direct, obs.direct)
    if expect.asked is not None:
        found += _asked(expect.asked, obs.asked)
    return found


def _tool_errors(scenario: Scenario, obs: Observation) -> Found:
    """The rule: an error tool result on each (agent, tool) the scenario names, in order.
    Upstream: also its code, then its text where the scenario pins one. Live: each human
    call expected to fail that did not fail reached the human end instead (`asked` names
    its caller); one that did neither is a question lost."""
    expected, observed = scenario.expect.tool_errors, obs.tool_errors
    calls = [f"{e.agent or 'agentless'}.{e.tool}" for e in expected]
    seen = [f"{e['agent'] or 'agentless'}.{e['tool']}" for e in observed]
    wanted = [f"{c}={e.code or PLAIN}" for c, e in zip(calls, expected, strict=True)]
    got = [f"{c}={e['code'] or PLAIN}" for c, e in zip(seen, observed, strict=True)]
    if wanted != got:
        line = f"tool_errors: expected [{', '.join(wanted)}], observed [{', '.join(got)}]"
        if calls == seen:
            return [(UPSTREAM, line)]
        return [(LIVE if _lost(scenario, obs) else RULE, line)]
    return [
        (UPSTREAM, f"tool_errors[{i}].text: {why}")
        for i, e in enumerate(expected)
        if e.text is not None and (why := e.text.mismatch(observed[i].get("text")))
    ]


def _lost(scenario: Scenario, obs: Observation) -> list[str]:
    """The agents whose human calls were to fail and fell short (fewer errors on that tool
    than expected) with none of their questions reaching the human end: lost in silence."""
    asked = {call.get("caller") for call in obs.asked}
    lost = []
    for e in scenario.expect.tool_errors:
        if e.tool not in HUMAN_TOOLS or e.agent in asked:
            continue
        want = sum(x.agent == e.agent and x.tool == e.tool for x in scenario.expect.tool_errors)
        got = sum(x["agent"] == e.agent and x["tool"] == e.tool for x in obs.tool_errors)
        if got < want and str(e.agent) not in lost:
            lost.append(str(e.agent))
    return lost


def _texts(
    what: str,
    expected: dict[Any, TextMatch],
    observed: dict[Any, str | None],
    readings: dict[Any, TextMatch] | None = None,
    carrier: str = RULE,
) -> Found:
    """Each text that misses its match. Upstream asks for it exactly as written; below,
    the text need only carry what the scenario expects (a runtime may wrap a child's result
    in its own words: `readings`, or `carried`), and one that does not misses `carrier`,
    the level that asks for it."""
    found: Found = []
    for key, match in expected.items():
        text = observed.get(key)
        why = match.mismatch(text)
        if why:
            rule = (readings or {}).get(key) or carried(match)
            level = UPSTREAM if rule.mismatch(text) is None else carrier
            found.append((level, f"{what}[{key}]: {why}"))
    return found


def carried(match: TextMatch) -> TextMatch:
    """`match` as the rule reads it: an exact text need only be contained."""
    if match.equals is None:
        return match
    return TextMatch(contains=(*match.contains, match.equals))


_RESULT = re.compile(r"\{\{\s*([A-Za-z_][\w-]*)\.result\s*\}\}")
_TEMPLATE = re.compile(r"\{\{.*?\}\}")
HUMAN_TOOLS = (ASK_TOOL, PLAN_TOOL)


def rule_reading(scenario: Scenario, agent: str, match: TextMatch) -> TextMatch:
    """How the rule reads an agent's final text whose script says a tool's result: a
    human tool's (`{{ask.result}}`) is the runtime's own words for the answer, which the
    rule does not pin, and of it only the labels chosen and the text typed must be carried;
    a delegation's (`{{delegate.result}}`) is the handoff, which must carry the child's
    result, as `handoffs` must, in whatever words around it. The script's own words around
    them must be carried too; the rest is upstream's wording."""
    spec = scenario.agents.get(agent)
    say = spec.script[-1].say if spec and spec.script else None
    if match.equals is None or say is None:
        return carried(match)
    tools = {c.label: c.tool for turn in spec.script for c in turn.calls  # type: ignore[union-attr]
             if c.label}  # fmt: skip
    worded = {label for label, tool in tools.items() if tool in (*HUMAN_TOOLS, DELEGATION_TOOL)}
    labels = [m[1] for m in _RESULT.finditer(say)]
    if not any(label in worded for label in labels):
        return carried(match)
    # The script's words, and what each of its templates became in the expected text.
    parts, pattern, results = [], "", []
    for piece in re.split(r"(\{\{.*?\}\})", say):
        if _TEMPLATE.fullmatch(piece):
            found = _RESULT.fullmatch(piece)
            if found and found[1] in worded:
                pattern += "(.*)"
                results.append(tools[found[1]])
            else:
                pattern += ".*?"
        else:
            pattern += re.escape(piece)
            parts.append(piece)
    seen = re.fullmatch(pattern, match.equals, re.DOTALL)
    if seen is None:
        return carried(match)
    carried_too = [p for p in parts if p.strip()]
    for tool, result in zip(results, seen.groups(), strict=True):
        carried_too += [result] if tool == DELEGATION_TOOL and result else _answered(result)
    return TextMatch(contains=(*match.contains, *carried_too))


def _answered(result: str) -> list[str]:
    """An upstream answers text's selected labels and typed text (none for anything else)."""
    try:
        answers = json.loads(result).get("answers")
    except (ValueError, AttributeError):
        return []
    if not isinstance(answers, list):
        return []
    out: list[str] = []
    for item in answers:
        out += [str(s) for s in item.get("selected", ())] if isinstance(item, dict) else []
        out += [str(item["custom"])] if isinstance(item, dict) and item.get("custom") else []
    return out


def _direct(expected: tuple[DirectExpect, ...], observed: list[dict[str, Any]]) -> Found:
    """The rule: each ask answered or refused as expected. Upstream: the code and text."""
    if len(observed) != len(expected):
        return [(LIVE, f"direct: expected {len(expected)} result(s), observed {len(observed)}")]
    found: Found = []
    for i, (want, got) in enumerate(zip(expected, observed, strict=True)):
        error = got.get("error")
        shown = f"{error['code']}: {got['text']!r}" if error else f"answers {got['text']}"
        if want.answers is not None:
            text = answers_text(want.answers)
            if error is not None or got["text"] != text:
                level = LIVE if error is not None else UPSTREAM  # answered, in other words
                found.append((level, f"direct[{i}]: expected answers {text}, observed {shown}"))
        elif error is None:  # answered, where the rule refuses: the human end was reached
            found.append((RULE, f"direct[{i}]: expected {want.code}, observed {shown}"))
        elif error["code"] != want.code:
            found.append((UPSTREAM, f"direct[{i}]: expected {want.code}, observed {shown}"))
        elif want.text is not None and (why := want.text.mismatch(got["text"])):
            found.append((UPSTREAM, f"direct[{i}].text: {why}"))
    return found


def _asked(expected: tuple[AskedExpect, ...], observed: list[dict[str, Any]]) -> Found:
    """The rule: how many asks reached the human. Upstream: who asked, and each question as
    the provider saw it."""
    ids = [[q.get("id") for q in call["questions"]] for call in observed]
    if len(observed) != len(expected):
        level = LIVE if len(observed) < len(expected) else RULE  # as answerer_calls
        line = f"asked: expected {len(expected)} call(s), observed {len(observed)} {ids}"
        return [(level, line)]
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
    return [(UPSTREAM, line) for line in out]


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


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
