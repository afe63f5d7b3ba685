"""A script the fake cannot follow ends its scenario as `error`, with a message naming the
agent and the step, through the runner and the CLI alike: never a traceback, never a hang."""

from __future__ import annotations

import dataclasses
import datetime
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.run import run_scenario
from harness.scenario import Call, Scenario, Turn, load_scenario
from tests.conftest import SCENARIOS

SOURCE = Path(__file__).parents[1] / "scenarios" / "zero-depth-live-child.yaml"


def edited(tmp_path: Path, old: str, new: str) -> Path:
    text = SOURCE.read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / SOURCE.name
    path.write_text(text.replace(old, new), encoding="utf-8")
    return path


def with_child_script(*turns: Turn) -> Scenario:
    scenario = SCENARIOS["zero-depth-live-child"]
    child = dataclasses.replace(scenario.agents["child"], script=turns)
    return dataclasses.replace(scenario, agents={**scenario.agents, "child": child})


def test_exhausted_script(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The child's script ends with its tool call: the runtime asks for one more turn.
    path = edited(tmp_path, '      - say: "UNRESOLVED: {{ask.args.questions.0.question}}"\n', "")
    result = run_scenario(load_scenario(path))
    assert result.status == "error"
    assert result.mismatches[0].startswith(
        "agent child asked for step 2, but its script has only 1 step(s)"
    )
    # It ends with where to fix it: the file, and the script that has no step 2.
    assert result.mismatches[0].endswith(f"({path}: /agents/child/script)")
    assert main(["--scenarios", str(tmp_path), "run"]) == 1
    captured = capsys.readouterr()
    # The loader saw it coming, and said so without refusing the file.
    warning = f"{path}: /agents/child/script/0: warning: the script ends in a tool call"
    assert warning in captured.err
    out = captured.out.split("\n", 1)[1]  # after the runtime line
    assert out.startswith("ERROR zero-depth-live-child") and "agent child asked for step 2" in out


def test_unknown_agent(tmp_path: Path) -> None:
    # The second delegation's name comes from a template (the first call's id), so only the
    # run can find that nobody scripted an agent of that name.
    path = edited(
        tmp_path,
        "      - say: PARENT_COMPLETED\n",
        "      - call: subagent\n        args: {name: '{{d.id}}', prompt: p}\n"
        "      - say: PARENT_COMPLETED\n",
    )
    text = path.read_text().replace(
        "- call: subagent\n        args:\n", "- call: subagent\n        as: d\n        args:\n", 1
    )
    path.write_text(text)
    result = run_scenario(load_scenario(path))
    assert result.status == "error"
    assert result.mismatches[0].startswith(
        "no script for agent 'call_1' (scripted agents: child, parent); it asked for step 1"
    )


@pytest.mark.parametrize(
    ("args", "why"),
    [
        ({"when": datetime.date(2024, 1, 1)}, "Object of type date is not JSON serializable"),
        ({"n": float("nan")}, "Out of range float values are not JSON compliant"),
        (["not", "a", "mapping"], "arguments must be a mapping (a JSON object), got list"),
    ],
    ids=["date", "nan", "list"],
)
def test_malformed_arguments(args: Any, why: str) -> None:
    scenario = with_child_script(Turn(calls=(Call("ask_user_question", args),)), Turn.text("x"))
    result = run_scenario(scenario)
    assert result.status == "error"
    # The failed agent's remaining steps are a consequence, not a second cause.
    (message,) = result.mismatches
    assert message.startswith("agent child, step 1, call 1 (ask_user_question): ")
    assert why in message


def test_a_question_the_scripted_human_has_no_answer_for() -> None:
    # The runtime turns whatever a provider throws into a tool error (root-provider-fails),
    # so the scenario's own mistake is said by the run's outcome, not lost in a mismatch.
    scenario = SCENARIOS["live-root-answered"]
    world = dataclasses.replace(scenario.world, answers={})
    result = run_scenario(dataclasses.replace(scenario, world=world))
    assert (result.observation.outcome, result.observation.error) == (
        "error",
        "UnscriptedQuestion: scripted human has no answer for question(s) cuda-fallback; add "
        "them under world.answers",
    )
