"""`harness report [SCENARIO_ID ...] [--out DIR] [--mutants] [run options]`: run the
scenarios as `harness run` would (the same options, the same run loop, the same judging:
known failures, required goldens, stray goldens) and write DIR/report.html, one
self-contained page (harness.cli._page)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from harness.cli._exits import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from harness.cli._selection import load_corpus

if TYPE_CHECKING:
    from harness.run import Ran


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from harness.cli._options import add_options

    add_options(parser)
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("harness-report"),
        metavar="DIR",
        help="where report.html goes (default: ./harness-report)",
    )
    parser.add_argument("--mutants", action="store_true",
                        help="add the matrix of scenarios by test-only guards")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from harness.cli._ci_formats import stray_message
    from harness.cli._options import plan
    from harness.cli._page import made, write_page
    from harness.cli._progress import Progress

    scenarios = load_corpus(args)
    if isinstance(scenarios, int):
        return scenarios
    if not made("--out", args.out):
        return EXIT_USAGE
    planned = plan(args, scenarios)
    if isinstance(planned, int):
        return planned
    ran: list[Ran] = []
    progress = Progress(len(planned.chosen), "report")
    try:
        for item in planned.results():
            progress.step(item.result.scenario.id, item.result.status)
            ran.append(item)
        matrix = None
        if args.mutants:
            from harness.run._mutants import mutant_matrix

            matrix = mutant_matrix(planned.chosen)
        out = write_page(args.out, ran, planned, matrix)
        strays = planned.unknown_goldens()
    finally:
        planned.close()
    print(f"harness report: wrote {out}", file=sys.stderr)
    for path in strays:
        print(f"harness: {stray_message(path, Path.cwd())}", file=sys.stderr)
    return EXIT_OK if all(r.acceptable for r in ran) and not strays else EXIT_FAILED
