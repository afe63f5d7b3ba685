"""The `harness` command line: one module per command (`harness.cli.run`, `.list`, ...),
found through the one table in harness.cli._main. Nothing here but the entry point: a
command's module is imported only when that command runs."""

from harness.cli._main import main

__all__ = ["main"]
