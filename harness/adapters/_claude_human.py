"""Claude Code's human end, as the scenario's `world.answerer` plays it: the scripted
reply to a permission request for AskUserQuestion or ExitPlanMode. And the test-only hook
around it: a scenario's override of a child's durable header, written into the record
Claude Code keeps of that child before the child's first step."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.scenario._model import Reply


def reply(
    tool: str, given: dict[str, Any], questions: list[dict[str, Any]], answers: Mapping[str, Reply]
) -> dict[str, Any]:
    """The scripted human's reply in Claude Code's terms: AskUserQuestion is allowed with
    `answers` (question text -> the labels chosen, or the typed text); a plan review is
    allowed when approved alone, else denied with the feedback."""
    if tool == "ExitPlanMode":
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
    for shown, question in zip(given.get("questions", ()), questions, strict=False):
        answer = answers[question["id"]]
        if answer.dismissed:
            return {"behavior": "deny", "message": "The user dismissed the question."}
        for item in answer.items:
            chosen[str(shown["question"])] = item.custom or ", ".join(item.selected)
    return {"behavior": "allow", "updatedInput": {**given, "answers": chosen}}


# A scenario's durable-header field -> the one Claude Code keeps for a subagent (in
# projects/<cwd>/<session>/subagents/agent-<id>.meta.json). Another field has none.
HEADER_FIELDS = {"delegation_depth": "spawnDepth"}


def override_header(config: Path, child: str, session: Mapping[str, Any]) -> str | None:
    """Write `session` into the durable record of the subagent named `child` (its `Agent`
    call's description), a null field removed; None when done, else why not."""
    records = [
        path
        for path in sorted(config.glob("projects/*/*/subagents/agent-*.meta.json"))
        if json.loads(path.read_text("utf-8")).get("description") == child
    ]
    if len(records) != 1:
        return f"found {len(records)} durable records of {child} to override, not one"
    record = json.loads(records[0].read_text("utf-8"))
    for field, value in session.items():
        if value is None:
            record.pop(HEADER_FIELDS[field], None)
        else:
            record[HEADER_FIELDS[field]] = value
    records[0].write_text(json.dumps(record), "utf-8")
    return None
