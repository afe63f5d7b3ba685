"""The suite keeps itself honest: exactly one snapshot per scenario, CI never writes a
snapshot, and no test can hang CI."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import pytest_timeout  # type: ignore[import-untyped]  # the plugin ships no types

from harness.run import DEFAULT_BACKSTOP
from harness.run._ci import ci_refuses_updates
from tests.conftest import SCENARIOS

# Inner sessions load only the plugins they test: autoloading every installed plugin
# (hypothesis alone takes half a second to import) would triple their cost.
LEAN = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


def snapshot_problems(directory: Path, scenario_ids: set[str], *, updating: bool) -> list[str]:
    """Every way `directory` differs from one `<scenario id>.json` per scenario."""
    entries = sorted(directory.iterdir())
    files = {p.name for p in entries if p.is_file() and p.suffix == ".json"}
    others = [p.name + ("/" if p.is_dir() else "") for p in entries if p.name not in files]
    wanted = {f"{sid}.json" for sid in scenario_ids}
    strays, missing = sorted(files - wanted), sorted(wanted - files)
    problems = []
    if strays:
        problems.append(
            "unused snapshots, with no scenario of that id (delete them, or restore the "
            f"scenario): {', '.join(strays)}"
        )
    if others:
        problems.append(f"not snapshot files (only <scenario id>.json belongs here): {others}")
    # An update run writes the missing ones when it finishes, after this test has run.
    if missing and not updating:
        problems.append(
            "missing snapshots, for scenarios with no golden file (write them with "
            f"`pytest --snapshot-update` outside CI and review them): {', '.join(missing)}"
        )
    return problems


def test_snapshots_are_exactly_one_per_scenario(
    harness_snapshot_dir: Path, request: pytest.FixtureRequest
) -> None:
    # syrupy does not see this extension's files as unused, so this test is what fails a
    # run over a stray snapshot; a missing one fails here and in syrupy's own comparison.
    updating = bool(request.config.option.update_snapshots)
    problems = snapshot_problems(harness_snapshot_dir, set(SCENARIOS), updating=updating)
    if problems:
        pytest.fail(f"{harness_snapshot_dir}:\n" + "\n".join(problems), pytrace=False)


def test_strays_and_missing_snapshots_are_named(tmp_path: Path) -> None:
    (tmp_path / "kept.json").write_text("{}\n", encoding="utf-8")
    (tmp_path / "zzz.json").write_text("{}\n", encoding="utf-8")
    (tmp_path / "notes.txt").write_text("", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    problems = snapshot_problems(tmp_path, {"kept", "absent"}, updating=False)
    assert len(problems) == 3
    assert "zzz.json" in problems[0] and "kept" not in problems[0]
    assert "notes.txt" in problems[1] and "sub/" in problems[1]
    assert "absent.json" in problems[2]
    assert snapshot_problems(tmp_path, {"kept", "absent"}, updating=True) == problems[:2]


PINNED_TEST = """
import pytest

from harness.run import run_scenario
from harness.scenario import load_scenario, scenario_paths


@pytest.mark.parametrize("scenario_id", ["live-root-answered"])
def test_pinned(scenario_id, scenario_snapshot):
    (path,) = [p for p in scenario_paths() if p.stem == scenario_id]
    assert run_scenario(load_scenario(path)).observation.snapshot() == scenario_snapshot
"""


@pytest.fixture
def changed_snapshots(pytester: pytest.Pytester, harness_snapshot_dir: Path) -> Path:
    """A copy of the golden snapshots in which live-root-answered.json was tampered with."""
    copy = pytester.path / "snapshots-copy"
    shutil.copytree(harness_snapshot_dir, copy)
    changed = copy / "live-root-answered.json"
    changed.write_text('{"tampered": true}\n', encoding="utf-8")
    pytester.makepyfile(test_pinned=PINNED_TEST)
    return changed


def run_update(pytester: pytest.Pytester, snapshots: Path) -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        *("-p", "syrupy", "-p", "harness.pytest_plugin"),
        *("--snapshot-update", "--harness-snapshots", str(snapshots)),
    )


@pytest.mark.parametrize(
    ("value", "ci"),
    [
        *[("true", True), ("1", True), ("TRUE", True), (" True ", True)],
        *[("", False), ("0", False), ("false", False), ("yes", False)],
    ],
)
def test_ci_means_true_or_1_in_any_case(value: str, ci: bool) -> None:
    assert ci_refuses_updates({"CI": value}) is ci


def test_ci_never_writes_a_snapshot_even_when_asked(
    pytester: pytest.Pytester, changed_snapshots: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in {**LEAN, "CI": "true"}.items():
        monkeypatch.setenv(name, value)
    result = run_update(pytester, changed_snapshots.parent)
    assert changed_snapshots.read_text(encoding="utf-8") == '{"tampered": true}\n'
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    refusal = "*CI is set, so --snapshot-update is ignored: snapshots are compared, never written*"
    # Once in the header, once in the summary at the end.
    result.stdout.fnmatch_lines([refusal, "*FAILURES*", refusal, "*1 failed*"])


def test_outside_ci_an_update_writes(
    pytester: pytest.Pytester,
    changed_snapshots: Path,
    harness_snapshot_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, value in LEAN.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("CI", raising=False)
    result = run_update(pytester, changed_snapshots.parent)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    golden = harness_snapshot_dir / "live-root-answered.json"
    assert changed_snapshots.read_bytes() == golden.read_bytes()
    assert "CI is set" not in result.stdout.str()


def test_every_test_has_a_timeout_above_the_harness_backstop(
    request: pytest.FixtureRequest,
) -> None:
    # The harness's deadlock detector and its per-scenario backstop report a hang with its
    # cause; the per-test timeout must leave them the time to do it.
    configured = float(request.config.getini("timeout") or 0)
    assert configured > DEFAULT_BACKSTOP, "set `timeout` in [tool.pytest.ini_options]"
    effective = pytest_timeout.get_env_settings(request.config).timeout
    assert effective and effective > DEFAULT_BACKSTOP, (
        f"the per-test timeout in force is {effective!r} s; it must be on and above the "
        f"harness's own {DEFAULT_BACKSTOP:g} s backstop"
    )
    for item in request.session.items:  # a marker may set a test's own: never lower
        marker = item.get_closest_marker("timeout")
        if marker is not None:
            own = marker.kwargs.get("timeout", marker.args[0] if marker.args else None)
            assert own is not None and float(own) > DEFAULT_BACKSTOP, item.nodeid


def test_a_hanging_test_is_stopped_with_a_clear_message(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in LEAN.items():
        monkeypatch.setenv(name, value)
    pytester.makepyfile(
        test_hangs="""
        import threading

        def test_waits_for_ever():
            threading.Event().wait()

        def test_after_it():
            pass
        """
    )
    result = pytester.runpytest_subprocess("-p", "pytest_timeout", "--timeout", "0.3", timeout=30)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*Failed: Timeout (>0.3s) from pytest-timeout*"])
    # The signal method fails the one test and the session goes on.
    result.assert_outcomes(failed=1, passed=1)


@pytest.mark.parametrize(
    "path",
    sorted((Path(__file__).parents[1] / "adapters").glob("*/expectations*.yaml")),
    ids=lambda p: p.name,
)
def test_every_shipped_expectations_file_names_scenarios_that_exist(path: Path) -> None:
    # A renamed or deleted scenario must not leave a known failure behind (the loader says
    # "no scenario has this id"), even for a file only another build is run with.
    from harness.adapters import Expectations

    known = Expectations.load(path, set(SCENARIOS))
    assert all(reason.strip() for reason in known.failing.values())
