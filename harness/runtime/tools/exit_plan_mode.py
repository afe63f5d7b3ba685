"""`exit_plan_mode`: the second human-interaction consumer. It never calls
`ask_user_question`; it asks through the same service, so the same guard refuses a child."""

from __future__ import annotations

from typing import Any

from harness.runtime.questions import (
    Intent,
    Option,
    Question,
)
from harness.runtime.registry import Agent
from harness.runtime.sessions import Event
from harness.runtime.tools._base import (
    ToolArgumentError,
    ToolContext,
    ToolResult,
    ask_user,
    function_schema,
    require_str,
)

NAME = "exit_plan_mode"
APPROVE, KEEP_PLANNING = "Approve", "Keep planning"
APPROVED_TEXT = "Plan approved — plan mode exited; carry out the plan starting with your next step."
KEPT_TEXT = "Plan not approved — plan mode continues; revise the plan before asking again."

SCHEMA = function_schema(
    NAME,
    "Present the finished plan for approval and leave plan mode if it is approved.",
    {
        "type": "object",
        "properties": {
            "plan": {"type": "string", "description": "The plan as markdown, starting with '# '."}
        },
        "required": ["plan"],
    },
)


def plan_review(plan: str) -> Question:
    return Question(
        id="plan-review",
        header="Plan review",
        question="Approve this plan and leave plan mode?",
        detail=plan,
        # What the human reads under each choice, as upstream words it.
        options=(
            Option(APPROVE, "Leave plan mode; the plan is carried out from the next step."),
            Option(KEEP_PLANNING, "Stay in plan mode; feedback goes back to the model."),
        ),
        intent=Intent(kind="plan-review", approve=APPROVE),
    )


def set_plan_mode(agent: Agent, active: bool) -> None:
    agent.plan_mode = active
    if agent.session is not None:
        agent.session.append({"type": "plan/mode", "active": active})


def plan_mode_logged(events: list[Event]) -> bool | None:
    """The plan-mode state a session's durable log ends in, or None if it never had one."""
    for event in reversed(events):
        if event["type"] == "plan/mode":
            return bool(event["active"])
    return None


class ExitPlanModeTool:
    name = NAME
    schema = SCHEMA

    async def run(self, ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
        plan = require_str(args, "plan", NAME)
        if not plan.startswith("# "):
            raise ToolArgumentError(f"{NAME}: 'plan' must be markdown starting with a '# ' heading")
        if not ctx.agent.plan_mode:
            return ToolResult.failed(
                "PlanModeError", "NOT_IN_PLAN_MODE", "exit_plan_mode called outside plan mode"
            )
        answers = await ask_user(ctx, NAME, (plan_review(plan),))
        if isinstance(answers, ToolResult):
            return answers  # a UserQuestionError, passed through unchanged
        answer = next((a for a in answers if a.id == "plan-review"), None)
        if answer is not None and APPROVE in answer.selected:
            set_plan_mode(ctx.agent, False)
            return ToolResult(APPROVED_TEXT)
        feedback = f" User feedback: {answer.custom}" if answer and answer.custom else ""
        return ToolResult(KEPT_TEXT + feedback)
