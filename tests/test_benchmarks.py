"""Smoke test of the benchmark suite (`python -m benchmarks`, see README "Benchmarks"): every
figure group but the test suite itself and the pydantic-ai peer, at tiny sizes."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from benchmarks.__main__ import main


# `load`: it loads the machine (serve's figure, thousands of scenarios) for seconds, so it
# runs alone with the other load tests (`pytest -m load`), not in the default run.
@pytest.mark.load
def test_quick_run_writes_every_figure(tmp_path: Path) -> None:
    out = tmp_path / "RESULTS.md"
    assert main(["--quick", "--skip", "peer", "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    for heading in (
        "## Machine",
        "## Summary",
        "## 1. Floor",
        "## 2. Ours",
        "## 3. Peer",
        "## 4. Hang-detection latency",
        "## 6a. Scaling",
        "## 6b. Scaling",
        "## 7. CLI cold start",
        "## 9. The other wires",
    ):
        assert heading in text
    assert "| 2 ours (JSON) / 4-request floor (JSON) |" in text
    assert "Groups not run: clis, peer, suite." in text
    assert "| 9 ours / floor: anthropic-messages (JSON) |" in text
    assert "python -m benchmarks --quick" in text


def test_a_cli_processs_lifetime_is_timed_from_spawn_to_exit() -> None:
    # Figure 10's measure of what a CLI costs bare: the runner's own Popen, timed.
    import harness.adapters.clis.run as cli_run
    from benchmarks.figures_clis import _Lifetimes

    lifetimes = _Lifetimes()
    with lifetimes.watching():
        process = cli_run.subprocess.Popen(["sleep", "0.2"])  # type: ignore[attr-defined]
        process.wait()
        process.poll()  # counted once
    assert cli_run.subprocess.Popen is subprocess.Popen  # type: ignore[attr-defined]
    (alive,) = lifetimes.alive
    assert 0.2 <= alive < 2
