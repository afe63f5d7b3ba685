"""`deepagents`: LangGraph with deepagents, in-process, its model langchain-openai's
ChatOpenAI on Chat Completions (the openai SDK's own client, served by the fake).

Built as its users build them: `create_deep_agent` for each root, its children as
deepagents subagents (`subagents=[{name, description, system_prompt, tools}]`), reached
through deepagents' own `task` tool (`{description, subagent_type}`); the human channel a
tool that calls LangGraph's `interrupt()`, with a checkpointer, as LangGraph's human-in-the-
loop asks. A child's interrupt surfaces at the top of the graph (`__interrupt__`); the
harness, as the host, resumes it (`Command(resume=...)`) with the scripted human's answers,
or with a refusal it writes itself when the answerer is not to be reached, and the child
goes on from there.

So a child's question reaches the human end instead of failing as an error: the rule is
broken, and `live` holds when the run completes with the question handed up. A subagent
cannot delegate again (deepagents gives it no `task` tool).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.adapters._npm import adapter_dir
from harness.adapters.frameworks.adapter import DECLINED, FrameworkAdapter, answered, observed
from harness.contract import SENTINEL_KEY
from harness.fake.dialect import ASK_TOOL, DELEGATION_TOOL, Dialect

if TYPE_CHECKING:
    from harness.fake import ScriptedLLM
    from harness.scenario import Scenario

NAME = "deepagents"
MODEL = "scripted"
TASK = "task"  # deepagents' delegation tool


class DeepAgents(FrameworkAdapter):
    name = NAME
    label = "LangGraph with deepagents"
    package = "deepagents"
    module = "deepagents"
    beneath = ("langgraph",)
    features = frozenset({"assembled", "concurrent-children", "parallel-calls"})

    def make_dialect(self) -> Dialect:
        task = {"tool": TASK, "arguments": {"description": "{prompt}", "subagent_type": "{name}"}}
        return Dialect.from_json({"name": NAME, "tools": {DELEGATION_TOOL: task}}, NAME)

    def skip(self, scenario: Scenario) -> str | None:
        nested = any(a.spawned_by and scenario.agents[a.spawned_by].spawned_by
                     for a in scenario.agents.values())  # fmt: skip
        if nested:
            return "a child delegates again: deepagents gives its subagents no task tool"
        return super().skip(scenario)

    def drive(self, scenario: Scenario, llm: ScriptedLLM) -> dict[str, Any]:
        return asyncio.run(self._drive(scenario, llm))

    async def _drive(self, scenario: Scenario, llm: ScriptedLLM) -> dict[str, Any]:
        from langgraph.types import Command

        asked: list[dict[str, Any]] = []
        outcome, error, finals = "completed", None, {}
        for i, phase in enumerate(scenario.phases):
            assert phase.agent is not None  # start phases only: the features say so
            graph = self._graph(scenario, phase.agent)
            config = {"configurable": {"thread_id": f"phase-{i}"}}
            try:
                first = {"messages": [{"role": "user", "content": phase.prompt}]}
                state = await graph.ainvoke(first, config)
                while state.get("__interrupt__"):
                    resume = {}
                    for pending in state["__interrupt__"]:
                        call_id, questions = pending.value["call_id"], pending.value["questions"]
                        asked.append({"caller": llm.caller(call_id) or phase.agent,
                                      "questions": questions})  # fmt: skip
                        resume[pending.id] = answered(scenario, questions) or DECLINED
                    state = await graph.ainvoke(Command(resume=resume), config)
                finals[phase.agent] = str(state["messages"][-1].content)
            except Exception as exc:  # whatever the framework raises ends the run, as an error
                outcome, error = "error", f"{type(exc).__name__}: {exc}"
                break
        return observed(scenario, llm, (outcome, error), asked, finals, _child)

    def _graph(self, scenario: Scenario, root: str) -> Any:
        from deepagents import create_deep_agent
        from langchain_core.tools import InjectedToolCallId, tool
        from langchain_openai import ChatOpenAI
        from langgraph.checkpoint.memory import InMemorySaver
        from langgraph.types import interrupt

        from harness.fake import BASE_URL

        def ask(questions, tool_call_id):  # type: ignore[no-untyped-def]
            """Ask the user one or more questions and wait for the answers."""
            return interrupt({"call_id": tool_call_id, "questions": questions})

        # Objects, not strings: langchain reads the schema from the hints.
        from typing import Annotated

        ask.__annotations__ = {"questions": list[dict[str, Any]],
                               "tool_call_id": Annotated[str, InjectedToolCallId],
                               "return": str}  # fmt: skip
        human = tool(ASK_TOOL)(ask)
        model = ChatOpenAI(model=MODEL, base_url=BASE_URL, api_key=SENTINEL_KEY, max_retries=0)  # type: ignore[arg-type]
        mine = [name for name, agent in scenario.agents.items() if agent.spawned_by == root]
        children: list[Any] = [
            {"name": name, "description": f"Delegate a task to {name}.",
             "system_prompt": f"You are {name}.", "tools": [human]}
            for name in mine
        ]  # fmt: skip
        # A checkpointer, as interrupt() needs: without one the pause cannot be resumed.
        saver = InMemorySaver()
        return create_deep_agent(model=model, tools=[human], subagents=children,
                                 system_prompt=f"You are {root}.", checkpointer=saver)  # fmt: skip


def _child(scenario: Scenario, agent: str, tool: str, arguments: dict[str, Any]) -> str | None:
    """The child a `task` call of `agent` starts: its subagent_type."""
    name = arguments.get("subagent_type") if tool == TASK else None
    spec = scenario.agents.get(str(name)) if name else None
    return str(name) if spec is not None and spec.spawned_by == agent else None


def deepagents(scenarios: Path | None = None, version: str | None = None) -> DeepAgents:
    return DeepAgents(adapter_dir(NAME, "expectations.yaml", scenarios))
