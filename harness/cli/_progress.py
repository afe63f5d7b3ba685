"""Progress on long work, on stderr (stdout stays the result): a bar that redraws itself on
a terminal, one line per item anywhere else (a CI log reads those)."""

from __future__ import annotations

import sys
from typing import TextIO

WIDTH = 28


class Progress:
    def __init__(self, total: int, what: str, stream: TextIO | None = None) -> None:
        self.total, self.what, self.done = total, what, 0
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()

    def step(self, item: str, status: str = "") -> None:
        self.done += 1
        if not self.tty:
            said = f": {status}" if status else ""
            print(f"[{self.done}/{self.total}] {item}{said}", file=self.stream, flush=True)
            return
        filled = WIDTH * self.done // max(self.total, 1)
        bar = "#" * filled + "." * (WIDTH - filled)
        line = f"\r{self.what} [{bar}] {self.done}/{self.total} {item}"[:100]
        self.stream.write(line.ljust(101))
        if self.done == self.total:
            self.stream.write("\r" + " " * 101 + "\r")  # leave the terminal as it was
        self.stream.flush()
