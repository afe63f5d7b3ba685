"""`harness run`: choose the runtime, run the scenarios, print one line each and a total,
and turn the verdicts into an exit code."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from harness._exit import EXIT_FAILED, EXIT_HANG, EXIT_OK, EXIT_USAGE, _choose, _invalid, _usage
from harness._seam import DEFAULT_BACKSTOP

if TYPE_CHECKING:
    from harness._results import Ran
    from harness.adapters import Adapter, Expectations
    from harness.run import Result
    from harness.scenario import Scenario

# The real clock, for --junit's timings, out of reach of a test that freezes time with
# freezegun (it swaps every module attribute that is a clock function, not a dict's value).
_REAL = {"clock": time.perf_counter}


def run(args: argparse.Namespace, scenarios: list[Scenario]) -> int:
    from harness.adapters import AdapterError, Expectations, ExpectationsError, open_adapter

    by_id = {s.id: s for s in scenarios}
    picked = _choose(args.ids, scenarios)
    if picked is None:
        return EXIT_USAGE
    chosen: list[Scenario] = picked
    if args.shard is not None:
        from harness._results import in_shard, parse_shard

        try:
            k, n = parse_shard(args.shard)
        except ValueError as exc:
            return _usage(str(exc))
        chosen = in_shard(chosen, k, n)
        if not chosen:
            print(f"shard {k}/{n} holds none of the {len(by_id)} scenario(s); nothing to run")
            return EXIT_OK
    backstop = args.backstop if args.backstop is not None else DEFAULT_BACKSTOP
    if backstop <= 0:
        return _usage("--backstop must be a positive number of seconds")
    if args.chunk is not None and (args.chunk < 1 or not args.stream):
        return _usage("--chunk takes a positive number of characters, together with --stream")
    if args.guard is not None and args.adapter not in (None, "reference"):
        return _usage("--guard is a test seam of the reference runtime; drop it or --adapter")
    if args.junit is not None and not args.junit.parent.is_dir():
        return _usage(f"--junit {args.junit}: no such directory {args.junit.parent}")
    if args.snapshots is not None and not args.snapshots.is_dir():
        return _usage(f"--snapshots {args.snapshots}: not a directory of golden snapshots")
    try:
        adapter = open_adapter(args.adapter, args.scenarios)
    except AdapterError as exc:
        return _usage(str(exc))
    try:
        path = args.expectations or adapter.expectations
        if path is not None and (args.expectations is not None or path.is_file()):
            expectations = Expectations.load(path, by_id)
        else:  # an explicit file must exist; the adapter's own is optional
            expectations = Expectations.none()
    except ExpectationsError as exc:
        adapter.close()
        return _invalid(exc, "nothing was run")
    try:
        return _report(args, chosen, adapter, expectations, backstop)
    finally:
        adapter.close()


def _report(
    args: argparse.Namespace,
    chosen: list[Scenario],
    adapter: Adapter,
    expectations: Expectations,
    backstop: float,
) -> int:
    from harness._paths import scenarios_dir, snapshots_dir
    from harness._progress import Progress
    from harness._results import Ran
    from harness.adapters import ReferenceAdapter, runtime_of
    from harness.run import Wire, run_scenarios, summary

    golden = args.snapshots or snapshots_dir(args.scenarios)
    # Every run that gates something must compare texts: the shipped corpus, a snapshots
    # directory named on purpose, and any runtime but the reference (whose goldens they
    # are). Only the reference on a directory of the user's own may run without them.
    shipped = args.scenarios is None or args.scenarios.resolve() == scenarios_dir().resolve()
    require = shipped or args.snapshots is not None or not isinstance(adapter, ReferenceAdapter)
    results, verdicts, ran = [], [], []
    clock = _REAL["clock"]
    began = clock()
    id_width = max(len(s.id) for s in chosen)
    label_width = 10 if expectations.path is not None else 5
    runtime = runtime_of(adapter)
    # A long run watched on a terminal while its lines go elsewhere (--json, or stdout to a
    # file) gets a bar on stderr; on a terminal the lines themselves show the progress.
    quiet = args.json or not sys.stdout.isatty()
    bar = Progress(len(chosen), "run") if len(chosen) > 50 and quiet else None
    if not args.json:  # first, so a log shows what was run before what it did
        print(f"runtime: {adapter.name}: {runtime or '(the adapter does not say)'}", flush=True)
    for result in run_scenarios(
        chosen,
        backstop=backstop,
        guard=args.guard,
        wire=Wire(stream=args.stream, chunk=args.chunk),
        adapter=adapter,
        golden=golden if args.guard is None else None,  # a variant's snapshot is not golden
        require_golden=require,
    ):
        label, acceptable = expectations.verdict(result.scenario.id, result.status)
        results.append(result)
        verdicts.append((label, acceptable))
        ran.append(Ran(result, label, acceptable, clock() - began))
        began = clock()
        if bar is not None:
            bar.step(result.scenario.id, result.status)
        if args.json:
            continue
        head = f"{label:<{label_width}} {result.scenario.id:<{id_width}}  "
        if result.status == "skip":
            print(head + result.mismatches[0], flush=True)
            continue
        unpinned = "  (no golden snapshot)" if result.golden == "missing" else ""
        print(
            head + f"expected: {summary(result, expected=True)}  "
            f"observed: {summary(result, expected=False)}{unpinned}",
            flush=True,
        )
        reason = expectations.failing.get(result.scenario.id)
        for line in [*result.mismatches, *([f"known: {reason}"] if reason else [])]:
            print(f"      {line}")
        if result.observation.hang is not None and result.status != "pass":
            from harness.run._detect import render_hang

            for line in render_hang(result.observation.hang):
                print(f"      {line}")
    counts = {s: sum(r.status == s for r in results) for s in ("pass", "fail", "error", "skip")}
    if args.json:
        out = [{**r.to_json(), "verdict": v} for r, (v, _) in zip(results, verdicts, strict=True)]
        report = {"adapter": adapter.name, "runtime": runtime, "scenarios": out}
        print(json.dumps(report, indent=2, sort_keys=True))
    else:
        failed = counts["fail"] + counts["error"]
        line = f"{counts['pass']} passed, {failed} failed"
        line += f", {counts['skip']} skipped" if counts["skip"] else ""
        notes = [f"{counts['error']} of them errors"] if counts["error"] else []
        if missing := sum(r.golden == "missing" for r in results):
            notes.append(f"{missing} without a golden snapshot")
        notes += [
            f"{n} {label.lower()}" for label in ("KNOWN FAIL", "NEW FAIL", "NEW PASS")
            if (n := sum(v == label for v, _ in verdicts))
        ]  # fmt: skip
        print(_by_kind(results, verdicts))
        print(line + (f" ({'; '.join(notes)})" if notes else ""))
    _for_ci(args, ran, adapter.name, runtime)
    unexpected = [r for r, (_, ok) in zip(results, verdicts, strict=True) if not ok]
    if any(r.observation.outcome == "hang" for r in unexpected):
        return EXIT_HANG
    return EXIT_FAILED if unexpected else EXIT_OK


def _by_kind(results: list[Result], verdicts: list[tuple[str, bool]]) -> str:
    """How each kind fared: a runtime that passes only the service-level scenarios has not
    shown a whole delegation."""
    parts = []
    for kind in ("assembled", "service"):
        mine = [
            (r, v)
            for r, (v, _) in zip(results, verdicts, strict=True)
            if kind in r.scenario.features
        ]
        if not mine:
            continue
        passed = sum(r.status == "pass" for r, _ in mine)
        known = sum(v == "KNOWN FAIL" for _, v in mine)
        skipped = sum(r.status == "skip" for r, _ in mine)
        failed = len(mine) - passed - known - skipped
        counts = [f"{passed} of {len(mine)} passed"]
        counts += [f"{failed} failed"] if failed else []
        counts += [f"{known} known fail"] if known else []
        counts += [f"{skipped} skipped"] if skipped else []
        parts.append(f"{kind}: {', '.join(counts)}")
    return "; ".join(parts)


def _for_ci(args: argparse.Namespace, ran: list[Ran], adapter: str, runtime: str | None) -> None:
    from harness._results import github_annotations, junit, step_summary

    here = Path.cwd()
    if args.junit is not None:
        args.junit.write_bytes(junit(ran, adapter, runtime, here))
    if args.format == "github":
        for line in github_annotations(ran, here):
            print(line)
        summary_file = os.environ.get("GITHUB_STEP_SUMMARY")
        if summary_file:
            with open(summary_file, "a", encoding="utf-8") as out:
                out.write(step_summary(ran, adapter, runtime))
