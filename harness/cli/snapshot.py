"""`harness snapshot`: write golden snapshots from the reference runtime, for a directory of
scenarios of your own, and say what changed. Never under CI, where goldens are only compared,
never into the installed package (its corpus is read-only: a wheel's goldens are the ones it
was released with), and never for a scenario that fails its own expectations: a golden pins
behaviour someone has judged right, not whatever happened. The scenarios go through the
run loop on a reference adapter of its own: goldens are the reference runtime's."""

from __future__ import annotations

import argparse
import difflib
from pathlib import Path
from typing import TYPE_CHECKING

from harness.cli._exits import EXIT_FAILED, EXIT_OK, EXIT_USAGE, usage
from harness.cli._selection import load_corpus, named_scenarios

if TYPE_CHECKING:
    from harness.run import Result

DIFF_LINES = 20  # of a changed file's unified diff, shown under its line


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("ids", nargs="*", metavar="SCENARIO_ID", help="scenario ids (default: all)")
    parser.add_argument(
        "--snapshots",
        type=Path,
        default=None,
        metavar="DIR",
        help="where to write them (default: snapshots/ beside the scenarios)",
    )


def run(args: argparse.Namespace) -> int:
    from harness._paths import inside_installed_package, scenarios_dir, snapshots_dir
    from harness.adapters import ReferenceAdapter
    from harness.run import run_loop
    from harness.run._ci import ci_refuses_updates

    scenarios = load_corpus(args)
    if isinstance(scenarios, int):
        return scenarios
    if ci_refuses_updates():
        return usage(
            "CI is set, so golden snapshots are compared, never written; run `harness snapshot` "
            "outside CI and commit the files, saying why each changed"
        )
    chosen = named_scenarios(args.ids, scenarios)
    if chosen is None:
        return EXIT_USAGE
    directory = args.snapshots or snapshots_dir(args.scenarios)
    if inside_installed_package(directory):
        source = args.scenarios or scenarios_dir()
        return usage(
            f"{directory} is inside the installed keyless-harness package, whose goldens are "
            f"read-only; copy the scenarios ({source}), or write your own, into a directory "
            "of your own and run `harness --scenarios DIR snapshot` (goldens go to snapshots/ "
            "beside DIR), or name `--snapshots DIR`"
        )
    directory.mkdir(parents=True, exist_ok=True)
    counts = dict.fromkeys(("created", "updated", "unchanged", "not written"), 0)
    with ReferenceAdapter() as reference:
        for ran in run_loop(chosen, reference):
            _write(ran.result, directory, counts)
    print(", ".join(f"{n} {what}" for what, n in counts.items() if n) or "nothing to write")
    return EXIT_FAILED if counts["not written"] else EXIT_OK


def _write(result: Result, directory: Path, counts: dict[str, int]) -> None:
    """Write one scenario's golden, if it passes its expectations, and say what changed."""
    from harness.run import snapshot_text

    sid = result.scenario.id
    if result.status != "pass":
        counts["not written"] += 1
        print(f"NOT WRITTEN {sid}: it does not pass its expectations: {result.mismatches[0]}")
        return
    path = directory / f"{sid}.json"
    text = snapshot_text(result.observation.snapshot())
    old = path.read_text(encoding="utf-8") if path.is_file() else None
    if old == text:
        counts["unchanged"] += 1
        return
    path.write_text(text, encoding="utf-8")
    if old is None:
        counts["created"] += 1
        print(f"created     {path}")
        return
    counts["updated"] += 1
    print(f"updated     {path}")
    diff = list(
        difflib.unified_diff(
            old.splitlines(), text.splitlines(), "golden", "observed", n=1, lineterm=""
        )
    )
    for line in diff[2 : 2 + DIFF_LINES]:
        print(f"      {line}")
    if len(diff) > 2 + DIFF_LINES:
        print(f"      ... and {len(diff) - 2 - DIFF_LINES} more diff lines")
