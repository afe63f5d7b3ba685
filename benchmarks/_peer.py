"""The peer: the same parent -> child -> ask delegation written with pydantic-ai
(`pip install -e '.[bench]'`).

The parent's `subagent` tool runs a child agent; the child's `ask_user_question` tool sees
that its caller is owned and returns the DELEGATED_CALLER error text; the child then says
"UNRESOLVED: ..." and the parent finishes. Two models drive it: pydantic-ai's FunctionModel
(in-process, no HTTP), and its OpenAIChatModel over httpx against the very fake the
harness uses (`ScriptedLLM`, a respx router behind an httpx.MockTransport), replaying the
scenario's own scripts. No key, no network: the sentinel key (the fake refuses any other),
and the fake refuses any unmocked route.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
from openai import AsyncOpenAI
from pydantic import BaseModel
from pydantic_ai import Agent, RunContext
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from benchmarks._measure import Bench
from harness.contract import AGENT_HEADER, SENTINEL_KEY
from harness.fake import BASE_URL, ScriptedLLM
from harness.runtime.loop import CHILD_PROMPT, ROOT_PROMPT
from harness.runtime.questions import DELEGATED_CALLER, MESSAGES
from harness.scenario import Scenario


class Option(BaseModel):
    label: str


class Question(BaseModel):
    id: str
    question: str
    options: list[Option] = []


@dataclass(frozen=True)
class Caller:
    owner: str | None  # the live agent that owns this one; None for a root


def build(parent_model: Model, child_model: Model, child_name: str) -> Agent[Caller, str]:
    child: Agent[Caller, str] = Agent(child_model, deps_type=Caller, instructions=CHILD_PROMPT)

    @child.tool
    async def ask_user_question(ctx: RunContext[Caller], questions: list[Question]) -> str:
        """Ask the user one or more questions and wait for the answers."""
        if ctx.deps.owner is not None:
            return f"Error: {MESSAGES[DELEGATED_CALLER]}"
        raise AssertionError("a root never asks in this delegation")

    parent: Agent[Caller, str] = Agent(parent_model, deps_type=Caller, instructions=ROOT_PROMPT)

    @parent.tool
    async def subagent(ctx: RunContext[Caller], name: str, prompt: str) -> str:
        """Delegate a self-contained task to a one-shot child agent."""
        result = await child.run(prompt, deps=Caller(owner=child_name), usage=ctx.usage)
        return result.output

    return parent


def _answered(messages: list[ModelMessage]) -> bool:
    last = messages[-1]
    return isinstance(last, ModelRequest) and any(isinstance(p, ToolReturnPart) for p in last.parts)


def _function_model(call: str, args: dict[str, Any], final: str) -> FunctionModel:
    """A model that calls `call` once, then says `final` once the tool result is back."""

    async def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if _answered(messages):
            return ModelResponse(parts=[TextPart(final)])
        return ModelResponse(parts=[ToolCallPart(call, args)])

    return FunctionModel(reply, model_name=f"scripted-{call}")


class Peer:
    """Both variants of the peer delegation for one scenario, built once and reused, as an
    application would: only the fake's script is fresh for each run."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        parent_turns = scenario.agents["parent"].script
        delegate = parent_turns[0].calls[0]
        self.child_name = str(delegate.args["name"])
        ask = scenario.agents[self.child_name].script[0].calls[0]
        question = ask.args["questions"][0]["question"]
        self.expected = str(parent_turns[1].say)
        self.prompt = str(scenario.phases[0].prompt)
        self.function = build(
            _function_model("subagent", dict(delegate.args), self.expected),
            _function_model("ask_user_question", dict(ask.args), f"UNRESOLVED: {question}"),
            self.child_name,
        )
        self.llm = self._fresh()
        http = httpx.AsyncClient(transport=httpx.MockTransport(self._serve), trust_env=False)
        self.http = build(
            self._openai("parent", http), self._openai(self.child_name, http), self.child_name
        )
        self.runner: asyncio.Runner | None = None

    def _fresh(self) -> ScriptedLLM:
        llm = ScriptedLLM({name: a.script for name, a in self.scenario.agents.items()})
        self._transport = llm.transport()  # the harness's own, as a world builds it
        return llm

    async def _serve(self, request: httpx.Request) -> httpx.Response:
        return await self._transport.handle_async_request(request)

    @staticmethod
    def _openai(agent: str, http: httpx.AsyncClient) -> OpenAIChatModel:
        client = AsyncOpenAI(
            base_url=BASE_URL,
            api_key=SENTINEL_KEY,  # the SDK insists on one: the one the fake accepts
            http_client=http,  # type: ignore[arg-type]  # a legacy httpx client is accepted
            max_retries=0,
            default_headers={AGENT_HEADER: agent},  # how the fake tells parent from child
        )
        return OpenAIChatModel("scripted", provider=OpenAIProvider(openai_client=client))

    @contextmanager
    def loop(self) -> Iterator[None]:
        """One long-lived event loop per block of runs."""
        with asyncio.Runner() as runner:
            self.runner = runner
            yield
        self.runner = None

    def _run(self, agent: Agent[Caller, str]) -> None:
        assert self.runner is not None
        result = self.runner.run(agent.run(self.prompt, deps=Caller(owner=None)))
        if result.output != self.expected:
            raise AssertionError(f"peer finished with {result.output!r}")

    def run_function(self) -> None:
        self._run(self.function)

    def run_http(self) -> None:
        self.llm = self._fresh()
        self._run(self.http)
        problems = self.llm.errors + self.llm.unconsumed()
        if problems:
            raise AssertionError(f"peer over HTTP broke the script: {problems[0]}")

    def benches(self) -> list[Bench]:
        return [
            Bench("pydantic-ai, FunctionModel", self.run_function, self.loop),
            Bench("pydantic-ai, OpenAIChatModel over httpx + respx", self.run_http, self.loop),
        ]
