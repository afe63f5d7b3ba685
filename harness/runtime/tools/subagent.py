from __future__ import annotations

import re
from typing import Any

from harness.runtime.errors import AgentAborted, AgentRunError
from harness.runtime.registry import delegation_depth
from harness.runtime.sessions import SessionError
from harness.runtime.tools._base import (
    ToolArgumentError,
    ToolContext,
    ToolResult,
    function_schema,
    require_str,
)

NAME = "subagent"

SCHEMA = function_schema(
    NAME,
    "Delegate a self-contained task to a one-shot child agent. The child's final message "
    "is returned as this tool's result.",
    {
        "type": "object",
        "properties": {
            "name": {
                "type": "string",
                "description": "Short name for the child; it becomes the child's session id.",
            },
            "prompt": {"type": "string", "description": "The task for the child."},
        },
        "required": ["name", "prompt"],
    },
)

# The name becomes a file name in the session store, so it is held to a safe alphabet.
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


class SubagentTool:
    name = NAME
    schema = SCHEMA
    concurrency_safe = True  # upstream's: sibling delegations of one reply overlap

    async def run(self, ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
        child = require_str(args, "name", NAME)
        prompt = require_str(args, "prompt", NAME)
        if not _SAFE_NAME.fullmatch(child):
            raise ToolArgumentError(
                f"{NAME}: 'name' {child!r} must be 1-64 characters of letters, digits, '.', "
                "'_' or '-', starting with a letter or digit"
            )
        assert ctx.agent.session is not None
        # A child's depth is its parent's plus one, the parent's the deeper of its header's
        # and its run's; past the runtime's cap (upstream's maxDepth, 3 by default) it is
        # refused before it starts: a plain error, as upstream's.
        depth, cap = delegation_depth(ctx.agent) + 1, ctx.runtime.max_depth
        if cap is not None and depth > cap:
            return ToolResult.failed("Error", "", f"subagent depth {depth} exceeds maxDepth {cap}")
        try:
            handoff = await ctx.runtime.delegate(ctx.agent, child, prompt, ctx.call_id)
        except SessionError as exc:
            return ToolResult.failed("SubagentError", "SESSION_EXISTS", str(exc))
        except AgentAborted:  # a plain error, upstream's text for a child's aborted run
            return ToolResult.failed("Error", "", "subagent run was cancelled")
        except AgentRunError as exc:
            return ToolResult.failed("SubagentError", "SUBAGENT_FAILED", str(exc))
        return ToolResult(handoff, child=child)
