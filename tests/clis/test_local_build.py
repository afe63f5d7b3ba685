"""A runtime's own build under the gate (`--adapter NAME@PATH`): a copy of the pinned Qwen
Code, run from its built entry point, is green; the same copy patched so that a subagent is
offered ask_user_question again (undoing QwenLM/qwen-code PR #8219) makes the gate red,
with the hang and its wait-for graph. This is the recipe adapters/qwen-code/README.md
gives Qwen Code's own CI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.adapters.clis.qwen_code import adapter_dir
from harness.cli import main
from harness.cli._exits import EXIT_HANG

pytestmark = [
    pytest.mark.cli,
    pytest.mark.skipif(
        shutil.which("npm") is None or shutil.which("node") is None,
        reason="Qwen Code installs with npm and runs on node; .ci/run says SKIPPED loudly then",
    ),
]
# The two places 0.24.4 takes ask_user_question away from a subagent; the patch removes
# both, as a branch that regressed would.
PATCHES = (
    ("(toolName) => toolName !== ToolNames.ASK_USER_QUESTION && !EXCLUDED_TOOLS_FOR_SUBAGENTS",
     "(toolName) => !EXCLUDED_TOOLS_FOR_SUBAGENTS"),
    ("...configuredToolConfig?.disallowedTools ?? [],\n            ToolNames.ASK_USER_QUESTION\n",
     "...configuredToolConfig?.disallowedTools ?? []\n"),
)  # fmt: skip
GATE = ["--level", "rule", "delegated-question-handoff", "child-no-answerer"]


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the pinned package, as a checkout's build would be laid out."""
    assert main(["run", "--adapter", "qwen-code", "root-no-answerer"]) == 0  # installed
    installed = adapter_dir() / "node_modules" / "@qwen-code" / "qwen-code"
    copy = tmp_path_factory.mktemp("qwen-build") / "qwen-code"
    shutil.copytree(installed, copy, symlinks=True)
    return copy


def test_the_unpatched_build_passes_the_gate(
    build: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "--adapter", f"qwen-code@{build / 'cli.js'}", *GATE]) == 0
    out = capsys.readouterr().out
    version = json.loads((build / "package.json").read_text("utf-8"))["version"]
    assert f"Qwen Code (local build {build / 'cli.js'}, {version}" in out


def test_a_build_that_lets_a_child_ask_again_fails_the_gate(
    build: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    patched = tmp_path / "qwen-code"
    shutil.copytree(build, patched, symlinks=True)
    (chunk,) = [p for p in (patched / "chunks").glob("*.js")
                if PATCHES[0][0] in p.read_text("utf-8")]  # fmt: skip
    text = chunk.read_text("utf-8")
    for old, new in PATCHES:
        assert text.count(old) == 1, f"the patch no longer applies at this pin: {old!r}"
        text = text.replace(old, new)
    chunk.write_text(text, "utf-8")
    # Red: the exit of a run that hangs (harness.cli._exits.EXIT_HANG).
    assert main(["run", "--adapter", f"qwen-code@{patched / 'cli.js'}", *GATE]) == EXIT_HANG
    out = capsys.readouterr().out
    assert "NEW FAIL   delegated-question-handoff" in out
    assert "observed hang" in out
    assert 'child (owned by parent) --awaits answer to "cuda-fallback"' in out
