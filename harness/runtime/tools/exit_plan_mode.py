"""`exit_plan_mode`: the second human-interaction consumer. It never calls
`ask_user_question`; it asks through the same service, so the same guard refuses a child.

Upstream's tool, check for check and text for text (`@deepseek-ai/dsh-plan-mode`): its own
refusals are plain errors (no name or code of their own), a UserQuestionError from the
service passes through unchanged, and an approval switches plan mode off from the caller's
next step, not inside the call.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from harness.runtime.questions import (
    ASK_CANCELLED,
    Answer,
    Intent,
    Option,
    Question,
)
from harness.runtime.registry import Agent
from harness.runtime.sessions import plan_mode_logged
from harness.runtime.tools._base import (
    ToolArgumentError,
    ToolContext,
    ToolResult,
    ask_user,
    function_schema,
)

NAME = "exit_plan_mode"
REVIEW_ID = "plan-review"
APPROVE, KEEP_PLANNING = "Approve", "Keep planning"
APPROVED_TEXT = "Plan approved — plan mode exited; carry out the plan starting with your next step."
NOT_IN_PLAN_MODE = f"{NAME} is only available in plan mode"
NO_HEADING = f"{NAME} requires a non-empty markdown plan starting with a # heading"
NO_CHANNEL = (
    "no user-questions channel is available to review the plan; ask the user to switch the "
    "session mode instead"
)
DISMISSED = (
    "The user dismissed the plan review to speak instead; stay in plan mode, stop here, and "
    "wait for their message."
)
KEEP_PLANNING_TEXT = "The user chose to keep planning; revise the plan and present it again."
FEEDBACK_TEXT = "The user chose to keep planning; their feedback: {feedback}"
# A `# ` heading as upstream tests it: one '#', whitespace, then something to name the plan.
HEADING = re.compile(r"#\s+\S")

SCHEMA = function_schema(
    NAME,
    "Use only in plan mode. Present your plan for the user's review and, on approval, leave "
    "plan mode. Send the COMPLETE plan as markdown, starting with a # heading that names it. "
    "The user may approve (carry out the plan from your next step) or keep planning — their "
    "feedback comes back in the tool result; revise and present again.",
    {
        "type": "object",
        "properties": {
            "plan": {
                "type": "string",
                "description": "The complete plan, as markdown, starting with a # heading that "
                "names it.",
            }
        },
        "required": ["plan"],
    },
)


def plan_review(plan: str) -> Question:
    return Question(
        id=REVIEW_ID,
        header="Plan review",
        question="Approve this plan and leave plan mode?",
        detail=plan,
        options=(
            Option(APPROVE, "Leave plan mode; the plan is carried out from the next step."),
            Option(KEEP_PLANNING, "Stay in plan mode; feedback goes back to the model."),
        ),
        intent=Intent(kind="plan-review", approve=APPROVE),
    )


def set_plan_mode(agent: Agent, active: bool) -> None:
    if agent.session is not None:
        agent.session.append({"type": "plan/mode", "active": active})


def begin_step(agent: Agent) -> None:
    """At the start of each step, before its request: log a switch chosen during the last
    one. The rest of an approved call's tool batch still ran in plan mode."""
    if agent.plan_mode_next is not None:
        set_plan_mode(agent, agent.plan_mode_next)
        agent.plan_mode_next = None


def _plain_error(message: str) -> ToolResult:
    # Upstream throws a plain Error here: no name of its own and no code.
    return ToolResult.failed("Error", "", message)


class ExitPlanModeTool:
    name = NAME
    schema = SCHEMA

    def approves(self, answers: Sequence[Answer]) -> bool:
        """Only a clean approval leaves plan mode: exactly one review item, selecting exactly
        Approve, with no typed text. Feedback, a second choice or a duplicate item means
        the human did not simply approve this plan, so it is not carried out."""
        items = [a for a in answers if a.id == REVIEW_ID]
        return len(items) == 1 and items[0].selected == (APPROVE,) and items[0].custom is None

    async def run(self, ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
        plan = args.get("plan")
        if not isinstance(plan, str):
            raise ToolArgumentError(f"{NAME}: 'plan' must be a string")
        # The reference always calls a tool with its agent, so upstream's first check (no
        # calling agent) cannot arise here.
        session = ctx.agent.session
        if session is None or not plan_mode_logged(session.events):
            return _plain_error(NOT_IN_PLAN_MODE)
        if not HEADING.match(plan.strip()):
            return _plain_error(NO_HEADING)
        if ctx.runtime.questions is None:
            return _plain_error(NO_CHANNEL)
        answers = await ask_user(ctx, NAME, (plan_review(plan),))
        if isinstance(answers, ToolResult):
            if answers.error is not None and answers.error.code == ASK_CANCELLED:
                # The human took the turn back to say something else: not a failed review.
                return _plain_error(DISMISSED)
            return answers  # a UserQuestionError, passed through unchanged
        if not self.approves(answers):
            items = [a for a in answers if a.id == REVIEW_ID]
            feedback = items[0].custom if len(items) == 1 else None
            if feedback:
                return _plain_error(FEEDBACK_TEXT.format(feedback=feedback))
            return _plain_error(KEEP_PLANNING_TEXT)
        ctx.agent.plan_mode_next = False
        return ToolResult(APPROVED_TEXT)
