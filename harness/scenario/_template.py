"""`{{ label.result }}`-style references from one script step to an earlier one.

A reference names a labelled tool call of the same agent and one of its fields:
`result` (the tool result text, read from the request the runtime sent), `id` (the call
id the fake issued) or `args.PATH` (the scripted arguments, e.g. `args.questions.0.question`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

_BRACES = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)
_REF = re.compile(r"\s*([A-Za-z_][\w-]*)\.(result|id|args)((?:\.[\w-]+)*)\s*")


class TemplateSyntaxError(ValueError):
    pass


@dataclass(frozen=True)
class Ref:
    label: str
    field: str
    path: tuple[str, ...]
    source: str

    def __str__(self) -> str:
        return "{{" + _flat(self.source) + "}}"


def parse(text: str) -> list[Ref]:
    refs = []
    for match in _BRACES.finditer(text):
        inner = match.group(1)
        ref = _REF.fullmatch(inner)
        if ref is None:
            raise TemplateSyntaxError(
                f"template {{{{{_flat(inner)}}}}} is not LABEL.result, LABEL.id or LABEL.args.PATH"
            )
        path = tuple(p for p in ref.group(3).split(".") if p)
        if ref.group(2) != "args" and path:
            raise TemplateSyntaxError(f"template {{{{{_flat(inner)}}}}}: only 'args' takes a path")
        refs.append(Ref(ref.group(1), ref.group(2), path, inner))
    return refs


def _flat(source: str) -> str:
    # Error messages are one line each; a template may span several in a YAML block scalar.
    return " ".join(source.split())


def refs_in(value: Any) -> list[Ref]:
    """Every reference anywhere in a scripted value (strings nested in lists and dicts)."""
    if isinstance(value, str):
        return parse(value)
    if isinstance(value, dict):
        return [r for v in value.values() for r in refs_in(v)]
    if isinstance(value, list):
        return [r for v in value for r in refs_in(v)]
    return []


def render(value: Any, resolve: Callable[[Ref], Any]) -> Any:
    if isinstance(value, str):
        if "{{" not in value:
            return value
        refs = iter(parse(value))
        return _BRACES.sub(lambda _: _text(resolve(next(refs))), value)
    if isinstance(value, dict):
        return {k: render(v, resolve) for k, v in value.items()}
    if isinstance(value, list):
        return [render(v, resolve) for v in value]
    return value


def lookup(value: Any, path: tuple[str, ...]) -> Any:
    """Follow a dotted path; raises LookupError naming the first step that is missing."""
    for i, step in enumerate(path):
        if isinstance(value, dict) and step in value:
            value = value[step]
        elif isinstance(value, list) and step.isdigit() and int(step) < len(value):
            value = value[int(step)]
        else:
            raise LookupError(f"args.{'.'.join(path[: i + 1])} does not exist; {_has(value)}")
    return value


def _has(value: Any) -> str:
    """What a path could have named instead, so the fix is in the message."""
    if isinstance(value, dict):
        return f"there are: {', '.join(map(str, value)) or 'no keys'}"
    if isinstance(value, list):
        return f"there are indexes 0 to {len(value) - 1}" if value else "the list is empty"
    return f"the value there is {json.dumps(value, ensure_ascii=False)}, not a mapping or list"


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
