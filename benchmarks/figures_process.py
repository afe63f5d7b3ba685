"""Figures 5 and 7, whole processes: the test suite's wall time, tier by tier, and the CLI's
cold start."""

from __future__ import annotations

import os
import pstats
import re
import sys
import tempfile
from pathlib import Path

from benchmarks._measure import Stats, summarise, timed_run
from benchmarks._report import Check, Section, num, prof_share, profile_lines, times

ROOT = Path(__file__).resolve().parent.parent
_DURATION = re.compile(r"^\s*([\d.]+)s (setup|call|teardown)\s+([^:\s]+)::")
_SUMMARY = re.compile(r"^=* ?(\d+ (?:passed|failed|errors?)\b.*?) in [\d.]+s", re.MULTILINE)


# (label, pytest arguments, target seconds): the README's commands. The inner loop (what
# starts no process); the default run (both tiers, no real runtime, nothing that runs
# alone); the tests that start the real runtimes; and the default run on one process, for
# where its time goes.
INNER = "inner loop: pytest -n auto -m 'not slow'"
DEFAULT = "default: pytest -n auto"
SERIAL = "default: pytest -n 0"
RUNS = [
    (INNER, ["-n", "auto", "-m", "not slow"], 8.0),
    (DEFAULT, ["-n", "auto"], 15.0),
    (
        "CI's next step: pytest -n auto -m 'cli or package'",
        ["-n", "auto", "-m", "cli or package"],
        None,
    ),
    (SERIAL, ["-n", "0"], None),
]
DEFAULT_OVER_INNER = 2.0  # issue 44: the default run at most twice the inner loop


def suite(*, repeats: int) -> Section:
    env = {**os.environ, "CI": "true"}  # CI: snapshots are never written
    walls: dict[str, list[float]] = {label: [] for label, _, _ in RUNS}
    per_file: dict[str, list[float]] = {}
    outcomes: dict[str, str] = {}
    for _ in range(repeats):
        for label, args, _ in RUNS:
            argv = [sys.executable, "-m", "pytest", *args, "-p", "no:cacheprovider", "-q",
                    "--durations=0"]  # fmt: skip
            seconds, done = timed_run(argv, env=env, cwd=str(ROOT))
            walls[label].append(seconds)
            summaries = _SUMMARY.findall(done.stdout)
            outcomes[label] = summaries[-1] if summaries else f"exit {done.returncode}"
            failed = re.findall(r"^(?:FAILED|ERROR) (\S+)", done.stdout, re.MULTILINE)
            if failed:  # a suite that is not green must say which test, not just how many
                outcomes[label] += f" ({', '.join(f'`{name}`' for name in failed)})"
            if label == SERIAL:
                files: dict[str, float] = {}
                for line in done.stdout.splitlines():
                    found = _DURATION.match(line)
                    if found:
                        name = found.group(3)
                        files[name] = files.get(name, 0.0) + float(found.group(1))
                for name, value in files.items():
                    per_file.setdefault(name, []).append(value)
    stats = {label: Stats.of(v) for label, v in walls.items()}
    section = Section(
        "5. The test suite",
        "`CI=true python -m pytest ARGS -p no:cacheprovider -q --durations=0` as a subprocess "
        "from the repository root (so nothing is written), in turn for each ARGS below, "
        f"{repeats} time(s) each; wall time from spawn to exit. The inner loop is "
        "everything that starts no process (the `slow` marker, set per module in "
        "tests/conftest.py, marks the rest); the default run leaves out the tests marked "
        "`cli` (Node: a real agent CLI, upstream's dsh, the Node SDKs), `load` (serve under "
        "load and the benchmarks' quick run, run alone) and `package` (the built wheel); "
        "-n auto is 2 workers on this machine. Last outcomes: "
        + "; ".join(f"{label}: {outcomes[label]}" for label, _, _ in RUNS)
        + ".",
    )
    section.stats_table([(label, stats[label]) for label, _, _ in RUNS], unit="s")
    for label, _, target in RUNS:
        if target is not None:
            s = stats[label]
            section.checks.append(
                Check(f"5 {label}", s.median, target, f"{num(s.median)} s", f"<= {num(target)} s")
            )
    over = stats[DEFAULT].median / stats[INNER].median
    section.checks.append(
        Check("5 default run / inner loop", over, DEFAULT_OVER_INNER, times(over),
              f"<= {num(DEFAULT_OVER_INNER)}x")
    )  # fmt: skip
    slowest = sorted(((Stats.of(v).median, f) for f, v in per_file.items()), reverse=True)
    in_tests = sum(v for v, _ in slowest)
    serial = stats[SERIAL].median
    section.dominates += [
        f"Under -n 0 the tests themselves account for {num(in_tests)} s of the "
        f"{num(serial)} s (pytest's --durations, setup + call + teardown, median "
        f"per file); the rest ({num(serial - in_tests)} s) is interpreter start, "
        "plugin loading, collection (which imports the harness and loads every scenario) "
        "and pytest's own work per test. Slowest files:",
        "",
        "| test file | seconds | share of test time |",
        "|---|---|---|",
        *[f"| `{f}` | {num(v)} | {prof_share(v, in_tests)} |" for v, f in slowest[:10]],
        "",
    ]
    return section


def cold_start(*, runs: int, warmup: int = 2) -> Section:
    harness = Path(sys.executable).with_name("harness")
    with tempfile.TemporaryDirectory(prefix="bench-pycache-") as cache:
        # The same command with a bytecode cache kept outside the tree: this environment
        # may set PYTHONDONTWRITEBYTECODE, so an editable harness/ is compiled every start.
        cached = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        cached["PYTHONPYCACHEPREFIX"] = cache
        commands = {
            "python -c pass": ([sys.executable, "-c", "pass"], None),
            "harness list": ([str(harness), "list"], None),
            "harness run": ([str(harness), "run"], None),
            "harness list, bytecode cache on": ([str(harness), "list"], cached),
        }
        if not warmup:  # nothing would fill the cache
            del commands["harness list, bytecode cache on"]
        samples: dict[str, list[float]] = {name: [] for name in commands}
        for i in range(warmup + runs):  # interleaved; the warm-up runs fill the caches
            for name, (argv, env) in commands.items():
                seconds, done = timed_run(argv, env=env)
                if done.returncode != 0:
                    raise RuntimeError(f"{name} failed: {done.stderr.strip()[-500:]}")
                if i >= warmup:
                    samples[name].append(seconds)
    stats = {name: Stats.of(v) for name, v in samples.items()}
    dont_write = os.environ.get("PYTHONDONTWRITEBYTECODE") or "unset"
    section = Section(
        "7. CLI cold start",
        f"Each command as a fresh subprocess, interleaved, {runs} timed run(s) each after "
        f"{warmup} warm-up run(s) (page cache warm, as in a developer's loop); wall time from "
        f"spawn to exit. `harness` is `{harness}`, the venv's console script. The checked "
        f"figure runs in this environment as it is (PYTHONDONTWRITEBYTECODE={dont_write}); "
        "the 'bytecode cache on' row unsets it and keeps the cache in a temporary "
        "PYTHONPYCACHEPREFIX, filled by the warm-up runs.",
    )
    section.stats_table(list(stats.items()))
    listed, bare = stats["harness list"], stats["python -c pass"]
    section.checks.append(
        Check("7 `harness list` cold start", listed.median, 0.300,
              f"{num(listed.median * 1e3)} ms", "<= 300 ms")
    )  # fmt: skip
    ran = stats["harness run"].median / listed.median
    section.checks.append(
        Check("7 `harness run` (the shipped corpus) / `harness list`", ran, 2.0, times(ran),
              "<= 2x")
    )  # fmt: skip
    section.ratios.append(("harness list / python -c pass", listed.median / bare.median))
    if "harness list, bytecode cache on" in stats:
        cached_list = stats["harness list, bytecode cache on"]
        section.ratios += [
            ("harness list, bytecode cache on / python -c pass", cached_list.median / bare.median),
            ("harness list, bytecode cache on / harness list", cached_list.median / listed.median),
        ]
    if warmup and not section.checks[0].ok:  # --quick (no warm-up) explains nothing
        section.dominates += _why_slow(harness, "list", listed.median)
    if warmup and not section.checks[1].ok:
        section.dominates += _why_slow(harness, "run", stats["harness run"].median)
    return section


def _why_slow(harness: Path, command: str, wall: float) -> list[str]:
    """-X importtime (imports by top-level package) and cProfile (everything) of one run."""
    _, done = timed_run([sys.executable, "-X", "importtime", str(harness), command])
    by_package: dict[str, float] = {}
    for line in done.stderr.splitlines():
        parts = line.removeprefix("import time:").split("|")
        if len(parts) == 3 and parts[0].strip().isdigit():
            package = parts[2].strip().split(".")[0]
            by_package[package] = by_package.get(package, 0.0) + int(parts[0]) / 1e6
    imports = sum(by_package.values())
    top = sorted(by_package.items(), key=lambda item: item[1], reverse=True)[:10]
    with tempfile.TemporaryDirectory(prefix="bench-") as tmp:
        out = Path(tmp) / f"{command}.prof"
        timed_run([sys.executable, "-m", "cProfile", "-o", str(out), str(harness), command])
        prof = summarise(pstats.Stats(str(out)), 1)
    return [
        f"`python -X importtime` on one `harness {command}`: {num(imports * 1e3)} ms of imports "
        f"of the {num(wall * 1e3)} ms median (self time summed by top-level package; "
        "importtime inflates it a little). Largest:",
        "",
        ", ".join(f"{name} {num(s * 1e3)} ms" for name, s in top) + ".",
        "",
        *profile_lines(f"the whole `harness {command}` (imports included)", prof, top=10),
    ]
