"""`python -m tests.under_load`: what it runs for a choice of runtimes and steps, and that it
reports a failing run, with its load stopped whatever happens."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests import under_load


def test_one_runtime_gets_its_test_file_and_its_matrix_column() -> None:
    args = under_load.parse(["--runtime", "opencode"])
    assert (args.hogs, args.repeat, args.step) == (2, 1, ["cli", "matrix"])
    (cli, cli_command), (matrix, matrix_command) = under_load.commands(args)
    assert cli == "cli: pytest -n auto -m cli tests/clis/test_opencode.py"
    assert cli_command[1:] == ["-m", "pytest", "-n", "auto", "-q", "-m", "cli",
                               "tests/clis/test_opencode.py"]  # fmt: skip
    assert matrix == "matrix: opencode"
    assert matrix_command[1:] == ["matrix", "--adapter", "opencode", "--jobs", "2", "--format",
                                  "json", "--output", os.devnull, "--check",
                                  "adapters/matrix.json"]  # fmt: skip


def test_every_runtime_by_default_and_the_steps_in_their_order() -> None:
    args = under_load.parse(["--step", "matrix", "--step", "default", "--repeat", "3"])
    assert args.runtime == list(under_load.RUNTIMES)
    assert [name for name, _ in under_load.commands(args)] == [
        "default: pytest -n auto",
        "matrix: reference node-dsh claude-code qwen-code opencode codex claude-code-acp "
        "qwen-code-acp opencode-acp codex-acp gemini-cli-acp openai-agents deepagents google-adk "
        "google-adk-single-turn pydantic-ai pydantic-ai-deferred smolagents",
    ]
    # Every runtime's cli step is every `cli` test, the Node SDKs' among them.
    every = under_load.parse([])
    (cli, cli_command), _ = under_load.commands(every)
    assert cli == "cli: pytest -n auto -m cli"
    assert cli_command[1:] == ["-m", "pytest", "-n", "auto", "-q", "-m", "cli"]
    # The reference has no test file of its own: no cli step for it alone.
    only = under_load.parse(["--runtime", "reference"])
    assert [name for name, _ in under_load.commands(only)] == ["matrix: reference"]


@pytest.mark.parametrize("argv", [["--hogs", "-1"], ["--repeat", "0"], ["--runtime", "x"]])
def test_bad_arguments_exit_2(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        under_load.parse(argv)
    assert exited.value.code == 2


@pytest.mark.slow  # starts the load and the runs
def test_a_failing_run_fails_it_and_the_load_is_stopped(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    started: list[subprocess.Popen[bytes]] = []
    real = subprocess.Popen

    def keep(*args: object, **kwargs: object) -> subprocess.Popen[bytes]:
        proc = real(*args, **kwargs)  # type: ignore[call-overload]
        started.append(proc)
        return proc  # type: ignore[no-any-return]

    steps = [("passes", [sys.executable, "-c", "pass"]),
             ("fails", [sys.executable, "-c", "raise SystemExit(3)"])]  # fmt: skip
    monkeypatch.setattr(under_load, "commands", lambda args: steps)
    monkeypatch.setattr("tests.under_load.subprocess.Popen", keep)
    assert under_load.main(["--hogs", "1", "--repeat", "2"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert [line.split(maxsplit=2)[2] for line in out[-4:]] == [
        "passed           passes (run 1)",
        "passed           passes (run 2)",
        "FAILED (exit 3)  fails (run 1)",
        "FAILED (exit 3)  fails (run 2)",
    ]
    hogs = [p for p in started if p.args[-1] == under_load.HOG]  # type: ignore[index]
    assert len(hogs) == 1 and hogs[0].poll() is not None  # stopped
