"""The suite beside a busy machine: `python -m tests.under_load` runs the real runtimes'
tests and their matrix cells with N CPU-bound processes running throughout, as on a shared
CI runner, and says what failed. A slow runtime is not a broken one: a timing assumption
that comes back (a limit on how long a run may take, rather than on how long it may show
no progress) fails here first.

    python -m tests.under_load                         # every runtime: cli tests, matrix
    python -m tests.under_load --runtime opencode      # one (CI runs this)
    python -m tests.under_load --step default --repeat 3   # the default run, three times

Steps, run in this order, each --repeat times:
- `default`: `pytest -n auto`, the default run (no agent CLI);
- `cli`: `pytest -n auto -m cli`: every `cli` test (the Node SDKs' too) when every runtime is
  chosen, else the chosen runtimes' test files;
- `matrix`: `harness matrix --jobs 2` over the chosen runtimes, checked cell by cell
  against adapters/matrix.json.
Exit status 0 when every run of every step passed, 1 otherwise, 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Each runtime of the matrix, and the test file of its own (the reference has none: its
# tests are the default run's).
RUNTIMES = {
    "reference": None,
    "node-dsh": "tests/process/test_node_dsh.py",
    "claude-code": "tests/clis/test_claude_code.py",
    "qwen-code": "tests/clis/test_qwen_code.py",
    "opencode": "tests/clis/test_opencode.py",
    "codex": "tests/clis/test_codex.py",
    # Over ACP: their cells alone (the family's own tests drive a Python agent, no runtime).
    "claude-code-acp": None,
    "qwen-code-acp": None,
    "opencode-acp": None,
    "codex-acp": None,
    "gemini-cli-acp": None,
    # In-process: their tests run in the default step.
    "openai-agents": None,
    "deepagents": None,
    "google-adk": None,
    "google-adk-single-turn": None,
    "pydantic-ai": None,
    "pydantic-ai-deferred": None,
    "smolagents": None,
}
STEPS = ("default", "cli", "matrix")
# A process that does nothing but count, forever: one core's worth of load each.
HOG = "while True: pass"


def parse(argv: Sequence[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m tests.under_load", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    p.add_argument("--hogs", type=int, default=2, metavar="N",
                   help="CPU-bound processes running throughout (default: 2)")  # fmt: skip
    p.add_argument("--runtime", action="append", choices=sorted(RUNTIMES), default=None,
                   help="a runtime to run (repeatable; default: every one)")  # fmt: skip
    p.add_argument("--step", action="append", choices=STEPS, default=None,
                   help="a step to run (repeatable; default: cli and matrix)")  # fmt: skip
    p.add_argument("--repeat", type=int, default=1, metavar="K",
                   help="runs of each step (default: 1)")  # fmt: skip
    args = p.parse_args(argv)
    if args.hogs < 0 or args.repeat < 1:
        p.error("--hogs takes 0 or more, --repeat 1 or more")
    args.runtime = args.runtime or list(RUNTIMES)
    args.step = [s for s in STEPS if s in (args.step or ("cli", "matrix"))]
    return args


def commands(args: argparse.Namespace) -> list[tuple[str, list[str]]]:
    """Each step as (its name, its command), in the order run."""
    python, harness = sys.executable, str(Path(sys.executable).with_name("harness"))
    out: list[tuple[str, list[str]]] = []
    if "default" in args.step:
        out.append(("default: pytest -n auto", [python, "-m", "pytest", "-n", "auto", "-q"]))
    files = [f for r in args.runtime if (f := RUNTIMES[r]) is not None]
    if "cli" in args.step and set(args.runtime) == set(RUNTIMES):
        # Every runtime: every `cli` test, the Node SDKs' too, as the README's command.
        out.append(("cli: pytest -n auto -m cli",
                    [python, "-m", "pytest", "-n", "auto", "-q", "-m", "cli"]))  # fmt: skip
    elif "cli" in args.step and files:
        out.append((f"cli: pytest -n auto -m cli {' '.join(files)}",
                    [python, "-m", "pytest", "-n", "auto", "-q", "-m", "cli", *files]))  # fmt: skip
    if "matrix" in args.step:
        adapters = [word for r in args.runtime for word in ("--adapter", r)]
        out.append((f"matrix: {' '.join(args.runtime)}",
                    [harness, "matrix", *adapters, "--jobs", "2", "--format", "json",
                     "--output", os.devnull, "--check", "adapters/matrix.json"]))  # fmt: skip
    return out


@contextmanager
def hogs(count: int) -> Iterator[None]:
    """`count` CPU-bound processes, stopped however the block ends."""
    procs = [subprocess.Popen([sys.executable, "-c", HOG]) for _ in range(count)]
    try:
        yield
    finally:
        for proc in procs:
            proc.kill()
        for proc in procs:
            proc.wait()


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    planned = commands(args)
    results: list[tuple[str, int, int, float]] = []  # step, run, exit status, seconds
    env = {**os.environ, "CI": "true"}  # as CI runs it: snapshots are never written
    print(f"under load: {args.hogs} CPU-bound process(es) beside each step", flush=True)
    with hogs(args.hogs):
        for name, command in planned:
            for run in range(1, args.repeat + 1):
                print(f"== {name} (run {run} of {args.repeat})", flush=True)
                started = time.monotonic()
                status = subprocess.run(command, cwd=ROOT, env=env, check=False).returncode
                results.append((name, run, status, time.monotonic() - started))
    print(f"== under load ({args.hogs} CPU-bound process(es)): each run")
    for name, run, status, seconds in results:
        verdict = "passed" if status == 0 else f"FAILED (exit {status})"
        print(f"{seconds:7.1f} s  {verdict:<16} {name} (run {run})")
    return 0 if all(status == 0 for _, _, status, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
