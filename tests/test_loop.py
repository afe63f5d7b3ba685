"""The agent loop and the real HTTP client, driven by the scripted fake."""

from __future__ import annotations

import json

from harness.fake import Call, Turn
from harness.runtime.errors import AgentRunError
from harness.runtime.questions import Answer, AskUserQuestionRequest
from tests.helpers import Ran, run_root

ASK = {"questions": [{"id": "q", "question": "Deploy?"}]}


def results(ran: Ran, session: str) -> list[dict[str, object]]:
    return [e for e in ran.events[session] if e["type"] == "tool/result"]


def test_tool_calls_run_in_order_and_results_reach_the_model() -> None:
    ran = run_root(
        {
            "parent": [
                Turn(calls=(Call("nope", {}), Call("ask_user_question", {"questions": []}))),
                Turn.text("done"),
            ]
        }
    )
    assert ran.final == "done"
    got = [(r["tool"], r["error"]["code"]) for r in results(ran, "parent")]  # type: ignore[index]
    assert got == [("nope", "UNKNOWN_TOOL"), ("ask_user_question", "EMPTY_QUESTIONS")]
    last_body = json.loads(ran.requests[-1].content)
    tool_messages = [m for m in last_body["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == ["call_1", "call_2"]
    assert tool_messages[0]["content"].startswith("Error: unknown tool 'nope'")


def test_handoff_is_the_childs_last_non_empty_message() -> None:
    ran = run_root(
        {
            "parent": [
                Turn.tool("subagent", {"name": "kid", "prompt": "p"}, "d"),
                Turn.text("parent saw {{d.result}}"),
            ],
            "kid": [Turn(say="first", calls=(Call("ask_user_question", ASK),)), Turn(say="")],
        }
    )
    assert ran.error is None
    assert ran.final == "parent saw first"
    handoff = results(ran, "parent")[0]
    assert handoff["content"] == "first" and handoff["child"] == "kid"
    header = ran.events["kid"][0]
    assert header["parent_session"] == "parent" and header["delegation_depth"] == 1


def test_malformed_arguments_are_a_tool_error_not_a_crash() -> None:
    ran = run_root(
        {"parent": [Turn.tool("subagent", {"name": "../etc", "prompt": "p"}), Turn.text("ok")]}
    )
    (result,) = results(ran, "parent")
    assert result["error"] == {"name": "ToolError", "code": "BAD_ARGUMENTS"}
    assert ran.final == "ok"


def test_no_api_key_or_authorization_is_sent() -> None:
    ran = run_root({"parent": [Turn.text("hi")]})
    (request,) = ran.requests
    assert "authorization" not in request.headers
    assert request.headers["x-harness-agent"] == "parent"
    body = json.loads(request.content)
    assert body["tool_choice"] == "auto"
    assert [t["function"]["name"] for t in body["tools"]] == [
        "ask_user_question",
        "exit_plan_mode",
        "subagent",
    ]


def test_exhausted_script_fails_with_agent_and_step() -> None:
    ran = run_root({"parent": [Turn.tool("nope", {})]})
    assert isinstance(ran.error, AgentRunError)
    assert "agent parent asked for step 2" in str(ran.error)
    assert [type(e).__name__ for e in ran.llm.errors] == ["ScriptExhausted"]


def test_unknown_agent_is_named() -> None:
    ran = run_root({"someone-else": [Turn.text("hi")]})
    assert "no script for agent 'parent'" in str(ran.error)


def test_unconsumed_steps_are_reported() -> None:
    ran = run_root({"parent": [Turn.text("hi"), Turn.text("never")]})
    (left,) = ran.llm.unconsumed()
    assert "agent parent: 1 scripted step(s) never requested, starting at step 2" in str(left)


def test_runaway_agent_is_stopped_by_max_turns() -> None:
    ran = run_root({"parent": [Turn.tool("nope", {})] * 5}, max_turns=3)
    assert isinstance(ran.error, AgentRunError)
    assert "did not finish within 3 turns" in str(ran.error)


def test_template_naming_a_missing_result_fails_loudly() -> None:
    ran = run_root({"parent": [Turn.text("{{ghost.result}}")]})
    assert "names no earlier labelled call" in str(ran.error)


class _Signals:
    """An answerer that keeps each request's signal and caller, and answers yes."""

    def __init__(self) -> None:
        self.seen: list[tuple[object, object]] = []

    async def answer(self, request: AskUserQuestionRequest) -> list[Answer]:
        self.seen.append((request.signal, request.agent))
        return [Answer(q.id, ("yes",)) for q in request.questions]


def test_every_tool_call_of_a_run_hands_the_provider_the_runs_one_signal() -> None:
    # Upstream's tool spec: the tool's abort signal reaches the user-questions request as the
    # very same object. Here that is the run's signal, the same for each call of the run.
    signals = _Signals()
    ask = Call("ask_user_question", ASK)
    ran = run_root(
        {"parent": [Turn(calls=(ask, ask)), Turn(calls=(ask,)), Turn.text("done")]},
        answerer=signals,
    )
    assert ran.final == "done" and len(signals.seen) == 3
    (signal, agent), *rest = signals.seen
    assert all(s is signal and a is agent for s, a in rest)
    assert signal is agent.signal  # type: ignore[attr-defined]
