"""Scenario -> world: the fake model, the human end, the durable store and the faults.

Each phase gets a fresh runtime (fresh registry, fresh service) over the same store and
the same model, as a new host process would: ownership is process-local, sessions are
durable.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from harness.adapters.reference.answerers import ScriptedHuman, Tripwire, Unreachable
from harness.adapters.reference.direct import DirectResult
from harness.adapters.reference.faults import ScenarioFaults
from harness.adapters.reference.guards import RUNTIME_OWNERSHIP, Guard, guard_named
from harness.contract import APIS, SESSION_HEADER, Wire
from harness.fake import BASE_URL, ScriptedLLM
from harness.runtime.core import Runtime
from harness.runtime.llm import ChatClient
from harness.runtime.registry import AgentRegistry
from harness.runtime.sessions import SessionStore
from harness.runtime.tools import default_tools
from harness.runtime.waits import ANSWERER, WaitGraph
from harness.scenario import Scenario

AnyAnswerer = ScriptedHuman | Tripwire | Unreachable

# Requests an observation keeps in full, the last ones: every scenario shipped sends fewer,
# and a thousand-agent tree must not hold every body it sent (the model prefix is summed
# up from all of them as they arrive).
KEEP_REQUESTS = 64


def make_answerer(scenario: Scenario) -> AnyAnswerer | None:
    kind = scenario.world.answerer
    if kind == "scripted":
        return ScriptedHuman(
            answers=scenario.world.answers, delay=scenario.world.answer_delay_ms / 1000
        )
    if kind == "tripwire":
        return Tripwire()
    if kind == "unreachable":
        return Unreachable()
    return None


def wait_graph(answerer: AnyAnswerer | None) -> WaitGraph:
    """A world's wait-for graph, with its answerer node named as the hang graphs read
    ("tripwire answerer"). The runtime names that node neutrally (ANSWERER): what kind of
    test double answers is the harness's to say, so it says it in the label, and the
    runtime reads nothing off the provider it is handed."""
    waits = WaitGraph()
    if answerer is not None:
        waits.labels[ANSWERER] = f"{answerer.kind} answerer"
    return waits


@dataclass
class LiveWorld:
    """A scenario's world, built to run: the scripted model, the answerer, the durable store
    and the faults, shared by its phases (the spec it comes from is harness.scenario.World)."""

    scenario: Scenario
    llm: ScriptedLLM
    answerer: AnyAnswerer | None
    store: SessionStore
    faults: ScenarioFaults
    guard: Guard = RUNTIME_OWNERSHIP
    wire: Wire = Wire()
    direct: list[DirectResult] = field(default_factory=list)
    waits: WaitGraph = field(default_factory=WaitGraph)
    hang: dict[str, Any] | None = None
    live: Runtime | None = None  # the runtime of the model phase running now, if any
    # The `while:` ask phases the run never reached, as script errors (see _runner).
    never_asked: Callable[[], list[str]] = list

    @classmethod
    def build(
        cls,
        scenario: Scenario,
        store: SessionStore,
        *,
        guard: str | None = None,
        wire: Wire = Wire(),
        created: int | None = None,
    ) -> LiveWorld:
        """`created` is the fake's completion time (default: the clock at each reply)."""
        answerer = make_answerer(scenario)
        return cls(
            scenario=scenario,
            llm=ScriptedLLM(
                {name: a.script for name, a in scenario.agents.items()},
                # The reference must replay its history exactly as it was served. (Not
                # strict: a real model may call a tool it was not given, and the runtime's
                # answer to that is part of what is tested.)
                check_history=True,
                chunk=wire.chunk if wire.chunk is not None else scenario.stream_chunk,
                roots=scenario.roots(),
                session_header=SESSION_HEADER if wire.routing == "session" else None,
                keep=KEEP_REQUESTS,
                created=created,
            ),
            answerer=answerer,
            store=store,
            faults=ScenarioFaults(scenario),
            guard=guard_named(guard or scenario.guard),
            wire=wire,
            waits=wait_graph(answerer),
        )

    def runtime(self, http: httpx.AsyncClient) -> Runtime:
        """A new runtime process over this world's durable state, with the guard's service
        and tools, and the scenario's faults composed around its store and tools."""
        agents = AgentRegistry() if self.scenario.world.registry else None
        questions = (
            self.guard.service(agents, self.answerer)
            if self.scenario.world.user_questions
            else None
        )
        # The tools the runtime would choose itself, unless the guard supplies its own.
        tools = (
            self.guard.tools()
            if self.guard.tools is not None
            else default_tools(user_questions=questions is not None)
        )
        return Runtime(
            chat=self.faults.chat(self.chat(http), agents),
            store=self.faults.store(self.store),
            agents=agents,
            questions=questions,
            tools=self.faults.tools(tools),
            waits=self.waits,
            plan_mode=[name for name, a in self.scenario.agents.items() if a.plan_mode],
            max_depth=self.scenario.world.max_depth,
        )

    def chat(self, http: httpx.AsyncClient) -> ChatClient:
        """The runtime's model client: its own, on Chat Completions; on another API an
        official SDK composed in its place (sdk_chat.py), on the fake's httpx2 twin."""
        options = {"base_url": BASE_URL, "stream": self.wire.stream,
                   "agent_header": self.wire.agent_header}  # fmt: skip
        if self.wire.api == APIS[0]:
            return ChatClient(http, **options)  # type: ignore[arg-type]
        from harness.adapters.reference.sdk_chat import CLIENTS

        transport = self.llm.httpx2_transport(BASE_URL)
        return CLIENTS[self.wire.api](http, transport, **options)  # type: ignore[arg-type]

    def http(self) -> httpx.AsyncClient:
        # trust_env=False: no proxy, netrc or CA settings from the environment may shape a
        # request; the fake is the only endpoint and nothing in the environment is read.
        return httpx.AsyncClient(transport=self.llm.transport(BASE_URL), trust_env=False)
