"""The table `harness history` prints: a row per scenario, a column per release of one
agent CLI, the level each release holds in each cell, and per scenario the releases where
its cell changed. Built from each release's results, merged from shards' JSON, and shown
as Markdown or JSON, like the matrix. A cell is the level held, whatever the adapter's
known-failures file says (it describes one release; this compares them):

    upstream, rule     the level the release holds
    none (OUTCOME)     not even the rule: the outcome it had (completed, hang, error)
    error              the run broke before anything could be judged
    skip               the adapter cannot express the scenario on this release
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.run import Ran


class HistoryError(Exception):
    """Shards that cannot be joined, said in one line."""


def cell(ran: Ran) -> tuple[str, str]:
    """(the cell, what decided it: the first mismatch, or the skip's reason)."""
    result = ran.result
    first = (result.mismatches or [m for _, m in result.above] or [""])[0]
    if result.status == "skip":
        return "skip", first
    if result.held in ("upstream", "rule", "live"):
        return str(result.held), first
    if result.held is None:
        return "error", first
    return f"none ({result.observation.outcome})", first


def column(release: str, runtime: str, results: Iterable[Ran]) -> dict[str, Any]:
    cells, details = {}, {}
    for ran in results:
        cells[ran.result.scenario.id], details[ran.result.scenario.id] = cell(ran)
    return {"release": release, "runtime": runtime, "cells": cells, "details": details}


def table(
    adapter: str, command: str, scenarios: Sequence[str], columns: Iterable[dict[str, Any]]
) -> dict[str, Any]:
    """The whole table, its releases in release order, and each scenario's changes."""
    from harness.adapters._expectations import release_key

    ordered = sorted(columns, key=lambda c: release_key(c["release"]))
    changes: dict[str, list[dict[str, str]]] = {}
    for sid in scenarios:
        for before, after in itertools.pairwise(ordered):
            was, now = before["cells"].get(sid), after["cells"].get(sid)
            if was != now:
                changes.setdefault(sid, []).append(
                    {"release": after["release"], "from": str(was), "to": str(now)}
                )
    return {"adapter": adapter, "command": command, "scenarios": list(scenarios),
            "releases": ordered, "changes": changes}  # fmt: skip


def merge(parts: Sequence[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """The table one run over every shard's releases would have made."""
    if not parts:
        raise HistoryError("--merge needs the JSON of at least one history run")
    first_name, first = parts[0]
    columns: dict[str, dict[str, Any]] = {}
    for name, part in parts:
        for key in ("adapter", "command", "scenarios"):
            if part.get(key) != first.get(key):
                raise HistoryError(f"{name}: its {key} is not {first_name}'s; join the shards "
                                   "of one history command only")  # fmt: skip
        for col in part["releases"]:
            if col["release"] in columns and columns[col["release"]] != col:
                raise HistoryError(f"{name}: release {col['release']} is in another part "
                                   "with other cells; run it in one shard only")  # fmt: skip
            columns[col["release"]] = col
    return table(first["adapter"], first["command"], first["scenarios"], columns.values())


def check_part(name: str, doc: Any) -> dict[str, Any]:
    """`doc` if it is a history table's JSON, else HistoryError naming `name`."""
    keys = {"adapter", "command", "scenarios", "releases"}
    if not isinstance(doc, dict) or not keys <= set(doc):
        raise HistoryError(f"{name}: not a table written by harness history --format json")
    return doc


def markdown(doc: dict[str, Any]) -> str:
    from harness.cli.matrix import _md, heads

    releases = doc["releases"]
    lines = [
        f"Made by `{doc['command']}`. A cell is the level the release holds (`upstream`, "
        "`rule`), `none` with the outcome when it misses even the rule, `error` when the "
        "run broke, or `skip` when the adapter cannot express the scenario there.",
        "",
        *heads("release", [(c["release"], c["runtime"]) for c in releases]),
    ]
    skipped = []
    for sid in doc["scenarios"]:
        cells = [_md(c["cells"].get(sid, "")) for c in releases]
        if set(cells) == {"skip"}:  # a row that says nothing of any release: named below
            skipped.append(sid)
            continue
        lines.append(f"| {sid} | " + " | ".join(cells) + " |")
    if skipped:
        lines += ["", f"Skipped on every release ({len(skipped)}; the JSON says why): "
                  + ", ".join(skipped) + "."]  # fmt: skip
    broke: dict[str, list[str]] = {}  # why a run broke -> "scenario on release", each
    for c in releases:
        for sid in doc["scenarios"]:
            if c["cells"].get(sid) == "error":
                broke.setdefault(c.get("details", {}).get(sid, ""), []).append(
                    f"{sid} on {c['release']}"
                )
    if broke:
        lines += ["", "Why a run broke (`error`):", ""]
        lines += [f"- {', '.join(where)}: {_md(why)}" for why, where in broke.items()]
    lines += ["", "Where a cell changed (the first release with the new cell):", ""]
    changed = doc.get("changes") or {}
    for sid in doc["scenarios"]:
        if sid in changed:
            steps = "; ".join(f"{c['release']} ({c['from']} → {c['to']})" for c in changed[sid])
            lines.append(f"- {sid}: {steps}")
    if not changed:
        lines.append("- none: every scenario holds the same level on every release")
    return "\n".join(lines) + "\n"
