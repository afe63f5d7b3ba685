"""`harness validate [PATH ...]`: check scenario files (or directories of them) without
running anything, and report every problem in every file at once."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.cli._exits import EXIT_OK, invalid, usage
from harness.cli._selection import warn


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="*",
        type=Path,
        metavar="PATH",
        help="scenario files or directories (default: the --scenarios directory)",
    )


def run(args: argparse.Namespace) -> int:
    from harness.scenario import ScenarioError, load_paths, scenario_paths

    files: list[Path] = []
    paths: list[Path | None] = args.paths or [args.scenarios]  # None: the default directory
    for path in paths:
        if path is None or path.is_dir():
            found = scenario_paths(path)
            if not found:
                return usage(f"no scenario files (*.yaml) in {path or 'the default directory'}")
            files += found
        elif path.exists():
            files.append(path)
        else:
            return usage(f"{path}: no such file or directory")
    try:
        scenarios = load_paths(files)
    except ScenarioError as exc:
        return invalid(exc, f"{len(files)} file(s) checked")
    noted = warn(scenarios)
    print(f"{len(scenarios)} scenario file(s) valid" + (f" ({noted} warning(s))" if noted else ""))
    return EXIT_OK
