"""A step held until another agent ends (`after:`, feature concurrent-children) and a
question the host interrupts (`interrupt`, feature interrupt): the loader's rules, the
fake's hold on each way it is called, and what a runtime that cannot meet them is shown."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import httpx
import pytest

from harness.fake import ScriptedLLM
from harness.fake.hold import Holds
from harness.fake.transport import Handler
from harness.run import run_scenario
from harness.scenario import Turn, load_scenario
from tests.conftest import SCENARIOS
from tests.test_loader import problems

BASE = """\
id: case
title: t
covers: [D3]
world: {{registry: present, answerer: {answerer}}}
agents:
  parent:
    script:
      - calls:
          - {{call: subagent, args: {{name: a, prompt: go}}}}
          - {{call: subagent, args: {{name: b, prompt: go}}}}
      - {{say: done{parent_after}}}
  a:
    spawned_by: parent
    script: [{{say: a{a_after}}}]
  b:
    spawned_by: parent
    script: [{{say: b{b_after}}}]
phases:
  - {{start: parent, prompt: go}}
expect: {{outcome: completed, answerer_calls: 0}}
features: [{features}]
"""
FEATURES = "assembled, parallel-calls, concurrent-children"
NAMES = ("parent", "a", "b")


def write(tmp_path: Path, *, features: str = FEATURES, answerer: str = "tripwire",
          **after: str) -> Path:  # fmt: skip
    text = BASE.format(
        features=features,
        answerer=answerer,
        **{f"{n}_after": f", after: {after[n]}" if n in after else "" for n in NAMES},
    )
    path = tmp_path / "case.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_held_step_loads_with_its_feature_and_only_with_it(tmp_path: Path) -> None:
    scenario = load_scenario(write(tmp_path, a="b"))
    assert [t.after for t in scenario.agents["a"].script] == ["b"]
    path = write(tmp_path, features="assembled, parallel-calls", a="b")
    assert problems(path) == [
        f"{path}: /features: missing 'concurrent-children': /agents/a/script/0 is held until b "
        "ends; add it (line 21)"
    ]
    path = write(tmp_path)
    assert problems(path) == [
        f"{path}: /features/2: 'concurrent-children' does not apply: no step is held with "
        "after; remove it (line 21)"
    ]


def test_a_hold_nobody_can_release_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, a="nobody")
    assert problems(path)[0].startswith(f"{path}: /agents/a/script/0/after: unknown agent")
    path = write(tmp_path, a="a")
    assert problems(path) == [
        f"{path}: /agents/a/script/0/after: a cannot wait for itself: a cannot end before a "
        "does; name a sibling or another root (line 14)"
    ]
    path = write(tmp_path, a="parent")
    assert problems(path) == [
        f"{path}: /agents/a/script/0/after: a cannot wait for parent, which it is delegated "
        "by: parent cannot end before a does; name a sibling or another root (line 14)"
    ]
    path = write(tmp_path, a="b", b="a")
    assert problems(path) == [
        f"{path}: /agents/a/script: a's hold until b ends closes a circle of holds, so none "
        "can be released; remove one after (line 14)"
    ]
    # A parent's step after its own child is released as soon as the child ends.
    assert load_scenario(write(tmp_path, parent="a")).agents["parent"].script[1].after == "a"


def test_interrupt_needs_its_feature_and_a_run_to_stop(tmp_path: Path) -> None:
    source = SCENARIOS["root-question-interrupted"].path.read_text(encoding="utf-8")
    path = tmp_path / "root-question-interrupted.yaml"
    path.write_text(source.replace("features: [assembled, interrupt]", "features: [assembled]"))
    assert problems(path) == [
        f"{path}: /features: missing 'interrupt': /world/answers/cuda-fallback interrupts the "
        "asking run; add it (line 4)"
    ]
    direct = """\
id: direct
title: t
covers: [D8]
features: [service, interrupt]
world: {answerer: scripted, answers: {q: interrupt}}
phases:
  - ask: {questions: [{id: q, question: Go}]}
expect: {outcome: completed, answerer_calls: 1}
"""
    path = tmp_path / "direct.yaml"
    path.write_text(direct, encoding="utf-8")
    assert problems(path) == [
        f"{path}: /phases/0/ask/questions/0/id: world.answers.q is interrupt, which stops the "
        "asking agent's run, and a direct ask has none; use abort, or ask it from a script "
        "(line 7)"
    ]


def _request(agent: str) -> httpx.Request:
    body = b'{"model": "m", "messages": [{"role": "user", "content": "go"}]}'
    return httpx.Request(
        "POST", "http://fake-llm.invalid/v1/chat/completions", content=body,
        headers={"x-harness-agent": agent, "content-type": "application/json"},
    )  # fmt: skip


def test_the_fake_serves_a_held_step_only_after_its_agent_ends_in_a_synchronous_client() -> None:
    llm = ScriptedLLM({"a": [Turn.text("a"), Turn(say="a2", after="b")], "b": [Turn.text("b")]},
                      roots=["a", "b"])  # fmt: skip
    served: list[str] = []

    def ask(agent: str) -> None:
        with httpx.Client(transport=httpx.MockTransport(Handler(llm).respond)) as client:
            reply = client.post(str(_request(agent).url), content=_request(agent).content,
                                headers=dict(_request(agent).headers))  # fmt: skip
            served.append(reply.json()["choices"][0]["message"]["content"])

    ask("a")
    held = threading.Thread(target=ask, args=("a",))
    held.start()
    held.join(0.05)  # not a clock the result depends on: only how soon the hold shows
    assert held.is_alive() and llm.holds.held == {"a": (2, "b")}
    assert llm.holds.describe() == ["a's step 2 until b ends"]
    ask("b")
    held.join()
    assert served == ["a", "b", "a2"] and llm.holds.held == {}


def test_the_fake_serves_a_held_step_only_after_its_agent_ends_on_an_event_loop() -> None:
    llm = ScriptedLLM({"a": [Turn(say="a", after="b")], "b": [Turn.text("b")]}, roots=["a", "b"])
    order: list[str] = []

    async def main() -> None:
        async with httpx.AsyncClient(transport=llm.transport()) as client:

            async def ask(agent: str) -> None:
                request = _request(agent)
                reply = await client.post(str(request.url), content=request.content,
                                          headers=dict(request.headers))  # fmt: skip
                order.append(reply.json()["choices"][0]["message"]["content"])

            await asyncio.gather(ask("a"), ask("b"))

    asyncio.run(main())
    assert order == ["b", "a"]
    # Once the agent has ended, a step held for it is served at once.
    holds = Holds({"a": [Turn(say="a", after="b")]})
    holds.ended("b")
    asyncio.run(holds.wait("a", 1))
    assert holds.held == {}


def test_a_runtime_that_runs_siblings_one_by_one_is_shown_the_hold_in_its_graph(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tests.test_behaviour_mutants import mutated

    mutated(monkeypatch, "harness.runtime.loop:concurrent_group",
            "end - start < MAX_PARALLEL_CALLS", "end - start < 1")  # fmt: skip
    result = run_scenario(SCENARIOS["siblings-finish-out-of-start-order"])
    assert result.observation.outcome == "hang"
    assert result.observation.hang is not None
    assert result.observation.hang["graph"] == [
        "parent (root) --awaits subagent call call_1--> child-a (owned by parent) --awaits its "
        "step 2, which the fake holds until child-b ends--> child-b"
    ]


def test_the_interrupted_root_ends_with_the_wait_closed_and_no_model_asked_again() -> None:
    result = run_scenario(SCENARIOS["root-question-interrupted"])
    assert result.status == "pass", result.mismatches
    lead = result.observation.sessions["lead"]
    assert [e["type"] for e in lead][-2:] == ["tool/result", "agent/error"]
    assert lead[-2]["error"] == {"name": "UserQuestionError", "code": "ASK_ABORTED"}
