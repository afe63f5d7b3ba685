"""`harness report` takes `harness run`'s options and judges as it does: the same shards,
known failures, required goldens, guard and wire, so a CI job runs the corpus once."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from harness.cli import main
from harness.cli._selection import in_shard
from tests.conftest import SCENARIOS
from tests.test_results import FAILS, PASSES, Mixed

MIXED = "tests.test_results:make"  # the reference, made to fail FAILS (test_results.py)
ROOT = Path(__file__).parents[1]
# The known-failures file the adapter `tests.test_report_options:with_own_file` carries.
OWN_FILE: list[Path] = []


def with_own_file() -> Mixed:
    """MIXED, carrying a known-failures file of its own (as node-dsh does)."""
    adapter = Mixed()
    adapter.expectations = OWN_FILE[0]
    return adapter


def verdicts(out: Path) -> dict[str, str]:
    html = (out / "report.html").read_text("utf-8")
    return dict(re.findall(r'<h2>([a-z0-9-]+) <span class="verdict">([A-Z ]+)</span></h2>', html))


def test_known_failures_are_read_and_labelled(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    known = tmp_path / "known.yaml"
    known.write_text(f"scenarios:\n  {FAILS}: {{expected: fail, reason: asks twice}}\n", "utf-8")
    out = tmp_path / "report"
    args = ["report", "--adapter", MIXED, "--out", str(out), PASSES, FAILS]
    assert main(args) == 1  # FAILS fails, and nothing says it may
    assert verdicts(out) == {PASSES: "PASS", FAILS: "FAIL"}
    assert main([*args, "--expectations", str(known)]) == 0
    assert verdicts(out) == {PASSES: "PASS", FAILS: "KNOWN FAIL"}
    capsys.readouterr()


def test_a_shard_reports_exactly_its_scenarios(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", "--shard", "2/4", "--out", str(tmp_path)]) == 0
    capsys.readouterr()
    assert set(verdicts(tmp_path)) == {s.id for s in in_shard(list(SCENARIOS.values()), 2, 4)}


def test_goldens_are_required_and_strays_fail(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "none"
    empty.mkdir()
    args = ["report", "--out", str(tmp_path / "report"), "--snapshots"]
    assert main([*args, str(empty), PASSES]) == 1
    assert verdicts(tmp_path / "report") == {PASSES: "FAIL"}
    goldens = tmp_path / "goldens"
    shutil.copytree(Path(__file__).parents[1] / "snapshots", goldens)
    (goldens / "gone.json").write_text("{}\n", "utf-8")
    capsys.readouterr()
    assert main([*args, str(goldens)]) == 1
    err = capsys.readouterr().err
    assert "harness: goldens/gone.json: no scenario has the id 'gone'" in err
    assert set(verdicts(tmp_path / "report").values()) == {"PASS"}


def test_guard_and_stream_are_run_options_here_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = str(tmp_path)
    assert main(["report", "--out", out, "--stream", "--chunk", "1", PASSES]) == 0
    assert main(["report", "--out", out, "--guard", "none", PASSES]) == 1
    assert verdicts(tmp_path) == {PASSES: "FAIL"}
    assert main(["report", "--out", out, "--chunk", "1", PASSES]) == 2
    assert "--chunk takes a positive number" in capsys.readouterr().err


def test_run_writes_the_page_of_its_own_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "page"
    assert main(["run", "--adapter", MIXED, "--html", str(out), PASSES, FAILS]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == "1 passed, 1 failed"
    assert verdicts(out) == {PASSES: "PASS", FAILS: "FAIL"}
    (tmp_path / "file").write_text("", "utf-8")
    assert main(["run", "--html", str(tmp_path / "file" / "x"), PASSES]) == 2
    assert "--html " in capsys.readouterr().err


def test_a_listed_scenario_that_passes_fails_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # NEW PASS: a known-failures entry that is no longer true fails the report, as the run.
    known = tmp_path / "known.yaml"
    known.write_text(f"scenarios:\n  {PASSES}: {{expected: fail, reason: fixed since}}\n", "utf-8")
    out = tmp_path / "report"
    assert main(["report", "--expectations", str(known), "--out", str(out), PASSES]) == 1
    assert verdicts(out) == {PASSES: "NEW PASS"}
    capsys.readouterr()


def test_the_adapters_own_known_failures_file_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    own = tmp_path / "expectations.yaml"
    own.write_text(f"scenarios:\n  {FAILS}: {{expected: fail, reason: asks twice}}\n", "utf-8")
    monkeypatch.setattr(f"{__name__}.OWN_FILE", [own])
    out = tmp_path / "report"
    adapter = f"{__name__}:with_own_file"
    assert main(["report", "--adapter", adapter, "--out", str(out), PASSES, FAILS]) == 0
    assert verdicts(out) == {PASSES: "PASS", FAILS: "KNOWN FAIL"}
    capsys.readouterr()


def test_a_golden_that_differs_fails_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    goldens = tmp_path / "goldens"
    goldens.mkdir()
    doc = json.loads((ROOT / "snapshots" / f"{PASSES}.json").read_text("utf-8"))
    doc["answerer_calls"] = 1
    (goldens / f"{PASSES}.json").write_text(json.dumps(doc, indent=2), "utf-8")
    out = tmp_path / "report"
    assert main(["report", "--snapshots", str(goldens), "--out", str(out), PASSES]) == 1
    assert verdicts(out) == {PASSES: "FAIL"}
    assert "Golden diff" in (out / "report.html").read_text("utf-8")
    capsys.readouterr()


def test_goldens_are_required_of_any_runtime_but_the_reference_on_a_corpus_of_ones_own(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = tmp_path / "mine"
    corpus.mkdir()
    shutil.copy(ROOT / "scenarios" / f"{PASSES}.yaml", corpus)  # and no snapshots/ beside it
    args = ["--scenarios", str(corpus), "report", "--out", str(tmp_path / "report")]
    assert main(args) == 0  # the reference's goldens do not exist yet: `harness snapshot`
    assert verdicts(tmp_path / "report") == {PASSES: "PASS"}
    assert main([*args, "--adapter", MIXED]) == 1  # any other runtime is held to them
    assert verdicts(tmp_path / "report") == {PASSES: "FAIL"}
    capsys.readouterr()
