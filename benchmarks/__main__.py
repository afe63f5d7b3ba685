"""`python -m benchmarks`: every figure of the benchmark suite in one run, written to
benchmarks/RESULTS.md (see README, "Benchmarks")."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from benchmarks._measure import now
from benchmarks._report import Section, cpu_times, load_during, render

GROUPS = ("delegation", "peer", "wires", "hang", "scale", "cli", "serve", "clis", "suite")
RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
SIZES = (
    # 600: at 200 the ours/floor medians moved by a tenth between runs on a shared 2-core
    # machine; at 600 by about 2%.
    ("--repeats", 600, "runs of each in-process delegation benchmark (figures 1-3)"),
    ("--wire-repeats", 200, "runs of each delegation and floor on the other wires (figure 9)"),
    ("--hang-runs", 50, "runs of each hang under the deadlock detector (figure 4)"),
    ("--timeout-runs", 3, "runs without the detector, ended by the 1 s backstop (figure 4)"),
    ("--suite-repeats", 2, "runs of the test suite per worker count (figure 5)"),
    ("--tree-repeats", 3, "fresh processes per delegation-tree size (figure 6a)"),
    ("--scenarios", 10_000, "small generated scenarios in one process (figure 6b)"),
    ("--cli-runs", 20, "cold starts of `harness list` and `python -c pass` (figure 7)"),
    ("--cli-scenario-runs", 5, "runs of one scenario through each agent CLI (figure 10)"),
    ("--serve-requests", 500, "requests per client to `harness serve` (figure 8)"),
)


def parse(argv: Sequence[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    p.add_argument(
        "--quick",
        action="store_true",
        help="tiny sizes, for the smoke test (skips the suite and the agent CLIs)",
    )
    for flag, default, what in SIZES:
        p.add_argument(flag, type=int, default=default, metavar="N", help=what)
    p.add_argument(
        "--skip", default="", metavar="GROUPS", help=f"groups to leave out: {','.join(GROUPS)}"
    )
    p.add_argument("--out", type=Path, default=RESULTS, metavar="FILE", help="default: %(default)s")
    args = p.parse_args(argv)
    args.skip = {g.strip() for g in args.skip.split(",") if g.strip()}
    unknown = args.skip - set(GROUPS)
    if unknown:
        p.error(f"unknown group(s) in --skip: {', '.join(sorted(unknown))}")
    if args.quick:
        args.skip.add("suite")  # it would run this command's own smoke test, and takes minutes
        args.skip.add("clis")  # real CLIs: installs and seconds per scenario
    return args


def plan(args: argparse.Namespace) -> list[tuple[str, Callable[[], list[Section]]]]:
    """Each group's figures, in the order they run. Imports are lazy so that --skip peer
    never imports pydantic-ai."""
    q = args.quick

    def delegation() -> list[Section]:
        from benchmarks import figures_delegation

        repeats = 6 if q else args.repeats
        return figures_delegation.measure(quick=q, repeats=repeats, peer="peer" not in args.skip)

    def wires() -> list[Section]:
        from benchmarks import figures_wires

        return [figures_wires.measure(quick=q, repeats=2 if q else args.wire_repeats)]

    def hang() -> list[Section]:
        from benchmarks import figures_hang

        return [figures_hang.measure(quick=q, repeats=args.hang_runs,
                                     timeout_runs=args.timeout_runs)]  # fmt: skip

    def scale() -> list[Section]:
        from benchmarks import figures_scale

        return [
            figures_scale.trees(quick=q, repeats=1 if q else args.tree_repeats),
            figures_scale.batch(quick=q, count=args.scenarios),
        ]

    def cli() -> list[Section]:
        from benchmarks import figures_process

        if q:
            return [figures_process.cold_start(runs=1, warmup=0)]
        return [figures_process.cold_start(runs=args.cli_runs)]

    def serve() -> list[Section]:
        from benchmarks import figures_serve

        return [figures_serve.measure(quick=q, requests=args.serve_requests)]

    def clis() -> list[Section]:
        from benchmarks import figures_clis

        return [figures_clis.measure(quick=q, runs=args.cli_scenario_runs)]

    def suite() -> list[Section]:
        from benchmarks import figures_process

        return [figures_process.suite(repeats=args.suite_repeats)]

    steps = {"delegation": delegation, "wires": wires, "hang": hang, "scale": scale, "cli": cli,
             "serve": serve, "clis": clis, "suite": suite}  # fmt: skip
    if "delegation" in args.skip:
        args.skip.add("peer")
    return [(name, step) for name, step in steps.items() if name not in args.skip]


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse(argv)
    started, start, cpu = datetime.now(UTC), now(), cpu_times()
    sections: list[Section] = []
    for name, step in plan(args):
        print(f"benchmarks: {name} ...", file=sys.stderr, flush=True)
        began = now()
        sections += step()
        print(f"benchmarks: {name} took {now() - began:.1f} s", file=sys.stderr, flush=True)
    # By figure number ("6a." after "5.", "10." after "9."), as the titles begin.
    sections.sort(key=lambda s: (int(s.title.split(".")[0].rstrip("ab")), s.title))
    command = shlex.join(["python", "-m", "benchmarks", *argv])
    if args.skip:
        sections.append(Section("Skipped", f"Groups not run: {', '.join(sorted(args.skip))}."))
    load = load_during(cpu, cpu_times())
    text = render(sections, command, started, now() - start, load)
    args.out.write_text(text, encoding="utf-8")
    for section in sections:
        for check in section.checks:
            print(f"{check.verdict}  {check.what}: {check.shown} (target {check.target})")
    print(f"benchmarks: wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
