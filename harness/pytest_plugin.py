"""pytest plugin: the `scenario_snapshot` fixture, pinning one readable JSON file per
scenario under the top-level `snapshots/` directory (not `__snapshots__`), so runtimes in
other languages can diff against the same bytes.

A test that uses it must be parametrised with `scenario_id`: that id, not the test's name,
names the file, so any test pinning the same scenario pins the same file.

The plugin touches only the goldens of the scenarios this session's tests use: syrupy sees
(and so may report as unused) just those of the tests that set the fixture up and were not
skipped, and none while updating, so neither `--snapshot-update` nor a run that pins a few
scenarios of a vendored `snapshots/` deletes any golden. A golden belongs to its scenario,
not to a test; it goes away with `git rm`, never as a side effect of a test run.

Two guards keep the golden files honest: under `CI` (true or 1) `--snapshot-update` is
switched off before syrupy starts, so CI only ever compares; and `--harness-observed DIR`
keeps a copy of every compared text outside the golden directory, one per test, which is
what the determinism check (`python -m tests.determinism`) diffs across runs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.data import SnapshotCollections
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode
from syrupy.location import PyTestLocation

if TYPE_CHECKING:
    from harness.adapters import Adapter, Expectations
    from harness.contract import Wire
    from harness.run import Ran
    from harness.scenario import Scenario

CI_REFUSAL = (
    "harness: CI is set, so --snapshot-update is ignored: snapshots are compared, never written"
)
_UPDATE_REFUSED = pytest.StashKey[bool]()
_OBSERVED_DIR = pytest.StashKey["Path | None"]()
_SNAPSHOT_DIR = pytest.StashKey[Path]()
_OUTER_ROOT = pytest.StashKey[Path]()
# Node id -> scenario id of each test that set up `scenario_snapshot` in this process, and the
# node ids reported skipped (xfail included): what syrupy may see (see `in_play`).
_SET_UP = pytest.StashKey[dict[str, str]]()
_SKIPPED = pytest.StashKey[set[str]]()


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
        name = str(callspec.params["scenario_id"])
        if not is_file_name(name):
            raise pytest.UsageError(
                f"{test_location.nodeid}: scenario_id {name!r} is not a file name; the "
                "snapshot file must lie directly in the snapshot directory"
            )
        return name

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
        # An xdist controller asks about items rebuilt from the workers' reports, which carry
        # no parameters: those relate to no golden, rather than stopping the session.
        callspec = getattr(test_location.item, "callspec", None)
        if callspec is None or "scenario_id" not in callspec.params:
            return False
        location = Path(snapshot_location)
        return location.parent == cls.snapshot_root and location.stem == cls.get_snapshot_name(
            test_location=test_location
        )

    def discover_snapshots(
        self, *, test_location: PyTestLocation, ignore_extensions: list[str] | None = None
    ) -> SnapshotCollections:
        """Only the goldens `in_play`, never the directory's other files.

        syrupy counts every discovered file no test compared as unused: it fails a plain run
        over it and deletes it under `--snapshot-update`. Walking the directory would hand
        it every golden a vendored copy holds, and those of tests skipped or never reached.
        """
        discovered = SnapshotCollections()
        config = getattr(test_location.item, "config", None)
        if config is None or getattr(config.option, "update_snapshots", False):
            return discovered  # syrupy deletes what it sees unused while updating: show none
        for scenario_id in sorted(filter(is_file_name, in_play(config))):
            location = Path(self.snapshot_root) / f"{scenario_id}.json"
            if location.is_file():
                discovered.add(self.read_snapshot_collection(snapshot_location=str(location)))
        return discovered

    def delete_snapshots(self, *, snapshot_location: str, snapshot_names: set[str]) -> None:
        # Not reached while discovery holds; a second guard should a later syrupy delete
        # through the extension on other grounds.
        return None

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


def is_file_name(name: str) -> bool:
    """Whether `<name>.json` lies directly in the snapshot directory."""
    return name not in ("", ".", "..") and Path(name).name == name


def in_play(config: pytest.Config) -> set[str]:
    """The scenario ids whose goldens syrupy may judge in a plain run: those of the tests
    that set `scenario_snapshot` up in this process and were not skipped. Such a golden that
    no test compared is reported as unused, and fails the run: a test that stopped comparing.

    Per process: under xdist each worker judges what it ran, and the controller, which runs
    nothing, merges what the workers found, so a golden compared on any worker is used.
    """
    skipped = config.stash.get(_SKIPPED, set())
    set_up = config.stash.get(_SET_UP, {})
    return {sid for nodeid, sid in set_up.items() if nodeid not in skipped}


def observed_name(nodeid: str) -> str:
    """A test node id as a file name: every run of other characters becomes one `_`."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", nodeid).strip("_")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("harness", "keyless-harness")
    group.addoption(
        "--guard",
        default=None,
        metavar="NAME",
        help="run scenarios under a caller-check guard (test-only unless runtime-ownership)",
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
        help="the runtime under test, as `harness run --adapter` takes it: reference "
        "(default), node-dsh, an agent CLI (claude-code, qwen-code, opencode, codex) or one "
        "over ACP (NAME-acp, acp:COMMAND), a Python framework (openai-agents, deepagents, "
        "google-adk(-single-turn), pydantic-ai(-deferred), smolagents), "
        "jsonl:COMMAND or module:factory",
    )
    group.addoption(
        "--harness-level",
        choices=("live", "rule", "upstream"),
        default="upstream",
        help="the conformance level harness_run gates on: live, rule, or upstream (the default; "
        "a golden compared through scenario_snapshot is upstream's whatever this says)",
    )
    group.addoption(
        "--harness-observed",
        metavar="DIR",
        default=None,
        help="also write each compared snapshot text to DIR/<scenario id>/<test>.json "
        "(never to the snapshot directory); used by `python -m tests.determinism`",
    )


def pytest_configure(config: pytest.Config) -> None:
    # Files are named by scenario id, not by test, on purpose (one file per scenario, shared
    # by every test pinning it); syrupy warns about that on every write, in any repository.
    config.addinivalue_line("filterwarnings", r"ignore:\s*Can not relate snapshot name:UserWarning")
    option = config.getoption("--harness-snapshots")
    root = (Path(option) if option else config.rootpath / "snapshots").resolve()
    config.stash[_OUTER_ROOT] = ScenarioSnapshotExtension.snapshot_root
    ScenarioSnapshotExtension.snapshot_root = root
    config.stash[_SNAPSHOT_DIR] = root
    config.stash[_SET_UP] = {}
    config.stash[_SKIPPED] = set()

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
    updating = any(
        getattr(config.option, name, False)
        for name in ("update_snapshots", "update_new_snapshots_only")
    )
    refused = False
    if updating:  # asked only then: a plain session need not import the run package
        from harness.run._ci import ci_refuses_updates

        refused = ci_refuses_updates()
    if refused:
        config.option.update_snapshots = False
        config.option.update_new_snapshots_only = False
    config.stash[_UPDATE_REFUSED] = refused


def pytest_unconfigure(config: pytest.Config) -> None:
    # An in-process pytester session configures this plugin again inside a test; the
    # outer session's remaining tests must go on reading their own snapshot directory.
    if _OUTER_ROOT in config.stash:
        ScenarioSnapshotExtension.snapshot_root = config.stash[_OUTER_ROOT]


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    # Outermost, so an xfail already reads as skipped: a skipped test's golden is not unused.
    report = yield
    if report.skipped and _SKIPPED in item.config.stash:
        item.config.stash[_SKIPPED].add(item.nodeid)
    return report


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
    """The guard `--guard` names, or None for each scenario's own (normally the decision)."""
    name: str | None = request.config.getoption("--guard")
    if name is not None:
        from harness.adapters.reference.guards import guard_named

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
    from harness.contract import release_of
    from harness.scenario import scenario_paths

    path = harness_adapter.expectations
    if path is None or not path.is_file():
        return Expectations.none()
    try:
        # Ids equal file names (the loader checks): no need to parse every scenario.
        return Expectations.load(
            path, {p.stem for p in scenario_paths()}, release_of(harness_adapter)
        )
    except ExpectationsError as exc:
        raise pytest.UsageError("\n".join(exc.problems)) from None


@pytest.fixture
def harness_run(
    request: pytest.FixtureRequest,
    harness_adapter: Adapter,
    harness_expectations: Expectations,
    harness_guard: str | None,
) -> Callable[..., Ran]:
    """`harness_run(scenario, wire=None)`: one scenario on this session's runtime under
    `--guard`, through the run loop `harness run` uses (harness.run.run_loop): judged
    against its expectations at `--harness-level` and labelled by the adapter's known
    failures. Its golden is left to `scenario_snapshot`, which syrupy compares."""
    from harness.contract import RunOptions, Wire
    from harness.run import run_loop

    level: str = request.config.getoption("--harness-level")

    def run(scenario: Scenario, wire: Wire | None = None) -> Ran:
        options = RunOptions(guard=harness_guard, wire=Wire() if wire is None else wire)
        (ran,) = run_loop(
            [scenario], harness_adapter, options, expectations=harness_expectations, level=level
        )
        return ran

    return run


@pytest.fixture
def harness_snapshot_dir(request: pytest.FixtureRequest) -> Path:
    """The directory of golden snapshot files this run compares against."""
    return request.config.stash[_SNAPSHOT_DIR]


@pytest.fixture
def scenario_snapshot(
    snapshot: SnapshotAssertion, request: pytest.FixtureRequest
) -> SnapshotAssertion:
    """Compares against `<snapshot dir>/<scenario_id>.json`.

    A test comparing only under some condition should request it then, with
    `request.getfixturevalue("scenario_snapshot")`: a test that sets it up and compares
    nothing fails the run with its golden reported as unused.
    """
    callspec = getattr(request.node, "callspec", None)
    if callspec is not None and "scenario_id" in callspec.params:
        request.config.stash[_SET_UP][request.node.nodeid] = str(callspec.params["scenario_id"])
    return ObservedSnapshotAssertion(
        session=snapshot.session,
        extension_class=ScenarioSnapshotExtension,
        test_location=snapshot.test_location,
        update_snapshots=snapshot.update_snapshots,
        update_new_snapshots_only=snapshot.update_new_snapshots_only,
        observed_dir=request.config.stash[_OBSERVED_DIR],
    )
