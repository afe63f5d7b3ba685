"""smolagents under test, in-process, the harness at its terminal: a child's input() on a
stdin nobody answers is a hang, decided by quiescence with its wait-for graph; a question
with a scripted answer is typed in."""

from __future__ import annotations

import sys
import time

import pytest

from harness.adapters import open_adapter
from harness.contract import RunOptions
from harness.run import LIVE, RULE, judge
from tests.conftest import SCENARIOS


@pytest.fixture(scope="module")
def smol() -> object:
    return open_adapter("smolagents")


def test_a_childs_question_at_a_terminal_nobody_answers_is_a_hang_with_its_graph(
    smol: object,
) -> None:
    stdin = sys.stdin
    started = time.monotonic()
    observed = smol.run(SCENARIOS["grandchild-refused"], RunOptions())  # type: ignore[attr-defined]
    assert observed.outcome == "hang"
    assert observed.hang is not None and observed.hang["graph"] == [
        "parent (root) --awaits subagent call--> child (owned by parent) --awaits subagent "
        'call--> grandchild (owned by child) --awaits answer to "Should deployment use the '
        'CUDA fallback?"--> stdin, which no one answers'
    ]
    assert [a["caller"] for a in observed.asked] == ["grandchild"]
    assert sys.stdin is stdin  # the terminal is given back
    assert time.monotonic() - started < 30  # decided by quiescence, not by a clock


def test_a_question_the_scripted_human_answers_is_typed_in(smol: object) -> None:
    scenario = SCENARIOS["parent-asks-the-childs-question"]
    observed = smol.run(scenario, RunOptions())  # type: ignore[attr-defined]
    assert observed.outcome == "completed"
    assert [a["caller"] for a in observed.asked] == ["child", "parent"]
    assert judge(scenario, observed, RULE).held == LIVE


def test_the_calls_it_keeps_in_text_are_read_back(smol: object) -> None:
    scenario = SCENARIOS["live-root-answered"]
    observed = smol.run(scenario, RunOptions())  # type: ignore[attr-defined]
    # The answer reached the root through an `Observation:` text, read back as its result.
    answers = '{"answers":[{"id":"cuda-fallback","selected":["No"]}]}'
    assert observed.final["lead"] == f"ANSWERED: {answers}"
    assert judge(scenario, observed, RULE).status == "pass"


def test_a_batch_user_input_cannot_put_is_skipped_with_why(smol: object) -> None:
    observed = smol.run(SCENARIOS["child-empty-batch"], RunOptions())  # type: ignore[attr-defined]
    assert observed.outcome == "skipped" and "asks one question" in str(observed.error)


def test_the_terminal_keeps_the_questions_and_passes_the_rest_through(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from harness.adapters.frameworks.smolagents import PROMPT, Terminal

    terminal = Terminal()
    with terminal.installed():
        print("a line of the run's own")
        sys.stdout.write(f"Which pool?{PROMPT}")
        terminal.type("gpu-pool")
        assert input() == "gpu-pool"  # what input() reads is what the harness typed
    assert terminal.questions() == ["Which pool?"]
    assert capsys.readouterr().out == "a line of the run's own\n"
