"""`harness matrix`: the corpus on several runtimes as one table, Markdown or JSON, and a
committed table checked against what the runtimes do now."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from harness.cli import main
from tests.conftest import SCENARIOS

ROOT = Path(__file__).parents[1]
# A second runtime: the service-level scenarios on the reference runtime, behind the
# JSON-lines protocol, every assembled one skipped for the feature it lacks.
PY_ADAPTER = f"jsonl:{sys.executable} -m tests.process.jsonl_adapter"


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The table of the reference and the Python adapter, made once for the module."""
    out = tmp_path_factory.mktemp("matrix") / "matrix.json"
    args = ["matrix", "--adapter", "reference", "--adapter", PY_ADAPTER]
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(ROOT)
        assert main([*args, "--format", "json", "--output", str(out)]) == 0
    return out.read_text("utf-8")


@pytest.fixture
def table(made: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A test's own copy of that table, to check against or to change."""
    monkeypatch.chdir(ROOT)
    out = tmp_path / "matrix.json"
    out.write_text(made, "utf-8")
    return out


def test_a_column_per_runtime_and_a_cell_per_scenario(table: Path) -> None:
    written = json.loads(table.read_text("utf-8"))
    assert written["scenarios"] == sorted(SCENARIOS)
    reference, other = written["columns"]
    assert reference["adapter"] == "reference"
    # What ran, without what is the machine's (the Python it ran on).
    assert reference["runtime"] == "keyless-harness reference runtime (harness.runtime)"
    assert set(reference["cells"].values()) == {"upstream"}
    assert other["cells"]["service-zero-depth-live-child"] == "upstream"
    assert other["cells"]["delegated-question-handoff"].startswith("skip: ")
    assert written["command"] == f"harness matrix --adapter reference --adapter {PY_ADAPTER}"


def test_a_committed_table_is_checked_cell_by_cell(
    table: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["matrix", "--adapter", "reference", "--adapter", PY_ADAPTER, "--check", str(table)]
    assert main([*args, "--output", str(table.with_suffix(".md"))]) == 0
    written = json.loads(table.read_text("utf-8"))
    written["columns"][0]["cells"]["delegated-question-handoff"] = "rule"
    table.write_text(json.dumps(written), "utf-8")
    capsys.readouterr()
    assert main([*args, "--output", str(table.with_suffix(".md"))]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0] == (
        "matrix: reference / delegated-question-handoff: now 'upstream', the table says 'rule'"
    )
    assert err[-1].startswith(f"matrix: {table} is not what the runtimes do now;")


def test_a_streamed_run_is_checked_against_the_unstreamed_table(
    table: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # How CI gates every runtime's stream handling on the committed table.
    out = tmp_path / "streamed.json"
    args = ["matrix", "--adapter", "reference", "--adapter", PY_ADAPTER, "--stream", "--chunk", "1"]
    assert main([*args, "--check", str(table), "--format", "json", "--output", str(out)]) == 0
    streamed = json.loads(out.read_text("utf-8"))
    assert streamed["columns"] == json.loads(table.read_text("utf-8"))["columns"]
    assert streamed["command"].endswith(f"--adapter {PY_ADAPTER} --stream --chunk 1")
    # Columns at once: the same table, in the order named.
    both = tmp_path / "both.json"
    args = ["matrix", "--adapter", "reference", "--adapter", PY_ADAPTER,
            "--adapter", f"jsonl:ADAPTER_TWIN=1 {PY_ADAPTER.removeprefix('jsonl:')}"]  # fmt: skip
    assert main([*args, "--jobs", "2", "--format", "json", "--output", str(both)]) == 0
    columns = json.loads(both.read_text("utf-8"))["columns"]
    assert columns[:2] == json.loads(table.read_text("utf-8"))["columns"]
    assert columns[2]["cells"] == columns[1]["cells"]
    assert main(["matrix", "--jobs", "0"]) == 2
    assert "--jobs takes a positive number" in capsys.readouterr().err
    assert main(["matrix", "--chunk", "1"]) == 2
    assert "--chunk takes a positive number of characters, together with --stream" in (
        capsys.readouterr().err
    )


def test_markdown_names_the_command_and_each_runtime(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["matrix"]) == 0
    shown = capsys.readouterr().out.splitlines()
    assert shown[0].startswith("Made by `harness matrix --adapter reference`.")
    assert "| reference | keyless-harness reference runtime (harness.runtime) |" in shown
    assert "| delegated-question-handoff | upstream |" in shown
    # A path of an agent CLI that no adapter runs is named under the table, with why.
    assert shown[-1].startswith("- Gemini CLI headless (@google/gemini-cli 0.61.0, `gemini -p`)")
    assert "no human end" in shown[-1]


def test_a_runtime_named_twice_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["matrix", "--adapter", "reference", "--adapter", "reference"]) == 2
    assert "names a runtime twice" in capsys.readouterr().err


def test_the_committed_markdown_is_the_committed_json() -> None:
    # .ci/run checks adapters/matrix.json against the runtimes; this keeps the page the
    # README points at the same table.
    from harness.cli.matrix import markdown

    table = json.loads((ROOT / "adapters" / "matrix.json").read_text("utf-8"))
    assert (ROOT / "adapters" / "MATRIX.md").read_text("utf-8") == markdown(table)
    names = [c["adapter"] for c in table["columns"]]
    # Each agent headless, then over ACP, side by side: where the two paths differ.
    assert names == [
        "reference", "node-dsh", "claude-code", "claude-code-acp", "qwen-code", "qwen-code-acp",
        "opencode", "opencode-acp", "codex", "codex-acp", "gemini-cli-acp", "openai-agents",
        "deepagents", "google-adk", "google-adk-single-turn", "pydantic-ai", "pydantic-ai-deferred",
        "smolagents",
    ]  # fmt: skip
    assert table["scenarios"] == sorted(SCENARIOS)
