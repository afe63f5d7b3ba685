"""The two validators of the scenario schema agree: the one that decides (local $refs
written in place, for speed) accepts exactly what the one that explains (the schema as
written) finds no error in."""

from __future__ import annotations

import copy
import functools
from collections.abc import Iterator
from typing import Any

import pytest

from harness.scenario import _schema, scenario_paths
from harness.scenario._schema import _CannotInline, _inline, explain, is_valid
from harness.scenario._yaml import parse


@functools.cache
def shipped() -> dict[str, Any]:
    """Read on first use: every xdist worker imports this module to collect it."""
    return {p.stem: parse(p.read_text("utf-8")).value for p in scenario_paths()}


# Values of every JSON type, and strings the schema's patterns and enums refuse.
REPLACEMENTS: list[Any] = [None, -1, 2.5, "", "x\n", "Bad Name!", [{}], {"z": 1}]
# Chosen for their variety: plan review answers, faults and a tool error, the service's
# direct asks, parallel children. The first runs in the fast tier, the rest in the
# second (SLOW_TESTS in conftest.py): together they take about a second.
VARIED = [
    "plan-review-approve-with-feedback",
    "child-aborted-call",
    "service-zero-depth-live-child",
    "parallel-children-refused",
]


def paths(doc: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield at
    if isinstance(doc, dict):
        for key, value in doc.items():
            yield from paths(value, (*at, key))
    elif isinstance(doc, list):
        for index, value in enumerate(doc):
            yield from paths(value, (*at, index))


def replaced(doc: Any, at: tuple[Any, ...], value: Any) -> Any:
    if not at:
        return value
    changed = copy.deepcopy(doc)
    node = changed
    for part in at[:-1]:
        node = node[part]
    node[at[-1]] = value
    return changed


def documents(doc: Any) -> Iterator[Any]:
    """`doc` with one value replaced (the replacements taken in turn, place by place), one
    key added or one key removed, at every place."""
    for n, at in enumerate(paths(doc)):
        yield replaced(doc, at, REPLACEMENTS[n % len(REPLACEMENTS)])
        parent = doc
        for part in at[:-1]:
            parent = parent[part]
        if at and isinstance(parent, dict):
            key = at[-1]
            yield replaced(doc, at[:-1], {k: v for k, v in parent.items() if k != key})
            yield replaced(doc, at[:-1], {**parent, "unknown": 1})


def test_every_shipped_scenario_is_valid_to_both() -> None:
    assert len(shipped()) > 40
    for scenario_id, doc in shipped().items():
        assert is_valid(doc), scenario_id
        assert list(explain(doc)) == [], scenario_id


@pytest.mark.parametrize("varied", VARIED)
def test_the_deciding_validator_agrees_with_the_explaining_one(varied: str) -> None:
    docs = list(documents(shipped()[varied]))
    decided = [(is_valid(doc), next(explain(doc), None) is None) for doc in docs]
    assert len(decided) > 100
    assert all(fast == slow for fast, slow in decided)
    assert 0 < sum(ok for ok, _ in decided) < len(decided)  # both answers were exercised


def test_a_reference_is_written_in_place_and_beside_constraints_becomes_all_of() -> None:
    defs = {"name": {"type": "string"}, "pair": {"items": {"$ref": "#/$defs/name"}}}
    a, b = {"$ref": "#/$defs/pair", "description": "d"}, {"$ref": "#/$defs/name", "minLength": 2}
    schema = {"properties": {"a": a, "b": b}, "$defs": defs}
    assert _inline(schema, defs, ()) == {
        "properties": {
            "a": {"items": {"type": "string"}},
            "b": {"allOf": [{"type": "string"}], "minLength": 2},
        }
    }


@pytest.mark.parametrize(
    "ref", ["#/$defs/loop", "#/$defs/missing", "#/$defs/loop/items", "other.json#/x"]
)
def test_a_reference_that_cannot_be_written_in_place_is_refused(ref: str) -> None:
    defs = {"loop": {"type": "array", "items": {"$ref": ref}}}
    with pytest.raises(_CannotInline):
        _inline({"$ref": "#/$defs/loop"}, defs, ())


def test_a_schema_that_refers_to_itself_is_decided_by_the_explaining_validator(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    recursive = {"$defs": {"tree": {"type": "array", "items": {"$ref": "#/$defs/tree"}}},
                 "$ref": "#/$defs/tree"}  # fmt: skip
    for cached in (_schema._schema, _schema._explainer, _schema._decider):
        cached.cache_clear()
    monkeypatch.setattr(_schema, "_schema", lambda: recursive)
    try:
        assert _schema._decider() is _schema._explainer()
        assert is_valid([[], [[]]]) and not is_valid([[], [1]])
    finally:
        _schema._explainer.cache_clear()
        _schema._decider.cache_clear()
