"""`harness mutants`: the guard matrix, every scenario under every test-only guard; exit 1
when some guard survives every scenario."""

from __future__ import annotations

import argparse
import json
import sys

from harness.cli._exits import EXIT_FAILED, EXIT_OK
from harness.cli._selection import load_corpus


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print machine-readable results")


def run(args: argparse.Namespace) -> int:
    from harness.cli._progress import Progress
    from harness.run._mutants import mutant_matrix, render

    scenarios = load_corpus(args)
    if isinstance(scenarios, int):
        return scenarios
    bar: list[Progress] = []

    def progress(done: int, total: int, guard: str, scenario: str, cell: str) -> None:
        # stderr, so --json output stays clean: a bar on a terminal, a line per cell in a log.
        if not bar:
            bar.append(Progress(total, "mutants"))
        bar[0].step(f"{guard} x {scenario}", cell)

    matrix = mutant_matrix(scenarios, progress=progress)
    if args.json:
        print(json.dumps(matrix.to_json(), indent=2, sort_keys=True))
    else:
        print("\n".join(render(matrix)))
    survivors = matrix.survivors()
    if survivors:
        print(f"harness: no scenario kills {', '.join(survivors)}", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK
