"""Golden snapshots cannot be skipped by accident (`harness run`), and `harness snapshot`
writes them for a directory of one's own, from the reference runtime, saying what changed."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from harness.cli import main

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
        command = (
            f"{sys.executable} -m tests.process.jsonl_adapter --probe-model --features assembled"
        )
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


@pytest.mark.parametrize(
    ("expected", "observed"),
    [(True, 1), (1, 1.0), (0, False), ("1", 1), ([1, 2], [2, 1]), ({"a": [None]}, {"a": []})],
)
def test_json_types_and_order_are_compared_not_python_equality(
    expected: object, observed: object
) -> None:
    # Equal snapshots are settled by their canonical JSON texts; Python's == would take
    # each of these pairs but the last two as equal.
    from harness.run import differences

    assert differences({"v": expected}, {"v": observed}) != []
    assert (
        differences({"v": expected, "w": {"b": 1, "a": 2}}, {"w": {"a": 2, "b": 1}, "v": expected})
        == []
    )


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """As if the harness ran from a wheel: the package in a site-packages with no checkout
    around it and the corpus inside it, as pyproject.toml's force-include lays it out
    (tests/test_wheel.py checks the real wheel). Returns the package directory."""
    monkeypatch.delenv("CI", raising=False)
    package = tmp_path / "site-packages" / "harness"
    shutil.copytree(ROOT / "scenarios", package / "_corpus" / "scenarios")
    shutil.copytree(ROOT / "snapshots", package / "_corpus" / "snapshots")
    monkeypatch.setattr("harness._paths._HERE", package)
    return package


def test_a_checkout_uses_its_own_folders_and_is_not_an_installed_package() -> None:
    from harness import _paths

    assert _paths.scenarios_dir() == ROOT.resolve() / "scenarios"
    assert _paths.snapshots_dir() == ROOT.resolve() / "snapshots"
    assert _paths.repository_root() == ROOT.resolve()
    assert _paths.installed_package() is None
    assert not _paths.inside_installed_package(ROOT / "harness" / "snapshots")


def test_installed_the_goldens_are_beside_the_packaged_scenarios_and_compared(
    installed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from harness import _paths

    corpus = installed / "_corpus"
    assert _paths.repository_root() is None and _paths.installed_package() == installed
    assert (_paths.scenarios_dir(), _paths.snapshots_dir()) == (
        corpus / "scenarios",
        corpus / "snapshots",
    )
    assert main(["run", SCENARIO]) == 0
    assert lines(capsys)[-1] == "1 passed, 0 failed"  # compared: no "without a golden"


def files(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


@pytest.mark.parametrize(
    "args",
    [
        ["snapshot"],
        ["snapshot", SCENARIO],
        ["--scenarios", "{corpus}/scenarios", "snapshot"],
        ["snapshot", "--snapshots", "{corpus}/snapshots"],
        ["snapshot", "--snapshots", "{corpus}/../elsewhere"],
    ],
    ids=["default", "one-id", "scenarios-named", "snapshots-named", "elsewhere-in-package"],
)
def test_installed_harness_snapshot_never_writes_into_the_package(
    args: list[str], installed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = installed / "_corpus"
    before = files(corpus / "snapshots")
    assert main([a.format(corpus=corpus) for a in args]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert len(err.splitlines()) == 1, err
    assert "is inside the installed keyless-harness package, whose goldens are read-only" in err
    assert f"copy the scenarios ({corpus / 'scenarios'}), or write your own" in err
    assert "run `harness --scenarios DIR snapshot` (goldens go to snapshots/ beside DIR)" in err
    assert err.rstrip().endswith("or name `--snapshots DIR`")
    assert files(corpus / "snapshots") == before
    assert sorted(p.name for p in installed.iterdir()) == ["_corpus"]
    assert sorted(p.name for p in corpus.iterdir()) == ["scenarios", "snapshots"]


def test_installed_harness_snapshot_writes_where_the_refusal_says(
    installed: Path, own: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A directory of one's own: goldens beside it.
    assert main(["--scenarios", str(own), "snapshot"]) == 0
    assert lines(capsys) == [
        f"created     {own.parent / 'snapshots' / f'{SCENARIO}.json'}",
        "1 created",
    ]
    # The packaged scenarios, with the goldens named elsewhere.
    goldens = own.parent / "goldens"
    assert main(["snapshot", "--snapshots", str(goldens), SCENARIO]) == 0
    assert lines(capsys) == [f"created     {goldens / f'{SCENARIO}.json'}", "1 created"]
    packaged = installed / "_corpus" / "snapshots" / f"{SCENARIO}.json"
    assert (goldens / f"{SCENARIO}.json").read_bytes() == packaged.read_bytes()
