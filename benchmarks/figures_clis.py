"""Figure 10: the agent CLIs, the harness's share of a scenario's wall time, and the whole
matrix's.

A CLI scenario is mostly the CLI: a Node process per phase, starting up, talking to the
fake, exiting. What the harness adds is around it (the scenario's folder, the CLI's config
and environment, the fake's loopback server, reading its output and logs back as an
observation). The share is one scenario's wall time through the adapter over the time the
CLI's own processes were alive in it (spawn to exit, the same argv, environment and
replies): what the CLI costs bare, run by hand against a fake that answers at once.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchmarks._measure import Stats, now, timed_run
from benchmarks._report import Check, Section, num, times
from harness.contract import RunOptions

CLIS = ("claude-code", "qwen-code", "opencode", "codex")
SCENARIO = "delegated-question-handoff"  # the mission's delegation, which every CLI runs
TARGET = 1.3
ROOT = Path(__file__).resolve().parents[1]


class _Lifetimes:
    """While `watching`, subprocess.Popen (the module's, so process-wide; the benchmark is
    the only thing running) is a subclass that remembers each process's lifetime, spawn to
    the first wait or poll that sees it ended: how the CLI runner starts and reaps its CLI."""

    def __init__(self) -> None:
        self.alive: list[float] = []

    @contextmanager
    def watching(self) -> Iterator[None]:
        import harness.adapters.clis.run as cli_run

        lifetimes = self.alive
        real = subprocess.Popen

        class Timed(real):  # type: ignore[valid-type,misc]
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                self._born, self._counted = now(), False
                super().__init__(*args, **kwargs)

            def _ended(self) -> None:
                if self.returncode is not None and not self._counted:
                    self._counted = True
                    lifetimes.append(now() - self._born)

            def wait(self, *args: Any, **kwargs: Any) -> Any:
                code = super().wait(*args, **kwargs)
                self._ended()
                return code

            def poll(self) -> Any:
                code = super().poll()
                self._ended()
                return code

        cli_run.subprocess.Popen = Timed  # type: ignore[attr-defined]
        try:
            yield
        finally:
            cli_run.subprocess.Popen = real  # type: ignore[attr-defined]


def _share(spec: str, runs: int) -> tuple[Stats, Stats] | str:
    from harness.adapters import AdapterError, open_adapter
    from harness.scenario import load_scenario, scenario_paths

    scenario = load_scenario(next(p for p in scenario_paths() if p.stem == SCENARIO))
    try:
        adapter = open_adapter(spec)
    except AdapterError as exc:
        return f"not run: {exc}"
    walls, bare = [], []
    lifetimes = _Lifetimes()
    try:
        adapter.run(scenario, RunOptions())  # warm: the install check, the CLI's caches
        for _ in range(runs):
            lifetimes.alive.clear()
            with lifetimes.watching():
                start = now()
                observed = adapter.run(scenario, RunOptions())
                walls.append(now() - start)
            if observed.outcome == "skipped" or not lifetimes.alive:
                return f"not run: {observed.error or 'no CLI process was started'}"
            bare.append(sum(lifetimes.alive))
    finally:
        adapter.close()
    return Stats.of(walls), Stats.of(bare)


def measure(*, quick: bool, runs: int) -> Section:
    section = Section(
        "10. The agent CLIs: the harness's share, and the matrix",
        f"`{SCENARIO}` through each CLI's adapter (`adapter.run`, the CLI installed and warmed "
        "by one untimed run), against the time the CLI's own processes were alive in the same "
        "run (each from spawn to exit: the same argv, environment and replies, which is what "
        "the CLI costs run by hand against a fake that answers at once). The share is wall "
        "over that; the rest is the harness's: the scenario's folder and the CLI's config, "
        "the fake's loopback server, and reading the CLI's output and logs back. Then the "
        "whole matrix, every runtime of adapters/matrix.json, once, as a subprocess, two "
        "columns at once as .ci/run runs it (`--jobs 2`).",
    )
    rows: list[tuple[str, Stats]] = []
    skipped = []
    for spec in CLIS:
        got = _share(spec, 1 if quick else runs)
        if isinstance(got, str):
            skipped.append(f"{spec}: {got}")
            continue
        wall, bare = got
        rows += [(f"{spec}: scenario through the adapter", wall),
                 (f"{spec}: the CLI's processes alone", bare)]  # fmt: skip
        value = wall.median / bare.median
        section.checks.append(
            Check(f"10 {spec}: scenario / the CLI alone", value, TARGET, times(value),
                  f"<= {num(TARGET)}x")
        )  # fmt: skip
    if rows:
        section.stats_table(rows, unit="s")
    section.notes += skipped
    if not quick:
        out = Path(tempfile.mkdtemp(prefix="matrix-bench-"))
        try:
            argv = [sys.executable, "-m", "harness", "matrix",
                    *(a for spec in ("reference", "node-dsh", *CLIS) for a in ("--adapter", spec)),
                    "--jobs", "2", "--format", "json",
                    "--output", str(out / "matrix.json")]  # fmt: skip
            seconds, done = timed_run(argv, cwd=str(ROOT))
        finally:
            shutil.rmtree(out, ignore_errors=True)
        section.stats_table([("the whole matrix (6 runtimes, --jobs 2, one run)",
                              Stats.of([seconds]))], unit="s")  # fmt: skip
        section.notes.append(f"The matrix run exited {done.returncode}.")
    return section
