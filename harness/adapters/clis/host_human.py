"""The human end of a CLI that asks its host: in SDK mode, Claude Code and Qwen Code send a
`can_use_tool` control request for a root's ask or plan review, and the host (this adapter)
answers it as the scenario's `world.answerer` says. A tripwire or unreachable answerer
holds the question and never answers (CliRun then decides the hang, by quiescence).
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from harness.adapters._calls import question_back
from harness.fake.dialect import ASK_TOOL, PLAN_TOOL

if TYPE_CHECKING:
    from harness.adapters.clis.run import CliRun, Due
    from harness.fake.dialect import Dialect
    from harness.scenario._model import Reply


def can_use_tool(
    dialect: Dialect,
    run: CliRun,
    process: subprocess.Popen[str],
    event: dict[str, Any],
    answers_by_index: bool = False,
) -> list[Due]:
    """A control request: a tool's permission (the human's tools reach the answerer, any
    other is allowed as asked), or something this adapter does not serve. The answers go
    back keyed by question text (Claude Code's SDK), or by index (Qwen Code's tool)."""
    request, request_id = event.get("request") or {}, str(event.get("request_id"))
    if request.get("subtype") != "can_use_tool":
        run.send(process, {"type": "control_response", "response": {
            "subtype": "error", "request_id": request_id,
            "error": f"keyless-harness does not serve {request.get('subtype')}"}})  # fmt: skip
        return []
    tool, given = str(request.get("tool_name")), dict(request.get("input") or {})
    asked_by = dialect.scenario_tool(tool)  # its name for the scenario's tool
    if asked_by not in (ASK_TOOL, PLAN_TOOL):
        run.answer(process, request_id, {"behavior": "allow", "updatedInput": given})
        return []
    call = str(request.get("tool_use_id"))
    caller = run.stream.calls[call].agent if call in run.stream.calls else None
    if asked_by == PLAN_TOOL:
        plan = {"detail": given["plan"]} if "plan" in given else {}
        questions = [{"id": "plan-review", **plan}]
    else:
        questions = [question_back(q, run.scripted) for q in given.get("questions", ())]
    run.asked.append({"caller": caller, "questions": questions})
    world = run.scenario.world
    if world.answerer != "scripted":  # a tripwire or unreachable: it never answers
        run.held[call] = questions[0]["id"] if questions else tool
        return []
    missing = [q["id"] for q in questions if asked_by != PLAN_TOOL
               and q["id"] not in world.answers]  # fmt: skip
    if missing:
        run.failure = (f"the scripted answerer has no answer for {', '.join(missing)} "
                       f"(world.answers): add one, or find why {caller} asked it")  # fmt: skip
        return []
    answer = reply(asked_by, given, questions, world.answers, answers_by_index)
    return [(time.monotonic() + world.answer_delay_ms / 1000, request_id, answer)]


def reply(
    asked_by: str,
    given: dict[str, Any],
    questions: list[dict[str, Any]],
    answers: Mapping[str, Reply],
    by_index: bool = False,
) -> dict[str, Any]:
    """The scripted human's reply to a permission request (`asked_by`: the scenario's tool
    name): an ask is allowed with `answers` (question text -> the labels chosen, or the
    typed text), as Claude Code's SDK takes them; a plan review is allowed when approved
    alone, else denied with the feedback."""
    if asked_by == PLAN_TOOL:
        review = answers.get("plan-review")
        items = review.items if review is not None else ()  # no answer: keep planning
        approved = (len(items) == 1 and list(items[0].selected) == ["Approve"]
                    and items[0].custom is None)  # fmt: skip
        if approved:
            return {"behavior": "allow", "updatedInput": given}
        if review is not None and review.dismissed:
            return {"behavior": "deny", "message": "The user dismissed the plan review."}
        feedback = next((i.custom for i in items if i.custom), None)
        return {"behavior": "deny", "message": feedback or "The user chose to keep planning."}
    chosen: dict[str, str] = {}
    shown_questions = given.get("questions", ())
    for index, (shown, question) in enumerate(zip(shown_questions, questions, strict=False)):
        answer = answers[question["id"]]
        if answer.dismissed:
            return {"behavior": "deny", "message": "The user dismissed the question."}
        for item in answer.items:
            key = str(index) if by_index else str(shown["question"])
            chosen[key] = item.custom or ", ".join(item.selected)
    return {"behavior": "allow", "updatedInput": {**given, "answers": chosen}}


def user_message(prompt: str) -> dict[str, Any]:
    """The user's turn, as an SDK host writes it on the CLI's stdin (stream-json input)."""
    return {"type": "user", "message": {"role": "user", "content": prompt},
            "parent_tool_use_id": None, "session_id": ""}  # fmt: skip
