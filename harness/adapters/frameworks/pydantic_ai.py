"""`pydantic-ai`: Pydantic AI, in-process, its agents on Chat Completions through the openai
SDK's own client (`OpenAIChatModel`, served by the fake in-process).

Built as its users build them: one `Agent` per scenario agent; a parent delegates through a
tool of its own, named after the child, that awaits `child.run(task, usage=ctx.usage)` and
returns its output (pydantic-ai's "agent delegation"); the human channel a tool that
requires approval (`requires_approval=True`), `ask_user_question`, which returns the
answers its host approved it with. A root's output may be `DeferredToolRequests`, so its
pending approvals reach the harness, its host, who approves or denies each as the
scenario's answerer says and resumes the run (`deferred_tool_results`).

Two columns, as a child may be typed two ways:
- `pydantic-ai`: a child's output is `str`, what its parent's tool returns. A child that
  asks ends its own run with a deferred call it cannot return, and pydantic-ai raises
  `UserError` through the whole run.
- `pydantic-ai-deferred`: a child's output is `[str, DeferredToolRequests]`, as pydantic-ai
  asks of an agent with a tool that needs approval. The child's run ends with the pending
  call as its output, which its parent's tool returns as its result: the question never
  reaches the host, and the child never runs again.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.adapters._npm import adapter_dir
from harness.adapters.frameworks.adapter import (
    FrameworkAdapter,
    answered,
    children_first,
    identified_child,
    observed,
)
from harness.contract import SENTINEL_KEY
from harness.fake.dialect import ASK_TOOL, DELEGATION_TOOL, Dialect, as_identifier

if TYPE_CHECKING:
    from harness.fake import ScriptedLLM
    from harness.scenario import Scenario

NAME = "pydantic-ai"
DEFERRED = "pydantic-ai-deferred"
MODEL = "scripted"


class Host:
    """The run's dependencies: the answers the host approved each call with, by call id."""

    def __init__(self) -> None:
        self.answers: dict[str, str] = {}


class PydanticAI(FrameworkAdapter):
    name = NAME
    label = "Pydantic AI"
    package = "pydantic-ai-slim"
    module = "pydantic_ai"
    deferred_children = False
    identifiers = True

    def make_dialect(self) -> Dialect:
        # Each child is a tool of its parent's, named after it, taking the task.
        delegation = {"tool": "{identifier}", "arguments": {"task": "{prompt}"}}
        return Dialect.from_json({"name": NAME, "tools": {DELEGATION_TOOL: delegation}}, NAME)

    def drive(self, scenario: Scenario, llm: ScriptedLLM) -> dict[str, Any]:
        return asyncio.run(self._drive(scenario, llm))

    async def _drive(self, scenario: Scenario, llm: ScriptedLLM) -> dict[str, Any]:
        from pydantic_ai import DeferredToolRequests, DeferredToolResults, ToolDenied

        agents = self._agents(scenario)
        host, asked = Host(), []
        outcome, error, finals = "completed", None, {}
        for phase in scenario.phases:
            assert phase.agent is not None  # start phases only: the features say so
            root = agents[phase.agent]
            try:
                result = await root.run(phase.prompt, deps=host)
                while isinstance(result.output, DeferredToolRequests):
                    decided: dict[str, Any] = {}
                    for call in result.output.approvals:
                        # The tool takes the scenarios' own spelling: shown as it was given.
                        given = call.args_as_dict()
                        shown = [q for q in given.get("questions") or () if isinstance(q, dict)]
                        asked.append({"caller": phase.agent, "questions": shown})
                        answers = answered(scenario, shown)
                        if answers is not None:
                            host.answers[call.tool_call_id] = answers
                            decided[call.tool_call_id] = True
                        else:
                            decided[call.tool_call_id] = ToolDenied()  # its own refusal
                    resumed = DeferredToolResults(approvals=decided)
                    result = await root.run(message_history=result.all_messages(), deps=host,
                                            deferred_tool_results=resumed)  # fmt: skip
                finals[phase.agent] = str(result.output)
            except Exception as exc:  # whatever the framework raises ends the run, as an error
                outcome, error = "error", f"{type(exc).__name__}: {exc}"
                break
        return observed(scenario, llm, (outcome, error), asked, finals, identified_child)

    def _agents(self, scenario: Scenario) -> dict[str, Any]:
        from openai import AsyncOpenAI
        from pydantic_ai import Agent, DeferredToolRequests, RunContext, Tool
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider

        from harness.fake import BASE_URL

        client = AsyncOpenAI(base_url=BASE_URL, api_key=SENTINEL_KEY, max_retries=0)
        model = OpenAIChatModel(MODEL, provider=OpenAIProvider(openai_client=client))

        async def ask(ctx, questions):  # type: ignore[no-untyped-def]
            """Ask the user one or more questions and wait for the answers."""
            return ctx.deps.answers.get(ctx.tool_call_id or "", "")

        # Objects, not strings: pydantic-ai reads the schema from the hints, in its module.
        ask.__annotations__ = {"ctx": RunContext[Host], "questions": list[dict[str, Any]],
                               "return": str}  # fmt: skip

        def delegation(child: Any) -> Any:
            async def delegate(ctx, task):  # type: ignore[no-untyped-def]
                result = await child.run(task, deps=ctx.deps, usage=ctx.usage)
                return result.output

            delegate.__annotations__ = {"ctx": RunContext[Host], "task": str, "return": Any}
            return delegate

        built: dict[str, Any] = {}
        for name in children_first(scenario):
            root = scenario.agents[name].spawned_by is None
            deferred = root or self.deferred_children
            output: Any = [str, DeferredToolRequests] if deferred else str
            mine = [child for child, spec in scenario.agents.items() if spec.spawned_by == name]
            tools = [Tool(ask, name=ASK_TOOL, requires_approval=True)]
            tools += [
                Tool(delegation(built[c]), name=as_identifier(c), description=f"Delegate to {c}.")
                for c in mine
            ]
            built[name] = Agent(model, name=name, deps_type=Host, output_type=output,
                                instructions=f"You are {name}.", tools=tools)  # fmt: skip
        return built


class PydanticAIDeferred(PydanticAI):
    name = DEFERRED
    label = "Pydantic AI, children typed with DeferredToolRequests"
    deferred_children = True


def pydantic_ai(scenarios: Path | None = None, version: str | None = None) -> PydanticAI:
    return PydanticAI(adapter_dir(NAME, "expectations.yaml", scenarios))


def pydantic_ai_deferred(
    scenarios: Path | None = None, version: str | None = None
) -> PydanticAIDeferred:
    return PydanticAIDeferred(adapter_dir(DEFERRED, "expectations.yaml", scenarios))
