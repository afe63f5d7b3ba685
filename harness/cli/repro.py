"""`harness repro SCENARIO_ID`: one scenario's transcript up to where it stopped, then any
hang and the verdict; or, with `--mermaid`, its sequence diagram (the reference runtime's
durable logs). On the reference runtime, or `--adapter` another (a CLI's transcript is what
its own output said, in the order read). It exits as `harness run` would for that scenario,
without golden snapshots, judged at `--level` against the adapter's known failures."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from harness.cli._exits import EXIT_FAILED, EXIT_HANG, EXIT_OK, invalid, usage
from harness.cli._options import GUARD_NAMES, LEVEL_NAMES
from harness.cli._selection import load_corpus
from harness.contract import release_of, runtime_of

if TYPE_CHECKING:
    from harness.scenario import Scenario


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
        "--adapter",
        default=None,
        metavar="SPEC",
        help="the runtime under test, as `harness run --adapter` takes it (default: reference)",
    )
    parser.add_argument(
        "--level",
        choices=LEVEL_NAMES,
        default=LEVEL_NAMES[-1],
        help="with --adapter: the level that gates, as `harness run --level` (default upstream)",
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
    if args.adapter not in (None, "reference"):
        if args.guard is not None or args.mermaid:
            what = "--guard" if args.guard is not None else "--mermaid"
            return usage(f"{what} is the reference runtime's (its guard seam, its durable logs); "
                         f"drop it or --adapter")  # fmt: skip
        return _foreign(args, scenario, set(by_id))
    guard = effective_guard(scenario, args.guard)  # as `harness run` would run it
    result = run_scenario(scenario, guard=guard)
    if args.mermaid:
        from harness.run._sequence import sequence

        lines = ["```mermaid", *sequence(result.observation), "```"]
    else:
        lines = transcript(result.observation, f"under guard {guard}", result.mismatches)
    print("\n".join(lines))
    # The exit code `harness run` would give this one scenario (without golden snapshots).
    if result.status == "pass":
        return EXIT_OK
    return EXIT_HANG if result.observation.outcome == "hang" else EXIT_FAILED


def _foreign(args: argparse.Namespace, scenario: Scenario, known_ids: set[str]) -> int:
    """The scenario on a foreign runtime: its transcript, and the verdict at the rule's
    level, where a runtime's known failure is said as such."""
    from harness.adapters import AdapterError, Expectations, ExpectationsError, open_adapter
    from harness.run import run_scenario
    from harness.run._repro import transcript

    try:
        adapter = open_adapter(args.adapter, args.scenarios)
    except AdapterError as exc:
        return usage(str(exc))
    try:
        path = adapter.expectations
        release = release_of(adapter)
        known = (Expectations.load(path, known_ids, release) if path is not None and path.is_file()
                 else Expectations.none())  # fmt: skip
        result = run_scenario(scenario, adapter=adapter, level=args.level)
    except ExpectationsError as exc:
        return invalid(exc, "nothing was run")
    finally:
        adapter.close()
    lines = transcript(result.observation, f"on {runtime_of(adapter)}", result.mismatches)
    label, acceptable = known.verdict(scenario.id, result.status, args.level)
    reason = known.reason(scenario.id, args.level)
    if reason is not None and result.status != "pass":
        lines.append(f"{label.lower()}: {reason}")
    print("\n".join(lines))
    if acceptable:  # a pass, a skip, or a known failure: as `harness run` exits
        return EXIT_OK
    return EXIT_HANG if result.observation.outcome == "hang" else EXIT_FAILED
