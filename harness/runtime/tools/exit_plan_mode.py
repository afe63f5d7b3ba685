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


# Upstream's `plan:policy` prompt section, as its base bundle configures it
# (packages/bundle/base/cordis.patch.yml at dsh-v0.1.0-rc.8, a YAML block scalar, so it
# ends in one newline). Ours is the same text: a prefix a model is tuned on is upstream's.
PLAN_POLICY = (
    "You are in plan mode. Stay in plan mode until exit_plan_mode succeeds or the user "
    "switches the session mode. Imperative language to implement changes means plan the "
    "implementation, not execute it. A user's conversational agreement — including an answer "
    "confirming something you asked — approves nothing and does not end plan mode; fold the "
    "confirmed decision into the plan and submit it through exit_plan_mode.\n"
    "\n"
    "Explore first. Use non-mutating reads, searches, static analysis, and checks to ground "
    "the plan in the actual repository. Do not edit or write files, change configuration, run "
    "formatters or code generation that rewrites tracked files, commit, or otherwise carry out "
    "the plan. Prefer existing functions and patterns over new machinery.\n"
    "\n"
    "The tool catalog stays the same across modes for request-cache stability. These "
    "plan-mode rules override any later tool description or guidance that suggests using "
    "mutation tools; those tools remain listed only to keep the request shape stable. Do not "
    "use todo_write to track this planning phase: it tracks implementation after an approved "
    "plan, while the plan itself belongs in exit_plan_mode.\n"
    "\n"
    "Resolve discoverable facts by inspection. Use ask_user_question only for user-owned "
    "choices or material ambiguity that inspection cannot answer. Do not ask the user where "
    "code lives or how current behavior works when you can find out.\n"
    "\n"
    "Make the plan decision-complete: state the goal and success criteria; group "
    "implementation changes by subsystem; identify public API, schema, and data-flow changes; "
    "cover edge cases, failure modes, tests, acceptance criteria, and explicit assumptions. "
    "Keep it concise enough to review but detailed enough that another engineer can implement "
    "it without making design decisions.\n"
    "\n"
    "When ready, call exit_plan_mode with the complete plan markdown, starting with a # "
    "title. Make exit_plan_mode the only and final tool call in that assistant response: it "
    "presents the plan for approval, and implementation begins only in a later step after "
    'approval. Do not paste the final plan as a plain reply or ask "should I proceed?" '
    "through prose or ask_user_question. If review rejects it, incorporate the feedback and "
    "present again. If the review channel is unavailable or aborted, stay in plan mode and "
    "ask the user to switch modes manually; do not proceed with implementation.\n"
)


def policy_section(agent: Agent) -> str:
    """The `plan:policy` section of the agent's system prompt for the step about to start:
    upstream's text while its session's plan mode is on (a switch chosen in the last step is
    logged by then, see begin_step), else none."""
    session = agent.session
    return PLAN_POLICY if session is not None and session.plan_mode else ""


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
    concurrency_safe = False

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
        if session is None or not session.plan_mode:
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
