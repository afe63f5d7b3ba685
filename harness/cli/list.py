"""`harness list`: scenario ids and titles."""

from __future__ import annotations

import argparse

from harness.cli._exits import EXIT_OK
from harness.cli._selection import load_corpus


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """No options of its own: `--scenarios DIR` comes before the command."""


def run(args: argparse.Namespace) -> int:
    scenarios = load_corpus(args)
    if isinstance(scenarios, int):
        return scenarios
    width = max(len(s.id) for s in scenarios)
    for s in scenarios:
        print(f"{s.id:<{width}}  {s.title}")
    return EXIT_OK
