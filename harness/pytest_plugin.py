"""pytest plugin: the `scenario_snapshot` fixture, pinning one readable JSON file per
scenario under the top-level `snapshots/` directory (not `__snapshots__`), so runtimes in
other languages can diff against the same bytes.

A test that uses it must be parametrised with `scenario_id`: that id, not the test's name,
names the file, so any test pinning the same scenario pins the same file.

Two guards keep the golden files honest: under `CI` (true or 1) `--snapshot-update` is
switched off before syrupy starts, so CI only ever compares; and `--harness-observed DIR`
keeps a copy of every compared text outside the golden directory, one per test, which is
what the determinism check (`python -m tests.determinism`) diffs across runs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode
from syrupy.location import PyTestLocation

from harness._ci import ci_refuses_updates

if TYPE_CHECKING:
    from harness.adapters import Adapter, Expectations

CI_REFUSAL = (
    "harness: CI is set, so --snapshot-update is ignored: snapshots are compared, never written"
)
_UPDATE_REFUSED = pytest.StashKey[bool]()
_OBSERVED_DIR = pytest.StashKey["Path | None"]()
_SNAPSHOT_DIR = pytest.StashKey[Path]()
_OUTER_ROOT = pytest.StashKey[Path]()


class ScenarioSnapshotExtension(SingleFileSnapshotExtension):
    _write_mode = WriteMode.TEXT
    file_extension = "json"
    snapshot_root: Path = Path("snapshots")

    @classmethod
    def get_snapshot_name(cls, *, test_location: PyTestLocation, index: Any = 0) -> str:
        callspec = getattr(test_location.item, "callspec", None)
        if callspec is None or "scenario_id" not in callspec.params:
            raise pytest.UsageError(
                f"{test_location.nodeid}: scenario_snapshot needs the test parametrised with "
                "'scenario_id'; the scenario id names the snapshot file"
            )
        return str(callspec.params["scenario_id"])

    @classmethod
    def dirname(cls, *, test_location: PyTestLocation) -> str:
        return str(cls.snapshot_root)

    @classmethod
    def discovery_dirname(cls, *, test_location: PyTestLocation) -> str:
        return str(cls.snapshot_root)

    @classmethod
    def matches_test_location(
        cls, *, test_location: PyTestLocation, snapshot_location: str
    ) -> bool:
        location = Path(snapshot_location)
        return location.parent == cls.snapshot_root and location.stem == cls.get_snapshot_name(
            test_location=test_location
        )

    def serialize(self, data: Any, **kwargs: Any) -> str:
        from harness.run import snapshot_text

        return data if isinstance(data, str) else snapshot_text(data)


@dataclass(eq=False, order=False, repr=False)
class ObservedSnapshotAssertion(SnapshotAssertion):
    """A snapshot assertion that also keeps the text it compared, when `observed_dir` is set.

    The text kept is syrupy's own serialised data, so it is byte for byte what the golden
    file would hold after `--snapshot-update`; only public syrupy state is read.
    """

    observed_dir: Path | None = None

    def __eq__(self, other: object) -> bool:
        matched = super().__eq__(other)
        if self.observed_dir is not None:
            result = self.executions.get(self.num_executions - 1)
            if result is not None and result.asserted_data is not None:
                self._keep(result.snapshot_name, result.asserted_data)
        return matched

    def _keep(self, scenario_id: str, data: str | bytes) -> None:
        assert self.observed_dir is not None
        name = observed_name(self.test_location.nodeid)
        if self.num_executions > 1:  # a second comparison in one test must not overwrite
            name += f"-{self.num_executions - 1}"
        path = self.observed_dir / scenario_id / f"{name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, bytes):
            path.write_bytes(data)
        else:
            # Written exactly as syrupy writes a TEXT snapshot, so the bytes compare.
            path.write_text(data, encoding=ScenarioSnapshotExtension.get_write_encoding())


def observed_name(nodeid: str) -> str:
    """A test node id as a file name: every run of other characters becomes one `_`."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", nodeid).strip("_")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("harness", "keyless-harness")
    group.addoption(
        "--guard",
        default=None,
        metavar="NAME",
        help="run scenarios under a caller-check variant (test-only unless runtime-ownership)",
    )
    group.addoption(
        "--harness-snapshots",
        metavar="DIR",
        default=None,
        help="directory of scenario snapshots (default: <rootdir>/snapshots)",
    )
    group.addoption(
        "--harness-adapter",
        metavar="SPEC",
        default=None,
        help="the runtime under test: reference (default), node-dsh, jsonl:COMMAND or "
        "module:factory",
    )
    group.addoption(
        "--harness-observed",
        metavar="DIR",
        default=None,
        help="also write each compared snapshot text to DIR/<scenario id>/<test>.json "
        "(never to the snapshot directory); used by `python -m tests.determinism`",
    )


def pytest_configure(config: pytest.Config) -> None:
    option = config.getoption("--harness-snapshots")
    root = (Path(option) if option else config.rootpath / "snapshots").resolve()
    config.stash[_OUTER_ROOT] = ScenarioSnapshotExtension.snapshot_root
    ScenarioSnapshotExtension.snapshot_root = root
    config.stash[_SNAPSHOT_DIR] = root

    observed: str | None = config.getoption("--harness-observed")
    observed_dir = Path(observed).resolve() if observed else None
    if observed_dir is not None and observed_dir.is_relative_to(root):
        raise pytest.UsageError(
            f"--harness-observed {observed}: must lie outside the snapshot directory {root}, "
            "whose files are the golden ones"
        )
    config.stash[_OBSERVED_DIR] = observed_dir

    # pytest_configure runs before any pytest_sessionstart, where syrupy reads these options;
    # every xdist worker sees the same environment and switches them off for itself too.
    refused = ci_refuses_updates() and any(
        getattr(config.option, name, False)
        for name in ("update_snapshots", "update_new_snapshots_only")
    )
    if refused:
        config.option.update_snapshots = False
        config.option.update_new_snapshots_only = False
    config.stash[_UPDATE_REFUSED] = refused


def pytest_unconfigure(config: pytest.Config) -> None:
    # An in-process pytester session configures this plugin again inside a test; the
    # outer session's remaining tests must go on reading their own snapshot directory.
    if _OUTER_ROOT in config.stash:
        ScenarioSnapshotExtension.snapshot_root = config.stash[_OUTER_ROOT]


def pytest_report_header(config: pytest.Config) -> list[str]:
    lines = [f"harness snapshots: {config.stash[_SNAPSHOT_DIR]}"]
    observed = config.stash[_OBSERVED_DIR]
    if observed is not None:
        lines.append(f"harness observed snapshots: {observed}")
    if config.stash[_UPDATE_REFUSED]:
        lines.append(CI_REFUSAL)
    return lines


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    # Repeated at the end, where a reader of a long CI log looks first; an xdist worker's
    # summary goes nowhere, so only the controller says it.
    config = terminalreporter.config
    if config.stash.get(_UPDATE_REFUSED, False) and not hasattr(config, "workerinput"):
        terminalreporter.write_line(CI_REFUSAL, yellow=True, bold=True)


@pytest.fixture
def harness_guard(request: pytest.FixtureRequest) -> str | None:
    """The `--guard` variant, or None for each scenario's own (normally the decision)."""
    name: str | None = request.config.getoption("--guard")
    if name is not None:
        from harness.guards import guard_named

        try:
            guard_named(name)
        except ValueError as exc:
            raise pytest.UsageError(f"--guard: {exc}") from None
    return name


@pytest.fixture(scope="session")
def harness_adapter(request: pytest.FixtureRequest) -> Iterator[Adapter]:
    """The runtime under test, started once per session (and per xdist worker)."""
    from harness.adapters import AdapterError, open_adapter

    spec: str | None = request.config.getoption("--harness-adapter")
    try:
        adapter = open_adapter(spec)
    except AdapterError as exc:
        raise pytest.UsageError(f"--harness-adapter: {exc}") from None
    try:
        yield adapter
    finally:
        adapter.close()


@pytest.fixture(scope="session")
def harness_expectations(harness_adapter: Adapter) -> Expectations:
    """The adapter's known failures, checked against the scenario ids it names."""
    from harness.adapters import Expectations, ExpectationsError
    from harness.scenario import scenario_paths

    path = harness_adapter.expectations
    if path is None or not path.is_file():
        return Expectations.none()
    try:
        # Ids equal file names (the loader checks): no need to parse every scenario.
        return Expectations.load(path, {p.stem for p in scenario_paths()})
    except ExpectationsError as exc:
        raise pytest.UsageError("\n".join(exc.problems)) from None


@pytest.fixture
def harness_snapshot_dir(request: pytest.FixtureRequest) -> Path:
    """The directory of golden snapshot files this run compares against."""
    return request.config.stash[_SNAPSHOT_DIR]


@pytest.fixture
def scenario_snapshot(
    snapshot: SnapshotAssertion, request: pytest.FixtureRequest
) -> SnapshotAssertion:
    return ObservedSnapshotAssertion(
        session=snapshot.session,
        extension_class=ScenarioSnapshotExtension,
        test_location=snapshot.test_location,
        update_snapshots=snapshot.update_snapshots,
        update_new_snapshots_only=snapshot.update_new_snapshots_only,
        observed_dir=request.config.stash[_OBSERVED_DIR],
    )
