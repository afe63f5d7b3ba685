"""What `harness run` and `harness report` share: the options that choose what runs and how,
checked into one plan, the inputs of the one run loop (harness.run.run_loop). Both commands
take the same options and judge the same way: known failures, required goldens."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.cli._exits import EXIT_OK, EXIT_USAGE, invalid, usage
from harness.cli._selection import in_shard, named_scenarios, parse_shard

if TYPE_CHECKING:
    from harness.adapters import Adapter, Expectations
    from harness.contract import RunOptions
    from harness.run import Ran
    from harness.scenario import Scenario

# Kept in step with the reference adapter's GUARDS by a test (tests/test_mutants.py); listed
# here so the parser does not import the runtime.
GUARD_NAMES = (
    "runtime-ownership",
    "none",
    "delegation-depth",
    "tool-only",
    "after-intent",
    "id-equality",
    "approve-any",
    "other-words",
)
DEFAULT_GUARD = GUARD_NAMES[0]
# harness.contract.APIS (kept in step by tests/test_sdk_wires.py).
API_NAMES = ("chat-completions", "anthropic-messages", "openai-responses", "gemini-generate")
# harness.run.LEVELS, lowest first (kept in step by tests/test_levels.py).
LEVEL_NAMES = ("live", "rule", "upstream")


def add_options(command: Any) -> None:
    """The options that choose what runs and how, as `run` and `report` both take them."""
    add = command.add_argument
    add("ids", nargs="*", metavar="SCENARIO_ID", help="scenario ids (default: all)")
    add(
        "--adapter",
        default=None,
        metavar="SPEC",
        help="the runtime under test: reference (default), node-dsh, claude-code, qwen-code, "
        "opencode, codex; over ACP: claude-code-acp, qwen-code-acp, opencode-acp, codex-acp, "
        "gemini-cli-acp; a Python framework in-process: openai-agents, deepagents, "
        "google-adk(-single-turn), pydantic-ai(-deferred), smolagents; "
        "jsonl:COMMAND (any process speaking the JSON-lines protocol), acp:COMMAND (any agent "
        "speaking ACP) or module:factory (a Python adapter)",
    )
    add(
        "--expectations",
        type=Path,
        default=None,
        metavar="FILE",
        help="known failures of the adapter (default: its own file, if it has one)",
    )
    add(
        "--snapshots",
        type=Path,
        default=None,
        metavar="DIR",
        help="golden snapshots to compare each observation with (default: snapshots/ "
        "beside the scenarios)",
    )
    add(
        "--backstop",
        type=float,
        default=None,
        metavar="SECONDS",
        help="stop a runtime that shows no progress (no request to the fake, no output) "
        "for this long; not a limit on a scenario's length (default: 60)",
    )
    add(
        "--guard",
        choices=GUARD_NAMES,
        default=None,
        metavar="NAME",
        help="run the scenarios that do not name a guard of their own under a caller-check "
        "guard (test-only unless runtime-ownership, the default): " + ", ".join(GUARD_NAMES),
    )
    add("--stream", action="store_true", help="stream replies as SSE deltas")
    add(
        "--api",
        choices=API_NAMES,
        default=API_NAMES[0],
        help="the API the reference runtime's model client speaks: its own Chat Completions "
        "client (the default), or the official anthropic, openai or google-genai SDK in its "
        "place, on Messages, Responses or Gemini's generateContent (the test extra's)",
    )
    add(
        "--chunk",
        type=int,
        default=None,
        metavar="N",
        help="with --stream: N characters per delta (default: the scenario's stream_chunk, "
        "else each string whole; 1: one character at a time)",
    )
    add(
        "--level",
        choices=LEVEL_NAMES,
        default=LEVEL_NAMES[-1],
        help="the conformance level that gates: live (nothing hangs and no question is lost: "
        "a child's question refused or put to the human end), rule (the behaviour the "
        "decision asks for, in any words) or upstream (also upstream's codes, exact texts and "
        "goldens; the default). Each result says the highest level it holds either way",
    )
    add("--shard", default=None, metavar="K/N",
        help="run only shard K of N: a stable split by scenario id, so N jobs run every "
        "scenario exactly once")  # fmt: skip


@dataclass
class Plan:
    """A checked run: what runs, on which runtime, against which goldens."""

    chosen: list[Scenario]
    known_ids: frozenset[str]
    adapter: Adapter
    expectations: Expectations
    options: RunOptions  # backstop, requested guard, wire
    level: str  # the conformance level that gates (harness.run.LEVELS)
    golden: Path
    # Every run that gates something must compare texts (see plan()).
    require_golden: bool
    # No id was named: the whole corpus (or a shard of it) runs, so a golden file that
    # names no scenario is a stray, and fails the run.
    whole: bool

    def results(self) -> Iterator[Ran]:
        """Run every chosen scenario through the run loop; each judged and labelled."""
        from harness.run import run_loop

        return run_loop(
            self.chosen,
            self.adapter,
            self.options,
            golden=self.golden,
            require_golden=self.require_golden,
            expectations=self.expectations,
            level=self.level,
        )

    def unknown_goldens(self) -> list[Path]:
        """Files in the goldens directory that are no scenario's golden snapshot."""
        if not self.whole or not self.golden.is_dir():
            return []
        return sorted(
            p
            for p in self.golden.iterdir()
            if not p.name.startswith(".")
            and not (p.suffix == ".json" and p.stem in self.known_ids and p.is_file())
        )

    def close(self) -> None:
        self.adapter.close()


def plan(args: argparse.Namespace, scenarios: list[Scenario]) -> Plan | int:
    """The run the options describe, or an exit code once the mistake is said."""
    from harness._paths import scenarios_dir, snapshots_dir
    from harness.adapters import (
        AdapterError,
        Expectations,
        ExpectationsError,
        open_adapter,
    )
    from harness.contract import DEFAULT_BACKSTOP, RunOptions, Wire, is_reference, release_of

    backstop = args.backstop if args.backstop is not None else DEFAULT_BACKSTOP
    if backstop <= 0:
        return usage("--backstop must be a positive number of seconds")
    if args.chunk is not None and (args.chunk < 1 or not args.stream):
        return usage("--chunk takes a positive number of characters, together with --stream")
    # The decision named explicitly is the default: it means the same everywhere.
    guard = None if args.guard == DEFAULT_GUARD else args.guard
    if guard is not None and args.adapter not in (None, "reference"):
        return usage("--guard is a test seam of the reference runtime; drop it or --adapter")
    if args.api != API_NAMES[0] and args.adapter not in (None, "reference"):
        return usage("--api is the reference runtime's model client; a foreign runtime "
                     "speaks its own API: drop --api or --adapter")  # fmt: skip
    if args.snapshots is not None and not args.snapshots.is_dir():
        return usage(f"--snapshots {args.snapshots}: not a directory of golden snapshots")
    picked = named_scenarios(args.ids, scenarios)
    if picked is None:
        return EXIT_USAGE
    chosen: list[Scenario] = picked
    if args.shard is not None:
        try:
            k, n = parse_shard(args.shard)
        except ValueError as exc:
            return usage(str(exc))
        chosen = in_shard(chosen, k, n)
        if not chosen:  # nothing to start an adapter for, and nothing failed
            print(f"shard {k}/{n} holds none of the {len(scenarios)} scenario(s); nothing to run")
            return EXIT_OK
    try:
        adapter = open_adapter(args.adapter, args.scenarios)
    except AdapterError as exc:
        return usage(str(exc))
    by_id = {s.id: s for s in scenarios}
    try:
        path = args.expectations or adapter.expectations
        if path is not None and (args.expectations is not None or path.is_file()):
            expectations = Expectations.load(path, by_id, release_of(adapter))
        else:  # an explicit file must exist; the adapter's own is optional
            expectations = Expectations.none()
    except ExpectationsError as exc:
        adapter.close()
        return invalid(exc, "nothing was run")
    # Every run that gates something must compare texts: the shipped corpus, a snapshots
    # directory named on purpose, and any runtime but the reference (whose goldens they
    # are). Only the reference on a directory of the user's own may run without them.
    shipped = args.scenarios is None or args.scenarios.resolve() == scenarios_dir().resolve()
    require = shipped or args.snapshots is not None or not is_reference(adapter)
    return Plan(
        chosen=chosen,
        known_ids=frozenset(by_id),
        adapter=adapter,
        expectations=expectations,
        options=RunOptions(
            backstop, guard, Wire(stream=args.stream, chunk=args.chunk, api=args.api)
        ),
        level=args.level,
        golden=args.snapshots or snapshots_dir(args.scenarios),
        require_golden=require,
        whole=not args.ids,
    )
