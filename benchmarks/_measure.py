"""Timing helpers: a clock freezegun cannot freeze, sample statistics, interleaved sampling,
subprocess timing, peak RSS, and cProfile summaries."""

from __future__ import annotations

import cProfile
import gc
import pstats
import re
import resource
import statistics
import subprocess
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any

# harness.run.frozen_time() (freezegun) replaces every module-level reference to the time
# functions with a frozen fake, including `from time import perf_counter` in this module.
# A dict is not searched, so the real clock is kept in one.
_REAL: dict[str, Callable[[], int]] = {"ns": time.perf_counter_ns}


def now() -> float:
    """Seconds on the real monotonic clock, even inside frozen_time()."""
    return _REAL["ns"]() / 1e9


@dataclass(frozen=True)
class Stats:
    """Samples in seconds (or any unit), summarised by median and the 10th/90th percentiles."""

    samples: tuple[float, ...]

    @classmethod
    def of(cls, samples: Sequence[float]) -> Stats:
        if not samples:
            raise ValueError("no samples")
        return cls(tuple(samples))

    @property
    def n(self) -> int:
        return len(self.samples)

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    def _decile(self, k: int) -> float:
        if self.n < 2:
            return self.samples[0]
        return statistics.quantiles(self.samples, n=10, method="inclusive")[k - 1]

    @property
    def p10(self) -> float:
        return self._decile(1)

    @property
    def p90(self) -> float:
        return self._decile(9)


def ratio(a: Stats, b: Stats) -> float:
    """a / b, of the medians."""
    return a.median / b.median


@dataclass
class Bench:
    """One thing to time. `run` returns its own elapsed seconds (when it times only part of
    itself) or None (then the whole call is timed). `context` is entered once per block, e.g.
    frozen_time() around a batch, or a long-lived event loop."""

    name: str
    run: Callable[[], float | None]
    context: Callable[[], AbstractContextManager[Any]] = nullcontext


def sample_blocks(
    benches: Sequence[Bench], *, blocks: int, per_block: int, warmup: int = 3
) -> dict[str, Stats]:
    """Interleave the benches in blocks, rotating their order each block, so that drift in
    the machine (frequency, cache, other load) falls on all of them alike.

    The garbage collector stays on (it is part of the real cost), but what exists before
    sampling (imported modules, the peer's agents) is frozen out of it with gc.freeze(), so
    loading one contender does not make every collection of the others slower."""
    samples: dict[str, list[float]] = {b.name: [] for b in benches}
    gc.collect()
    gc.freeze()
    try:
        for block in range(blocks):
            shift = block % len(benches)
            for bench in [*benches[shift:], *benches[:shift]]:
                with bench.context():
                    for _ in range(warmup if block == 0 else 1):
                        bench.run()
                    gc.collect()
                    for _ in range(per_block):
                        start = now()
                        own = bench.run()
                        samples[bench.name].append(own if own is not None else now() - start)
    finally:
        gc.unfreeze()
    return {name: Stats.of(values) for name, values in samples.items()}


def timed_run(
    argv: Sequence[str], *, env: dict[str, str] | None = None, cwd: str | None = None
) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Wall seconds of one subprocess, from spawn to exit, and its captured output."""
    start = now()
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, check=False)
    return now() - start, done


def peak_rss_mb() -> float:
    """This process's peak resident set size so far, in MiB.

    Linux carries ru_maxrss across fork and exec: a child spawned by a 130 MB parent
    reports at least 130 MB whatever it does. VmHWM in /proc/self/status is the peak of
    the process's own address space, so it is read where it exists; ru_maxrss (KiB on
    Linux) is the fallback."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@dataclass
class Profile:
    """Where the time went: top functions by own time, and own time grouped by package."""

    total: float
    calls: int
    top: list[tuple[str, int, float, float]] = field(default_factory=list)  # name, n, own, cum
    groups: list[tuple[str, float]] = field(default_factory=list)  # group, own seconds
    # the harness's own functions by cumulative time: which of its steps the time is under
    harness: list[tuple[str, int, float, float]] = field(default_factory=list)


def profile_calls(fn: Callable[[], object], calls: int, *, top: int = 10) -> Profile:
    """cProfile over `calls` calls of fn."""
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(calls):
        fn()
    profiler.disable()
    return summarise(pstats.Stats(profiler), calls, top=top)


def summarise(stats: pstats.Stats, calls: int, *, top: int = 10) -> Profile:
    table: dict[tuple[str, int, str], tuple[Any, ...]] = stats.stats  # type: ignore[attr-defined]
    total = sum(row[2] for row in table.values())
    rows = sorted(table.items(), key=lambda item: item[1][2], reverse=True)
    groups: dict[str, float] = {}
    for (path, _, name), row in table.items():
        key = group_of(path, name)
        groups[key] = groups.get(key, 0.0) + row[2]
    # Below the entry points (run_scenario ... run_agent hold nearly everything): steps that
    # hold at most 60% of the total each.
    ours = [(k, r) for k, r in table.items() if "/harness/" in k[0] and r[3] <= 0.6 * total]
    ours.sort(key=lambda item: item[1][3], reverse=True)
    return Profile(
        total=total,
        calls=calls,
        top=[(_where(key), row[1], row[2], row[3]) for key, row in rows[:top]],
        groups=sorted(groups.items(), key=lambda item: item[1], reverse=True),
        harness=[(_where(key), row[1], row[2], row[3]) for key, row in ours[:top]],
    )


def _where(key: tuple[str, int, str]) -> str:
    path, line, name = key
    if path == "~":
        return name
    short = re.sub(r".*/(site-packages|lib/python3\.\d+)/", "", path)
    short = re.sub(r".*/work/main/", "", short)
    return f"{short}:{line}({name})"


_BUILTIN_GROUPS = (
    (
        ("posix.", "io.open", "_io.", "method 'write'", "method 'read'", "method '__exit__'"),
        "os/io",
    ),
    (("json", "_json"), "json"),
    (("select", "epoll", "socket"), "asyncio (selector)"),
    (("exec", "compile", "marshal", "__import__", "_imp."), "imports"),
)


def group_of(path: str, name: str) -> str:
    """A package name for a profiled function: site-packages/<pkg>, harness, benchmarks,
    stdlib:<module>, or a guess from a builtin's name."""
    if path == "~":
        for needles, group in _BUILTIN_GROUPS:
            if any(n in name for n in needles):
                return group
        return "other builtins"
    if "<frozen importlib" in path or "importlib" in path:
        return "imports"
    found = re.search(r"site-packages/([A-Za-z0-9_]+)", path)
    if found:
        return found.group(1)
    found = re.search(r"/(harness/(?:[a-z_]+/)?[a-z_]+)", path)
    if found:
        return found.group(1).removesuffix("/__init__")
    found = re.search(r"/(benchmarks|tests)/", path)
    if found:
        return found.group(1)
    found = re.search(r"lib/python3\.\d+/([A-Za-z0-9_]+)", path)
    if found:
        return f"stdlib:{found.group(1)}"
    return "other"
