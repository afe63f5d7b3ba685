"""The delegation dialect: how a runtime's delegation tool spells the scenarios' one.

Scenarios script delegation in one dialect, `subagent {name, prompt}`. A runtime whose
delegation tool has another name or other arguments declares a `Delegation`, and the fake
rewrites each scripted delegation into it; the scenario's names stay the agents' names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

DELEGATION_TOOL = "subagent"  # what scenarios call, whatever the runtime's tool is named
_PLACEHOLDER = re.compile(r"\{(name|prompt)\}")


class DialectError(ValueError):
    """A declared delegation dialect that cannot be used; the message names where and why."""


@dataclass(frozen=True)
class Delegation:
    """How a runtime's delegation tool spells the scenarios' `subagent {name, prompt}`.

    `arguments` is a JSON template: every string in it has `{name}` and `{prompt}` replaced
    by the scripted values; anything else is sent as written. None sends the scripted
    arguments unchanged (the reference runtime's own dialect).
    """

    tool: str = DELEGATION_TOOL
    arguments: Mapping[str, Any] | None = None

    @classmethod
    def from_json(cls, value: Any, where: str) -> Delegation:
        """Parse a declared dialect; DialectError names `where` and the fix."""
        if not isinstance(value, dict) or set(value) - {"tool", "arguments"}:
            raise DialectError(f"{where}: write {{tool: NAME, arguments: {{...}}}}")
        tool = value.get("tool", DELEGATION_TOOL)
        if not isinstance(tool, str) or not tool:
            raise DialectError(f"{where}.tool: the runtime's delegation tool name, a string")
        arguments = value.get("arguments")
        if arguments is None:
            return cls(tool)
        if not isinstance(arguments, dict):
            raise DialectError(f"{where}.arguments: a JSON object template")
        if "{prompt}" not in "".join(_strings(arguments)):
            raise DialectError(
                f"{where}.arguments: no string carries {{prompt}}; the child's task must "
                "reach it verbatim, since that is how its requests are recognised"
            )
        return cls(tool, arguments)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"tool": self.tool}
        if self.arguments is not None:
            out["arguments"] = self.arguments
        return out

    def spell(self, args: Mapping[str, Any]) -> dict[str, Any] | None:
        """The runtime's arguments for scripted `subagent` arguments, or None when they
        lack a string name and prompt to fill the template with."""
        if self.arguments is None:
            return dict(args)
        name, prompt = args.get("name"), args.get("prompt")
        if not isinstance(name, str) or not isinstance(prompt, str):
            return None
        values = {"name": name, "prompt": prompt}
        return _fill(dict(self.arguments), values)  # type: ignore[no-any-return]


REFERENCE_DELEGATION = Delegation()


def _fill(value: Any, values: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        # One pass: a prompt that itself contains "{name}" is not filled again.
        return _PLACEHOLDER.sub(lambda m: values[m.group(1)], value)
    if isinstance(value, dict):
        return {k: _fill(v, values) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, values) for v in value]
    return value


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)
