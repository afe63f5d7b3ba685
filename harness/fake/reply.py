"""The reply to one request: a scripted turn -> the assistant message the fake sends
(templates resolved, arguments checked, the scenario's tools spelled in the runtime's
dialect, call ids issued), and each agent's state between its replies (`AgentState`:
where its script is, its labelled calls, the history it was served)."""

from __future__ import annotations

import collections
import json
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.fake.dialect import DELEGATION_TOOL, Dialect, Spelling, as_identifier
from harness.fake.routing import message_text
from harness.fake.script import MalformedArguments, UnresolvedTemplate
from harness.scenario import Call, Turn, _template

# Finished agents whose served histories stay as they are; older ones are compressed.
KEEP_FINISHED = 32


@dataclass
class AgentState:
    cursor: int = 0
    issued: dict[str, str] = field(default_factory=dict)  # label -> call id
    calls: dict[str, Call] = field(default_factory=dict)  # label -> scripted call
    # Delegations in two calls whose second is still to be sent: first call id -> its label.
    following: dict[str, str | None] = field(default_factory=dict)
    # The conversation as of the last reply served (check_history): what the next request
    # must begin with, system messages aside. Once the script is done it is kept as
    # compressed JSON (under half the text, a small part of the parsed objects): such an
    # agent rarely asks again, and then only to be told why, while a thousand-agent tree
    # would otherwise hold every conversation.
    served: list[Any] | bytes = field(default_factory=list)

    def finish(self) -> None:
        """The script is done: keep the history served so far compressed."""
        if isinstance(self.served, list):
            self.served = zlib.compress(json.dumps(self.served).encode(), 1)

    def history(self) -> list[Any]:
        if isinstance(self.served, bytes):
            return list(json.loads(zlib.decompress(self.served)))
        return self.served


class Finished:
    """The agents whose scripts are done. The last few keep their histories as served;
    older ones are compressed, which a thousand-agent tree needs and a small scenario need
    not pay."""

    def __init__(self) -> None:
        self._done: collections.deque[AgentState] = collections.deque()

    def add(self, state: AgentState) -> None:
        self._done.append(state)
        if len(self._done) > KEEP_FINISHED:
            self._done.popleft().finish()


def render(
    agent: str,
    step: int,
    state: AgentState,
    turn: Turn,
    messages: list[Any],
    dialect: Dialect,
    next_call_id: Callable[[], str],
) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """Scripted turn -> the assistant message the fake sends, and the delegations in it
    (child, prompt). Templates resolve against this agent's earlier calls and the request's
    tool results; every argument is checked before any call id is issued, so a refused turn
    leaves no trace."""
    results = {
        m.get("tool_call_id"): _result_text(m.get("content"))
        for m in messages
        if isinstance(m, dict) and m.get("role") == "tool"
    }

    def resolve(ref: _template.Ref) -> Any:
        where = f"agent {agent}, step {step}: {ref}"
        if ref.label not in state.calls:
            raise UnresolvedTemplate(
                f"{where} names no earlier labelled call", agent=agent, step=step
            )
        call_id = state.issued[ref.label]
        if ref.field == "id":
            return call_id
        if ref.field == "args":
            try:
                return _template.lookup(dict(state.calls[ref.label].args), ref.path)
            except LookupError as exc:
                raise UnresolvedTemplate(f"{where}: {exc}", agent=agent, step=step) from None
        if call_id not in results:
            raise UnresolvedTemplate(
                f"{where}: the request carries no tool result for {call_id}; the runtime "
                "must send every tool result back to the model",
                agent=agent,
                step=step,
            )
        return results[call_id]

    try:
        content = _template.render(turn.say, resolve) if turn.say is not None else None
        # Non-mapping arguments pass through unrendered, for _arguments to refuse by name.
        rendered = [
            _template.render(dict(c.args) if isinstance(c.args, Mapping) else c.args, resolve)
            for c in turn.calls
        ]
    except _template.TemplateSyntaxError as exc:
        raise UnresolvedTemplate(
            f"agent {agent}, step {step}: {exc}", agent=agent, step=step
        ) from None
    message: dict[str, Any] = {"role": "assistant", "content": content}
    delegations: list[tuple[str, str]] = []
    if turn.calls:
        # Checked before any call id is issued, so a refused turn leaves no trace.
        spelled = [
            _spell(agent, step, i, call.tool, args, dialect, delegations)
            for i, (call, args) in enumerate(zip(turn.calls, rendered, strict=True), 1)
        ]
        tool_calls = []
        for call, (tool, text) in zip(turn.calls, spelled, strict=True):
            call_id = next_call_id()
            if call.label is not None:
                state.issued[call.label] = call_id
                state.calls[call.label] = call
            spelling = dialect.spelling(call.tool)
            tool_calls.append(_tool_call(call_id, tool, text, spelling))
            if call.tool == DELEGATION_TOOL and dialect.delegation.then is not None:
                state.following[call_id] = call.label
        message["tool_calls"] = tool_calls
    return message, delegations


def finished(
    agent: str,
    step: int,
    message: dict[str, Any],
    declared: set[str | None],
    dialect: Dialect,
    next_call_id: Callable[[], str],
) -> dict[str, Any]:
    """An agent's last step that only speaks, ended as its runtime's subagents end: the
    dialect's `finish` call, filled from its text, beside that text; only when the request
    declares that tool (a child's does, a root's does not). Otherwise `message` as it is."""
    finish, text = dialect.finish, message.get("content")
    if finish is None or message.get("tool_calls") or finish.tool not in declared:
        return message
    if not isinstance(text, str):
        return message
    args = finish.spell({"text": text}) or {}
    call_id = next_call_id()
    call = _tool_call(call_id, finish.tool, _arguments(agent, step, 1, finish.tool, args), finish)
    return {**message, "tool_calls": [call]}


def follow_up(
    agent: str,
    step: int,
    state: AgentState,
    messages: list[Any],
    dialect: Dialect,
    next_call_id: Callable[[], str],
) -> dict[str, Any]:
    """The second call of each delegation in two calls the agent's last reply made (the
    dialect's `then`), filled from the first call's result this request carries; no
    scripted step is consumed. The delegation's label names the second call from now on,
    so a template's `{{LABEL.result}}` is the handoff."""
    delegation = dialect.delegation
    assert delegation.then is not None
    results = {
        m.get("tool_call_id"): _result_text(m.get("content"))
        for m in messages
        if isinstance(m, dict) and m.get("role") == "tool"
    }
    where = f"agent {agent}, step {step}"
    spelled = []
    for first in state.following:
        result = results.get(first)
        if not isinstance(result, str):
            raise UnresolvedTemplate(
                f"{where}: the request carries no result for {delegation.tool} call {first}, "
                f"which {delegation.then.tool} is filled from; the runtime must send it back",
                agent=agent,
                step=step,
            )
        args = delegation.follow(result)
        if args is None:
            raise MalformedArguments(
                f"{where}: the {delegation.tool} result {result[:160]!r} lacks what "
                f"{delegation.then.tool}'s template needs; did the runtime refuse the call?",
                agent=agent,
                step=step,
            )
        spelled.append(_arguments(agent, step, 1, delegation.then.tool, args))
    tool_calls = []
    for label, text in zip(state.following.values(), spelled, strict=True):
        call_id = next_call_id()
        if label is not None:
            state.issued[label] = call_id
        tool_calls.append(_tool_call(call_id, delegation.then.tool, text, delegation.then))
    state.following.clear()
    return {"role": "assistant", "content": None, "tool_calls": tool_calls}


def _tool_call(call_id: str, tool: str, text: str, spelling: Spelling | None) -> dict[str, Any]:
    """A call as the assistant message carries it; a namespaced tool's namespace beside its
    function (the Responses wire sends it on the item, which Codex requires)."""
    call: dict[str, Any] = {"id": call_id, "type": "function",
                            "function": {"name": tool, "arguments": text}}  # fmt: skip
    if spelling is not None and spelling.namespace is not None:
        call["namespace"] = spelling.namespace
    return call


def _spell(
    agent: str,
    step: int,
    index: int,
    tool: str,
    args: Any,
    dialect: Dialect,
    delegations: list[tuple[str, str]],
) -> tuple[str, str]:
    """A scripted call as the runtime's model would send it: (tool name, argument
    text), in the runtime's dialect. A delegation is remembered, so its child's first
    request can be recognised by the prompt."""
    spelling = dialect.spelling(tool)
    delegated = tool == DELEGATION_TOOL and isinstance(args, Mapping)
    if delegated and isinstance(args.get("name"), str) and isinstance(args.get("prompt"), str):
        delegations.append((args["name"], args["prompt"]))
    if spelling is None or not isinstance(args, Mapping):
        return tool, _arguments(agent, step, index, tool, args)
    spelled = spelling.spell(args)
    if spelled is None:
        needs = (
            "a delegation needs a string name and prompt"
            if tool == DELEGATION_TOOL
            else "its arguments lack a string the dialect's template needs"
        )
        raise MalformedArguments(
            f"agent {agent}, step {step}, call {index} ({tool}): {needs} to be spelled as "
            f"this runtime's {spelling.tool}",
            agent=agent,
            step=step,
        )
    named = spelling.tool
    if delegated:  # a tool per child, named after it (an agent as tool)
        child = str(args.get("name"))
        named = named.replace("{name}", child).replace("{identifier}", as_identifier(child))
    return named, _arguments(agent, step, index, tool, spelled)


def _arguments(agent: str, step: int, index: int, tool: str, args: Any) -> str:
    """A call's arguments as the JSON object text a model sends, or MalformedArguments."""
    where = f"agent {agent}, step {step}, call {index} ({tool})"
    if not isinstance(args, Mapping):
        raise MalformedArguments(
            f"{where}: arguments must be a mapping (a JSON object), got {type(args).__name__}",
            agent=agent,
            step=step,
        )
    try:
        # allow_nan=False: NaN and Infinity are not JSON, and a runtime's parser may refuse them.
        return json.dumps(dict(args), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise MalformedArguments(
            f"{where}: arguments are not JSON ({exc}); script strings, numbers, booleans, "
            "null, lists and mappings only",
            agent=agent,
            step=step,
        ) from None


def _result_text(content: Any) -> Any:
    # A runtime may send a tool result as content parts; a template wants its text.
    return message_text(content) if isinstance(content, list) else content
