"""`harness coverage`: each design-document clause (scenarios/clauses.yaml) and the
scenarios that cover it; exit 1 when any clause is uncovered."""

from __future__ import annotations

import argparse

from harness.cli._exits import EXIT_FAILED, EXIT_OK
from harness.cli._selection import load_corpus


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """No options of its own."""


def run(args: argparse.Namespace) -> int:
    from harness.scenario import clauses

    scenarios = load_corpus(args)
    if isinstance(scenarios, int):
        return scenarios
    uncovered = 0
    for clause, text in clauses().items():
        ids = [s.id for s in scenarios if clause in s.covers]
        uncovered += not ids
        print(f"{clause:<4} {text}")
        print(f"     {'covered by: ' + ', '.join(ids) if ids else 'UNCOVERED: no scenario'}")
    total = len(clauses())
    print(f"{total - uncovered} of {total} clauses covered")
    return EXIT_FAILED if uncovered else EXIT_OK
