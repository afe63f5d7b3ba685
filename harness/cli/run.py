"""`harness run`: choose the runtime, run the scenarios through the run loop, print one line
each and a total (or `--json`; and JUnit, GitHub annotations, a page, when asked), and turn
the verdicts into an exit code."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from harness.cli._exits import EXIT_FAILED, EXIT_HANG, EXIT_OK, EXIT_USAGE, usage
from harness.cli._selection import load_corpus, warn

if TYPE_CHECKING:
    from harness.cli._options import Plan
    from harness.run import Ran, Result

# What is printed under a scenario's line (mismatches, diffs, a hang's graph) is indented.
_UNDER = " " * 6


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from harness.cli._options import add_options

    add_options(parser)
    parser.add_argument("--json", action="store_true", help="print machine-readable results")
    parser.add_argument(
        "--diff",
        action="store_true",
        help="under each golden-snapshot mismatch, show both values in full or a bounded "
        "unified diff (always on when stdout is a terminal)",
    )
    parser.add_argument(
        "--junit", type=Path, default=None, metavar="FILE", help="also write JUnit XML to FILE"
    )
    parser.add_argument(
        "--html",
        type=Path,
        default=None,
        metavar="DIR",
        help="also write DIR/report.html, the page `harness report` writes, from this run",
    )
    parser.add_argument(
        "--format",
        choices=("text", "github"),
        default="text",
        help="github: also print workflow annotations at the failing lines, and write a step "
        "summary to $GITHUB_STEP_SUMMARY when it is set",
    )


def run(args: argparse.Namespace) -> int:
    from harness.cli._options import plan

    scenarios = load_corpus(args)
    if isinstance(scenarios, int):
        return scenarios
    warn(scenarios)
    if args.junit is not None and not args.junit.parent.is_dir():
        return usage(f"--junit {args.junit}: no such directory {args.junit.parent}")
    if args.html is not None:
        from harness.cli._page import made

        if not made("--html", args.html):
            return EXIT_USAGE
    planned = plan(args, scenarios)
    if isinstance(planned, int):
        return planned
    try:
        return _report(args, planned)
    finally:
        planned.close()


def _report(args: argparse.Namespace, planned: Plan) -> int:
    from harness.adapters import runtime_of
    from harness.cli._progress import Progress
    from harness.run import summary

    adapter, expectations, chosen = planned.adapter, planned.expectations, planned.chosen
    ran: list[Ran] = []
    id_width = max(len(s.id) for s in chosen)
    label_width = 10 if expectations.path is not None else 5
    runtime = runtime_of(adapter)
    # A long run watched on a terminal while its lines go elsewhere (--json, or stdout to a
    # file) gets a bar on stderr; on a terminal the lines themselves show the progress.
    terminal = sys.stdout.isatty()
    quiet = args.json or not terminal
    bar = Progress(len(chosen), "run") if len(chosen) > 50 and quiet else None
    show_diff = args.diff or terminal
    if not args.json:  # first, so a log shows what was run before what it did
        print(f"runtime: {adapter.name}: {runtime or '(the adapter does not say)'}", flush=True)
    for item in planned.results():
        result = item.result
        ran.append(item)
        if bar is not None:
            bar.step(result.scenario.id, result.status)
        if args.json:
            continue
        head = f"{item.label:<{label_width}} {result.scenario.id:<{id_width}}  "
        if result.status == "skip":
            print(head + result.mismatches[0], flush=True)
            continue
        unpinned = "  (no golden snapshot)" if result.golden == "missing" else ""
        print(
            head + f"{result.held or '-':<8}  expected: {summary(result, expected=True)}  "
            f"observed: {summary(result, expected=False)}{unpinned}",
            flush=True,
        )
        reason = expectations.reason(result.scenario.id, result.level)
        above = [f"{level}: {m}" for level, m in result.above]  # shown, not failing
        side = [f"side request: {s}" for s in result.observation.side_requests]
        for line in [*result.mismatches, *above, *([f"known: {reason}"] if reason else []), *side]:
            print(_UNDER + line)
        if show_diff:
            for line in diff_lines(result):
                print(_UNDER + line)
        if result.observation.hang is not None and result.status != "pass":
            from harness.adapters.reference.detect import render_hang

            for line in render_hang(result.observation.hang):
                print(_UNDER + line)
    strays = planned.unknown_goldens()
    here = Path.cwd()
    results = [r.result for r in ran]
    counts = {s: sum(r.status == s for r in results) for s in ("pass", "fail", "error", "skip")}
    if args.json:
        from harness.cli._ci_formats import shown

        out = [{**r.result.to_json(), "verdict": r.label} for r in ran]
        report = {"adapter": adapter.name, "runtime": runtime, "level": planned.level,
                  "scenarios": out,
                  "unknown_goldens": [shown(p, here) for p in strays]}  # fmt: skip
        print(json.dumps(report, indent=2, sort_keys=True))
    else:
        from harness.cli._ci_formats import stray_message

        for path in strays:
            print(f"{'STRAY':<{label_width}} {stray_message(path, here)}")
        failed = counts["fail"] + counts["error"]
        line = f"{counts['pass']} passed, {failed} failed"
        line += f", {counts['skip']} skipped" if counts["skip"] else ""
        notes = [f"{counts['error']} of them errors"] if counts["error"] else []
        if missing := sum(r.golden == "missing" for r in results):
            notes.append(f"{missing} without a golden snapshot")
        notes += [
            f"{n} {label.lower()}" for label in ("KNOWN FAIL", "NEW FAIL", "NEW PASS")
            if (n := sum(r.label == label for r in ran))
        ]  # fmt: skip
        print(_by_kind(ran))
        print(_by_level(results, planned.level))
        line += f"; {len(strays)} unknown golden snapshot(s)" if strays else ""
        print(line + (f" ({'; '.join(notes)})" if notes else ""))
    _for_ci(args, ran, strays, adapter.name, runtime)
    if args.html is not None:  # the same results as a page: a CI job runs its shard once
        from harness.cli._page import write_page

        write_page(args.html, ran, planned, None)
    unexpected = [r.result for r in ran if not r.acceptable]
    if any(r.observation.outcome == "hang" for r in unexpected):
        return EXIT_HANG
    return EXIT_FAILED if unexpected or strays else EXIT_OK


def diff_lines(result: Result, limit: int = 5) -> list[str]:
    """Each golden-snapshot difference in full: its path, then both sides or a diff."""
    lines = []
    for difference in result.differences[:limit]:
        lines.append(f"{difference.path}:")
        lines += ["  " + line for line in difference.detail()]
    return lines


def _by_kind(ran: list[Ran]) -> str:
    """How each kind fared: a runtime that passes only the service-level scenarios has not
    shown a whole delegation."""
    parts = []
    for kind in ("assembled", "service"):
        mine = [r for r in ran if kind in r.result.scenario.features]
        if not mine:
            continue
        passed = sum(r.result.status == "pass" for r in mine)
        known = sum(r.label == "KNOWN FAIL" for r in mine)
        skipped = sum(r.result.status == "skip" for r in mine)
        failed = len(mine) - passed - known - skipped
        counts = [f"{passed} of {len(mine)} passed"]
        counts += [f"{failed} failed"] if failed else []
        counts += [f"{known} known fail"] if known else []
        counts += [f"{skipped} skipped"] if skipped else []
        parts.append(f"{kind}: {', '.join(counts)}")
    return "; ".join(parts)


def _by_level(results: list[Result], gate: str) -> str:
    """How many results hold each conformance level, and which one gates."""
    from harness.run import LEVELS

    held = [r.held for r in results if r.held is not None]
    counts = [f"{sum(h == level for h in held)} {level}" for level in (*LEVELS[::-1], "none")]
    return f"levels held: {', '.join(counts)} (gating on {gate})"


def _for_ci(
    args: argparse.Namespace, ran: list[Ran], strays: list[Path], adapter: str, runtime: str
) -> None:
    from harness.cli._ci_formats import append_step_summary, github_annotations, junit, step_summary

    here = Path.cwd()
    if args.junit is not None:
        args.junit.write_bytes(junit(ran, adapter, runtime, here, strays))
    if args.format == "github":
        for line in github_annotations(ran, here, strays):
            print(line)
        append_step_summary(step_summary(ran, adapter, runtime))
