"""Model-visible tools. Every agent, root or child, sees the same list with the same
schemas: the guard changes only what a refused call returns, never the prompt prefix."""

from harness.runtime.tools._base import (
    Tool,
    ToolArgumentError,
    ToolContext,
    ToolErrorInfo,
    ToolResult,
)
from harness.runtime.tools.ask_user_question import AskUserQuestionTool
from harness.runtime.tools.exit_plan_mode import ExitPlanModeTool
from harness.runtime.tools.subagent import SubagentTool

__all__ = [
    "AskUserQuestionTool",
    "ExitPlanModeTool",
    "SubagentTool",
    "Tool",
    "ToolArgumentError",
    "ToolContext",
    "ToolErrorInfo",
    "ToolResult",
    "default_tools",
]


def default_tools(*, user_questions: bool = True) -> list[Tool]:
    asking: list[Tool] = [AskUserQuestionTool()] if user_questions else []
    return [*asking, ExitPlanModeTool(), SubagentTool()]
