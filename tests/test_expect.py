"""`expect` pins every model-visible text: a refusal's text, each direct ask's result, and what
the human was shown. Each pin fails with a line that says what was expected and observed."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.run import run_scenario
from harness.scenario import Scenario, ScenarioError, load_scenario
from tests.conftest import SCENARIOS

ROOT = Path(__file__).parents[1]
DELEGATED = (
    "Error: human interaction is unavailable while the calling agent is owned by another live "
    "agent; include the unresolved question or decision in the child agent's final result"
)


def edited(tmp_path: Path, scenario_id: str, old: str, new: str) -> Scenario:
    text = (ROOT / "scenarios" / f"{scenario_id}.yaml").read_text("utf-8")
    assert old in text, f"{old!r} is not in {scenario_id}"
    path = tmp_path / f"{scenario_id}.yaml"
    path.write_text(text.replace(old, new, 1), "utf-8")
    return load_scenario(path)


def mismatches(scenario: Scenario, guard: str | None = None) -> list[str]:
    result = run_scenario(scenario, guard=guard)
    assert result.status == ("pass" if not result.mismatches else "fail")
    return result.mismatches


def test_a_pinned_refusal_text_kills_the_depth_variant_by_its_upward_channel() -> None:
    # Same code, same outcome: only the text tells the rejected alternative apart.
    assert mismatches(SCENARIOS["delegated-question-handoff"], "delegation-depth") == [
        f"tool_errors[0].text: expected exactly {DELEGATED!r}, got 'Error: ask_user_question is "
        "unavailable to delegated subagents; delegate the question to the top-level agent'"
    ]


def test_a_refusal_text_can_be_pinned_by_what_it_contains(tmp_path: Path) -> None:
    pin = f'      text: "{DELEGATED}"'
    neutral = edited(
        tmp_path, "grandchild-refused", pin, "      contains: [another live agent, final result]"
    )
    assert mismatches(neutral) == []
    upward = edited(tmp_path, "grandchild-refused", pin, "      contains: delegate it upward")
    assert mismatches(upward) == [
        f"tool_errors[0].text: expected it to contain 'delegate it upward', got {DELEGATED!r}"
    ]


def test_each_direct_result_is_pinned_in_order(tmp_path: Path) -> None:
    scenario = edited(
        tmp_path,
        "service-resumed-root",
        '    - {code: DELEGATED_CALLER}\n    - answers: [{id: cuda-fallback, selected: ["Yes"]}]',
        '    - {code: CALLER_NOT_LIVE}\n    - answers: [{id: cuda-fallback, selected: ["No"]}]',
    )
    assert mismatches(scenario) == [
        f"direct[0]: expected CALLER_NOT_LIVE, observed DELEGATED_CALLER: {DELEGATED!r}",
        'direct[1]: expected answers {"answers":[{"id":"cuda-fallback","selected":["No"]}]}, '
        'observed answers {"answers":[{"id":"cuda-fallback","selected":["Yes"]}]}',
    ]


def test_what_the_human_was_shown_is_pinned_field_by_field(tmp_path: Path) -> None:
    scenario = edited(
        tmp_path,
        "parent-asks-the-childs-question",
        "    - caller: parent\n      questions:\n        - id: cuda-fallback\n"
        "          header: From the environment check",
        "    - caller: child\n      questions:\n        - id: cuda-fallback\n"
        "          header: From the child",
    )
    assert mismatches(scenario) == [
        "asked[0].caller: expected 'child', observed 'parent'",
        'asked[0].questions[0].header: expected "From the child", observed "From the environment '
        'check"',
    ]
    # Fields left out of the question are not checked; ids always are, in order.
    asked = "      questions:\n        - id: "
    ids = edited(tmp_path, "live-root-answered", asked + "cuda-fallback", asked + "other")
    assert mismatches(ids) == ["asked[0]: expected questions ['other'], observed ['cuda-fallback']"]


@pytest.mark.parametrize(
    ("sid", "old", "new", "problem"),
    [
        (
            "delegated-question-handoff",
            "      text: ",
            "      txt: ",
            "/expect/tool_errors/0/txt: unknown field 'txt'; did you mean 'text'?",
        ),
        (
            "delegated-question-handoff",
            "      text: ",
            "      contains: x\n      text: ",
            "/expect/tool_errors/0: ",
        ),
        (
            "service-resumed-root",
            "    - {code: DELEGATED_CALLER}\n",
            "",
            "/expect/direct: 1 entries for 2 ask phase(s); give one per ask phase, in order",
        ),
        (
            "live-root-answered",
            "  answerer_calls: 1",
            "  answerer_calls: 2",
            "/expect/asked: 1 call(s) listed, but answerer_calls is 2; list every call",
        ),
        (
            "parent-asks-the-childs-question",
            "    - caller: parent",
            "    - caller: parnet",
            "/expect/asked/0/caller: unknown agent 'parnet'; expected one of: child, parent",
        ),
    ],
)
def test_a_bad_pin_is_refused_at_its_place(
    tmp_path: Path, sid: str, old: str, new: str, problem: str
) -> None:
    with pytest.raises(ScenarioError) as info:
        edited(tmp_path, sid, old, new)
    assert any(problem in line for line in info.value.problems), info.value.problems
