"""The frameworks whose columns break the rule and lose a question (Google ADK, Pydantic AI,
smolagents): each adapter README's example, a gate that takes a pass or a known failure,
runs as written, and fails once the known failures are gone."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import readme_block

ROOT = Path(__file__).parents[2]
# Each column, with the README its example is written in.
COLUMNS = {
    "google-adk": "adapters/google-adk/README.md",
    "google-adk-single-turn": "adapters/google-adk/README.md",
    "pydantic-ai": "adapters/pydantic-ai/README.md",
    "pydantic-ai-deferred": "adapters/pydantic-ai/README.md",
    "smolagents": "adapters/smolagents/README.md",
}


def _gate(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, column: str) -> object:
    import shutil

    for folder in ("scenarios", "snapshots"):
        shutil.copytree(ROOT / folder, pytester.path / "vendor" / folder)
    example = readme_block("# ", "# tests/test_gate.py", COLUMNS[column])
    pytester.makepyfile(test_gate=example)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    return pytester.runpytest_inprocess(
        "-p", "harness.pytest_plugin", "-p", "syrupy", "--harness-adapter", column,
        "--harness-snapshots", "vendor/snapshots",
    )  # fmt: skip


@pytest.mark.parametrize("column", sorted(COLUMNS))
def test_the_adapter_readmes_gate_runs_as_written(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, column: str
) -> None:
    _gate(pytester, monkeypatch, column).assert_outcomes(passed=2)  # type: ignore[attr-defined]


def test_the_gate_fails_a_child_ask_that_is_no_known_failure(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import importlib

    # The module --adapter loads (sys.modules'), whatever other tests did to the package.
    smolagents = importlib.import_module("harness.adapters.frameworks.smolagents")
    (tmp_path / "expectations.yaml").write_text("scenarios: {}\n", encoding="utf-8")
    monkeypatch.setattr(smolagents, "adapter_dir", lambda *args: tmp_path)
    result = _gate(pytester, monkeypatch, "smolagents")
    # The child's hang and the root's question in smolagents' own shape, both new now.
    result.assert_outcomes(failed=2)  # type: ignore[attr-defined]
    raised = [line for line in result.stdout.lines if line.startswith("E ")]  # type: ignore[attr-defined]
    assert sum("AssertionError: NEW FAIL" in line for line in raised) == 2
