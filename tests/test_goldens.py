"""Golden snapshots cannot be skipped by accident (`harness run`), and `harness snapshot`
writes them for a directory of one's own, from the reference runtime, saying what changed."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from harness._cli import main

ROOT = Path(__file__).parents[1]
SCENARIO = "live-root-answered"


@pytest.fixture
def own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A scenario directory of the user's own, with no snapshots beside it."""
    monkeypatch.delenv("CI", raising=False)
    directory = tmp_path / "scenarios"
    directory.mkdir()
    shutil.copy(ROOT / "scenarios" / f"{SCENARIO}.yaml", directory)
    return directory


def lines(capsys: pytest.CaptureFixture[str]) -> list[str]:
    return capsys.readouterr().out.splitlines()


def test_a_snapshots_directory_that_does_not_exist_is_bad_input(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["run", "--snapshots", "/no/such/dir"]) == 2
    assert "--snapshots /no/such/dir: not a directory" in capsys.readouterr().err


def test_the_reference_on_ones_own_scenarios_may_pass_without_goldens_but_says_so(
    own: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--scenarios", str(own), "run"]) == 0
    out = lines(capsys)
    assert out[1].endswith("(no golden snapshot)")
    assert out[-1] == "1 passed, 0 failed (1 without a golden snapshot)"


@pytest.mark.parametrize("how", ["snapshots-named", "shipped", "other-adapter"])
def test_every_gating_run_fails_without_a_golden(
    how: str, own: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--scenarios", str(own), "run", SCENARIO]
    if how == "snapshots-named":
        (own.parent / "goldens").mkdir()
        args += ["--snapshots", str(own.parent / "goldens")]
    elif how == "shipped":  # as if this were the corpus the harness ships
        monkeypatch.setattr("harness._paths.scenarios_dir", lambda: own)
    else:
        # An adapter that announces assembled but declines it, so it runs and is judged.
        monkeypatch.chdir(ROOT)
        command = f"{sys.executable} -m tests.jsonl_adapter --probe-model --features assembled"
        args += ["--adapter", f"jsonl:{command}"]
    assert main(args) == 1
    out = "\n".join(lines(capsys))
    assert f"no golden snapshot {own.parent}" in out
    assert f"`harness snapshot {SCENARIO}` writes it from the reference runtime" in out


def test_harness_snapshot_writes_says_what_changed_and_then_nothing(
    own: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    golden = own.parent / "snapshots" / f"{SCENARIO}.json"
    assert main(["--scenarios", str(own), "snapshot"]) == 0
    assert lines(capsys) == [f"created     {golden}", "1 created"]
    assert main(["--scenarios", str(own), "run"]) == 0
    assert lines(capsys)[-1] == "1 passed, 0 failed"  # now compared, and equal

    stale = golden.read_text("utf-8").replace('"outcome": "completed"', '"outcome": "error"')
    golden.write_text(stale, "utf-8")
    assert main(["--scenarios", str(own), "snapshot"]) == 0
    out = lines(capsys)
    assert out[0] == f"updated     {golden}" and out[-1] == "1 updated"
    assert '      -  "outcome": "error",' in out and '      +  "outcome": "completed",' in out
    assert main(["--scenarios", str(own), "snapshot", SCENARIO]) == 0
    assert lines(capsys) == ["1 unchanged"]


def test_harness_snapshot_refuses_under_ci_and_for_a_failing_scenario(
    own: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CI", "true")
    assert main(["--scenarios", str(own), "snapshot"]) == 2
    assert "CI is set, so golden snapshots are compared, never written" in capsys.readouterr().err
    assert not (own.parent / "snapshots").exists()

    monkeypatch.delenv("CI")
    path = own / f"{SCENARIO}.yaml"
    path.write_text(path.read_text("utf-8").replace("outcome: completed", "outcome: error"))
    assert main(["--scenarios", str(own), "snapshot"]) == 1
    assert lines(capsys) == [
        f"NOT WRITTEN {SCENARIO}: it does not pass its expectations: outcome: expected error, "
        "observed completed",
        "1 not written",
    ]
    assert not (own.parent / "snapshots" / f"{SCENARIO}.json").exists()


def test_past_five_differences_the_line_says_how_many_more() -> None:
    from harness.run import differences

    expected = {f"k{i}": i for i in range(8)}
    found = differences(expected, {k: -1 for k in expected})
    assert found[:5] == [f"snapshot.k{i}: expected {i}, observed -1" for i in range(5)]
    assert found[5:] == ["... and 3 more difference(s) from the snapshot"]
    assert differences(expected, {**expected, "k0": 9}) == ["snapshot.k0: expected 0, observed 9"]


def test_an_absent_key_is_not_a_null_one() -> None:
    # A runtime that renames a durable field (owner -> something else) must not pass
    # because the missing key reads as the golden's null.
    from harness.run import differences

    assert differences({"owner": None}, {"other": None}) == [
        "snapshot.other: expected (absent), observed null",
        "snapshot.owner: expected null, observed (absent)",
    ]
    assert differences({"owner": None}, {"owner": None}) == []
