"""`harness repro SCENARIO_ID`: one scenario's transcript on the reference runtime up to
where it stopped, then any hang and the verdict; or, with `--mermaid`, its sequence
diagram. It exits as `harness run` would for that scenario, without golden snapshots."""

from __future__ import annotations

import argparse

from harness.cli._exits import EXIT_FAILED, EXIT_HANG, EXIT_OK, usage
from harness.cli._options import GUARD_NAMES
from harness.cli._selection import load_corpus


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("scenario_id", metavar="SCENARIO_ID")
    parser.add_argument(
        "--guard",
        choices=GUARD_NAMES,
        default=None,
        metavar="NAME",
        help="caller-check guard, e.g. none to see the hang before the fix",
    )
    parser.add_argument(
        "--mermaid",
        action="store_true",
        help="print a Mermaid sequence diagram (fenced, to paste into a GitHub issue or PR)",
    )


def run(args: argparse.Namespace) -> int:
    from harness.run import effective_guard, run_scenario
    from harness.run._repro import transcript

    scenarios = load_corpus(args)
    if isinstance(scenarios, int):
        return scenarios
    by_id = {s.id: s for s in scenarios}
    if args.scenario_id not in by_id:
        return usage(f"unknown scenario id: {args.scenario_id}; 'harness list' shows the ids")
    scenario = by_id[args.scenario_id]
    guard = effective_guard(scenario, args.guard)  # as `harness run` would run it
    result = run_scenario(scenario, guard=guard)
    if args.mermaid:
        from harness.run._sequence import sequence

        lines = ["```mermaid", *sequence(result.observation), "```"]
    else:
        lines = transcript(result.observation, guard, result.mismatches)
    print("\n".join(lines))
    # The exit code `harness run` would give this one scenario (without golden snapshots).
    if result.status == "pass":
        return EXIT_OK
    return EXIT_HANG if result.observation.outcome == "hang" else EXIT_FAILED
