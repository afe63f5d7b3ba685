"""The delegation tool's handoff and its own failures, which the contract names
(scenarios/INTERPRETING.md): what a child's output is when it says little or nothing, a child
whose run fails, and a name already taken (the durable store's own tests are in
tests/test_sessions.py)."""

from __future__ import annotations

from harness.fake import Turn
from harness.scenario import Call
from tests.helpers import run_root

DELEGATE = Turn.tool("subagent", {"name": "child", "prompt": "Check the environment."})


def results(events: list[dict[str, object]]) -> list[dict[str, object]]:
    return [e for e in events if e["type"] == "tool/result"]


def test_a_child_that_never_speaks_hands_back_an_empty_success() -> None:
    # Upstream's output of a child that produced nothing is empty, and the call succeeds.
    ran = run_root({"parent": [DELEGATE, Turn.text("done")], "child": [Turn.text("")]})
    assert ran.final == "done"
    (result,) = results(ran.events["parent"])
    assert (result["content"], result["is_error"], result["child"]) == ("", False, "child")
    assert "error" not in result


def test_a_childs_output_is_its_last_message_with_any_content() -> None:
    # Text, then a message that only calls a tool, then an empty one: the last message with
    # content is the call's, whose text is empty; the empty one replaces nothing.
    said = Turn(say="Checking.", calls=(Call("subagent", {"name": "g", "prompt": "Look."}),))
    look = Turn.tool("subagent", {"name": "h", "prompt": "Look again."})
    ran = run_root({
        "parent": [DELEGATE, Turn.text("done")],
        "child": [said, look, Turn.text("")],
        "g": [Turn.text("g done")], "h": [Turn.text("h done")],
    })  # fmt: skip
    (result,) = results(ran.events["parent"])
    assert (result["content"], result["is_error"]) == ("", False)
    # And text beside a call is the output when nothing with content follows it.
    ran = run_root({"parent": [DELEGATE, Turn.text("done")], "child": [said, Turn.text("")],
                    "g": [Turn.text("g done")]})  # fmt: skip
    (result,) = results(ran.events["parent"])
    assert result["content"] == "Checking."


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
