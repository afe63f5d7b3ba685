"""The agent loop: ask the model, run its tool calls (a run of sibling delegations at once,
any other call alone), feed the results back in the reply's order, until it answers in text
alone."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from harness.runtime.errors import AgentAborted, AgentRunError
from harness.runtime.llm import ChatError, ToolCall
from harness.runtime.sessions import to_messages
from harness.runtime.tools import ToolArgumentError, ToolContext, ToolResult
from harness.runtime.tools.exit_plan_mode import begin_step, policy_section

if TYPE_CHECKING:
    from harness.runtime.core import Runtime
    from harness.runtime.registry import Agent
    from harness.runtime.sessions import SessionHeader

ROOT_PROMPT = "You are an agent in the keyless-harness reference runtime."
CHILD_PROMPT = (
    ROOT_PROMPT + " Another agent delegated a task to you; your final message is returned "
    "to it as your result."
)
# The result of a call an aborted run never dispatched: upstream's, word for word
# (@deepseek-ai/dsh-agent-loop, TOOL_ABORTED_BEFORE_DISPATCH).
ABORTED_BEFORE_DISPATCH = ToolResult.failed(
    "AbortError", "ABORTED_BEFORE_DISPATCH", "tool call aborted before dispatch"
)


# Upstream's agent loop starts at most this many concurrency-safe calls at once
# (maxParallelToolCalls, 10 by default).
MAX_PARALLEL_CALLS = 10


def system_prompt(header: SessionHeader, *sections: str) -> str:
    """The lead (chosen from the durable header, so a resumed session keeps its prompt
    prefix), then each section that renders, joined as upstream's prompt registry joins
    them: by a blank line, an empty section dropped."""
    lead = CHILD_PROMPT if header.origin == "subagent" else ROOT_PROMPT
    return "\n\n".join(text for text in (lead, *sections) if text)


async def run_agent(rt: Runtime, agent: Agent, prompt: str) -> str:
    """Run one agent to its end. Returns its output, as upstream selects a child's: the text
    of its last assistant message of this run with any content (text or tool calls), so ""
    when that message only called tools, or when it said nothing at all (the handoff, for a
    child: an empty one is still a success)."""
    session = agent.session
    assert session is not None, "a running agent always has a session"
    session.append({"type": "message/user", "content": prompt})
    messages: list[dict[str, Any]] = [{"role": "system"}, *session.messages()]
    output = ""
    for turn in range(1, rt.max_turns + 1):
        begin_step(agent)
        # Rendered every step, as upstream's are: plan mode's section comes and goes.
        messages[0] = {
            "role": "system",
            "content": system_prompt(session.header, policy_section(agent)),
        }
        try:
            reply = await rt.chat.complete(agent=agent.id, messages=messages, tools=rt.schemas)
        except ChatError as exc:
            session.append({"type": "agent/error", "message": str(exc)})
            raise AgentRunError(f"agent {agent.id}: {exc}") from exc
        calls = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in reply.tool_calls]
        event = session.append(
            {"type": "message/assistant", "content": reply.content, "tool_calls": calls}
        )
        messages.extend(to_messages([event]))
        if reply.content or reply.tool_calls:  # an empty message replaces no earlier output
            output = reply.content or ""
        if not reply.tool_calls:
            return output
        i = 0
        while i < len(reply.tool_calls):
            if agent.signal.aborted:
                # As upstream's loop: every call the abort kept from dispatch gets its
                # result, in order, and the run ends.
                for skipped in reply.tool_calls[i:]:
                    session.append(result_event(skipped, ABORTED_BEFORE_DISPATCH))
                raise aborted(agent)
            group = concurrent_group(rt, reply.tool_calls, i)
            ids = ", ".join(f"{c.id} ({c.name})" for c in group)
            rt.waits.positions[agent.id] = f"turn {turn}, tool call{'s' * (len(group) > 1)} {ids}"
            if len(group) == 1:
                results = [await execute(rt, agent, group[0])]
            else:
                # Started together, in the reply's order; their results are logged and
                # read back in that order whichever finishes first, as upstream's are.
                results = await asyncio.gather(*(execute(rt, agent, c) for c in group))
            for call, result in zip(group, results, strict=True):
                event = session.append(result_event(call, result))
                messages.extend(to_messages([event]))
            i += len(group)
        if agent.signal.aborted:
            # Fired while the last calls ran (a human stopping the run as its question
            # waits, say): their results are logged, and the model is not asked again, as
            # upstream's loop throws once a step's calls are done.
            raise aborted(agent)
    message = f"agent {agent.id} did not finish within {rt.max_turns} turns"
    session.append({"type": "agent/error", "message": message})
    raise AgentRunError(message)


def aborted(agent: Agent) -> AgentAborted:
    """The end of a run whose signal fired, logged in its session."""
    message = f"agent {agent.id}: its run was aborted"
    assert agent.session is not None, "a running agent always has a session"
    agent.session.append({"type": "agent/error", "message": message})
    return AgentAborted(message)


def concurrent_group(rt: Runtime, calls: Sequence[ToolCall], start: int) -> Sequence[ToolCall]:
    """The calls from `start` that run together: a run of consecutive calls of
    concurrency-safe tools, at most 10, or the one call at `start` otherwise, which runs
    alone (upstream's exclusive barrier). Upstream's pool rolls, starting an eleventh call
    as soon as any of ten finishes; here it waits for the ten. Results are the same, and
    only a reply with more than ten delegations could tell."""
    end = start
    while end < len(calls) and end - start < MAX_PARALLEL_CALLS:
        tool = rt.tools.get(calls[end].name)
        if tool is None or not tool.concurrency_safe:
            break
        end += 1
    return calls[start : max(end, start + 1)]


async def execute(rt: Runtime, agent: Agent, call: ToolCall) -> ToolResult:
    tool = rt.tools.get(call.name)
    if tool is None:
        known = ", ".join(sorted(rt.tools))
        return ToolResult.failed(
            "ToolError", "UNKNOWN_TOOL", f"unknown tool {call.name!r}; available tools: {known}"
        )
    try:
        args = json.loads(call.arguments)
    except ValueError as exc:
        return ToolResult.failed(
            "ToolError", "BAD_ARGUMENTS", f"{call.name}: arguments are not valid JSON ({exc})"
        )
    if not isinstance(args, dict):
        return ToolResult.failed(
            "ToolError", "BAD_ARGUMENTS", f"{call.name}: arguments must be a JSON object"
        )
    ctx = ToolContext(runtime=rt, agent=agent, call_id=call.id, signal=agent.signal)
    try:
        return await tool.run(ctx, args)
    except ToolArgumentError as exc:
        return ToolResult.failed("ToolError", "BAD_ARGUMENTS", str(exc))
    except Exception as exc:
        # Whatever else a tool throws (a user-questions provider that broke, say) is the
        # model's to read, and the loop goes on: upstream's tool registry turns any throw
        # into `Error: <message>`. A plain error: no name or code of its own.
        return ToolResult.failed("Error", "", str(exc))


def result_event(call: ToolCall, result: ToolResult) -> dict[str, Any]:
    event: dict[str, Any] = {
        "type": "tool/result",
        "call_id": call.id,
        "tool": call.name,
        "content": result.content,
        "is_error": result.is_error,
    }
    if result.error is not None:
        event["error"] = {"name": result.error.name, "code": result.error.code}
    if result.child is not None:
        event["child"] = result.child
    return event
