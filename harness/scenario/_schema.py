"""The scenario schema as validators: one that explains and one that only decides.

Reporting needs jsonschema's errors exactly as the schema is written (every problem, the
oneOf branches, the paths). Deciding does not, and most files are valid: `is_valid` runs
the same schema with its local `$ref`s written in place, which spares the reference
resolution that was about half of validating a scenario (the shipped corpus: 42 -> 22 ms;
a 10,600-step script: 0.57 -> 0.39 s). Only a file it refuses goes through `explain`.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator
from typing import Any

from harness._paths import schema_path

_LOCAL = "#/$defs/"
# Keywords that sit beside a `$ref` without adding a constraint.
_NOTES = frozenset({"description", "default", "title", "examples", "$comment"})


def explain(doc: Any) -> Iterator[Any]:
    """Every jsonschema ValidationError for `doc`, against the schema as written."""
    return iter(_explainer().iter_errors(doc))


def is_valid(doc: Any) -> bool:
    return bool(_decider().is_valid(doc))


@functools.cache
def _explainer() -> Any:
    return _validator_class()(_schema())


@functools.cache
def _decider() -> Any:
    schema = _schema()
    try:
        inlined = _inline(schema, schema["$defs"], ())
    except _CannotInline:  # e.g. a definition that refers to itself: decide as written
        return _explainer()
    return _validator_class()(inlined)


@functools.cache
def _schema() -> Any:
    return json.loads(schema_path().read_text(encoding="utf-8"))


@functools.cache
def _validator_class() -> Any:
    import jsonschema  # heavy; only paid when a scenario is actually loaded

    extend: Any = jsonschema.validators.extend  # untyped in the stubs
    return extend(jsonschema.Draft202012Validator, {"pattern": _ecma_pattern})


class _CannotInline(Exception):
    """A reference to itself (directly or through others), outside #/$defs, or to a part
    of a definition rather than a whole one."""


def _inline(node: Any, defs: dict[str, Any], through: tuple[str, ...]) -> Any:
    """`node` with every `{"$ref": "#/$defs/NAME"}` replaced by that definition. Beside
    other constraints a reference becomes one branch of an allOf, which is what 2020-12
    means by a `$ref` with siblings."""
    if isinstance(node, list):
        return [_inline(item, defs, through) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    rest = {k: _inline(v, defs, through) for k, v in node.items() if k not in ("$ref", "$defs")}
    if not isinstance(ref, str):
        return rest
    name = ref.removeprefix(_LOCAL)
    if not ref.startswith(_LOCAL) or name not in defs or "/" in name or name in through:
        raise _CannotInline(ref)
    target = _inline(defs[name], defs, (*through, name))
    return target if set(rest) <= _NOTES else {"allOf": [target], **rest}


def _ecma_pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    """JSON Schema patterns are ECMA-262, where `$` is the end of the string. Python's `$`
    also matches before a final newline, so "lead\n" passed `^[A-Za-z0-9]...$` and became
    a session file name and a header value. (Our patterns hold no escaped `$`.)"""
    from jsonschema.exceptions import ValidationError

    if isinstance(instance, str) and not _ecma(pattern).search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


@functools.cache
def _ecma(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern.replace("$", r"\Z"))
