"""Exit codes and the one-line messages a command ends with when it refuses: the bottom of the
CLI, which every command module imports and which imports none of them.

0 all passed, 1 a scenario failed or errored, 2 bad input (an invalid scenario file, an
unknown id, a bad option), 3 a scenario hung unexpectedly, 4 the harness itself broke.
"""

from __future__ import annotations

import sys

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_HANG, EXIT_INTERNAL = 0, 1, 2, 3, 4


def invalid(exc: Exception, what: str) -> int:
    """Every problem of invalid scenario files, on stderr, then what was not done: exit 2."""
    problems = getattr(exc, "problems", [str(exc)])
    for problem in problems:
        print(problem, file=sys.stderr)
    print(f"harness: {len(problems)} problem(s) in scenario files; {what}", file=sys.stderr)
    return EXIT_USAGE


def usage(message: str) -> int:
    """A mistake on the command line, said in one line on stderr: exit 2."""
    print(f"harness: {message}", file=sys.stderr)
    return EXIT_USAGE
