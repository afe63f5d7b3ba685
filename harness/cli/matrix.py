"""`harness matrix`: the corpus on several runtimes, as one table. Rows are scenarios,
columns runtimes (with what each ran); a cell is the level the runtime holds (`upstream`,
`rule`, `live`), `fails: FIRST MISMATCH` (with `known` when its known-failures file says so), or
`skip: REASON`. Markdown for a README or docs page, JSON for tools, and `--check FILE`
to say whether a committed table is still what the runtimes do."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.cli._exits import EXIT_FAILED, EXIT_OK, usage
from harness.cli._selection import load_corpus

if TYPE_CHECKING:
    from typing import TypeAlias

    from harness.run import Ran

    Column: TypeAlias = tuple[str, str, list[Ran]]

DEFAULT_ADAPTERS = ("reference",)
# Agent CLIs with subagents and a human tool that no adapter can run, each with why: stated
# under every table, so a reader looking for one learns why it has no column.
NOT_RUN = {
    "Gemini CLI headless (@google/gemini-cli 0.61.0, `gemini -p`)": "no column: headless it "
    "has no human end at all. It declares no ask_user (only its terminal UI does), and it "
    "approves a plan review by its own policy, without asking anyone, then switches to YOLO "
    "mode, a child's included. Over ACP, where an editor answers, it is `gemini-cli-acp`",
}
# What a runtime line says of the machine it ran on, not of the runtime: left out of the
# table, so that it reads the same wherever the runtimes are the same.
_MACHINE = re.compile(r", (offline \(a network namespace[^)]*\)|on this host's network.*)$|"
                      r" on Python \d+\.\d+\.\d+$| \(adapter in [^)]*\)")  # fmt: skip


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--adapter",
        action="append",
        default=None,
        metavar="SPEC",
        help="a runtime to run the corpus on, once per column (default: reference); as "
        "`harness run --adapter` takes them",
    )
    parser.add_argument(
        "--format",
        choices=("markdown", "json", "github"),
        default="markdown",
        help="markdown (default), json, or github (markdown, also written to "
        "$GITHUB_STEP_SUMMARY when it is set)",
    )
    parser.add_argument(
        "--output", type=Path, default=None, metavar="FILE", help="write the table to FILE"
    )
    parser.add_argument(
        "--stream",
        action="store_true",
        help="stream every runtime's replies as SSE deltas (a correct runtime's cells are "
        "the same either way, so --check can gate a streamed run on an unstreamed table)",
    )
    parser.add_argument(
        "--chunk",
        type=int,
        default=None,
        metavar="N",
        help="with --stream: N characters per delta (1: one character at a time)",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="run up to N foreign runtimes' columns at once, each in a thread of its own "
        "(their CLIs are processes; the reference runtime's column runs first, alone)",
    )
    parser.add_argument(
        "--check",
        type=Path,
        default=None,
        metavar="FILE",
        help="compare with a table written before (JSON), and fail naming each cell that changed",
    )


def run(args: argparse.Namespace) -> int:
    scenarios = load_corpus(args)
    if isinstance(scenarios, int):
        return scenarios
    if args.check is not None and not args.check.is_file():
        return usage(f"--check {args.check}: no such file; write one with --format json --output")
    specs = args.adapter or list(DEFAULT_ADAPTERS)
    if len(set(specs)) != len(specs):
        return usage("--adapter names a runtime twice; name each once")
    if args.jobs < 1:
        return usage("--jobs takes a positive number of columns to run at once")
    columns, acceptable = [], True
    for ran in _columns(args, specs, scenarios):
        if isinstance(ran, int):
            return ran
        name, runtime, results = ran
        acceptable &= all(r.acceptable for r in results)
        columns.append({"adapter": name, "runtime": runtime,
                        "cells": {r.result.scenario.id: _cell(r) for r in results}})  # fmt: skip
    wire = (["--stream"] if args.stream else []) + (
        [f"--chunk {args.chunk}"] if args.chunk is not None else []
    )
    table = {"command": " ".join(["harness matrix", *(f"--adapter {s}" for s in specs), *wire]),
             "columns": columns, "scenarios": [s.id for s in scenarios],
             "not_run": dict(NOT_RUN)}  # fmt: skip
    if args.format == "json":
        shown = json.dumps(table, indent=2, ensure_ascii=False) + "\n"
    else:
        shown = markdown(table)
    if args.output is not None:
        args.output.write_text(shown, encoding="utf-8")
    else:
        print(shown, end="")
    if args.format == "github":
        from harness.cli._ci_formats import append_step_summary

        append_step_summary(shown)
    changed = _changed(args.check, table) if args.check is not None else []
    for line in changed:
        print(f"matrix: {line}", file=sys.stderr)
    if changed:
        again = f"{table['command']} --format json --output {args.check}"
        print(f"matrix: {args.check} is not what the runtimes do now; write it again with "
              f"`{again}`", file=sys.stderr)  # fmt: skip
    return EXIT_OK if acceptable and not changed else EXIT_FAILED


def _columns(
    args: argparse.Namespace, specs: list[str], scenarios: list[Any]
) -> list[Column | int]:
    """Each runtime's column, in the order named. The reference runtime's runs on this
    thread (its batch owns the SIGINT handler, which only the main thread may set); the
    others, each a process the adapter drives, up to --jobs at a time. The Python
    frameworks run in this process and take turns in one of those places: each patches the
    process's HTTP clients to reach its fake (harness.fake.intercept), and two at once would
    answer each other's agents."""
    from concurrent.futures import ThreadPoolExecutor

    from harness.adapters._load import MEMBERS

    here = {spec: _run(args, spec, scenarios) for spec in specs if spec == "reference"}
    inside = [s for s in specs if s not in here and MEMBERS.get(s, ("",))[0] == "frameworks"]
    others = [spec for spec in specs if spec not in here and spec not in inside]
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        turns = pool.submit(lambda: {s: _run(args, s, scenarios) for s in inside})
        there = dict(zip(others, pool.map(lambda s: _run(args, s, scenarios), others), strict=True))
        there.update(turns.result())
    return [here[spec] if spec in here else there[spec] for spec in specs]


def _run(args: argparse.Namespace, spec: str, scenarios: list[Any]) -> Column | int:
    """One column: the corpus on `spec`, judged as `harness run --adapter SPEC` judges it."""
    from harness.cli._options import API_NAMES, DEFAULT_GUARD

    options = argparse.Namespace(
        **vars(args), ids=[], expectations=None, snapshots=None, shard=None, backstop=None,
        guard=DEFAULT_GUARD, api=API_NAMES[0], level="upstream",
    )  # fmt: skip
    options.adapter = spec
    return run_column(options, scenarios)


def run_column(options: argparse.Namespace, scenarios: list[Any]) -> Column | int:
    """The run `options` describe (harness.cli._options.plan), as a column: the adapter's
    name, what ran (without what is the machine's) and each result; or an exit code."""
    from harness.cli._options import plan
    from harness.contract import runtime_of

    planned = plan(options, scenarios)
    if isinstance(planned, int):
        return planned
    try:
        results = list(planned.results())
    finally:
        planned.close()
    runtime = _MACHINE.sub("", runtime_of(planned.adapter))
    return planned.adapter.name, runtime, results


def _cell(ran: Ran) -> str:
    result = ran.result
    if result.status == "skip":
        return f"skip: {result.mismatches[0]}"
    if result.status == "pass" or (ran.label == "KNOWN FAIL" and result.held not in (None, "none")):
        return str(result.held)
    first = (result.mismatches or [m for _, m in result.above] or ["?"])[0]
    known = "known, " if ran.label == "KNOWN FAIL" else ""
    return f"fails ({known}{result.status}): {first}"


def markdown(table: dict[str, Any]) -> str:
    """The table as Markdown: a header naming the command, then one row per scenario."""
    columns = table["columns"]
    lines = [
        f"Made by `{table['command']}`. A cell is the level the runtime holds (`upstream`, "
        "`rule`, `live`), how it fails (`known` when its known-failures file says so), or why it "
        "was skipped.",
        "",
        *heads("runtime", [(c["adapter"], c["runtime"]) for c in columns]),
    ]
    for sid in table["scenarios"]:
        cells = [_md(c["cells"].get(sid, "")) for c in columns]
        lines.append(f"| {sid} | " + " | ".join(cells) + " |")
    if table.get("not_run"):
        lines += ["", "Not in the table:", ""]
        lines += [f"- {name}: {why}." for name, why in table["not_run"].items()]
    return "\n".join(lines) + "\n"


def heads(kind: str, columns: list[tuple[str, str]]) -> list[str]:
    """What each column ran, as a table, then the head of the table of cells: the lines a
    matrix and a history share (`kind` names a column: runtime, release)."""
    names = [name for name, _ in columns]
    return [
        f"| {kind} | what ran |",
        "|---|---|",
        *(f"| {name} | {_md(ran)} |" for name, ran in columns),
        "",
        "| scenario | " + " | ".join(names) + " |",
        "|---|" + "---|" * len(names),
    ]


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _changed(path: Path, table: dict[str, Any]) -> list[str]:
    """Each cell or runtime that differs from the table in `path`."""
    try:
        before = json.loads(path.read_text(encoding="utf-8"))
        old = {c["adapter"]: c for c in before["columns"]}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return [f"{path}: not a table written by --format json ({exc})"]
    out = []
    for column in table["columns"]:
        name, was = column["adapter"], old.get(column["adapter"])
        if was is None:
            out.append(f"{name}: a column {path} does not have")
            continue
        if was.get("runtime") != column["runtime"]:
            out.append(f"{name}: ran {column['runtime']!r}, the table says {was.get('runtime')!r}")
        for sid in table["scenarios"]:
            now, then = column["cells"].get(sid), was.get("cells", {}).get(sid)
            if now != then:
                out.append(f"{name} / {sid}: now {now!r}, the table says {then!r}")
    return out
