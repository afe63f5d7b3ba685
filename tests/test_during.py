"""Ask phases with `while:`: a host-side ask at a scripted moment inside a model phase,
against the running runtime's own registry and service."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.run import run_scenario
from harness.scenario import ScenarioError, load_scenario
from tests.conftest import SCENARIOS

ROOT = Path(__file__).parents[1]
SCENARIO = "agentless-ask-while-child-live"


def edited(tmp_path: Path, old: str, new: str) -> Path:
    text = (ROOT / "scenarios" / f"{SCENARIO}.yaml").read_text("utf-8")
    assert old in text
    path = tmp_path / f"{SCENARIO}.yaml"
    path.write_text(text.replace(old, new, 1), "utf-8")
    return path


def test_the_asks_run_between_the_childs_steps_while_it_is_live() -> None:
    result = run_scenario(SCENARIOS[SCENARIO])
    assert result.status == "pass", result.mismatches
    child = result.observation.sessions["child"]
    refused_at = next(e["seq"] for e in child if e["type"] == "tool/result")
    said_at = next(e["seq"] for e in child if e["type"] == "message/assistant" and e["content"])
    asked_at = [d["seq"] for d in result.observation.direct]
    assert refused_at < asked_at[0] < asked_at[1] < said_at  # before its step 2, in order


def test_without_the_guard_the_live_child_reaches_the_human_too() -> None:
    result = run_scenario(SCENARIOS[SCENARIO], guard="none")
    assert result.status != "pass"
    assert "child" in [call["caller"] for call in result.observation.asked]


def test_a_while_ask_that_hangs_has_a_wait_for_graph(tmp_path: Path) -> None:
    path = edited(tmp_path, "  answerer: scripted\n  answers:\n    maintenance-window: "
                  "{selected: [tonight]}\n", "  answerer: tripwire\n")  # fmt: skip
    result = run_scenario(load_scenario(path))
    assert result.observation.outcome == "hang"
    assert result.observation.hang is not None
    assert result.observation.hang["graph"] == [
        "parent (root) --awaits subagent call call_1--> child (owned by parent)",
        'agentless call (agentless) --awaits answer to "maintenance-window"--> tripwire answerer',
    ]
    assert result.observation.hang["stopped"]["agentless call"] == (
        "direct ask while a model phase runs (seq 8)"
    )


@pytest.mark.parametrize(
    ("old", "new", "problem"),
    [
        (
            "      while: {agent: child, before_step: 2}\n      questions:",
            "      while: {agent: child, before_step: 2}\n      live: [{agent: x}]\n"
            "      questions:",
            "/phases/1/ask/live: a while ask uses the running runtime's registry as it is; "
            "remove live",
        ),
        (
            "      while: {agent: child, before_step: 2}\n      questions:",
            "      while: {agent: child, before_step: 3}\n      questions:",
            "/phases/1/ask/while/before_step: child's script has 2 step(s), so it never asks "
            "for step 3",
        ),
        (
            "      while: {agent: child, before_step: 2}\n      questions:",
            "      while: {agent: kid, before_step: 2}\n      questions:",
            "/phases/1/ask/while/agent: unknown agent 'kid'; expected one of: child, parent",
        ),
    ],
)
def test_a_bad_while_is_refused_at_its_place(
    tmp_path: Path, old: str, new: str, problem: str
) -> None:
    with pytest.raises(ScenarioError) as info:
        load_scenario(edited(tmp_path, old, new))
    assert any(problem in line for line in info.value.problems), info.value.problems
