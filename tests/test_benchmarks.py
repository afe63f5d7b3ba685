"""Smoke test of the benchmark suite (`python -m benchmarks`, see README "Benchmarks"): every
figure group but the test suite itself and the pydantic-ai peer, at tiny sizes."""

from __future__ import annotations

from pathlib import Path

from benchmarks.__main__ import main


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
    ):
        assert heading in text
    assert "| 2 ours (JSON) / 4-request floor (JSON) |" in text
    assert "Groups not run: peer, suite." in text
    assert "python -m benchmarks --quick" in text
