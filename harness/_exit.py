"""Exit codes and the one-line messages every command ends with: the bottom layer of the
CLI, which the command modules and `harness._cli` import and which imports none of them."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_HANG, EXIT_INTERNAL = 0, 1, 2, 3, 4


def _invalid(exc: Exception, what: str) -> int:
    problems = getattr(exc, "problems", [str(exc)])
    for problem in problems:
        print(problem, file=sys.stderr)
    print(f"harness: {len(problems)} problem(s) in scenario files; {what}", file=sys.stderr)
    return EXIT_USAGE


def _usage(message: str) -> int:
    print(f"harness: {message}", file=sys.stderr)
    return EXIT_USAGE


def _choose(ids: Sequence[str], scenarios: Sequence[Any]) -> list[Any] | None:
    """The named scenarios in the order first named, each once (all of them when none is
    named), or None after saying which ids are unknown."""
    by_id = {s.id: s for s in scenarios}
    named = list(dict.fromkeys(ids))  # an id named twice runs once
    unknown = [i for i in named if i not in by_id]
    if unknown:
        _usage(f"unknown scenario id(s): {', '.join(unknown)}; 'harness list' shows the ids")
        return None
    return [by_id[i] for i in named] if named else list(scenarios)
