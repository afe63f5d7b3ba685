"""The pytest plugin used from another repository: a test module of its own, pinning a few
scenarios against a vendored copy of `snapshots/`. The plugin reads, writes and judges only
the goldens of the scenarios those tests pin, and never deletes one, whatever else the
directory holds or however the run is cut short."""

from __future__ import annotations

import shutil
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
import syrupy
from syrupy.location import PyTestLocation

from harness.pytest_plugin import ScenarioSnapshotExtension
from harness.scenario import scenario_paths

# Inner sessions load only the plugins they test: autoloading every installed plugin
# (hypothesis alone takes half a second to import) would triple their cost.
LEAN = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
PLUGINS = ("-p", "syrupy", "-p", "harness.pytest_plugin")
PINNED = ["grandchild-refused", "live-root-answered"]
TAMPERED = b'{"tampered": true}\n'

# The adopter's module at its simplest; __IDS__ is the list it pins, __STOP__ one to fail at.
ADOPTER_TESTS = """
import pytest

from harness.run import run_scenario
from harness.scenario import load_scenario, scenario_paths

PATHS = {p.stem: p for p in scenario_paths()}


@pytest.mark.parametrize("scenario_id", __IDS__)
def test_conformance(scenario_id, scenario_snapshot):
    observed = run_scenario(load_scenario(PATHS[scenario_id])).observation.snapshot()
    assert observed == scenario_snapshot
    assert scenario_id != __STOP__, "stops an -x run here"
"""


@dataclass
class Adopter:
    """Another repository: a vendored copy of every golden and its own test module."""

    pytester: pytest.Pytester
    snapshots: Path
    originals: dict[str, bytes]

    def write_tests(self, ids: Sequence[str], *, stop: str | None = None) -> None:
        source = ADOPTER_TESTS.replace("__IDS__", repr(list(ids)))
        self.pytester.makepyfile(test_conformance=source.replace("__STOP__", repr(stop)))

    def run(self, *args: str) -> pytest.RunResult:
        # syrupy keeps its session in a module global for its report hook; the inner
        # session replaces it, and the outer one must get its own back.
        outer = syrupy._syrupy
        try:
            return self.pytester.runpytest_inprocess(
                *PLUGINS, f"--harness-snapshots={self.snapshots}", *args
            )
        finally:
            syrupy._syrupy = outer

    def files(self) -> dict[str, bytes]:
        return {p.name: p.read_bytes() for p in sorted(self.snapshots.iterdir())}

    def changed(self) -> list[str]:
        """The golden files that differ from the vendored copy, or are gone, or are new."""
        now = self.files()
        return sorted(
            n for n in now.keys() | self.originals.keys() if now.get(n) != self.originals.get(n)
        )


@pytest.fixture
def adopter(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, harness_snapshot_dir: Path
) -> Adopter:
    for name, value in LEAN.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("CI", raising=False)  # under CI the plugin refuses every update
    # Under an outer xdist run this process is a worker; syrupy reads that from the
    # environment and would leave unused detection (and deletion) to a controller.
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        monkeypatch.delenv(name, raising=False)
    snapshots = pytester.path / "vendor" / "snapshots"
    shutil.copytree(harness_snapshot_dir, snapshots)
    adopter = Adopter(pytester, snapshots, {})
    adopter.originals = adopter.files()
    assert len(adopter.originals) > 40  # the whole corpus, not a handful
    adopter.write_tests(PINNED)
    return adopter


def no_unused_report(result: pytest.RunResult) -> bool:
    out = result.stdout.str()
    return "unused" not in out and "Deleted" not in out


@pytest.mark.parametrize("update", [False, True], ids=["compare", "update"])
def test_pinning_two_scenarios_leaves_every_other_golden_alone(
    adopter: Adopter, update: bool
) -> None:
    result = adopter.run(*(["--snapshot-update"] if update else []))
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.assert_outcomes(passed=2)
    assert adopter.changed() == []
    assert no_unused_report(result), result.stdout.str()
    result.stdout.fnmatch_lines(["2 snapshots passed."])


def test_the_pinned_goldens_are_compared_and_only_they_are_updated(adopter: Adopter) -> None:
    pinned, other = (
        adopter.snapshots / "live-root-answered.json",
        adopter.snapshots / "owner-detached-child.json",
    )
    pinned.write_bytes(TAMPERED)
    other.write_bytes(TAMPERED)  # not pinned: never read, so never judged or rewritten

    compared = adopter.run()
    assert compared.ret == pytest.ExitCode.TESTS_FAILED
    compared.assert_outcomes(passed=1, failed=1)
    compared.stdout.fnmatch_lines(["FAILED *::test_conformance?live-root-answered?*"])
    assert adopter.changed() == ["live-root-answered.json", "owner-detached-child.json"]

    updated = adopter.run("--snapshot-update")
    assert updated.ret == pytest.ExitCode.OK, updated.stdout.str()
    assert pinned.read_bytes() == adopter.originals[pinned.name]
    assert adopter.changed() == ["owner-detached-child.json"]
    assert other.read_bytes() == TAMPERED
    assert no_unused_report(updated), updated.stdout.str()


def test_a_missing_pinned_golden_fails_and_an_update_writes_it(adopter: Adopter) -> None:
    missing = adopter.snapshots / "grandchild-refused.json"
    missing.unlink()

    compared = adopter.run()
    compared.assert_outcomes(passed=1, failed=1)
    compared.stdout.fnmatch_lines(["FAILED *::test_conformance?grandchild-refused?*"])
    assert not missing.exists()

    # Without syrupy's warning about a file not named after its test: the plugin turns it
    # off, where this suite's own filter for it (inherited in process) does not reach.
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        adopter.run("--snapshot-update").assert_outcomes(passed=2, warnings=0)
    assert adopter.changed() == []


def corpus(adopter: Adopter) -> list[str]:
    """Every scenario with a golden file (one being added may not have its file yet)."""
    return sorted({p.stem for p in scenario_paths()} & {Path(n).stem for n in adopter.originals})


def test_an_update_cut_short_deletes_nothing(adopter: Adopter) -> None:
    # This repository's own layout: every scenario pinned. Under -x the tests after the
    # failing one never run; syrupy counted their goldens unused and deleted them.
    ids = corpus(adopter)
    adopter.write_tests(ids, stop=ids[1])
    result = adopter.run("-x", "--snapshot-update")
    result.assert_outcomes(passed=1, failed=1)
    assert adopter.changed() == []
    assert no_unused_report(result), result.stdout.str()


def test_an_update_of_one_scenario_by_keyword_deletes_nothing(adopter: Adopter) -> None:
    # Safe before this plugin guarded it too: syrupy matches -k against snapshot names.
    adopter.write_tests(corpus(adopter))
    broken = adopter.snapshots / "grandchild-refused.json"
    broken.write_bytes(TAMPERED)
    result = adopter.run("-k", "grandchild-refused", "--snapshot-update")
    result.assert_outcomes(passed=1, deselected=len(corpus(adopter)) - 1)
    assert adopter.changed() == []  # rewritten to the golden bytes, and nothing else touched
    assert no_unused_report(result), result.stdout.str()


ODD_TESTS = """
import pytest

from harness.run import run_scenario
from harness.scenario import load_scenario, scenario_paths

PATHS = {p.stem: p for p in scenario_paths()}


@pytest.mark.parametrize("scenario_id", __IDS__)
def test_odd(scenario_id, scenario_snapshot):
    if scenario_id == "grandchild-refused":
        pytest.skip("a feature this runtime does not have")
    if scenario_id == "child-aborted-call":
        pytest.xfail("a known failure")
    if scenario_id == "owner-detached-child":
        return  # sets the fixture up, then compares nothing
    observed = run_scenario(load_scenario(PATHS[scenario_id])).observation.snapshot()
    assert observed == scenario_snapshot
"""


def write_odd(adopter: Adopter, ids: list[str]) -> None:
    adopter.pytester.makepyfile(test_conformance=ODD_TESTS.replace("__IDS__", repr(ids)))


@pytest.mark.parametrize("update", [False, True], ids=["compare", "update"])
def test_a_skipped_or_xfailed_scenario_keeps_its_golden(adopter: Adopter, update: bool) -> None:
    write_odd(adopter, ["child-aborted-call", "grandchild-refused", "live-root-answered"])
    result = adopter.run(*(["--snapshot-update"] if update else []))
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.assert_outcomes(passed=1, skipped=1, xfailed=1)
    assert adopter.changed() == []
    assert no_unused_report(result), result.stdout.str()


def test_a_test_that_compares_nothing_fails_the_run_and_keeps_its_golden(
    adopter: Adopter,
) -> None:
    # What syrupy still judges: a pinned scenario whose test ran, not skipped, and compared
    # nothing (a test that stopped comparing) fails a plain run. An update keeps the file.
    write_odd(adopter, ["live-root-answered", "owner-detached-child"])
    compared = adopter.run("--snapshot-details")
    assert compared.ret == pytest.ExitCode.TESTS_FAILED
    compared.assert_outcomes(passed=2)
    compared.stdout.fnmatch_lines(
        ["1 snapshot passed. 1 snapshot unused.", "Unused owner-detached-child *"]
    )

    updated = adopter.run("--snapshot-update")
    assert updated.ret == pytest.ExitCode.OK, updated.stdout.str()
    assert adopter.changed() == []
    assert no_unused_report(updated), updated.stdout.str()


def test_a_scenario_id_that_is_not_a_file_name_writes_nothing(adopter: Adopter) -> None:
    adopter.pytester.makepyfile(
        test_conformance="""
        import pytest

        @pytest.mark.parametrize("scenario_id", ["../escaped"])
        def test_escape(scenario_id, scenario_snapshot):
            assert {"a": 1} == scenario_snapshot
        """
    )
    result = adopter.run("--snapshot-update")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*scenario_id '../escaped' is not a file name*"])
    assert not (adopter.snapshots.parent / "escaped.json").exists()
    assert adopter.changed() == []


def test_under_xdist_the_workers_and_the_controller_leave_the_others_alone(
    adopter: Adopter,
) -> None:
    # The controller collects nothing and merges the workers' reports; it is the one that
    # deletes what the merged report counts unused.
    pinned = adopter.snapshots / "live-root-answered.json"
    pinned.write_bytes(TAMPERED)
    args = (*PLUGINS, "-p", "xdist.plugin", "-n", "2", f"--harness-snapshots={adopter.snapshots}")
    updated = adopter.pytester.runpytest_subprocess(*args, "--snapshot-update")
    assert updated.ret == pytest.ExitCode.OK, updated.stdout.str()
    updated.stdout.fnmatch_lines(["created: 2/2 workers"])
    assert adopter.changed() == []
    assert no_unused_report(updated), updated.stdout.str()

    compared = adopter.pytester.runpytest_subprocess(*args)
    assert compared.ret == pytest.ExitCode.OK, compared.stdout.str()
    compared.assert_outcomes(passed=2)
    compared.stdout.fnmatch_lines(["2 snapshots passed."])
    assert no_unused_report(compared), compared.stdout.str()


def test_the_extension_itself_deletes_no_golden(tmp_path: Path) -> None:
    golden = tmp_path / "live-root-answered.json"
    golden.write_bytes(TAMPERED)
    ScenarioSnapshotExtension().delete_snapshots(
        snapshot_location=str(golden), snapshot_names={"live-root-answered"}
    )
    assert golden.read_bytes() == TAMPERED


def test_an_item_without_a_scenario_id_relates_to_no_golden(request: pytest.FixtureRequest) -> None:
    # An xdist controller asks with items rebuilt from the workers' reports, which carry no
    # parameters; that must answer no, not stop the session with a usage error.
    location = PyTestLocation(request.node)
    golden = ScenarioSnapshotExtension.snapshot_root / "live-root-answered.json"
    assert not ScenarioSnapshotExtension.matches_test_location(
        test_location=location, snapshot_location=str(golden)
    )


def readme_example() -> str:
    """The test module the README shows an adopter, as written there."""
    from tests.helpers import readme_block

    return readme_block("### Pinning scenarios from your own tests", "# tests/test_conformance.py")


@pytest.mark.parametrize("update", [False, True], ids=["compare", "update"])
def test_the_readmes_example_module_runs_as_written(adopter: Adopter, update: bool) -> None:
    vendor = adopter.pytester.path / "vendor" / "scenarios"
    shutil.copytree(Path(__file__).parents[1] / "scenarios", vendor)
    tests = adopter.pytester.path / "tests"
    tests.mkdir()
    (tests / "test_conformance.py").write_text(readme_example(), "utf-8")
    result = adopter.run("tests/test_conformance.py", *(["--snapshot-update"] if update else []))
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.assert_outcomes(passed=2)
    assert no_unused_report(result) and adopter.changed() == []
