"""Assemble the reference runtime over a ScriptedLLM without a scenario file."""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx

from harness.answerers import Tripwire
from harness.fake import BASE_URL, ScriptedLLM, Turn
from harness.runtime.core import Runtime
from harness.runtime.llm import ChatClient
from harness.runtime.questions import UserQuestionService
from harness.runtime.registry import AgentRegistry
from harness.runtime.sessions import SessionStore


@dataclass
class Ran:
    final: str | None
    error: BaseException | None
    llm: ScriptedLLM
    store: SessionStore
    tripwire: Tripwire
    requests: list[httpx.Request]
    events: dict[str, list[dict[str, object]]]


def run_root(scripts: Mapping[str, Sequence[Turn]], *, max_turns: int = 32) -> Ran:
    llm = ScriptedLLM(scripts)
    router = llm.router()
    seen: list[httpx.Request] = []

    async def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return await router.async_handler(request)

    tripwire = Tripwire()
    with tempfile.TemporaryDirectory() as tmp:
        store = SessionStore(Path(tmp))

        async def go() -> str | None:
            async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
                agents = AgentRegistry()
                rt = Runtime(
                    chat=ChatClient(http, base_url=BASE_URL),
                    store=store,
                    agents=agents,
                    questions=UserQuestionService(agents, tripwire),
                    max_turns=max_turns,
                )
                return await rt.start("parent", "go")

        final, error = None, None
        try:
            # Bounded: these runs have no deadlock detector, and the tripwire never answers.
            final = asyncio.run(asyncio.wait_for(go(), 5))
        except Exception as exc:
            error = exc
        events = {sid: store.read(sid) for sid in store.ids()}
    return Ran(final, error, llm, store, tripwire, seen, events)
