"""What every foreign CLI's reader shares: a call as it was made (who made it, which tool,
its input), and the order an observation lists tool errors and handoffs in: a walk of the
delegation tree, each agent's calls in the order the fake numbered them, a child's whole
run before the handoff of the call that started it. That is the order of any run that is
sequential or nested, and, for children running side by side, whose results race, the
order their parent called them in.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass
class Call:
    agent: str
    tool: str
    input: dict[str, Any]


def serial(call_id: str) -> tuple[int, str]:
    """A call id the fake issued (call_12, toolu_12) by its number: the order the calls
    were made."""
    digits = call_id.rsplit("_", 1)[-1]
    return (int(digits), call_id) if digits.isdigit() else (0, call_id)


def walk(
    roots: Iterable[str],
    calls: Mapping[str, Call],
    children: Mapping[str, str],
    handed: Mapping[str, dict[str, Any]],
    errors: Mapping[str, dict[str, Any]],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(tool errors, handoffs) in the order of a walk from each root in turn, each agent
    once however often it is named. `children`: delegation call id -> the child it started;
    `handed` and `errors`: call id -> its handoff or its error."""
    tool_errors: list[dict[str, Any]] = []
    handoffs: list[dict[str, Any]] = []
    walked: set[str] = set()
    by_agent: dict[str, list[str]] = {}
    for call_id in sorted(calls, key=serial):
        by_agent.setdefault(calls[call_id].agent, []).append(call_id)
    # An explicit stack rather than recursion: a chain as deep as the runtime allows.
    for root in roots:
        stack: list[tuple[str, int]] = [(root, 0)] if root not in walked else []
        walked.add(root)
        while stack:
            agent, at = stack.pop()
            mine = by_agent.get(agent, [])
            while at < len(mine):
                call_id = mine[at]
                at += 1
                child = children.get(call_id)
                if child is not None and child not in walked:
                    walked.add(child)
                    # The child's run first; then this call's handoff and error, and on.
                    stack += [(agent, at - 1), (child, 0)]
                    break
                if call_id in handed:
                    handoffs.append(handed[call_id])
                if call_id in errors:
                    tool_errors.append(errors[call_id])
    return tool_errors, handoffs
