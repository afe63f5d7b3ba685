"""`harness`: a thin shell over the scenario loader and runner.

Exit codes: 0 all passed, 1 a scenario failed or errored, 2 bad input (an invalid
scenario file, an unknown id, a bad option), 3 a scenario hung unexpectedly, 4 the harness
itself broke (a bug: the one-line message says so; --debug shows the traceback).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from harness._exit import (
    EXIT_FAILED,
    EXIT_HANG,
    EXIT_INTERNAL,
    EXIT_OK,
    EXIT_USAGE,
    _invalid,
    _usage,
)
from harness._run_plan import GUARD_NAMES

if TYPE_CHECKING:
    from harness.scenario import Scenario


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # argparse prints the whole usage block; one line that says where to look is enough.
        self.exit(EXIT_USAGE, f"{self.prog}: {message}; see '{self.prog} --help'\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="harness",
        description="Keyless, deterministic delegation scenarios for the delegated-caller guard.",
    )
    parser.add_argument(
        "--version",
        action=_Version,
        nargs=0,
        help="print the harness's version and the scenario contract's, then exit",
    )
    parser.add_argument(
        "--debug",
        action="store_true",
        help="show a Python traceback when the harness itself breaks",
    )
    parser.add_argument(
        "--scenarios",
        type=Path,
        metavar="DIR",
        help="directory of scenario YAML files (default: the scenarios this harness ships)",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    sub.add_parser("list", help="list scenario ids and titles")
    validate = sub.add_parser(
        "validate", help="check scenario files and report every problem, without running them"
    )
    validate.add_argument(
        "paths",
        nargs="*",
        type=Path,
        metavar="PATH",
        help="scenario files or directories (default: the --scenarios directory)",
    )
    sub.add_parser(
        "coverage", help="map each design-document clause to the scenarios that cover it"
    )
    from harness._run_command import add_parser as add_run

    add_run(sub)
    repro = sub.add_parser(
        "repro", help="print one scenario's transcript up to where it stopped, then any hang"
    )
    repro.add_argument("scenario_id", metavar="SCENARIO_ID")
    repro.add_argument(
        "--guard",
        choices=GUARD_NAMES,
        default=None,
        metavar="NAME",
        help="caller-check variant, e.g. none to see the hang before the fix",
    )
    repro.add_argument(
        "--mermaid",
        action="store_true",
        help="print a Mermaid sequence diagram (fenced, to paste into a GitHub issue or PR)",
    )
    from harness._report_command import add_parser as add_report
    from harness._serve_command import add_parser

    add_parser(sub)
    add_report(sub)
    snapshot = sub.add_parser(
        "snapshot",
        help="write golden snapshots from the reference runtime (never under CI)",
    )
    snapshot.add_argument(
        "ids", nargs="*", metavar="SCENARIO_ID", help="scenario ids (default: all)"
    )
    snapshot.add_argument(
        "--snapshots",
        type=Path,
        default=None,
        metavar="DIR",
        help="where to write them (default: snapshots/ beside the scenarios)",
    )
    mutants = sub.add_parser(
        "mutants", help="run every scenario under every test-only guard variant"
    )
    mutants.add_argument("--json", action="store_true", help="print machine-readable results")
    return parser


class _Version(argparse.Action):
    # argparse's own version action wants the text up front; reading package metadata
    # costs every command's start-up a few milliseconds, so it is read only when asked.
    def __call__(self, parser: argparse.ArgumentParser, *args: Any) -> None:
        print(_version())
        parser.exit(EXIT_OK)


def _version() -> str:
    """`harness (keyless-harness) 0.1.0; scenarios 3.0.0`: the package as installed, and the
    contract version of the scenarios it ships."""
    from importlib.metadata import PackageNotFoundError, version

    from harness._paths import version_path

    try:
        package = version("keyless-harness")
    except PackageNotFoundError:  # run from a checkout that was never installed
        package = "(not installed)"
    try:
        scenarios = version_path().read_text(encoding="utf-8").strip()
    except OSError:
        scenarios = "(no VERSION file)"
    return f"harness (keyless-harness) {package}; scenarios {scenarios}"


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return _main(args)
    except KeyboardInterrupt:
        print("harness: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # `harness list | head`: the reader left; nothing more to say to it.
        sys.stderr.close()
        return EXIT_OK
    except Exception as exc:
        if args.debug:
            raise
        print(
            f"harness: internal error: {type(exc).__name__}: {exc}. This is a bug in "
            "keyless-harness, not in your scenario; rerun with --debug for the traceback and "
            "report it",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


def _main(args: argparse.Namespace) -> int:
    from harness.scenario import ScenarioError, load_all

    directory: Path | None = args.scenarios
    if directory is not None and not directory.is_dir():
        return _usage(f"--scenarios {directory}: not a directory")
    if args.command == "validate":
        return _validate(args.paths or [directory])  # None: the default directory
    if args.command == "serve":
        from harness._serve_command import serve_command

        return serve_command(args, directory)  # loads only the scenario it serves
    try:
        scenarios = load_all(directory)
    except ScenarioError as exc:
        return _invalid(exc, "nothing was run")
    if not scenarios:
        return _usage(f"no scenario files (*.yaml) in {directory or 'the default directory'}")
    if args.command == "repro":
        return _repro(args, scenarios)
    if args.command == "mutants":
        return _mutants(args, scenarios)
    if args.command == "coverage":
        return _coverage(scenarios)
    if args.command == "report":
        from harness._report_command import report

        return report(args, scenarios)
    if args.command == "snapshot":
        from harness._snapshot_command import snapshot

        return snapshot(args, scenarios)
    if args.command == "list":
        width = max(len(s.id) for s in scenarios)
        for s in scenarios:
            print(f"{s.id:<{width}}  {s.title}")
        return EXIT_OK
    from harness._run_command import run

    _warn(scenarios)
    return run(args, scenarios)


def _repro(args: argparse.Namespace, scenarios: list[Scenario]) -> int:
    from harness.run import effective_guard, judge, observe_scenario
    from harness.run._repro import transcript

    by_id = {s.id: s for s in scenarios}
    if args.scenario_id not in by_id:
        return _usage(f"unknown scenario id: {args.scenario_id}; 'harness list' shows the ids")
    scenario = by_id[args.scenario_id]
    guard = effective_guard(scenario, args.guard)  # as `harness run` would run it
    result = judge(scenario, observe_scenario(scenario, guard=guard))
    if args.mermaid:
        from harness.run._sequence import sequence

        lines = ["```mermaid", *sequence(result.observation), "```"]
    else:
        lines = transcript(result.observation, guard, result.mismatches)
    print("\n".join(lines))
    # The exit code `harness run` would give this one scenario (without golden snapshots).
    if result.status == "pass":
        return EXIT_OK
    return EXIT_HANG if result.observation.outcome == "hang" else EXIT_FAILED


def _mutants(args: argparse.Namespace, scenarios: list[Scenario]) -> int:
    from harness._progress import Progress
    from harness.run._mutants import mutant_matrix, render

    bar: list[Progress] = []

    def progress(done: int, total: int, variant: str, scenario: str, cell: str) -> None:
        # stderr, so --json output stays clean: a bar on a terminal, a line per cell in a log.
        if not bar:
            bar.append(Progress(total, "mutants"))
        bar[0].step(f"{variant} x {scenario}", cell)

    matrix = mutant_matrix(scenarios, progress=progress)
    if args.json:
        print(json.dumps(matrix.to_json(), indent=2, sort_keys=True))
    else:
        print("\n".join(render(matrix)))
    survivors = matrix.survivors()
    if survivors:
        print(f"harness: no scenario kills {', '.join(survivors)}", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


def _coverage(scenarios: list[Scenario]) -> int:
    from harness.scenario import clauses

    uncovered = 0
    for clause, text in clauses().items():
        ids = [s.id for s in scenarios if clause in s.covers]
        uncovered += not ids
        print(f"{clause:<4} {text}")
        print(f"     {'covered by: ' + ', '.join(ids) if ids else 'UNCOVERED: no scenario'}")
    total = len(clauses())
    print(f"{total - uncovered} of {total} clauses covered")
    return EXIT_FAILED if uncovered else EXIT_OK


def _validate(paths: Sequence[Path | None]) -> int:
    from harness.scenario import ScenarioError, load_paths, scenario_paths

    files: list[Path] = []
    for path in paths:
        if path is None or path.is_dir():
            found = scenario_paths(path)
            if not found:
                return _usage(f"no scenario files (*.yaml) in {path or 'the default directory'}")
            files += found
        elif path.exists():
            files.append(path)
        else:
            return _usage(f"{path}: no such file or directory")
    try:
        scenarios = load_paths(files)
    except ScenarioError as exc:
        return _invalid(exc, f"{len(files)} file(s) checked")
    noted = _warn(scenarios)
    print(f"{len(scenarios)} scenario file(s) valid" + (f" ({noted} warning(s))" if noted else ""))
    return EXIT_OK


def _warn(scenarios: Sequence[Scenario]) -> int:
    """Print every warning, on stderr: valid but almost certainly not meant."""
    lines = [w for s in scenarios for w in s.warnings]
    for line in lines:
        print(line, file=sys.stderr)
    return len(lines)


if __name__ == "__main__":
    raise SystemExit(main())
