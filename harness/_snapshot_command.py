"""`harness snapshot`: write golden snapshots from the reference runtime, for a directory of
scenarios of your own, and say what changed. Never under CI, where goldens are only compared,
never into the installed package (its corpus is read-only: a wheel's goldens are the ones it
was released with), and never for a scenario that fails its own expectations: a golden pins
behaviour someone has judged right, not whatever happened."""

from __future__ import annotations

import argparse
import difflib
from typing import TYPE_CHECKING

from harness._exit import EXIT_FAILED, EXIT_OK, EXIT_USAGE, _choose, _usage

if TYPE_CHECKING:
    from harness.scenario import Scenario

DIFF_LINES = 20  # of a changed file's unified diff, shown under its line


def snapshot(args: argparse.Namespace, scenarios: list[Scenario]) -> int:
    from harness._ci import ci_refuses_updates
    from harness._paths import inside_installed_package, scenarios_dir, snapshots_dir
    from harness.run import run_scenarios, snapshot_text

    if ci_refuses_updates():
        return _usage(
            "CI is set, so golden snapshots are compared, never written; run `harness snapshot` "
            "outside CI and commit the files, saying why each changed"
        )
    chosen = _choose(args.ids, scenarios)
    if chosen is None:
        return EXIT_USAGE
    directory = args.snapshots or snapshots_dir(args.scenarios)
    if inside_installed_package(directory):
        source = args.scenarios or scenarios_dir()
        return _usage(
            f"{directory} is inside the installed keyless-harness package, whose goldens are "
            f"read-only; copy the scenarios ({source}), or write your own, into a directory "
            "of your own and run `harness --scenarios DIR snapshot` (goldens go to snapshots/ "
            "beside DIR), or name `--snapshots DIR`"
        )
    directory.mkdir(parents=True, exist_ok=True)
    counts = dict.fromkeys(("created", "updated", "unchanged", "not written"), 0)
    for result in run_scenarios(chosen):
        sid = result.scenario.id
        if result.status != "pass":
            counts["not written"] += 1
            print(f"NOT WRITTEN {sid}: it does not pass its expectations: {result.mismatches[0]}")
            continue
        path = directory / f"{sid}.json"
        text = snapshot_text(result.observation.snapshot())
        old = path.read_text(encoding="utf-8") if path.is_file() else None
        if old == text:
            counts["unchanged"] += 1
            continue
        path.write_text(text, encoding="utf-8")
        if old is None:
            counts["created"] += 1
            print(f"created     {path}")
            continue
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
    print(", ".join(f"{n} {what}" for what, n in counts.items() if n) or "nothing to write")
    return EXIT_FAILED if counts["not written"] else EXIT_OK
