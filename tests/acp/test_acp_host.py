"""The ACP family end to end, against a small agent on the official SDK's agent side
(tests/acp/agent.py), by command alone (`--adapter acp:COMMAND`): the host answers a
root's form and plan review as the scripted human, a child's refused call is read as an
error from the agent's updates, a question nobody answers is a hang with its wait-for graph
ending at the client, and bad specs are one line each."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.adapters import AdapterError, open_adapter
from harness.contract import Observation, RunOptions
from harness.run import judge
from tests.conftest import SCENARIOS

pytestmark = pytest.mark.slow  # each test starts the agent as a process

AGENT = Path(__file__).with_name("agent.py")
SPEC = f"acp:{sys.executable} {AGENT}"


def observe(scenario_id: str, spec: str = SPEC, **world: Any) -> Observation:
    scenario = SCENARIOS[scenario_id]
    if world:
        scenario = dataclasses.replace(scenario, world=dataclasses.replace(scenario.world, **world))
    adapter = open_adapter(spec)
    try:
        return adapter.run(scenario, RunOptions(backstop=30))
    finally:
        adapter.close()


def test_a_childs_refused_ask_is_an_error_and_the_parent_completes() -> None:
    seen = observe("delegated-question-handoff")
    assert seen.outcome == "completed", seen.error
    assert [(e["agent"], e["tool"], e["is_error"]) for e in seen.tool_errors] == [
        ("child", "ask_user_question", True)
    ]
    assert [(h["parent"], h["child"]) for h in seen.handoffs] == [("parent", "child")]
    assert seen.final["parent"] == "PARENT_COMPLETED"
    assert judge(SCENARIOS["delegated-question-handoff"], seen, "rule").held == "rule"


def test_a_roots_form_is_answered_by_the_scripted_human() -> None:
    seen = observe("live-root-answered")
    assert seen.outcome == "completed", seen.error
    assert seen.answerer_calls == 1
    assert seen.asked[0]["caller"] == "lead"
    assert seen.final["lead"] == 'ANSWERED: {"cuda-fallback": "No"}'


def test_a_question_nobody_answers_is_a_hang_ending_at_the_client() -> None:
    seen = observe("live-root-answered", answerer="unreachable")
    assert seen.outcome == "hang"
    assert seen.hang is not None
    assert seen.hang["graph"] == [
        'lead (root) --awaits answer to "cuda-fallback"--> the client\'s unreachable answerer'
    ]


def test_a_question_the_agent_never_sends_is_no_hang_the_host_can_see() -> None:
    # Without an agent-specific `unasked`, the generic host cannot know the call waits on
    # a human: the backstop ends it, saying what it last saw, and nothing is called a hang.
    seen = observe("live-root-answered", spec=f"acp:ACP_TEST_UNSHOWN=1 {SPEC[4:]}")
    assert seen.outcome == "error"
    assert seen.error is not None and "showed no progress" in seen.error


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        ("acp:", "needs a command after 'acp:'"),
        ("acp:'unclosed", "quote it as a shell would"),
        (f"acp:HARNESS_DIALECT=klingon {sys.executable}", "no such dialect file"),
    ],
)
def test_a_bad_spec_is_one_line(spec: str, said: str) -> None:
    with pytest.raises(AdapterError, match=said):
        open_adapter(spec)
