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
)

NAME = "ask_user_question"

# Upstream's model-visible schema, word for word (@deepseek-ai/dsh-tool-ask-user, as its
# runtime sends it), so the prompt prefix the goldens pin is upstream's.
SCHEMA = function_schema(
    NAME,
    "Ask the user a concise question when you need confirmation, a choice, or missing "
    "information before proceeding. Send one or more questions, each with a stable id that "
    "will be echoed in the answer.",
    {
        "type": "object",
        "properties": {
            "questions": {
                "type": "array",
                "description": "Questions to ask the user before continuing.",
                "items": {
                    "type": "object",
                    "additionalProperties": True,
                    "properties": {
                        "id": {
                            "type": "string",
                            "description": "Stable id for this question; echoed in the answer.",
                        },
                        "question": {
                            "type": "string",
                            "description": "The specific question to ask the user.",
                        },
                        "header": {
                            "type": "string",
                            "description": "Optional short heading for the question, such as "
                            '"Confirm" or "Choose Mode".',
                        },
                        "options": {
                            "type": "array",
                            "description": "Optional choices to show the user. If you "
                            'recommend one, put it first and append "(Recommended)" to that '
                            "label.",
                            "items": {
                                "type": "object",
                                "additionalProperties": True,
                                "properties": {
                                    "label": {
                                        "type": "string",
                                        "description": "Short user-facing option label.",
                                    },
                                    "description": {
                                        "type": "string",
                                        "description": "One sentence explaining the tradeoff "
                                        "or impact.",
                                    },
                                },
                                "required": ["label"],
                            },
                        },
                        "multi_select": {
                            "type": "boolean",
                            "description": "Whether the user may select more than one option. "
                            "Defaults to false.",
                        },
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
    concurrency_safe = False

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
    """One question as upstream's tool passes it on: id and question as given (an empty
    string too), and the option objects unchanged (keys beyond label and description
    kept). multi_select is sent only when true, as upstream's at rc.8."""
    where = f"{NAME}: questions[{index}]"
    if not isinstance(item, dict):
        raise ToolArgumentError(f"{where} must be an object")
    options = item.get("options") or []
    if not isinstance(options, list) or not all(
        isinstance(o, dict) and isinstance(o.get("label"), str) for o in options
    ):
        raise ToolArgumentError(f"{where}: 'options' must be an array of {{label, description}}")
    header, multi = item.get("header"), item.get("multi_select")
    return Question(
        id=_string(item, "id", where),
        question=_string(item, "question", where),
        header=header if isinstance(header, str) else None,
        options=tuple(_option(o) for o in options),
        multi_select=multi is True,
    )


def _string(item: dict[str, Any], key: str, where: str) -> str:
    value = item.get(key)
    if not isinstance(value, str):  # required, and a string; upstream takes "" as given
        raise ToolArgumentError(f"{where}: '{key}' must be a string")
    return value


def _option(given: dict[str, Any]) -> Option:
    description = given.get("description")
    extra = tuple((k, v) for k, v in given.items() if k not in ("label", "description"))
    if description is not None and not isinstance(description, str):
        extra = (("description", description), *extra)  # passed on as given, not read
        description = None
    return Option(given["label"], description, extra)
