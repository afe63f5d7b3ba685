from __future__ import annotations

from typing import Any

from harness.runtime.questions import (
    Option,
    Question,
    answers_text,
)
from harness.runtime.tools._base import (
    ToolArgumentError,
    ToolContext,
    ToolResult,
    ask_user,
    function_schema,
    require_str,
)

NAME = "ask_user_question"

SCHEMA = function_schema(
    NAME,
    "Ask the user one or more questions and wait for their answers.",
    {
        "type": "object",
        "properties": {
            "questions": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string"},
                        "question": {"type": "string"},
                        "header": {"type": "string"},
                        "options": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "properties": {
                                    "label": {"type": "string"},
                                    "description": {"type": "string"},
                                },
                                "required": ["label"],
                            },
                        },
                        "multi_select": {"type": "boolean"},
                    },
                    "required": ["id", "question"],
                },
            }
        },
        "required": ["questions"],
    },
)


class AskUserQuestionTool:
    name = NAME
    schema = SCHEMA

    async def run(self, ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
        answers = await ask_user(ctx, NAME, parse_questions(args))
        if isinstance(answers, ToolResult):
            return answers
        return ToolResult(answers_text(answers))


def parse_questions(args: dict[str, Any]) -> tuple[Question, ...]:
    raw = args.get("questions")
    if not isinstance(raw, list):
        raise ToolArgumentError(f"{NAME}: 'questions' must be an array")
    # An empty batch is passed on: rejecting it is the service's job (EMPTY_QUESTIONS).
    return tuple(_question(item, i) for i, item in enumerate(raw))


def _question(item: Any, index: int) -> Question:
    where = f"{NAME}: questions[{index}]"
    if not isinstance(item, dict):
        raise ToolArgumentError(f"{where} must be an object")
    options = item.get("options") or []
    if not isinstance(options, list) or not all(
        isinstance(o, dict) and isinstance(o.get("label"), str) for o in options
    ):
        raise ToolArgumentError(f"{where}: 'options' must be an array of {{label, description}}")
    header = item.get("header")
    return Question(
        id=require_str(item, "id", where),
        question=require_str(item, "question", where),
        header=header if isinstance(header, str) else None,
        options=tuple(Option(o["label"], o.get("description")) for o in options),
        multi_select=bool(item.get("multi_select", False)),
    )
