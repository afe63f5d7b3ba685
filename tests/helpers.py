"""Assemble the reference runtime over a ScriptedLLM without a scenario file: `assemble`
is the one way a test builds a Runtime by hand (the reference adapter's world builds the
scenarios' own)."""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from harness.adapters.reference.answerers import Tripwire
from harness.contract import AGENT_HEADER
from harness.fake import BASE_URL, ScriptedLLM, Turn
from harness.runtime.core import Runtime
from harness.runtime.llm import ChatClient
from harness.runtime.questions import Answerer, UserQuestionService
from harness.runtime.registry import AgentRegistry
from harness.runtime.sessions import SessionStore
from harness.scenario import Scenario


def assemble(
    http: httpx.AsyncClient,
    store: SessionStore,
    *,
    agents: AgentRegistry | None = None,
    questions: bool = True,
    answerer: Answerer | None = None,
    max_turns: int = 32,
) -> Runtime:
    """A runtime over the fake at BASE_URL (routed by the agent header), with `agents` as
    its registry (None: none) and, when `questions`, a user-questions service over it that
    asks `answerer`."""
    return Runtime(
        chat=ChatClient(http, base_url=BASE_URL, agent_header=AGENT_HEADER),
        store=store,
        agents=agents,
        questions=UserQuestionService(agents, answerer) if questions else None,
        max_turns=max_turns,
    )


@dataclass
class Ran:
    final: str | None
    error: BaseException | None
    llm: ScriptedLLM
    store: SessionStore
    tripwire: Any  # the answerer: a Tripwire unless run_root was given one
    requests: list[httpx.Request]
    events: dict[str, list[dict[str, object]]]


def run_root(
    scripts: Mapping[str, Sequence[Turn]], *, max_turns: int = 32, answerer: Answerer | None = None
) -> Ran:
    """Run the root `parent` on the scripts; the answerer is a tripwire unless given."""
    llm = ScriptedLLM(scripts)
    fake = llm.transport()
    seen: list[httpx.Request] = []

    async def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return await fake.handle_async_request(request)

    tripwire = Tripwire() if answerer is None else answerer
    with tempfile.TemporaryDirectory() as tmp:
        store = SessionStore(Path(tmp))

        async def go() -> str | None:
            async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
                rt = assemble(
                    http, store, agents=AgentRegistry(), answerer=tripwire, max_turns=max_turns
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


def busy_lead(scenario: Scenario, calls: int) -> Scenario:
    """`scenario` (root-no-answerer) with its lead making `calls` calls of a tool it does not
    have, one a turn, then a final text: a run that makes progress as long as it is made to."""
    import dataclasses

    from harness.scenario import AgentSpec

    busy = [Turn.tool("nope", {})] * calls + [Turn.text("LEAD_COMPLETED")]
    return dataclasses.replace(
        scenario,
        agents={"lead": AgentSpec("lead", tuple(busy))},
        expect=dataclasses.replace(scenario.expect, tool_errors=()),
    )


def readme_block(section: str, first_line: str, readme: str = "README.md") -> str:
    """The python code block under the heading `section` of `readme` (a path from the
    repository's root) that starts with `first_line` (a file's name as a comment), as
    written there: an example a test runs."""
    import re
    from pathlib import Path

    readme = (Path(__file__).parents[1] / readme).read_text("utf-8")
    after = readme.split(section, 1)[1]
    block = re.search(rf"```python\n({re.escape(first_line)}\n.*?)```", after, re.S)
    assert block is not None, f"the README's example {first_line!r} is gone"
    return block[1]
