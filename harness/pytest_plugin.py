"""pytest plugin: the `scenario_snapshot` fixture, pinning one readable JSON file per
scenario under the top-level `snapshots/` directory (not `__snapshots__`), so runtimes in
other languages can diff against the same bytes.

A test that uses it must be parametrised with `scenario_id`: that id, not the test's name,
names the file, so any test pinning the same scenario pins the same file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode
from syrupy.location import PyTestLocation


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


def pytest_configure(config: pytest.Config) -> None:
    option = config.getoption("--harness-snapshots")
    root = Path(option) if option else config.rootpath / "snapshots"
    ScenarioSnapshotExtension.snapshot_root = root.resolve()


@pytest.fixture
def harness_guard(request: pytest.FixtureRequest) -> str | None:
    """The `--guard` variant, or None for each scenario's own (normally the decision)."""
    name: str | None = request.config.getoption("--guard")
    if name is not None:
        from harness.runtime.guards import guard_named

        try:
            guard_named(name)
        except ValueError as exc:
            raise pytest.UsageError(f"--guard: {exc}") from None
    return name


@pytest.fixture
def scenario_snapshot(snapshot: Any) -> Any:
    return snapshot.use_extension(ScenarioSnapshotExtension)
