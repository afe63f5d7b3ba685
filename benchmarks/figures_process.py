"""Figures 5 and 7, whole processes: the default test suite's wall time, and the CLI's cold
start."""

from __future__ import annotations

import os
import pstats
import re
import sys
import tempfile
from pathlib import Path

from benchmarks._measure import Stats, summarise, timed_run
from benchmarks._report import Check, Section, num, prof_share, profile_lines

ROOT = Path(__file__).resolve().parent.parent
_DURATION = re.compile(r"^\s*([\d.]+)s (setup|call|teardown)\s+([^:\s]+)::")
_SUMMARY = re.compile(r"^=* ?(\d+ (?:passed|failed|errors?)\b.*?) in [\d.]+s", re.MULTILINE)


def suite(*, repeats: int) -> Section:
    env = {**os.environ, "CI": "true"}  # CI: snapshots are never written
    walls: dict[str, list[float]] = {"0": [], "2": []}
    per_file: dict[str, list[float]] = {}
    outcome = ""
    for _ in range(repeats):
        for workers in walls:
            argv = [sys.executable, "-m", "pytest", "-n", workers, "-p", "no:cacheprovider",
                    "-q", "--durations=0"]  # fmt: skip
            seconds, done = timed_run(argv, env=env, cwd=str(ROOT))
            walls[workers].append(seconds)
            summaries = _SUMMARY.findall(done.stdout)
            outcome = summaries[-1] if summaries else f"exit {done.returncode}"
            if workers == "0":
                files: dict[str, float] = {}
                for line in done.stdout.splitlines():
                    found = _DURATION.match(line)
                    if found:
                        name = found.group(3)
                        files[name] = files.get(name, 0.0) + float(found.group(1))
                for name, value in files.items():
                    per_file.setdefault(name, []).append(value)
    stats = {w: Stats.of(v) for w, v in walls.items()}
    section = Section(
        "5. The default test suite",
        "`CI=true python -m pytest -n N -p no:cacheprovider -q --durations=0` as a subprocess "
        f"from the repository root (so nothing is written), alternating -n 0 and -n 2, "
        f"{repeats} time(s) each; wall time from spawn to exit. Last outcome: {outcome}.",
    )
    section.stats_table([("pytest -n 0", stats["0"]), ("pytest -n 2", stats["2"])], unit="s")
    for workers, s in stats.items():
        section.checks.append(
            Check(f"5 pytest -n {workers}", s.median, 3.0, f"{num(s.median)} s", "<= 3 s")
        )
    section.ratios.append(("-n 2 / -n 0", stats["2"].median / stats["0"].median))
    slowest = sorted(((Stats.of(v).median, f) for f, v in per_file.items()), reverse=True)
    in_tests = sum(v for v, _ in slowest)
    section.dominates += [
        f"Under -n 0 the tests themselves account for {num(in_tests)} s of the "
        f"{num(stats['0'].median)} s (pytest's --durations, setup + call + teardown, median "
        f"per file); the rest ({num(stats['0'].median - in_tests)} s) is interpreter start, "
        "plugin loading and collection (which imports the harness and loads every scenario). "
        "Slowest files:",
        "",
        "| test file | seconds | share of test time |",
        "|---|---|---|",
        *[f"| `{f}` | {num(v)} | {prof_share(v, in_tests)} |" for v, f in slowest[:10]],
        "",
        "When this was written, test_scenarios.py ran every scenario over four wires "
        "in-process and most other slow files started processes (pytester sessions, the CLI, "
        "JSON-lines adapters, `harness serve`, runs under other hash seeds) or waited on "
        "purpose (adapter timeouts). -n 2 can at best halve the sum on 2 cores.",
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
    section.ratios.append(("harness list / python -c pass", listed.median / bare.median))
    if "harness list, bytecode cache on" in stats:
        cached_list = stats["harness list, bytecode cache on"]
        section.ratios += [
            ("harness list, bytecode cache on / python -c pass", cached_list.median / bare.median),
            ("harness list, bytecode cache on / harness list", cached_list.median / listed.median),
        ]
    if warmup and not section.checks[0].ok:  # --quick (no warm-up) explains nothing
        section.dominates += _why_slow(harness, listed.median)
    return section


def _why_slow(harness: Path, wall: float) -> list[str]:
    """-X importtime (imports by top-level package) and cProfile (everything) of one run."""
    _, done = timed_run([sys.executable, "-X", "importtime", str(harness), "list"])
    by_package: dict[str, float] = {}
    for line in done.stderr.splitlines():
        parts = line.removeprefix("import time:").split("|")
        if len(parts) == 3 and parts[0].strip().isdigit():
            package = parts[2].strip().split(".")[0]
            by_package[package] = by_package.get(package, 0.0) + int(parts[0]) / 1e6
    imports = sum(by_package.values())
    top = sorted(by_package.items(), key=lambda item: item[1], reverse=True)[:10]
    with tempfile.TemporaryDirectory(prefix="bench-") as tmp:
        out = Path(tmp) / "list.prof"
        timed_run([sys.executable, "-m", "cProfile", "-o", str(out), str(harness), "list"])
        prof = summarise(pstats.Stats(str(out)), 1)
    return [
        f"`python -X importtime` on one `harness list`: {num(imports * 1e3)} ms of imports "
        f"of the {num(wall * 1e3)} ms median (self time summed by top-level package; "
        "importtime inflates it a little). Largest:",
        "",
        ", ".join(f"{name} {num(s * 1e3)} ms" for name, s in top) + ".",
        "",
        *profile_lines("the whole `harness list` (imports included)", prof, top=10),
    ]
