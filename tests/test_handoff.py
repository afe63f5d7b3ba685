"""The delegation tool's own failures, which the contract names (scenarios/INTERPRETING.md):
a child that never says anything, a child whose run fails, and a name already taken (the
durable store's own tests are in tests/test_sessions.py)."""

from __future__ import annotations

from harness.fake import Turn
from tests.helpers import run_root

DELEGATE = Turn.tool("subagent", {"name": "child", "prompt": "Check the environment."})


def results(events: list[dict[str, object]]) -> list[dict[str, object]]:
    return [e for e in events if e["type"] == "tool/result"]


def test_a_child_that_never_speaks_hands_back_no_handoff() -> None:
    ran = run_root({"parent": [DELEGATE, Turn.text("done")], "child": [Turn.text("")]})
    assert ran.final == "done"
    (result,) = results(ran.events["parent"])
    assert result["error"] == {"name": "SubagentError", "code": "NO_HANDOFF"}
    assert result["content"] == "Error: subagent child finished without a final message"


def test_a_child_whose_run_fails_hands_back_subagent_failed() -> None:
    # The child's script is empty: the fake refuses its first request, so its run fails.
    ran = run_root({"parent": [DELEGATE, Turn.text("done")], "child": []})
    assert ran.final == "done"
    (result,) = results(ran.events["parent"])
    assert result["error"] == {"name": "SubagentError", "code": "SUBAGENT_FAILED"}
    assert str(result["content"]).startswith("Error: agent child: ")
    assert "step 1, but its script has only 0 step(s)" in str(result["content"])


def test_a_name_already_taken_is_session_exists() -> None:
    ran = run_root(
        {"parent": [DELEGATE, DELEGATE, Turn.text("done")], "child": [Turn.text("first")]}
    )
    first, second = results(ran.events["parent"])
    assert first["content"] == "first" and first["child"] == "child"
    assert second["error"] == {"name": "SubagentError", "code": "SESSION_EXISTS"}
