"""RESULTS.md: the machine, the command, one section per figure with its tables, targets,
verdicts and, where a target is missed, what dominates."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

from benchmarks._measure import Profile, Stats

PACKAGES = (
    "httpx",
    "respx",
    "freezegun",
    "PyYAML",
    "jsonschema",
    "pydantic-ai-slim",
    "pydantic",
    "openai",
    "pytest",
    "pytest-xdist",
)


@dataclass(frozen=True)
class Check:
    """A figure against its target: PASS when value <= limit."""

    what: str
    value: float
    limit: float
    shown: str  # the value as printed, e.g. "2.31x" or "4.2 ms"
    target: str  # e.g. "<= 2.5x"

    @property
    def ok(self) -> bool:
        return self.value <= self.limit

    @property
    def verdict(self) -> str:
        return "PASS" if self.ok else "MISS"


@dataclass
class Section:
    title: str
    how: str
    tables: list[list[list[str]]] = field(default_factory=list)  # header row first
    checks: list[Check] = field(default_factory=list)
    ratios: list[tuple[str, float]] = field(default_factory=list)  # further comparisons
    dominates: list[str] = field(default_factory=list)  # markdown lines, shown on a miss
    notes: list[str] = field(default_factory=list)

    def stats_table(self, rows: list[tuple[str, Stats]], unit: str = "ms") -> None:
        head = ["figure", "n", f"median ({unit})", f"p10 ({unit})", f"p90 ({unit})"]
        scale = {"ms": 1e3, "s": 1.0, "us": 1e6}[unit]
        self.tables.append(
            [head]
            + [
                [name, str(s.n), num(s.median * scale), num(s.p10 * scale), num(s.p90 * scale)]
                for name, s in rows
            ]
        )


def num(value: float) -> str:
    """Three significant figures, without scientific notation for everyday sizes."""
    if value == 0:
        return "0"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}" if abs(value) >= 0.001 else f"{value:.2e}"


def times(value: float) -> str:
    return f"{num(value)}x"


def profile_lines(label: str, prof: Profile, *, top: int = 8, harness: bool = True) -> list[str]:
    """A cProfile summary as markdown: own time by package, then the top functions."""
    per_call = prof.total / max(prof.calls, 1) * 1e3
    lines = [
        f"cProfile, {label}: {prof.calls} call(s), {num(prof.total)} s of own time "
        f"({num(per_call)} ms per call, inflated by the profiler). Own time by package:",
        "",
        ", ".join(
            f"{group} {prof_share(seconds, prof.total)}" for group, seconds in prof.groups[:8]
        )
        + ".",
        "",
        "| function | calls | own (s) | cumulative (s) |",
        "|---|---|---|---|",
    ]
    lines += [f"| `{n}` | {c} | {num(own)} | {num(cum)} |" for n, c, own, cum in prof.top[:top]]
    if harness and prof.harness:
        lines += ["", "The harness's own steps below its entry points, by cumulative time:", ""]
        lines += ["| harness function | calls | cumulative (s) | share |", "|---|---|---|---|"]
        lines += [
            f"| `{n}` | {c} | {num(cum)} | {prof_share(cum, prof.total)} |"
            for n, c, _, cum in prof.harness[:top]
        ]
    return [*lines, ""]


def prof_share(part: float, total: float) -> str:
    return f"{100 * part / total:.0f}%" if total else "-"


def cpu_times() -> list[int]:
    """The machine's cumulative CPU times (/proc/stat: user nice system idle iowait irq
    softirq steal ...), or [] where there is no /proc."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            return [int(x) for x in stat.readline().split()[1:]]
    except (OSError, ValueError):
        return []


def load_during(before: list[int], after: list[int]) -> str:
    """How busy the machine was, and how much CPU the hypervisor took (steal), meanwhile."""
    delta = [b - a for a, b in zip(before, after, strict=False)]
    if len(delta) < 8 or not sum(delta):
        return "unknown"
    busy = sum(delta) - delta[3] - delta[4]
    return (
        f"{100 * busy / sum(delta):.0f}% of all cores busy, {100 * delta[7] / sum(delta):.1f}% "
        "stolen by the hypervisor (from /proc/stat)"
    )


def machine() -> list[tuple[str, str]]:
    return [
        ("CPU", _cpu_model()),
        ("cores", f"{os.cpu_count()} logical, {len(os.sched_getaffinity(0))} usable"),
        ("RAM", _ram()),
        ("OS", f"{_os_release()} ({platform.platform()})"),
        ("Python", f"{platform.python_implementation()} {sys.version.split()[0]}"),
        ("packages", ", ".join(f"{p} {_version(p)}" for p in PACKAGES)),
        ("tree", _git_tree()),
    ]


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _ram() -> str:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return f"{int(line.split()[1]) / 1024**2:.1f} GiB"
    except OSError:
        pass
    return "unknown"


def _os_release() -> str:
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip('"')
    except OSError:
        pass
    return platform.system()


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "(not installed)"


def _git_tree() -> str:
    """The commit measured, read-only, and whether the work tree differed from it."""
    root = Path(__file__).resolve().parent.parent

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)
        return done.stdout.strip() if done.returncode == 0 else ""

    commit = git("rev-parse", "--short", "HEAD")
    if not commit:
        return "not a git checkout"
    dirty = git("status", "--porcelain", "--untracked-files=no", "--", "harness")
    return f"commit {commit}" + (" with uncommitted changes in harness/" if dirty else "")


def render(
    sections: list[Section], command: str, started: datetime, seconds: float, load: str
) -> str:
    out = [
        "# Benchmark results",
        "",
        f"Written by `{command}` on {started.astimezone(UTC):%Y-%m-%d %H:%M} UTC; the whole run "
        f"took {seconds:.0f} s. Every figure is a median over n runs (p10 and p90 beside it), "
        "measured in this one run of the command; every comparison is a ratio of medians.",
        "",
        "## Machine",
        "",
        "| | |",
        "|---|---|",
        *[f"| {k} | {v} |" for k, v in machine()],
        f"| during the run | {load} |",
        "",
        "## Summary",
        "",
        "| figure | value | target | verdict |",
        "|---|---|---|---|",
    ]
    for section in sections:
        out += [f"| {c.what} | {c.shown} | {c.target} | {c.verdict} |" for c in section.checks]
    for section in sections:
        out += ["", f"## {section.title}", "", section.how, ""]
        for table in section.tables:
            out += _table(table)
        if section.checks or section.ratios:
            rows = [["comparison", "value", "target", "verdict"]]
            rows += [[c.what, c.shown, c.target, c.verdict] for c in section.checks]
            rows += [[what, times(value), "", ""] for what, value in section.ratios]
            out += _table(rows)
        out += [f"- {note}" for note in section.notes]
        if section.notes:
            out.append("")
        if section.dominates and not all(c.ok for c in section.checks):
            out += ["### What dominates", "", *section.dominates]
    return "\n".join(out).rstrip() + "\n"


def _table(rows: list[list[str]]) -> list[str]:
    head, *body = rows
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return lines + ["| " + " | ".join(row) + " |" for row in body] + [""]
