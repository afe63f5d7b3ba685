"""Progress on stderr: one line per item in a log, a bar that redraws and then clears
itself on a terminal."""

from __future__ import annotations

import io

from harness.cli._progress import Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_log_gets_one_line_per_item() -> None:
    log = io.StringIO()
    progress = Progress(2, "run", log)
    progress.step("zero-depth-live-child", "pass")
    progress.step("missing-registry")
    assert log.getvalue() == "[1/2] zero-depth-live-child: pass\n[2/2] missing-registry\n"


def test_a_terminal_gets_a_bar_that_clears_itself() -> None:
    screen = Terminal()
    progress = Progress(4, "mutants", screen)
    for i in range(4):
        progress.step(f"item-{i}")
    frames = screen.getvalue().split("\r")
    assert "mutants [" + "#" * 7 + "." * 21 + "] 1/4 item-0" in frames[1]
    assert "mutants [" + "#" * 28 + "] 4/4 item-3" in frames[4]
    assert frames[-1] == "" and frames[-2].strip() == ""  # the line is blank again
    assert "\n" not in screen.getvalue()
