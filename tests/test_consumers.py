"""Both human-interaction consumers surface the same neutral refusal."""

from __future__ import annotations

import re

from harness.fake import Turn
from harness.run import run_scenario
from harness.runtime.questions import MESSAGES
from tests.conftest import SCENARIOS
from tests.helpers import run_root


def refusal(scenario_id: str) -> dict[str, object]:
    (error,) = run_scenario(SCENARIOS[scenario_id]).observation.tool_errors
    return error


def test_both_consumers_show_the_model_identical_text() -> None:
    ask = refusal("zero-depth-live-child")
    plan = refusal("plan-mode-child-refused")
    assert (ask["tool"], plan["tool"]) == ("ask_user_question", "exit_plan_mode")
    assert ask["text"] == plan["text"] == f"Error: {MESSAGES['DELEGATED_CALLER']}"
    assert ask["code"] == plan["code"] == "DELEGATED_CALLER"
    assert ask["name"] == plan["name"] == "UserQuestionError"


def test_refusal_text_claims_no_upward_channel() -> None:
    # The rejected alternative told the child to delegate upward; no such channel exists.
    text = MESSAGES["DELEGATED_CALLER"].lower()
    for claim in (
        "delegate the question",
        "top-level agent",
        "forward",
        "send",
        "message the",
        "wait for",
        "parent will answer",
        "ask the parent",
    ):
        assert claim not in text, claim
    assert "final result" in text
    assert not re.search(r"\b(ask_user_question|exit_plan_mode)\b", text)  # consumer-neutral


def test_exit_plan_mode_checks_arguments_then_the_mode_before_the_heading() -> None:
    ran = run_root(
        {
            "parent": [
                Turn.tool("exit_plan_mode", {}),
                Turn.tool("exit_plan_mode", {"plan": ["# Plan"]}),
                # Outside plan mode a plan with no heading is refused for the mode, as
                # upstream checks the mode first; "" is a string, so it is no argument error.
                Turn.tool("exit_plan_mode", {"plan": ""}),
                Turn.text("done"),
            ]
        }
    )
    results = [e for e in ran.events["parent"] if e["type"] == "tool/result"]
    assert [e["error"] for e in results] == [
        {"name": "ToolError", "code": "BAD_ARGUMENTS"},
        {"name": "ToolError", "code": "BAD_ARGUMENTS"},
        {"name": "Error", "code": ""},
    ]
    assert results[2]["content"] == "Error: exit_plan_mode is only available in plan mode"
    assert ran.tripwire.calls == []
