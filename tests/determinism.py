"""`python -m tests.determinism`: run the tests that pin snapshots twice (`--whole-suite`:
every test), varying everything a snapshot must not depend on, and diff the snapshot bytes
each run produced.

Only the modules in SNAPSHOT_TESTS compare against snapshots/ (tests/test_determinism.py
checks that no other module does), so by default only they run: the rest of the suite
compares no snapshot bytes, and CI runs it once anyway, in its own order and hash seed.

Run a: PYTHONHASHSEED=0, `-n 0`, `--shuffle-seed A`. Run b: another hash seed, `-n 2`,
`--shuffle-seed B`. Each run keeps, through `--harness-observed`, the text of every
snapshot comparison, one file per test (several tests pin one scenario over different
wires). Every kept file must equal, byte for byte, the same test's file from the other
run, and the committed `snapshots/<scenario id>.json`; every committed snapshot must have
been pinned by some test in each run.

Exit status: the first failing pytest run's, else 1 on any difference, else 0. Nothing
is written outside a temporary directory: no cache, no bytecode, no snapshot (the runs
are told CI=true, under which the harness's plugin never writes one).
"""

from __future__ import annotations

import argparse
import difflib
import os
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The test modules that compare observations with snapshots/ (the scenario_snapshot fixture).
SNAPSHOT_TESTS = ("tests/test_scenarios.py",)
GOLDEN = ROOT / "snapshots"
SHOWN_DIFFERENCES = 5  # with their diffs; the rest are listed one line each
DIFF_LINES = 30  # per difference: enough to find the first differing lines
LISTED_DIFFERENCES = 20

# (scenario id, file name derived from the test node id) -> the bytes the test compared
Observed = dict[tuple[str, str], bytes]


@dataclass(frozen=True)
class Run:
    name: str
    hash_seed: int
    shuffle_seed: int
    workers: int

    def describe(self) -> str:
        return (
            f"run {self.name} (PYTHONHASHSEED={self.hash_seed}, -n {self.workers}, "
            f"--shuffle-seed {self.shuffle_seed})"
        )


@dataclass(frozen=True)
class Difference:
    what: str  # one line: which files, and how they differ
    diff: tuple[str, ...] = ()  # the unified diff, if both sides exist


def read_observed(directory: Path) -> Observed:
    if not directory.is_dir():
        return {}
    return {
        (path.parent.name, path.name): path.read_bytes()
        for path in sorted(directory.glob("*/*.json"))
    }


def read_golden(directory: Path) -> dict[str, bytes]:
    return {path.stem: path.read_bytes() for path in sorted(directory.glob("*.json"))}


def unified(old: bytes, new: bytes, old_name: str, new_name: str) -> tuple[str, ...]:
    lines = difflib.unified_diff(
        old.decode("utf-8", "replace").splitlines(keepends=True),
        new.decode("utf-8", "replace").splitlines(keepends=True),
        old_name,
        new_name,
    )
    out = [line.rstrip("\n") for line in lines]
    if not out:  # the bytes differ where decoded lines cannot show it (invalid UTF-8)
        pairs = enumerate(zip(old, new, strict=False))
        at = next((i for i, (x, y) in pairs if x != y), min(len(old), len(new)))
        out = [
            f"--- {old_name}",
            f"+++ {new_name}",
            f"@@ bytes differ from offset {at} ({len(old)} vs {len(new)} bytes); "
            "the lines look alike once decoded",
        ]
    return tuple(out)


def compare(
    golden: Mapping[str, bytes], runs: Mapping[str, Observed]
) -> tuple[list[Difference], int]:
    """Every difference between the runs' observed files and the golden ones, and how many
    files took part. Run-against-run differences come first: they are the nondeterminism."""
    found: list[Difference] = []
    names = list(runs)
    keys = sorted({key for observed in runs.values() for key in observed})
    for name in names:
        absent = [
            f"{scenario}/{test}" for scenario, test in keys if (scenario, test) not in runs[name]
        ]
        if absent:
            found.append(
                Difference(
                    f"{len(absent)} test(s) compared a snapshot in another run but not in run "
                    f"{name}, e.g. {', '.join(absent[:3])}"
                )
            )
    for scenario, test in keys:
        first, *others = [name for name in names if (scenario, test) in runs[name]]
        for name in others:
            a, b = runs[first][(scenario, test)], runs[name][(scenario, test)]
            if a != b:
                found.append(
                    Difference(
                        f"{scenario}/{test}: run {first} and run {name} differ",
                        unified(a, b, f"run {first}: {test}", f"run {name}: {test}"),
                    )
                )
    for name in names:
        pinned = {scenario for scenario, _ in runs[name]}
        for scenario in sorted(set(golden) - pinned):
            found.append(Difference(f"snapshots/{scenario}.json: no test pinned it in run {name}"))
        for (scenario, test), data in sorted(runs[name].items()):
            if scenario not in golden:
                found.append(
                    Difference(f"{scenario}/{test}: run {name} pinned a scenario with no golden")
                )
            elif data != golden[scenario]:
                found.append(
                    Difference(
                        f"{scenario}/{test}: run {name} differs from snapshots/{scenario}.json",
                        unified(
                            golden[scenario],
                            data,
                            f"snapshots/{scenario}.json",
                            f"run {name}: {scenario}/{test}",
                        ),
                    )
                )
    return found, len(golden) + sum(len(observed) for observed in runs.values())


def report(differences: Sequence[Difference]) -> list[str]:
    """The differences as bounded text: the first few with their diffs, then one line each."""
    lines = [f"determinism: {len(differences)} difference(s)"]
    for difference in differences[:SHOWN_DIFFERENCES]:
        lines.append(f"* {difference.what}")
        lines += difference.diff[:DIFF_LINES]
        if len(difference.diff) > DIFF_LINES:
            lines.append(f"  ... {len(difference.diff) - DIFF_LINES} more diff lines")
    rest = differences[SHOWN_DIFFERENCES:]
    lines += [f"* {difference.what}" for difference in rest[:LISTED_DIFFERENCES]]
    if len(rest) > LISTED_DIFFERENCES:
        lines.append(f"... and {len(rest) - LISTED_DIFFERENCES} more")
    return lines


def run_suite(run: Run, work: Path, pytest_args: Sequence[str]) -> tuple[int, Observed]:
    observed = work / run.name / "observed"
    (work / run.name).mkdir(parents=True)  # xdist puts each worker's basetemp inside
    command = [
        *(sys.executable, "-m", "pytest", "-p", "no:cacheprovider"),
        *("-n", str(run.workers), "--shuffle-seed", str(run.shuffle_seed)),
        *("--harness-observed", str(observed), "--basetemp", str(work / run.name / "tmp")),
        *pytest_args,
    ]
    env = {
        "PYTHONHASHSEED": str(run.hash_seed),
        # Belt and braces: a stray --snapshot-update (say, in PYTEST_ADDOPTS) cannot write.
        "CI": "true",
        "PYTHONDONTWRITEBYTECODE": "1",
        "HYPOTHESIS_STORAGE_DIRECTORY": str(work / run.name / "hypothesis"),
    }
    shown = [f"{k}={v}" for k, v in env.items() if k in ("PYTHONHASHSEED", "CI")]
    print(f"== {run.describe()}\n$ {shlex.join([*shown, 'python', *command[1:]])}", flush=True)
    status = subprocess.run(command, cwd=ROOT, env={**os.environ, **env}, check=False).returncode
    # A run killed by a signal exits as a shell would report it.
    return (128 - status if status < 0 else status), read_observed(observed)


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m tests.determinism",
        description="Run the tests that pin snapshots twice (hash seed, test order and "
        "worker count varied) and diff the snapshot bytes against each other and snapshots/.",
    )
    parser.add_argument(
        "--order-seeds", type=int, nargs=2, default=(1, 2), metavar=("A", "B"),
        help="--shuffle-seed of run a and of run b (default: 1 2)",
    )  # fmt: skip
    parser.add_argument(
        "--hash-seed", type=int, default=1234, metavar="N",
        help="PYTHONHASHSEED of run b; run a uses 0 (default: 1234)",
    )  # fmt: skip
    parser.add_argument(
        "--whole-suite", action="store_true",
        help="run every test, not only the modules that pin snapshots "
        f"({', '.join(SNAPSHOT_TESTS)})",
    )  # fmt: skip
    parser.add_argument(
        "pytest_args", nargs="*", metavar="-- PYTEST_ARG",
        help="passed to both pytest runs, after `--` (e.g. -x)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if args.hash_seed == 0:
        parser.error("--hash-seed must differ from run a's 0, or nothing varies")
    if args.order_seeds[0] == args.order_seeds[1]:
        parser.error("--order-seeds must differ, or the order does not vary")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    runs = [
        Run("a", hash_seed=0, shuffle_seed=args.order_seeds[0], workers=0),
        Run("b", hash_seed=args.hash_seed, shuffle_seed=args.order_seeds[1], workers=2),
    ]
    selected = [*args.pytest_args, *(() if args.whole_suite else SNAPSHOT_TESTS)]
    with tempfile.TemporaryDirectory(prefix="harness-determinism-") as tmp:
        results = {run.name: run_suite(run, Path(tmp), selected) for run in runs}
    differences, compared = compare(
        read_golden(GOLDEN), {name: observed for name, (_, observed) in results.items()}
    )
    failed = [(run, results[run.name][0]) for run in runs if results[run.name][0] != 0]
    if differences:
        print("\n".join(report(differences)), file=sys.stderr)
    for run, status in failed:
        print(f"determinism: {run.describe()}: pytest exited {status}", file=sys.stderr)
    if failed:
        return failed[0][1]
    if differences:
        return 1
    per_run = ", ".join(f"{len(observed)} in run {name}" for name, (_, observed) in results.items())
    print(
        f"determinism: OK: {compared} files byte-identical ({per_run}, "
        f"{compared - sum(len(o) for _, o in results.values())} in snapshots/) across "
        + " and ".join(run.describe() for run in runs)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
