"""`smolagents`: Hugging Face's smolagents, in-process, its agents `ToolCallingAgent`s on Chat
Completions through the openai SDK's own client (`OpenAIServerModel`, served by the fake).

Built as its users build them: a parent given its children as `managed_agents` (each a tool
named after it, taking `task`); the human channel smolagents' own `UserInputTool`
(`user_input`), which asks with `input()`: it writes the question to stdout and reads the
answer from stdin. Every agent ends by calling `final_answer` (the dialect's `finish`).

The harness is the terminal: while the run goes, stdin is a pipe only it writes to, and it
reads each question off stdout. A question a scripted human answers gets its answer typed
in; any other waits, as it would at a terminal nobody watches. A child blocked there holds
its parent, which waits on it: a hang, decided by quiescence (every agent still going waits
on stdin or on a child that does) and reported with its wait-for graph. The harness then
stops the agents (`interrupt()`) and closes stdin, so the blocked threads unwind.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.adapters._calls import issued
from harness.adapters._npm import adapter_dir
from harness.adapters._quiescence import wait_for
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

NAME = "smolagents"
MODEL = "scripted"
USER_INPUT = "user_input"  # UserInputTool's name
PROMPT = " => Type your answer here:"  # what UserInputTool puts after its question
POLL = 0.005  # seconds between looks at the terminal: a hang is seen within a few of them
NOBODY = "stdin, which no one answers"
UNWIND = 30.0  # seconds a hung run is given to unwind once stdin is closed
DIALECT = {
    "name": NAME,
    "tools": {
        DELEGATION_TOOL: {"tool": "{identifier}", "arguments": {"task": "{prompt}"}},
        ASK_TOOL: {"tool": USER_INPUT, "arguments": {"question": "{questions.0.question}"}},
    },
    "cannot": {
        "child-empty-batch": "smolagents' user_input asks one question, and the batch is empty",
        "live-root-questions-as-given": (
            "smolagents' user_input asks one question, and the batch has two"
        ),
    },
    "finish": {"tool": "final_answer", "arguments": {"answer": "{text}"}},
    "transcript": {"calls": "Calling tools:\n", "results": "Observation:\n"},
}


class Terminal:
    """The run's stdin and stdout, as the harness plays the human at them: stdin a pipe it
    alone writes to; stdout passed through, less the questions, which it keeps."""

    def __init__(self) -> None:
        read, write = os.pipe()
        self.stdin = io.TextIOWrapper(io.FileIO(read, "r"))
        self._keys = io.TextIOWrapper(io.FileIO(write, "w"), write_through=True)
        self._lock = threading.Lock()
        self._asked: list[str] = []
        self._out: Any = sys.stdout  # where everything else goes: the stdout it replaced

    def write(self, text: str) -> int:
        if text.endswith(PROMPT):
            with self._lock:
                self._asked.append(text[: -len(PROMPT)])
            return len(text)
        return int(self._out.write(text))

    def flush(self) -> None:
        self._out.flush()

    def questions(self) -> list[str]:
        """The questions put since the last look, in the order they were put."""
        with self._lock:
            asked, self._asked = self._asked, []
        return asked

    def type(self, answer: str) -> None:
        self._keys.write(answer.replace("\n", " ") + "\n")

    def close(self) -> None:
        """End of input: a blocked `input()` raises EOFError."""
        self._keys.close()

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        stdin, stdout = sys.stdin, self._out = sys.stdin, sys.stdout
        sys.stdin, sys.stdout = self.stdin, self
        try:
            yield
        finally:
            sys.stdin, sys.stdout = stdin, stdout
            if not self._keys.closed:
                self._keys.close()
            self.stdin.close()


class Smolagents(FrameworkAdapter):
    name = NAME
    label = "smolagents"
    package = "smolagents"
    module = "smolagents"
    identifiers = True

    def make_dialect(self) -> Dialect:
        return Dialect.from_json(DIALECT, NAME)

    def drive(self, scenario: Scenario, llm: ScriptedLLM) -> dict[str, Any]:
        agents = self._agents(scenario)
        finals: dict[str, str] = {}
        ended: list[tuple[str, str | None]] = []

        def run() -> None:
            for phase in scenario.phases:
                assert phase.agent is not None  # start phases only: the features say so
                try:
                    finals[phase.agent] = str(agents[phase.agent].run(phase.prompt))
                except Exception as exc:  # whatever the framework raises ends the run
                    ended.append(("error", f"{type(exc).__name__}: {exc}"))
                    return

        terminal = Terminal()
        asked: list[dict[str, Any]] = []
        held: dict[str, tuple[str, str]] = {}
        claimed: set[str] = set()
        with terminal.installed():
            thread = threading.Thread(target=run, name=f"{NAME}-run", daemon=True)
            thread.start()
            while thread.is_alive():
                thread.join(POLL)
                for question in terminal.questions():
                    caller, scripted = _claim(scenario, llm, question, claimed)
                    # What the terminal showed; the id is the scenario's, for the report.
                    shown = {"id": str((scripted or {}).get("id", "")), "question": question}
                    asked.append({"caller": caller, "questions": [shown]})
                    answer = answered(scenario, [scripted]) if scripted else None
                    if answer is not None:
                        terminal.type(answer)
                    else:
                        held[caller] = (question, NOBODY)
                graph = wait_for(scenario, llm.progress(), held) if held else None
                if graph is not None:
                    why = "hang: nothing can run; " + "; ".join(graph["graph"])
                    data = observed(scenario, llm, ("hang", why), asked, finals, identified_child)
                    data["hang"] = graph
                    for agent in agents.values():
                        agent.interrupt()  # each stops at its next step
                    terminal.close()
                    # Decided already: this only lets the threads unwind, and a run that will
                    # not is left to end with the process (its thread is a daemon).
                    thread.join(UNWIND)
                    return data
        outcome = ended[0] if ended else ("completed", None)
        return observed(scenario, llm, outcome, asked, finals, identified_child)

    def _agents(self, scenario: Scenario) -> dict[str, Any]:
        from smolagents import (  # type: ignore[import-untyped]
            LogLevel,
            OpenAIServerModel,
            ToolCallingAgent,
            UserInputTool,
        )

        from harness.fake import BASE_URL

        model = OpenAIServerModel(model_id=MODEL, api_base=BASE_URL, api_key=SENTINEL_KEY,
                                  client_kwargs={"max_retries": 0})  # fmt: skip
        built: dict[str, Any] = {}
        for name in children_first(scenario):
            mine = [built[c] for c, a in scenario.agents.items() if a.spawned_by == name]
            built[name] = ToolCallingAgent(
                tools=[UserInputTool()], model=model, managed_agents=mine,
                name=as_identifier(name), description=f"Delegate a task to {name}.",
                instructions=f"You are {name}.", verbosity_level=LogLevel.OFF,
            )  # fmt: skip
        return built


def _claim(
    scenario: Scenario, llm: ScriptedLLM, question: str, claimed: set[str]
) -> tuple[str, dict[str, Any] | None]:
    """Who put `question` (the first user_input call with its text not yet claimed), and the
    scripted question it stands for (its id, for the scripted human's answer)."""
    for call_id, (agent, tool, arguments) in issued(llm).items():
        if tool == USER_INPUT and arguments.get("question") == question and call_id not in claimed:
            claimed.add(call_id)
            step = scenario.agents[agent].script[llm.progress()[agent] - 1]
            for call in step.calls:
                given = call.args.get("questions") if call.tool == ASK_TOOL else None
                if isinstance(given, list) and given and isinstance(given[0], dict):
                    return agent, {**given[0], "question": question}
            return agent, None
    return "?", None


def smolagents(scenarios: Path | None = None, version: str | None = None) -> Smolagents:
    return Smolagents(adapter_dir(NAME, "expectations.yaml", scenarios))
