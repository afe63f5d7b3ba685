"""What a JSON-lines adapter reported -> an Observation, checked field by field and rendered
as the reference runtime's would be, so every runtime meets the same golden snapshots."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from harness._routing import DELEGATION_TOOL

if TYPE_CHECKING:
    from harness.fake import ScriptedLLM
    from harness.run import Observation
    from harness.scenario import Scenario

OUTCOMES = ("completed", "error", "hang")


class ProtocolError(Exception):
    """The adapter said something the protocol does not allow; the message says what."""


def observation(scenario: Scenario, data: dict[str, Any], llm: ScriptedLLM | None) -> Observation:
    """Validate an adapter's observation and render it as the reference's would be."""
    from harness.run import Observation
    from harness.run._observe import script_error_text

    outcome = data.get("outcome")
    if outcome not in OUTCOMES:
        raise ProtocolError(f"observation.outcome must be one of {', '.join(OUTCOMES)}")
    calls = data.get("answerer_calls", 0)
    if not isinstance(calls, int) or isinstance(calls, bool) or calls < 0:
        raise ProtocolError("observation.answerer_calls must be a count")
    # A runtime names agents by its own ids (a session UUID, say), and its delegation tool
    # by its own name; the fake knows both, so reports use the scenario's names.
    names = llm.conversations() if llm else {}
    tools = {llm.delegation.tool: DELEGATION_TOOL} if llm else {}
    direct, tool_errors = _direct(_list(data, "direct"))
    for i, entry in enumerate(_list(data, "tool_errors")):
        error = _tool_error(entry, i)
        agent, tool = error["agent"], error["tool"]
        tool_errors.append(
            {**error, "agent": names.get(agent, agent), "tool": tools.get(tool, tool)}
        )
    handoffs = []
    for i, entry in enumerate(_list(data, "handoffs")):
        handoff = _handoff(entry, i)
        handoffs.append(
            {**handoff, **{k: names.get(handoff[k], handoff[k]) for k in ("parent", "child")}}
        )
    script_errors = [script_error_text(e, scenario) for e in llm.errors] if llm else []
    if llm is not None and outcome == "completed":
        script_errors += [script_error_text(e, scenario) for e in llm.unconsumed()]
    return Observation(
        scenario_id=scenario.id,
        outcome=str(outcome),
        error=None if outcome == "completed" else _named(str(data.get("error") or outcome), names),
        answerer_calls=calls,
        tool_errors=tool_errors,
        handoffs=handoffs,
        final=_renamed(_mapping(data, "final", (str, type(None))), names),
        sessions={},
        plan_mode=_renamed(_mapping(data, "plan_mode", (bool,)), names),
        asked=[_asked(a, i, names) for i, a in enumerate(_list(data, "asked"))],
        direct=direct,
        requests=list(llm.requests) if llm else [],
        served=llm.served if llm else 0,
        model_prefix=llm.prefixes.summary() if llm else {},
        script_errors=script_errors,
    )


def _named(text: str, names: dict[str, str]) -> str:
    """Prose with the runtime's ids (whole words only) replaced by the scenario's names."""
    for key, name in sorted(names.items(), key=lambda item: -len(item[0])):
        text = re.sub(rf"(?<![\w-]){re.escape(key)}(?![\w-])", name, text)
    return text


def _asked(entry: Any, i: int, names: dict[str, str]) -> dict[str, Any]:
    from harness.runtime.questions import QUESTION_DEFAULTS

    where = f"observation.asked[{i}]"
    if not isinstance(entry, dict) or not isinstance(entry.get("questions"), list):
        raise ProtocolError(f"{where} must be {{caller, questions: [...]}}")
    caller = entry.get("caller")
    if caller is not None and not isinstance(caller, str):
        raise ProtocolError(f"{where}.caller must be a name or null")
    for j, question in enumerate(entry["questions"]):
        if not isinstance(question, dict) or not isinstance(question.get("id"), str):
            raise ProtocolError(f"{where}.questions[{j}] must be a question with a string id")
    # Left-out fields and fields at their defaults mean the same: compare them the same.
    questions = [
        {k: v for k, v in q.items() if k not in QUESTION_DEFAULTS or v != QUESTION_DEFAULTS[k]}
        for q in entry["questions"]
    ]
    return {"caller": names.get(caller, caller) if caller else caller, "questions": questions}


def _renamed(by_agent: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    # In the adapter's order: of two ids for one agent (a session resumed under a new id),
    # the later report stands.
    return {names.get(agent, agent): value for agent, value in by_agent.items()}


def _list(data: dict[str, Any], key: str) -> list[Any]:
    value = data.get(key, [])
    if not isinstance(value, list):
        raise ProtocolError(f"observation.{key} must be a list")
    return value


def _mapping(data: dict[str, Any], key: str, types: tuple[type, ...]) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict) or not all(isinstance(v, types) for v in value.values()):
        raise ProtocolError(f"observation.{key} must map agent names to {types[0].__name__}")
    return dict(value)


def _text(entry: dict[str, Any], key: str, where: str) -> str:
    value = entry.get(key)
    if not isinstance(value, str):
        raise ProtocolError(f"{where}.{key} must be a string")
    return value


def _direct(entries: list[Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    from harness.runtime.questions import Answer, answers_text

    direct, errors = [], []
    for i, entry in enumerate(entries):
        where = f"observation.direct[{i}]"
        if not isinstance(entry, dict):
            raise ProtocolError(f"{where} must be an object")
        caller = entry.get("caller")
        if caller is not None and not isinstance(caller, str):
            raise ProtocolError(f"{where}.caller must be a name or null")
        error = entry.get("error")
        if isinstance(error, dict):
            name, code = (
                _text(error, "name", where + ".error"),
                _text(error, "code", where + ".error"),
            )
            text = f"Error: {_text(error, 'message', where + '.error')}"
            errors.append({"agent": caller, "tool": "ask", "code": code, "name": name,
                           "is_error": True, "text": text})  # fmt: skip
            direct.append({"seq": i + 1, "caller": caller, "text": text,
                           "error": {"name": name, "code": code}})  # fmt: skip
            continue
        answers = entry.get("answers")
        if error is not None or not isinstance(answers, list):
            raise ProtocolError(f"{where} needs answers (a list) or an error (an object)")
        try:
            parsed = [Answer(a["id"], tuple(a["selected"]), a.get("custom")) for a in answers]
        except (TypeError, KeyError):
            raise ProtocolError(f"{where}.answers: each is {{id, selected[, custom]}}") from None
        direct.append({"seq": i + 1, "caller": caller, "text": answers_text(parsed), "error": None})
    return direct, errors


def _tool_error(entry: Any, i: int) -> dict[str, Any]:
    where = f"observation.tool_errors[{i}]"
    if not isinstance(entry, dict):
        raise ProtocolError(f"{where} must be an object")
    return {
        "agent": _text(entry, "agent", where),
        "tool": _text(entry, "tool", where),
        "code": _text(entry, "code", where),
        "name": _text(entry, "name", where),
        "is_error": True,
        "text": _text(entry, "text", where),
    }


def _handoff(entry: Any, i: int) -> dict[str, Any]:
    where = f"observation.handoffs[{i}]"
    if not isinstance(entry, dict):
        raise ProtocolError(f"{where} must be an object")
    final = entry.get("child_final")
    if final is not None and not isinstance(final, str):
        raise ProtocolError(f"{where}.child_final must be a string or null")
    return {
        "parent": _text(entry, "parent", where),
        "child": _text(entry, "child", where),
        "child_final": final,
        "tool_result": _text(entry, "tool_result", where),
    }
