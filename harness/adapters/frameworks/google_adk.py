"""`google-adk`: Google's Agent Development Kit, in-process, its agents on Gemini through the
google-genai SDK's own client (served by the fake's Gemini wire, in-process).

Built as its users build them: one `LlmAgent` per scenario agent, on `Gemini` pointed at the
fake; a parent offered each child as an `AgentTool` (named after it, taking `request`); the
human channel a long-running function tool (`LongRunningFunctionTool`), `ask_user_question`,
which pauses the run until its host sends the tool's response, as ADK's human-in-the-loop
guide builds it. The harness is the host of the top-level run (`InMemoryRunner`): a
long-running call that reaches it (`Event.long_running_tool_ids`) is answered as the
scenario's answerer says, with a function response in the next message of the session.

A child's pause never reaches the host. `AgentTool` runs the child in a nested session that
it discards when the child pauses, so the parent is told only that the child "stopped
waiting on unresolved long-running tool call(s)", the child never runs again, and its
question is neither refused to it nor handed up (google/adk-python #7245).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from types import AsyncGeneratorType
from typing import TYPE_CHECKING, Any

from harness.adapters._npm import adapter_dir
from harness.adapters.frameworks.adapter import (
    DECLINED,
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

NAME = "google-adk"
SINGLE_TURN = "google-adk-single-turn"
MODEL = "scripted"
APP = "keyless-harness"  # the runner's app name, its sessions' too
USER = "user"


class GoogleADK(FrameworkAdapter):
    name = NAME
    label = "Google ADK"
    package = "google-adk"
    module = "google.adk"
    beneath = ("google-genai",)
    single_turn = False
    identifiers = True

    def make_dialect(self) -> Dialect:
        # Each child is an AgentTool named after it, taking the task as `request`; ADK names
        # agents as Python identifiers (`child-a` is the agent `child_a`).
        delegation = {"tool": "{identifier}", "arguments": {"request": "{prompt}"}}
        return Dialect.from_json({"name": NAME, "tools": {DELEGATION_TOOL: delegation}}, NAME)

    def drive(self, scenario: Scenario, llm: ScriptedLLM) -> dict[str, Any]:
        import logging

        # ADK warns through loggers it gives no handler, so Python's last resort would
        # print them into the harness's report; a host that configures logging still
        # gets them.
        logging.getLogger("google_adk").addHandler(logging.NullHandler())
        with asyncio.Runner() as runner:
            # A run that ends in an error leaves ADK's own event generators running, and
            # closing the loop closes them: Python reports that on stderr, which is ADK's
            # housekeeping, not the run's result (the error is in the observation).
            runner.get_loop().set_exception_handler(_quiet_asyncgen)
            hook, sys.unraisablehook = sys.unraisablehook, _quiet_unraisable(sys.unraisablehook)
            try:
                return runner.run(self._drive(scenario, llm))
            finally:
                runner.close()
                sys.unraisablehook = hook

    async def _drive(self, scenario: Scenario, llm: ScriptedLLM) -> dict[str, Any]:
        from google.adk.runners import InMemoryRunner
        from google.genai import types

        agents = self._agents(scenario)
        asked: list[dict[str, Any]] = []
        finals: dict[str, str] = {}
        outcome, error = "completed", None
        for phase in scenario.phases:
            assert phase.agent is not None  # start phases only: the features say so
            runner = InMemoryRunner(agent=agents[as_identifier(phase.agent)], app_name=APP)
            try:
                session = await runner.session_service.create_session(app_name=APP, user_id=USER)
                message = types.Content(role="user", parts=[types.Part(text=phase.prompt)])
                while message is not None:
                    replies: list[Any] = []
                    pending: list[Any] = []
                    async for event in runner.run_async(user_id=USER, session_id=session.id,
                                                        new_message=message):  # fmt: skip
                        if event.error_code:
                            raise RuntimeError(f"{event.error_code}: {event.error_message}")
                        paused = event.long_running_tool_ids or set()
                        pending += [(event.author, c) for c in event.get_function_calls()
                                    if c.id in paused]  # fmt: skip
                        mine = event.author == as_identifier(phase.agent)
                        if mine and event.is_final_response():
                            parts = event.content.parts if event.content else None
                            replies += [p.text for p in parts or () if p.text]
                    message = self._answers(scenario, pending, asked)
                finals[phase.agent] = "".join(replies)
            except Exception as exc:  # whatever the framework raises ends the run, as an error
                outcome, error = "error", f"{type(exc).__name__}: {exc}"
                break
            finally:
                await runner.close()
        return observed(scenario, llm, (outcome, error), asked, finals, identified_child)

    def _answers(self, scenario: Scenario, pending: list[Any], asked: list[dict[str, Any]]) -> Any:
        """The host's next message: a function response to each paused call that reached it,
        as the scenario's answerer says (None: nothing is waiting on the host)."""
        from google.genai import types

        if not pending:
            return None
        parts = []
        named = {as_identifier(name): name for name in scenario.agents}
        for author, call in pending:
            shown = [q for q in (call.args or {}).get("questions") or () if isinstance(q, dict)]
            asked.append({"caller": named.get(author, author), "questions": shown})
            result = answered(scenario, shown) or DECLINED
            answer = {"result": result}
            response = types.FunctionResponse(id=call.id, name=call.name, response=answer)
            parts.append(types.Part(function_response=response))
        return types.Content(role="user", parts=parts)

    def _agents(self, scenario: Scenario) -> dict[str, Any]:
        from google.adk.agents import LlmAgent
        from google.adk.models import Gemini
        from google.adk.tools.agent_tool import AgentTool
        from google.adk.tools.long_running_tool import LongRunningFunctionTool

        from harness.fake import BASE_URL

        model = Gemini(model=MODEL, base_url=BASE_URL,
                       client_kwargs={"api_key": SENTINEL_KEY, "vertexai": False})  # fmt: skip

        def ask(questions: list[dict[str, Any]]) -> None:
            """Ask the user one or more questions and wait for the answers."""
            return None  # a long-running tool: None pauses the run until the host answers

        ask.__name__ = ASK_TOOL  # ADK names the tool after its function
        human = LongRunningFunctionTool(ask)
        built: dict[str, Any] = {}
        for name in children_first(scenario):
            children = [built[as_identifier(c)] for c, a in scenario.agents.items()
                        if a.spawned_by == name]  # fmt: skip
            called = as_identifier(name)
            spec: dict[str, Any] = dict(name=called, model=model, instruction=f"You are {name}.",
                                        description=f"Delegate a task to {name}.")  # fmt: skip
            if self.single_turn:
                if scenario.agents[name].spawned_by is not None:
                    spec["mode"] = "single_turn"
                built[called] = LlmAgent(**spec, sub_agents=children, tools=[human])
            else:
                built[called] = LlmAgent(**spec, tools=[*map(AgentTool, children), human])
        return built


def _quiet_asyncgen(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    if "asyncgen" not in context:
        loop.default_exception_handler(context)


def _quiet_unraisable(hook: Any) -> Any:
    def quiet(unraisable: Any) -> None:
        if not isinstance(unraisable.object, AsyncGeneratorType):
            hook(unraisable)

    return quiet


class GoogleADKSingleTurn(GoogleADK):
    name = SINGLE_TURN
    label = "Google ADK, single-turn sub-agents"
    single_turn = True


def google_adk_single_turn(
    scenarios: Path | None = None, version: str | None = None
) -> GoogleADKSingleTurn:
    return GoogleADKSingleTurn(adapter_dir(SINGLE_TURN, "expectations.yaml", scenarios))


def google_adk(scenarios: Path | None = None, version: str | None = None) -> GoogleADK:
    return GoogleADK(adapter_dir(NAME, "expectations.yaml", scenarios))
