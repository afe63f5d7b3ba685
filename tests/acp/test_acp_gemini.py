"""What the gemini-cli-acp adapter knows of Gemini CLI, without running it: the ids it shows
calls by, its chat record as the word on a child's failed call, the child's plan review
that no client ever sees, and the scenarios it cannot express."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from harness.adapters.acp.gemini_cli import UNSEEN, GeminiCliAcp
from harness.fake.dialect import DELEGATION_TOOL, Dialect
from tests.conftest import SCENARIOS

ISSUED: dict[str, tuple[str, str, dict[str, Any]]] = {
    "call_1": ("parent", "invoke_agent", {}),
    "call_2": ("child", "exit_plan_mode", {}),
}


def gemini() -> Any:
    made = object.__new__(GeminiCliAcp)
    made.dialect = Dialect.load("gemini-cli")
    return made


def test_a_call_is_shown_by_its_tools_name_then_the_models_id() -> None:
    run: Any = SimpleNamespace(issued=ISSUED.get)
    assert gemini().call_id(run, "exit_plan_mode__call_2") == "call_2"
    assert gemini().call_id(run, "mcp__server__tool__call_1") == "call_1"
    assert gemini().call_id(run, "call_1") == "call_1"  # the model's id, as it is
    assert gemini().call_id(run, "read_file-1765000000-1") == "read_file-1765000000-1"


def test_a_childs_failed_call_is_read_from_gemini_clis_chat_record(tmp_path: Path) -> None:
    chats = tmp_path / "home" / ".gemini" / "tmp" / "work" / "chats" / "parent-session"
    chats.mkdir(parents=True)
    refused = {
        "functionResponse": {
            "name": "ask_user",
            "id": "ask_user__call_2",
            "response": {"error": "Unauthorized tool call: 'ask_user' is not available"},
        }
    }
    answered = {"functionResponse": {"name": "read_file", "id": "read_file__call_3",
                "response": {"output": "# plan"}}}  # fmt: skip
    lines = [{"kind": "subagent"}, {"type": "user", "content": [refused]},
             {"type": "user", "content": [answered]}, "not json"]  # fmt: skip
    (chats / "child-session.jsonl").write_text(
        "\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines), "utf-8"
    )
    run: Any = SimpleNamespace(folder=tmp_path)
    assert gemini().failed(run, "call_2", "Unauthorized tool call: ...")
    assert not gemini().failed(run, "call_3", "# plan")
    assert not gemini().failed(SimpleNamespace(folder=tmp_path / "none"), "call_2", "")


def waiting_run(results: dict[str, str], offered: list[str], delegating: bool) -> Any:
    request = SimpleNamespace(agent="child", body={
        "tools": [{"functionDeclarations": [{"name": n} for n in offered]}]})  # fmt: skip
    return SimpleNamespace(
        scenario=SCENARIOS["plan-mode-child-refused"],
        in_progress=lambda tool: {"call_1": {}} if delegating and tool == DELEGATION_TOOL else {},
        issued_calls=lambda: ISSUED,
        llm=SimpleNamespace(results=results, requests=[request]),
    )


def test_a_childs_plan_review_waits_on_a_client_that_never_sees_it() -> None:
    offered = ["exit_plan_mode", "complete_task"]
    assert gemini().unasked(waiting_run({}, offered, True)) == {"call_2": ("plan-review", UNSEEN)}
    # Answered, refused as no tool of its (default mode), or its parent no longer waiting:
    # nothing waits on a human.
    assert gemini().unasked(waiting_run({"call_2": "error"}, offered, True)) == {}
    assert gemini().unasked(waiting_run({}, ["complete_task"], True)) == {}
    assert gemini().unasked(waiting_run({}, offered, False)) == {}


def test_what_gemini_cli_cannot_express_over_acp_is_skipped_with_why() -> None:
    adapter = gemini()
    assert "ask_user only in its terminal UI" in str(adapter.skip(SCENARIOS["live-root-answered"]))
    assert "2 different plans" in str(adapter.skip(SCENARIOS["exit-plan-mode-empty-plan"]))
    for runs in ("plan-mode-child-refused", "plan-mode-root-approved", "parallel-children-refused"):
        assert adapter.skip(SCENARIOS[runs]) is None, runs


def test_a_plan_review_outside_plan_mode_in_a_tree_that_plans_is_skipped() -> None:
    # Gemini CLI's agents share their session's mode: the parent of a planning child cannot
    # call exit_plan_mode outside plan mode, so such a scenario says why it cannot run.
    import dataclasses

    scenario = SCENARIOS["plan-mode-child-refused"]
    child = scenario.agents["child"]
    parent = dataclasses.replace(scenario.agents["parent"], script=child.script)
    mixed = dataclasses.replace(scenario, agents={**scenario.agents, "parent": parent})
    assert "parent calls exit_plan_mode outside plan mode" in str(gemini().skip(mixed))
    planning = dataclasses.replace(parent, plan_mode=True)
    assert (
        gemini().skip(dataclasses.replace(mixed, agents={**mixed.agents, "parent": planning}))
        is None
    )
