from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main


def test_one_table_names_every_command_and_each_module_has_both_functions() -> None:
    import argparse
    import importlib

    from harness.cli._main import COMMANDS, parser

    top = parser()
    (commands,) = [a for a in top._actions if isinstance(a, argparse._SubParsersAction)]
    assert list(commands.choices) == [c.name for c in COMMANDS]
    for command in COMMANDS:
        module = importlib.import_module(command.module)
        assert callable(module.add_arguments) and callable(module.run), command.name


def test_a_commands_options_are_added_only_once_it_is_named() -> None:
    # So `harness list` imports nothing of `harness run`, and starts as fast as it can.
    import argparse

    from harness.cli._main import parser

    top = parser()
    assert top.parse_args(["list"]).command == "list"
    (commands,) = [a for a in top._actions if isinstance(a, argparse._SubParsersAction)]
    options = {name: len(sub._actions) for name, sub in commands.choices.items()}
    assert options["run"] == options["report"] == 1  # -h alone: never filled in
    assert top.parse_args(["run", "--json"]).json is True


def test_list_shows_every_scenario(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    ids = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert ids == sorted(ids) and "zero-depth-live-child" in ids and len(ids) >= 5


def test_run_prints_one_line_per_scenario_and_a_total(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "zero-depth-live-child", "missing-registry"]) == 0
    runtime, *lines = capsys.readouterr().out.splitlines()
    # First, what ran: the adapter and the runtime it says it is, with versions.
    assert runtime.startswith("runtime: reference: keyless-harness reference runtime")
    assert lines[0].startswith("PASS  zero-depth-live-child")
    assert "expected: completed, DELEGATED_CALLER@child, answerer=0" in lines[0]
    assert lines[-1] == "2 passed, 0 failed"


def test_run_json_contract(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--json", "stale-same-id-object"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["adapter"] == "reference" and "Python" in report["runtime"]
    (entry,) = report["scenarios"]
    assert entry["id"] == "stale-same-id-object" and entry["status"] == "pass"
    observed = entry["observed"]
    assert observed["outcome"] == "completed"
    assert observed["answerer_calls"] == 0
    assert observed["tool_errors"] == [
        {"agent": "child", "tool": "ask_user_question", "code": "CALLER_NOT_LIVE"}
    ]
    assert observed["handoffs"] == ["UNRESOLVED: Should deployment use the CUDA fallback?"]


def test_failing_scenario_exits_1_and_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = Path(__file__).parents[1] / "scenarios" / "zero-depth-live-child.yaml"
    text = source.read_text().replace("code: DELEGATED_CALLER", "code: CALLER_NOT_LIVE")
    (tmp_path / "zero-depth-live-child.yaml").write_text(text)
    assert main(["--scenarios", str(tmp_path), "run"]) == 1
    out = capsys.readouterr().out.split("\n", 1)[1]  # after the runtime line
    assert out.startswith("FAIL  zero-depth-live-child")
    assert (
        "tool_errors: expected [child.ask_user_question=CALLER_NOT_LIVE], observed "
        "[child.ask_user_question=DELEGATED_CALLER]" in out
    )
    assert out.splitlines()[-1] == "0 passed, 1 failed (1 without a golden snapshot)"


def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "no-such-scenario"]) == 2
    assert capsys.readouterr().err == (
        "harness: unknown scenario id(s): no-such-scenario; 'harness list' shows the ids\n"
    )
    (tmp_path / "broken.yaml").write_text("id: broken\n")
    assert main(["--scenarios", str(tmp_path), "run"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    *problems, total = err.splitlines()
    assert total == "harness: 5 problem(s) in scenario files; nothing was run"
    assert all(line.startswith(f"{tmp_path / 'broken.yaml'}: /: ") for line in problems)
    assert any("missing 'phases': what runs, in order" in line for line in problems)
    assert main(["--scenarios", str(tmp_path / "missing"), "list"]) == 2


def test_validate_checks_without_running(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate"]) == 0
    assert capsys.readouterr().out.strip().endswith("scenario file(s) valid")


def test_validate_reports_every_problem_in_every_path_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.yaml").write_text("id: a\nid: b\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.yaml").write_text("id: b\ntitle: t\n")
    good = Path(__file__).parents[1] / "scenarios" / "missing-registry.yaml"
    assert main(["validate", str(tmp_path / "a.yaml"), str(tmp_path / "sub"), str(good)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    *lines, total = captured.err.splitlines()
    assert (
        lines[0] == f"{tmp_path / 'a.yaml'}:2:1: duplicate key 'id' (first at line 1); a key "
        "may appear once in a mapping"
    )
    assert all(line.startswith(f"{tmp_path / 'sub' / 'b.yaml'}: /: ") for line in lines[1:])
    assert total == f"harness: {len(lines)} problem(s) in scenario files; 3 file(s) checked"
    assert main(["validate", str(tmp_path / "nowhere")]) == 2
    assert "nowhere: no such file or directory" in capsys.readouterr().err


def test_a_bad_option_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["run", "--guard", "bogus"])
    assert info.value.code == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("harness run: argument --guard: invalid choice: 'bogus'")
    assert line.endswith("see 'harness run --help'")


def test_an_internal_error_is_one_line_unless_debug(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import harness.run

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the runner broke")

    monkeypatch.setattr(harness.run, "run_loop", broken)
    assert main(["run", "missing-registry"]) == 4
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("harness: internal error: RuntimeError: the runner broke. This is a bug")
    assert "rerun with --debug" in line
    with pytest.raises(RuntimeError, match="the runner broke"):
        main(["--debug", "run", "missing-registry"])


def test_repro_shows_direct_asks_and_a_hung_direct_asks_graph(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["repro", "service-resumed-root"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].startswith("  #1   (ask)  direct ask by child -> [DELEGATED_CALLER] Error:")
    answers = '{"answers":[{"id":"cuda-fallback","selected":["Yes"]}]}'
    assert lines[2] == f"  #2   (ask)  direct ask by child -> {answers}"
    assert lines[-2:] == ["outcome: completed", "verdict: pass"]
    assert main(["repro", "service-zero-depth-live-child", "--guard", "none"]) == 3
    out = capsys.readouterr().out
    assert 'child (owned by parent) --awaits answer to "cuda-fallback"--> tripwire answerer' in out
    assert "  child: direct ask phase (seq 1)" in out


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["hang-before-the-fix"], 0),  # the hang it expects: a pass, as run says
        (["zero-depth-live-child", "--guard", "none"], 3),  # a hang it does not expect
        (["live-root-answered", "--guard", "none"], 0),
    ],
)
def test_repro_exits_as_run_does(
    args: list[str], code: int, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["repro", *args]) == code
    assert main(["run", *args]) == code
    capsys.readouterr()


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--guard", "none"], "--guard is the reference runtime's"),
        (["--mermaid"], "--mermaid is the reference runtime's"),
    ],
)
def test_repro_on_another_runtime_refuses_the_references_own_flags(
    flags: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Refused before any runtime starts: a foreign CLI has no guard seam or durable logs.
    assert main(["repro", "--adapter", "codex", *flags, "live-root-answered"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert (
        len(err) == 1 and err[0].startswith(f"harness: {said}") and "drop it or --adapter" in err[0]
    )


def test_repro_exits_1_for_a_scenario_that_errs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = Path(__file__).parents[1] / "scenarios" / "live-root-answered.yaml"
    text = source.read_text().replace('      - say: "ANSWERED: {{ask.result}}"\n', "")
    (tmp_path / "live-root-answered.yaml").write_text(text)
    assert main(["--scenarios", str(tmp_path), "repro", "live-root-answered"]) == 1
    out = capsys.readouterr().out
    assert "verdict:\n  agent lead asked for step 2, but its script has only 1 step(s)" in out


def test_version_names_the_package_and_the_scenario_contract(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from importlib.metadata import version

    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    contract = (Path(__file__).parents[1] / "scenarios" / "VERSION").read_text().strip()
    assert capsys.readouterr().out == (
        f"harness (keyless-harness) {version('keyless-harness')}; scenarios {contract}\n"
    )


@pytest.mark.parametrize("port", ["99999", "-1", "65536"])
def test_serve_on_a_port_that_cannot_exist_is_bad_input(
    port: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", "live-root-answered", "--port", port]) == 2
    assert capsys.readouterr().err == (
        f"harness: --port {port}: a TCP port is 0 to 65535 (0: any free port)\n"
    )
