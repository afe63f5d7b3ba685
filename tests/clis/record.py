"""Record what the agent CLIs write, for the fast tests that read it back
(tests/clis/test_cli_recordings.py):

    python -m tests.clis.record [ADAPTER ...] [--scenario ID ...]

For each CLI adapter named (default: all four: claude-code, qwen-code, opencode, codex) and
each scenario of the corpus it does not skip (or each named), the scenario runs on the real
CLI, unstreamed, with the default run options, while its reader is watched from outside:
the adapter's `reader` hands CliRun the CLI's own reader with its `read` and `finish`
wrapped, so each phase's events and the files `finish` reads are kept as they were given
to it. One file per (adapter, scenario) is written, tests/fixtures/cli-output/ADAPTER/ID.json
(tests/clis/_recorded.py says what it holds; tests/fixtures/cli-output/README.md when to refresh).

It starts the CLIs (installed from their lockfiles on first use, as `harness run` does) and
takes a few minutes. It exits 1 when a scenario could not be recorded (the adapter broke),
or when a live run's matrix cell is not the one adapters/matrix.json holds (the recording
is written all the same, and the fast tests will say so).
"""

from __future__ import annotations

import argparse
import copy
import datetime
import sys
import time
from pathlib import Path
from typing import Any

from harness.adapters import open_adapter
from harness.adapters.clis.adapter import CliAdapter
from harness.adapters.clis.run import CliRun, Reader
from harness.cli.matrix import _MACHINE
from harness.contract import RunOptions, missing_features
from harness.scenario import Scenario, load_all
from tests.clis._recorded import (
    CLIS,
    COMMAND,
    FIXTURES,
    REPO,
    anonymised,
    cell,
    kept_files,
    machine_paths,
    matrix_cells,
    pins,
    recorded_observation,
    recording_text,
    refresh,
    scenario_sha256,
)


class Watch:
    """One scenario's run as its reader was given it: the CliRun (for its asks), each
    phase's events in the order read, and the files read at the end."""

    def __init__(self) -> None:
        self.run: CliRun | None = None
        self.reader: Reader | None = None
        self.events: list[tuple[int, dict[str, Any]]] = []  # (phase, event)
        self.files: dict[str, Any] | None = None
        self.folder: Path | None = None
        self.asked: list[dict[str, Any]] = []


def watched(adapter: CliAdapter, watch: Watch) -> None:
    """Patch this adapter instance (not its class) so that the run it makes next is kept
    in `watch`: its reader's events and files, and the CliRun's asks before CliRun
    normalises them (at `finish`)."""
    real_reader, real_argv = adapter.reader, adapter.argv

    def reader(delegation: str) -> Reader:
        made = real_reader(delegation)
        real_read, real_finish = made.read, made.finish

        def read(event: dict[str, Any]) -> None:
            # The phase is the one whose root CliRun appended last (it does so before the
            # phase's process starts).
            watch.events.append((len(made.roots) - 1, copy.deepcopy(event)))
            real_read(event)

        def finish(folder: Path) -> None:
            watch.folder = folder
            watch.files = kept_files(made, folder)
            if watch.run is not None:
                watch.asked = copy.deepcopy(watch.run.asked)
            real_finish(folder)

        made.read = read  # type: ignore[method-assign]
        made.finish = finish  # type: ignore[method-assign]
        watch.reader = made
        return made

    def argv(run: CliRun, root: str, prompt: str) -> list[str]:
        watch.run = run
        return real_argv(run, root, prompt)

    adapter.reader = reader  # type: ignore[method-assign]
    adapter.argv = argv  # type: ignore[method-assign]


def record(adapter: CliAdapter, scenario: Scenario, today: str) -> tuple[str, str | None]:
    """Run `scenario` on `adapter` and write its recording: ("written", its matrix cell),
    ("skipped", why), or ("broken", why)."""
    missing = missing_features(adapter, scenario)
    if missing:
        return "skipped", f"{adapter.name} does not run {', '.join(missing)} scenarios"
    watch = Watch()
    real = adapter.reader, adapter.argv
    watched(adapter, watch)
    try:
        observation = adapter.run(scenario, RunOptions())
    finally:
        adapter.reader, adapter.argv = real  # type: ignore[method-assign]
    if observation.outcome == "skipped":
        return "skipped", observation.error
    if observation.adapter_error is not None or watch.reader is None or watch.folder is None:
        return "broken", observation.adapter_error or "its reader never finished"
    roots = list(watch.reader.roots)
    phases = [
        {"root": root, "events": [e for p, e in watch.events if p == i]}
        for i, root in enumerate(roots)
    ]
    doc = {
        "adapter": adapter.name,
        "runtime": _MACHINE.sub("", adapter.runtime),
        "pins": pins(adapter.name),
        "command": refresh(adapter.name, scenario.id),
        "recorded": today,
        "scenario": {
            "id": scenario.id,
            "file": scenario.path.resolve().relative_to(REPO).as_posix(),
            "sha256": scenario_sha256(scenario),
        },
        "phases": phases,
        "files": watch.files or {},
        "asked": watch.asked,
        "observation": recorded_observation(observation),
    }
    doc = anonymised(doc, machine_paths(watch.folder))
    path = FIXTURES / adapter.name / f"{scenario.id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(recording_text(doc), encoding="utf-8")
    return "written", cell(adapter.name, scenario, observation)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=COMMAND,
        description="Record the agent CLIs' output for tests/clis/test_cli_recordings.py.",
    )
    parser.add_argument("adapters", nargs="*", metavar="ADAPTER",
                        help=f"the CLIs to record (default: all): {', '.join(CLIS)}")  # fmt: skip
    parser.add_argument("--scenario", action="append", default=None, metavar="ID",
                        help="record only this scenario (again for more)")  # fmt: skip
    args = parser.parse_args(argv)
    if set(args.adapters) - set(CLIS):
        parser.error(f"not an agent CLI: {', '.join(sorted(set(args.adapters) - set(CLIS)))}; "
                     f"name {', '.join(CLIS)}")  # fmt: skip
    scenarios = load_all()
    unknown = sorted(set(args.scenario or ()) - {s.id for s in scenarios})
    if unknown:
        parser.error(f"no scenario has the id {', '.join(unknown)}")
    chosen = [s for s in scenarios if args.scenario is None or s.id in args.scenario]
    today = datetime.date.today().isoformat()
    cells = matrix_cells()
    failed = False
    for name in args.adapters or CLIS:
        began = time.monotonic()
        adapter = open_adapter(name)
        assert isinstance(adapter, CliAdapter)
        written = 0
        try:
            for scenario in chosen:
                status, result = record(adapter, scenario, today)
                if status == "broken":
                    failed = True
                    print(f"{name}: {scenario.id}: NOT RECORDED: {result}", file=sys.stderr)
                elif status == "written":
                    written += 1
                    want = cells.get(name, {}).get(scenario.id)
                    if result != want:
                        failed = True
                        said = f"its cell is {result!r} where adapters/matrix.json has {want!r}"
                        print(f"{name}: {scenario.id}: recorded, but {said}", file=sys.stderr)
        finally:
            adapter.close()
        seconds = time.monotonic() - began
        print(f"{name}: {written} scenario(s) recorded in {seconds:.0f} s ({adapter.runtime})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
