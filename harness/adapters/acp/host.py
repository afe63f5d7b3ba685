"""The human end of an ACP agent: the client an editor would be. It keeps every
`session/update`, and answers what the agent asks its user as the scenario's
`world.answerer` says: a scripted human answers (after `answer_delay_ms`), a tripwire or
an unreachable answerer holds the question and never answers (the run then decides the
hang, by quiescence).

A question reaches an editor one of two ways. `session/request_permission` carries the
tool call it is for, whose id is the one the fake issued, so the fake names the agent and
the question; the standard response can only pick an option, so an ask's answers go in
the field the agent reads (Qwen Code: `answers`, by question index). `elicitation/create`
(a form) carries no tool call: it is the question of the session's root that is waiting.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

from acp import RequestError
from acp.schema import (
    AcceptElicitationResponse,
    AllowedOutcome,
    CancelElicitationResponse,
    DeclineElicitationResponse,
    DeniedOutcome,
    RequestPermissionResponse,
)
from pydantic import ConfigDict

from harness.adapters._calls import question_back
from harness.fake.dialect import ASK_TOOL, PLAN_TOOL

if TYPE_CHECKING:
    from harness.adapters.acp.run import AcpRun
    from harness.scenario._model import Reply

PLAN_REVIEW = "plan-review"


class Permitted(RequestPermissionResponse):
    """A permission response that may carry what an agent reads beside the standard
    fields (Qwen Code's `answers`): the SDK's model drops unknown fields, this one keeps
    them on the wire."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)


def dumped(model: Any) -> dict[str, Any]:
    """An SDK model as the JSON on the wire."""
    out: dict[str, Any] = model.model_dump(mode="json", by_alias=True, exclude_none=True)
    return out


class Host:
    """The ACP client (acp.Client) of one scenario's run."""

    def __init__(self, run: AcpRun) -> None:
        self.run = run

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.run.updated(session_id, dumped(update))

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> RequestPermissionResponse:
        call = dumped(tool_call)
        shown = [dumped(o) for o in options]
        self.run.saw("asking its user's permission")
        run = self.run
        call_id = run.agent.call_id(run, str(call.get("toolCallId")))
        asker = run.llm.caller(call_id) or run.roots.get(session_id, "?")
        tool = run.tool_of(call_id) or str(call.get("title"))
        given = run.arguments_of(call_id) or dict(call.get("rawInput") or {})
        if tool not in (ASK_TOOL, PLAN_TOOL):  # any other tool is allowed, as asked
            return Permitted(
                outcome=AllowedOutcome(outcome="selected", option_id=_option(shown, True))
            )
        questions = _questions(tool, given, run.scripted)
        answers = await self._wait(asker, call_id, questions)
        if answers is None:
            return Permitted(outcome=DeniedOutcome(outcome="cancelled"))
        allowed, extra = run.agent.permission_reply(tool, given, questions, answers)
        outcome = AllowedOutcome(outcome="selected", option_id=_option(shown, allowed))
        return Permitted(outcome=outcome, **extra)

    async def create_elicitation(self, message: str, mode: Any, **kwargs: Any) -> Any:
        run = self.run
        form = dumped(mode) if hasattr(mode, "model_dump") else dict(mode)
        session = str(form.get("sessionId") or kwargs.get("session_id") or "")
        asker = run.roots.get(session) or (run.current or "?")
        # A form may name the tool call it is for; else it is the asker's waiting one.
        call_id = form.get("toolCallId") or run.waiting_call(asker)
        asker = run.llm.caller(call_id) or asker if call_id else asker
        tool = run.tool_of(call_id) if call_id else None
        given = run.arguments_of(call_id) if call_id else {}
        run.saw("asking its user through a form")
        schema = form.get("requestedSchema") or {}
        if tool == ASK_TOOL:
            questions = _questions(ASK_TOOL, given, run.scripted)
        else:  # a form for no ask the fake issued: its fields are the questions
            questions = [{"id": str(k), "question": str((v or {}).get("title") or k)}
                         for k, v in (schema.get("properties") or {}).items()]  # fmt: skip
        answers = await self._wait(asker, call_id or f"form:{message[:40]}", questions)
        if answers is None:
            return CancelElicitationResponse(action="cancel")
        if any(a.dismissed for a in answers.values()):
            return DeclineElicitationResponse(action="decline")
        content = form_content(schema, questions, answers)
        return AcceptElicitationResponse(action="accept", content=content)

    async def _wait(
        self, asker: str, call_id: str, questions: list[dict[str, Any]]
    ) -> dict[str, Reply] | None:
        """The scripted human's replies to `questions`, after the answer delay; a tripwire
        or unreachable answerer holds them for ever (the run decides the hang)."""
        run = self.run
        run.asked.append({"caller": asker, "questions": questions})
        world = run.scenario.world
        if world.answerer != "scripted":
            run.held[call_id] = (asker, questions[0]["id"] if questions else "?")
            await asyncio.Event().wait()  # never set: the run cancels it when it ends
        wanted = [q["id"] for q in questions]
        missing = [q for q in wanted if q != PLAN_REVIEW and q not in world.answers]
        if missing:
            run.failure = (f"the scripted answerer has no answer for {', '.join(missing)} "
                           f"(world.answers): add one, or find why {asker} asked it")  # fmt: skip
            return None
        await asyncio.sleep(world.answer_delay_ms / 1000)
        run.saw("being answered by the human end")
        return {q: world.answers[q] for q in wanted if q in world.answers}

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        self.run.saw(f"notifying {method}")

    def on_connect(self, conn: Any) -> None:
        pass


def _questions(tool: str, given: dict[str, Any], scripted: list[dict[str, Any]]) -> list[Any]:
    if tool == PLAN_TOOL:
        plan = {"detail": given["plan"]} if isinstance(given.get("plan"), str) else {}
        return [{"id": PLAN_REVIEW, **plan}]
    shown = given.get("questions")
    return [question_back(q, scripted) for q in shown if isinstance(q, dict)] if shown else []


def _option(options: list[dict[str, Any]], allowed: bool) -> str:
    """The option an editor's user picks: the first of the kind wanted (allow once, then
    always; reject once, then always), else the first or last offered."""
    kinds = ("allow_once", "allow_always") if allowed else ("reject_once", "reject_always")
    for kind in kinds:
        for option in options:
            if option.get("kind") == kind:
                return str(option.get("optionId"))
    chosen = options[0] if allowed else options[-1]
    return str(chosen.get("optionId")) if options else ""


def approved(answers: dict[str, Reply]) -> bool:
    """A plan review approved: one answer item, Approve alone, nothing typed."""
    review = answers.get(PLAN_REVIEW)
    items = review.items if review is not None else ()
    return len(items) == 1 and list(items[0].selected) == ["Approve"] and items[0].custom is None


def chosen(reply: Reply) -> str:
    """What the human chose for one question: the labels, or the text typed."""
    return ", ".join(item.custom or ", ".join(item.selected) for item in reply.items)


def form_content(
    schema: dict[str, Any], questions: list[dict[str, Any]], answers: dict[str, Reply]
) -> dict[str, Any]:
    """A form's fields filled in. A field is the question whose text, header or id it
    carries (else the next question in order); it is given the labels chosen (a list where
    it takes several), or the text typed where nothing was chosen. A field for a note or
    an answer of one's own (`..._note`, `..._custom`) gets only the text typed."""
    content: dict[str, Any] = {}
    order = iter(questions)
    for key, spec in (schema.get("properties") or {}).items():
        said = json.dumps(spec, sort_keys=True) + key
        aside = key.endswith(("_note", "_custom"))
        question = next((q for q in questions if str(q.get("question")) in said), None)
        question = question or next((q for q in questions if str(q.get("id")) in said), None)
        if question is None and not aside:
            question = next(order, None)
        reply = answers.get(str(question["id"])) if question else None
        if reply is None:
            continue
        labels = [label for item in reply.items for label in item.selected]
        typed = [item.custom for item in reply.items if item.custom]
        if aside:
            if typed:
                content[key] = "\n".join(typed)
        elif isinstance(spec, dict) and spec.get("type") == "array":
            content[key] = labels + typed
        else:
            content[key] = ", ".join(labels) if labels else "\n".join(typed)
    return content
