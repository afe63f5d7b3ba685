"""`harness`: the parser, the one table of commands, and the dispatch to a command's module.

Each command is a module of this package with two functions: `add_arguments(parser)`, its
options, and `run(args)`, the command, returning its exit code (harness.cli._exits). The
table names the modules; a command's module is imported only when that command is named,
its options included, so `harness list` loads nothing of `harness run`. `harness --help`
reads the commands' one-line help from the table alone.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple, NoReturn, Protocol, cast

from harness.cli._exits import EXIT_INTERNAL, EXIT_OK, EXIT_USAGE, usage


class Command(NamedTuple):
    name: str
    module: str
    help: str


# In the order `harness --help` lists them.
COMMANDS = (
    Command("list", "harness.cli.list", "list scenario ids and titles"),
    Command(
        "validate",
        "harness.cli.validate",
        "check scenario files and report every problem, without running them",
    ),
    Command(
        "coverage",
        "harness.cli.coverage",
        "map each design-document clause to the scenarios that cover it",
    ),
    Command("run", "harness.cli.run", "run scenarios and check their expectations"),
    Command(
        "repro",
        "harness.cli.repro",
        "print one scenario's transcript up to where it stopped, then any hang",
    ),
    Command(
        "serve",
        "harness.cli.serve",
        "serve one scenario's scripts on a loopback HTTP server: POST {base}/chat/completions, "
        "/messages, /responses or /models/{model}:generateContent (and :streamGenerateContent)",
    ),
    Command("report", "harness.cli.report", "run scenarios and write one self-contained HTML page"),
    Command(
        "snapshot",
        "harness.cli.snapshot",
        "write golden snapshots from the reference runtime (never under CI)",
    ),
    Command(
        "matrix",
        "harness.cli.matrix",
        "run the corpus on several runtimes and print one table: the level each holds",
    ),
    Command(
        "history",
        "harness.cli.history",
        "run the corpus on several releases of one agent CLI: the level each holds, and "
        "where it changed",
    ),
    Command(
        "pin",
        "harness.cli.pin",
        "move an agent CLI's pin to another release: its package.json and lockfile",
    ),
    Command(
        "mutants",
        "harness.cli.mutants",
        "every scenario under every test-only guard: the guard matrix",
    ),
)
_BY_NAME = {c.name: c for c in COMMANDS}


class CommandModule(Protocol):
    """What a command's module provides."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...
    def run(self, args: argparse.Namespace) -> int: ...


def command_module(name: str) -> CommandModule:
    return cast(CommandModule, importlib.import_module(_BY_NAME[name].module))


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # argparse prints the whole usage block; one line that says where to look is enough.
        self.exit(EXIT_USAGE, f"{self.prog}: {message}; see '{self.prog} --help'\n")


class _Commands(argparse._SubParsersAction):  # type: ignore[type-arg]
    """The subcommands, each one's options added from its module only once it is the one
    named (argparse has refused an unknown name before this is called)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        assert isinstance(values, list)
        command_module(values[0]).add_arguments(self._name_parser_map[values[0]])
        super().__call__(parser, namespace, values, option_string)


def parser() -> argparse.ArgumentParser:
    top = _Parser(
        prog="harness",
        description="Keyless, deterministic delegation scenarios for the delegated-caller guard.",
    )
    top.add_argument(
        "--version",
        action=_Version,
        nargs=0,
        help="print the harness's version and the scenario contract's, then exit",
    )
    top.add_argument(
        "--debug",
        action="store_true",
        help="show a Python traceback when the harness itself breaks",
    )
    top.add_argument(
        "--scenarios",
        type=Path,
        metavar="DIR",
        help="directory of scenario YAML files (default: the scenarios this harness ships)",
    )
    sub = top.add_subparsers(dest="command", required=True, metavar="COMMAND", action=_Commands)
    for command in COMMANDS:
        sub.add_parser(command.name, help=command.help, description=command.help)
    return top


class _Version(argparse.Action):
    # argparse's own version action wants the text up front; reading package metadata
    # costs every command's start-up a few milliseconds, so it is read only when asked.
    def __call__(self, parser: argparse.ArgumentParser, *args: Any) -> None:
        print(_version())
        parser.exit(EXIT_OK)


def _version() -> str:
    """`harness (keyless-harness) 0.1.0; scenarios 6.5.0`: the package as installed, and the
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
    args = parser().parse_args(argv)
    try:
        return _dispatch(args)
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


def _dispatch(args: argparse.Namespace) -> int:
    directory: Path | None = args.scenarios
    if directory is not None and not directory.is_dir():
        return usage(f"--scenarios {directory}: not a directory")
    return command_module(args.command).run(args)
