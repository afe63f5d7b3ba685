"""What every foreign CLI's reader shares: a call as it was made (who made it, which tool,
its input), and the order an observation lists tool errors and handoffs in: a walk of the
delegation tree, each agent's calls in the order the fake numbered them, a child's whole
run before the handoff of the call that started it. That is the order of any run that is
sequential or nested, and, for children running side by side, whose results race, the
order their parent called them in.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness.fake.dialect import ASK_TOOL

if TYPE_CHECKING:
    from harness.fake import ScriptedLLM
    from harness.scenario import Scenario


@dataclass
class Call:
    agent: str
    tool: str
    input: dict[str, Any]


def serial(call_id: str) -> tuple[int, str]:
    """A call id the fake issued (call_12, toolu_12) by its number: the order the calls
    were made."""
    digits = call_id.rsplit("_", 1)[-1]
    return (int(digits), call_id) if digits.isdigit() else (0, call_id)


def walk(
    roots: Iterable[str],
    calls: Mapping[str, Call],
    children: Mapping[str, str],
    handed: Mapping[str, dict[str, Any]],
    errors: Mapping[str, dict[str, Any]],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(tool errors, handoffs) in the order of a walk from each root in turn, each agent
    once however often it is named. `children`: delegation call id -> the child it started;
    `handed` and `errors`: call id -> its handoff or its error."""
    tool_errors: list[dict[str, Any]] = []
    handoffs: list[dict[str, Any]] = []
    walked: set[str] = set()
    by_agent: dict[str, list[str]] = {}
    for call_id in sorted(calls, key=serial):
        by_agent.setdefault(calls[call_id].agent, []).append(call_id)
    # An explicit stack rather than recursion: a chain as deep as the runtime allows.
    for root in roots:
        stack: list[tuple[str, int]] = [(root, 0)] if root not in walked else []
        walked.add(root)
        while stack:
            agent, at = stack.pop()
            mine = by_agent.get(agent, [])
            while at < len(mine):
                call_id = mine[at]
                at += 1
                child = children.get(call_id)
                if child is not None and child not in walked:
                    walked.add(child)
                    # The child's run first; then this call's handoff and error, and on.
                    stack += [(agent, at - 1), (child, 0)]
                    break
                if call_id in handed:
                    handoffs.append(handed[call_id])
                if call_id in errors:
                    tool_errors.append(errors[call_id])
    return tool_errors, handoffs


def question_back(shown: dict[str, Any], scripted: list[dict[str, Any]]) -> dict[str, Any]:
    """An AskUserQuestion question as the answerer was shown it, in the scenarios'
    spelling. Claude's has no id: it is the scripted question's with the same text, or
    else (a text templated from a tool result) the one whose header or id the dialect
    spelled into its header."""
    original = next((q for q in scripted if q.get("question") == shown.get("question")), None)
    original = original or next(
        (q for q in scripted if shown.get("header") in (q.get("header"), q.get("id"))), None
    )
    # A question no script asked keeps the header the dialect spelled its id into.
    fallback = shown.get("header") or shown.get("question") or "?"
    out: dict[str, Any] = {"id": str(original["id"] if original else fallback)}
    out["question"] = shown.get("question")
    if "header" in shown:
        out["header"] = shown["header"]
    if "options" in shown:
        out["options"] = [
            {k: o[k] for k in ("label", "description") if k in o} for o in shown["options"]
        ]
    if "multiSelect" in shown:
        out["multi_select"] = shown["multiSelect"]
    return out


def scripted_questions(scenario: Scenario) -> list[dict[str, Any]]:
    """Every question the scenario's scripts ask, as written: what a question a runtime
    shows without its id (Claude Code's) is matched against (question_back)."""
    return [
        dict(q)
        for agent in scenario.agents.values()
        for turn in agent.script
        for call in turn.calls
        if call.tool == ASK_TOOL
        for q in call.args.get("questions", ())
        if isinstance(q, dict)
    ]


def offered(llm: ScriptedLLM, agent: str) -> frozenset[str]:
    """The tools `agent` was offered in its latest request to the fake, by the runtime's
    names (a Chat Completions `function`, a Messages tool, or a Gemini function
    declaration): a call to any other is refused by the runtime itself, and waits on
    nobody."""
    for captured in reversed(llm.requests):
        if captured.agent != agent:
            continue
        body = captured.body
        tools = body.get("tools") if isinstance(body, dict) else None
        tools = [d for t in tools or () if isinstance(t, dict)
                 for d in t.get("functionDeclarations") or [t]]  # fmt: skip
        named = (t.get("function", t) for t in tools if isinstance(t, dict))
        return frozenset(str(t.get("name")) for t in named if isinstance(t, dict))
    return frozenset()


def issued(llm: ScriptedLLM) -> dict[str, tuple[str, str, dict[str, Any]]]:
    """call id -> (the agent, the runtime's tool name, its arguments) of every tool call the
    fake's replies made, in the order made."""
    calls: dict[str, tuple[str, str, dict[str, Any]]] = {}
    # A copy first: the fake's thread appends while a run reads (list() takes it at once).
    for agent, message in list(llm.replies):
        for call in message.get("tool_calls") or ():
            function = call.get("function") or {}
            try:
                arguments = json.loads(function.get("arguments") or "{}")
            except ValueError:
                arguments = {}
            calls[str(call["id"])] = (agent, str(function.get("name")), arguments)
    return calls
