"""An ACP run -> the protocol's observation (scenarios/protocol.json).

An editor sees a root's tool calls and messages (`session/update`), and of a child only
what the agent chooses to show, linked by `_meta` fields that differ per agent. So the
observation is read where it is the same for every agent:
- who made each tool call, with which arguments: the fake, which issued its id (ACP agents
  keep the model's call id as the `toolCallId`);
- what each call's result was: the text the model that made it was shown next (the fake
  saw it), else the update's content;
- whether the result is an error: the agent's update (`status: failed`), or, for a call
  the agent shows no client, `AcpAdapter.failed` (what the agent's own record says);
- a root's final text: its last message in the session (what the editor shows); a child's:
  its model's last words, which only the fake saw.
Texts are normalised by the agent (`AcpAdapter.normalised`): no session ids or timings.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from harness.adapters._calls import Call, issued, walk
from harness.fake.dialect import DELEGATION_TOOL
from harness.fake.routing import message_text

if TYPE_CHECKING:
    from harness.adapters.acp.run import AcpRun


def child_name(run: AcpRun, arguments: dict[str, Any]) -> str | None:
    """The child a delegation call starts: the argument its dialect spells `{name}` into,
    else the scenario's child its `{prompt}` was written for (Codex's spawn_agent)."""
    spelled = run.agent.dialect.delegation.arguments
    if spelled is None:  # the scenarios' own spelling: subagent {name, prompt}
        return str(arguments["name"]) if "name" in arguments else None
    for key, value in spelled.items():
        if value == "{name}" and key in arguments:
            return str(arguments[key])
    prompts = {str(c.args.get("prompt")): str(c.args.get("name"))
               for a in run.scenario.agents.values() for t in a.script for c in t.calls
               if c.tool == DELEGATION_TOOL}  # fmt: skip
    said = next((k for k, v in spelled.items() if v == "{prompt}"), None)
    return prompts.get(str(arguments.get(said))) if said else None


def observed(run: AcpRun, outcome: str, error: str | None) -> dict[str, Any]:
    """The observation's JSON, as the protocol has it."""
    agent, llm = run.agent, run.llm
    delegation = agent.dialect.delegation.tool
    # A delegation in two calls (Codex: spawn_agent, then wait_agent): the second's result
    # is the handoff of the agent's latest first call.
    then = agent.dialect.delegation.then.tool if agent.dialect.delegation.then else None
    spawned: dict[str, str] = {}  # agent -> its latest delegation call
    calls: dict[str, Call] = {}
    children: dict[str, str] = {}
    errors: dict[str, dict[str, Any]] = {}
    handed: dict[str, dict[str, Any]] = {}
    for call_id, (owner, tool, arguments) in issued(llm).items():
        calls[call_id] = Call(owner, tool, arguments)
        child = child_name(run, arguments) if tool == delegation else None
        if child is not None:
            children[call_id] = child
            spawned[owner] = call_id
            child = None if then else child  # its result is no handoff: the second's is
        elif then is not None and tool == then and owner in spawned:
            child = children[spawned[owner]]
        state = run.tools.get(call_id, {})
        text = llm.results.get(call_id)
        if text is None and state.get("status") in ("completed", "failed"):
            text = _content(state)
        if text is None:
            continue  # no result yet: the run ended before it
        text = agent.normalised(run, text)
        failed = state.get("status") == "failed" if state else agent.failed(run, call_id, text)
        if failed:
            errors[call_id] = {"agent": owner, "tool": tool, "code": "", "name": "Error",
                               "text": text}  # fmt: skip
        elif child is not None:
            handed[call_id] = {"parent": owner, "child": child, "child_final": None,
                               "tool_result": text}  # fmt: skip
    final = _final(run)
    roots = [p.agent for p in run.scenario.phases if p.agent is not None]
    tool_errors, handoffs = walk(roots, calls, children, handed, errors)
    for handoff in handoffs:
        handoff["child_final"] = final.get(handoff["child"])
    return {
        "outcome": outcome, "error": error, "answerer_calls": len(run.asked), "asked": run.asked,
        "direct": [], "tool_errors": tool_errors, "handoffs": handoffs, "final": final,
        "plan_mode": {},
    }  # fmt: skip


def _final(run: AcpRun) -> dict[str, str]:
    """Each agent's last words: a root's as its session showed them, a child's as its
    model said them."""
    final: dict[str, str] = {}
    for agent, message in list(run.llm.replies):
        text = message_text(message.get("content"))
        if text:
            final[agent] = run.agent.normalised(run, text)
    for session, root in run.roots.items():
        messages = [m for m in run.said.get(session, []) if "".join(m)]
        if messages:
            final[root] = run.agent.normalised(run, "".join(messages[-1]))
    return final


def _content(state: dict[str, Any]) -> str:
    """A tool call's result as its update shows it: its text content, else its raw output."""
    texts = []
    for item in state.get("content") or ():
        inner = item.get("content") if isinstance(item, dict) else None
        if isinstance(inner, dict) and inner.get("type") == "text":
            texts.append(str(inner.get("text", "")))
    if texts:
        return "\n".join(texts)
    raw = state.get("rawOutput")
    if isinstance(raw, str):
        return raw
    return json.dumps(raw, sort_keys=True) if raw is not None else ""


def transcript(run: AcpRun) -> dict[str, list[dict[str, Any]]]:
    """What each agent said and was told, in the reference's durable-log terms, numbered in
    the order the fake saw it (`harness repro`)."""
    told: dict[str, list[dict[str, Any]]] = {}
    seq = 0
    tools = issued(run.llm)
    for agent, message in list(run.llm.replies):
        made = [{"id": c["id"], "name": c["function"]["name"],
                 "arguments": c["function"]["arguments"]}
                for c in message.get("tool_calls") or ()]  # fmt: skip
        seq += 1
        told.setdefault(agent, []).append({"seq": seq, "agent": agent,
            "type": "message/assistant", "content": message_text(message.get("content")),
            "tool_calls": made})  # fmt: skip
        for call in made:
            result = run.llm.results.get(call["id"])
            if result is None:
                continue
            seq += 1
            failed = run.tools.get(call["id"], {}).get("status") == "failed"
            told[agent].append({"seq": seq, "agent": agent, "type": "tool/result",
                "tool": tools[call["id"]][1], "call_id": call["id"], "is_error": failed,
                "content": run.agent.normalised(run, result)})  # fmt: skip
    return told
