"""The faults, composed around the runtime from outside (harness/adapters/reference/
faults.py): a store that writes a scenario's header overrides, a tool wrapper that hands a
human-interaction tool a stale caller, and a model client that aborts an agent's run as
the reply carrying a named call arrives. The runtime has no hook for any of it; these
tests, and the goldens of the scenarios with faults, are what holds the composition to
what the hooks are to do."""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path
from typing import Any

import pytest

from harness.adapters.reference.faults import (
    AbortsOnCall,
    FaultyTool,
    HeaderOverrides,
    ScenarioFaults,
)
from harness.adapters.reference.phases import observe_scenario
from harness.runtime.llm import Reply, ToolCall
from harness.runtime.questions import AbortSignal
from harness.runtime.registry import Agent, AgentRegistry
from harness.runtime.sessions import SessionHeader, SessionStore
from harness.runtime.tools import ToolContext, ToolResult, default_tools
from harness.scenario import load_scenario
from tests.conftest import SCENARIOS


class Recording:
    """A tool that remembers the context each call came with."""

    name = "ask_user_question"
    concurrency_safe = False  # as the tool it stands in for

    def __init__(self) -> None:
        self.schema: dict[str, Any] = {"type": "function", "function": {"name": self.name}}
        self.seen: list[ToolContext] = []

    async def run(self, ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
        self.seen.append(ctx)
        return ToolResult("ok")


def context(agent: Agent) -> ToolContext:
    runtime: Any = object()  # the wrapper passes the runtime on and never reads it
    return ToolContext(runtime=runtime, agent=agent, call_id="call_1", signal=AbortSignal())


def call(tool: Any, ctx: ToolContext) -> ToolResult:
    result: ToolResult = asyncio.run(tool.run(ctx, {}))
    return result


# -- the store -------------------------------------------------------------------------------
def test_the_store_writes_the_overridden_header_into_the_worlds_store() -> None:
    world = SessionStore()
    store = HeaderOverrides(world, {"child": {"delegation_depth": 0}})
    store.create(SessionHeader("child", "parent", "subagent", 1))
    store.create(SessionHeader("other", "parent", "subagent", 1))
    assert world.read("child")[0]["delegation_depth"] == 0
    assert world.read("other")[0]["delegation_depth"] == 1  # no override: as written
    # One world, one order: the events are the world store's, numbered in its sequence.
    assert [world.read(s)[0]["seq"] for s in ("child", "other")] == [1, 2]
    assert store.open("child").store is world


def test_the_store_leaves_nothing_to_the_base_class() -> None:
    # It holds no logs of its own, so a SessionStore method it inherited would read state
    # it does not have: every one is delegated.
    inherited = [
        name
        for name, member in vars(SessionStore).items()
        if (inspect.isfunction(member) or isinstance(member, property))
        and name != "__init__"
        and "mutmut" not in name  # mutation testing's copies of each method, not methods
        and name not in vars(HeaderOverrides)
    ]
    assert inherited == []


def test_a_scenario_without_faults_gets_the_runtimes_own_store_and_tools() -> None:
    faults = ScenarioFaults(SCENARIOS["live-root-answered"])
    store, tools = SessionStore(), default_tools()
    assert faults.store(store) is store
    assert all(a is b for a, b in zip(faults.tools(tools), tools, strict=True))


def test_header_overrides_reach_the_durable_header_a_guard_reads() -> None:
    # The child's header says depth 0 only through the override: the depth guard, which
    # reads it, then admits the live child, which reaches the tripwire (a hang). Written
    # as the runtime writes it (depth 1), it would have been refused.
    scenario = SCENARIOS["zero-depth-live-child"]
    assert ScenarioFaults(scenario).headers == {"child": {"delegation_depth": 0}}
    assert observe_scenario(scenario, guard="delegation-depth").outcome == "hang"


# -- the tools -------------------------------------------------------------------------------
def test_only_the_tools_a_fault_names_are_wrapped_and_the_prefix_is_unchanged() -> None:
    tools = default_tools()
    wrapped = ScenarioFaults(SCENARIOS["stale-same-id-object"]).tools(tools)
    assert [t.name for t in wrapped] == [t.name for t in tools]
    assert [t.schema for t in wrapped] == [t.schema for t in tools]
    kinds = {t.name: type(t) for t in wrapped}
    assert kinds["ask_user_question"] is FaultyTool
    assert kinds["exit_plan_mode"] is not FaultyTool and kinds["subagent"] is not FaultyTool


def test_a_stale_caller_is_a_new_object_with_the_live_id_and_session() -> None:
    inner = Recording()
    tool = FaultyTool(inner, stale=frozenset({"child"}))
    registry, store = AgentRegistry(), SessionStore()
    live = Agent("child", store.create(SessionHeader("child")))
    registry.enter(live)
    call(tool, context(live))
    (seen,) = inner.seen
    assert seen.agent is not live
    assert (seen.agent.id, seen.agent.session) == ("child", live.session)
    assert registry.get("child") is live  # the stale object was never entered
    assert seen.signal.aborted is False


class Replying:
    """A model client that gives each agent one fixed reply."""

    def __init__(self, calls: list[str]) -> None:
        self.reply = Reply(None, tuple(ToolCall(f"call_{i}", n, "{}") for i, n in enumerate(calls)))

    async def complete(self, *, agent: str, messages: Any, tools: Any) -> Reply:
        return self.reply


def test_an_aborted_run_fires_as_the_reply_with_its_call_arrives() -> None:
    registry = AgentRegistry()
    child, parent = Agent("child"), Agent("parent")
    registry.enter(parent)
    registry.enter(child, parent)
    aborted = frozenset({("child", "ask_user_question")})
    for agent, calls, fired in [
        (parent, ["ask_user_question"], False),  # another agent's
        (child, ["subagent"], False),  # another tool's
        (child, ["subagent", "ask_user_question"], True),  # the reply that carries it
    ]:
        chat: Any = AbortsOnCall(Replying(calls), registry, aborted)  # type: ignore[arg-type]
        reply = asyncio.run(chat.complete(agent=agent.id, messages=[], tools=[]))
        assert ([c.name for c in reply.tool_calls], agent.signal.aborted) == (calls, fired)


def test_other_agents_calls_pass_through_untouched() -> None:
    inner = Recording()
    tool = FaultyTool(inner, stale=frozenset({"child"}))
    ctx = context(Agent("parent"))
    call(tool, ctx)
    assert inner.seen == [ctx] and inner.seen[0] is ctx


def test_a_plan_mode_switch_chosen_by_a_stale_call_is_the_running_agents() -> None:
    class Approving(Recording):
        async def run(self, ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
            ctx.agent.plan_mode_next = False  # what exit_plan_mode does on approval
            return await super().run(ctx, args)

    live = Agent("lead")
    call(FaultyTool(Approving(), frozenset({"lead"})), context(live))
    assert live.plan_mode_next is False


# -- the faults in whole scenarios -----------------------------------------------------------
@pytest.mark.parametrize(
    ("scenario", "code"),
    [
        ("stale-same-id-object", ["CALLER_NOT_LIVE"]),
        ("child-aborted-call", ["ABORTED_BEFORE_DISPATCH", ""]),  # and the parent's delegation
    ],
)
def test_each_fault_decides_its_scenario(scenario: str, code: list[str]) -> None:
    errors = observe_scenario(SCENARIOS[scenario]).to_json()["tool_errors"]
    assert [e["code"] for e in errors] == code


def test_a_tool_that_checks_the_caller_itself_sees_the_stale_object() -> None:
    # The tool-only guard refuses inside ask_user_question: through the composition it
    # checks the stale object (not live), not the live child (owned: DELEGATED_CALLER).
    observation = observe_scenario(SCENARIOS["stale-same-id-object"], guard="tool-only")
    assert [e["code"] for e in observation.to_json()["tool_errors"]] == ["CALLER_NOT_LIVE"]


def test_a_stale_caller_changes_nothing_but_who_the_service_sees(tmp_path: Path) -> None:
    # With no caller check, a stale exit_plan_mode caller is answered like the live one,
    # and its approval still leaves plan mode from the running agent's next step.
    source = SCENARIOS["plan-mode-root-approved-next-step"]
    text = source.path.read_text("utf-8").replace(
        "features: [assembled, plan-mode, parallel-calls]",
        "features: [assembled, plan-mode, parallel-calls, faults]",
    )
    text += "faults:\n  - {kind: stale-caller, agent: lead, tool: exit_plan_mode}\n"
    path = tmp_path / source.path.name
    path.write_text(text, "utf-8")
    faulty = load_scenario(path)
    assert faulty.faults
    plain = observe_scenario(source, guard="none").to_json()
    assert observe_scenario(faulty, guard="none").to_json() == plain
    refused = observe_scenario(faulty).to_json()["tool_errors"]
    assert {e["code"] for e in refused} == {"CALLER_NOT_LIVE"}
