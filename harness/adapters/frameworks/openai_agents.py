"""`openai-agents`: the OpenAI Agents SDK, in-process, its agents on Chat Completions through
the openai SDK's own client (served by the fake in-process).

Built as its users build them: one `Agent` per scenario agent; a parent offered each of its
children as a tool (`Agent.as_tool`, named after the child, taking `input`); the human
channel a function tool that needs approval (`needs_approval=True`), `ask_user_question`,
which returns the answers its host approved it with. The harness is the host of the
top-level run: an approval a child's call needs bubbles up to it as an interruption of the
top-level run (`RunResult.interruptions`), where the harness answers as the scenario's
answerer says, and resumes the run (`RunState.approve` / `reject`). A scripted human with
an answer to every question approves; any other answerer declines, and the call's result
is the SDK's own refusal (`Tool execution was not approved.`).

So a child's question reaches the human end instead of failing as an error: this breaks
the rule, and holds `live` when the run then completes with the question handed up.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.adapters._npm import adapter_dir
from harness.adapters.frameworks.adapter import (
    FrameworkAdapter,
    answered,
    children_first,
    named_child,
    observed,
)
from harness.contract import SENTINEL_KEY
from harness.fake.dialect import ASK_TOOL, DELEGATION_TOOL, Dialect

if TYPE_CHECKING:
    from harness.fake import ScriptedLLM
    from harness.scenario import Scenario

NAME = "openai-agents"
MODEL = "scripted"
REFUSED = "Tool execution was not approved."  # the SDK's result for a rejected approval


class Host:
    """The run's context: the answers the host approved each call with, by call id."""

    def __init__(self) -> None:
        self.answers: dict[str, str] = {}


class OpenAIAgents(FrameworkAdapter):
    name = NAME
    label = "OpenAI Agents SDK"
    package = "openai-agents"
    module = "agents"

    def make_dialect(self) -> Dialect:
        # Each child is a tool named after it (`as_tool`), taking the task as `input`.
        delegation = {"tool": "{name}", "arguments": {"input": "{prompt}"}}
        return Dialect.from_json({"name": NAME, "tools": {DELEGATION_TOOL: delegation}}, NAME)

    def drive(self, scenario: Scenario, llm: ScriptedLLM) -> dict[str, Any]:
        return asyncio.run(self._drive(scenario, llm))

    async def _drive(self, scenario: Scenario, llm: ScriptedLLM) -> dict[str, Any]:
        from agents import Runner, set_tracing_disabled

        set_tracing_disabled(True)  # its traces would be posted to OpenAI
        agents = self._agents(scenario)
        host, asked = Host(), []
        outcome, error, finals = "completed", None, {}
        for phase in scenario.phases:
            assert phase.agent is not None  # start phases only: the features say so
            try:
                result = await Runner.run(agents[phase.agent], phase.prompt, context=host)
                while result.interruptions:
                    state = result.to_state()
                    for item in result.interruptions:
                        call: Any = item.raw_item  # a function call: only ask needs approval
                        # The tool takes the scenarios' own spelling: shown as it was given.
                        given = json.loads(call.arguments or "{}")
                        shown = [q for q in given.get("questions") or () if isinstance(q, dict)]
                        asked.append({"caller": item.agent.name, "questions": shown})
                        answers = answered(scenario, shown)
                        if answers is not None:
                            host.answers[call.call_id] = answers
                            state.approve(item)
                        else:
                            state.reject(item)
                    result = await Runner.run(agents[phase.agent], state, context=host)
                finals[phase.agent] = str(result.final_output or "")
            except Exception as exc:  # whatever the framework raises ends the run, as an error
                outcome, error = "error", f"{type(exc).__name__}: {exc}"
                break
        return observed(scenario, llm, (outcome, error), asked, finals, named_child)

    def _agents(self, scenario: Scenario) -> dict[str, Any]:
        from agents import Agent, OpenAIChatCompletionsModel, RunContextWrapper, function_tool
        from agents.tool_context import ToolContext
        from openai import AsyncOpenAI

        from harness.fake import BASE_URL

        client = AsyncOpenAI(base_url=BASE_URL, api_key=SENTINEL_KEY, max_retries=0)
        model = OpenAIChatCompletionsModel(model=MODEL, openai_client=client)

        def ask(context, questions):  # type: ignore[no-untyped-def]
            """Ask the user one or more questions and wait for the answers."""
            call_id = context.tool_call_id if isinstance(context, ToolContext) else ""
            return context.context.answers.get(call_id, "")

        # Objects, not strings: the SDK reads the schema from the hints, in its own module.
        ask.__annotations__ = {"context": RunContextWrapper[Host], "questions": list[Any],
                               "return": str}  # fmt: skip
        human = function_tool(ask, name_override=ASK_TOOL, needs_approval=True, strict_mode=False)

        built: dict[str, Any] = {}
        # Children first, so each parent can be offered its children as tools.
        for name in children_first(scenario):
            children = [built[c] for c, a in scenario.agents.items() if a.spawned_by == name]
            tools = [c.as_tool(tool_name=c.name, tool_description=f"Delegate a task to {c.name}.")
                     for c in children]  # fmt: skip
            built[name] = Agent(name=name, instructions=f"You are {name}.", model=model,
                                tools=[*tools, human])  # fmt: skip
        return built


def openai_agents(scenarios: Path | None = None, version: str | None = None) -> OpenAIAgents:
    return OpenAIAgents(adapter_dir(NAME, "expectations.yaml", scenarios))
