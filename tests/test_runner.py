"""The runner's guarantees: it never hangs, never leaks a path, and repeats itself."""

from __future__ import annotations

import asyncio
import dataclasses
import re
import tempfile
from datetime import datetime
from pathlib import Path

import httpx
import pytest
from freezegun import freeze_time

from harness.adapters.reference.batch import batch
from harness.contract import FROZEN_AT, FROZEN_EPOCH
from harness.fake import ScriptedLLM, Turn
from harness.run import Wire, run_scenario, run_scenarios, snapshot_text
from harness.runtime.registry import Agent, AgentRegistry
from harness.runtime.sessions import SessionStore
from harness.scenario import AgentSpec, Expect, Phase
from tests.conftest import SCENARIOS
from tests.helpers import assemble

SNAPSHOTS = Path(__file__).parents[1] / "snapshots"


def test_repeated_runs_give_identical_snapshot_bytes() -> None:
    # State leaking from one run into the next (a counter, a cache, a registry) shows up
    # as a second text. One batch, one loop: 50 runs take about 0.1 s.
    scenario = SCENARIOS["resumed-depth-one-root"]
    runs = run_scenarios([scenario] * 50)
    texts = {snapshot_text(result.observation.snapshot()) for result in runs}
    assert len(texts) == 1


# The official SDKs, and huggingface_hub (imported with smolagents): freezegun's scan of a
# module reads every attribute, and reading huggingface_hub's looks huggingface.co up, which
# the offline guard fails (seen when one process ran the smolagents tests first, as
# mutmut's stats pass does).
IGNORED = ["anthropic", "openai", "huggingface_hub"]


@pytest.mark.parametrize("instant", ["1999-12-31 23:59:59", "2042-06-01 12:34:56"])
def test_no_wall_clock_reading_reaches_an_observation(instant: str) -> None:
    # A run's clocks are handed in (FROZEN_AT), not patched. Freezing the wall clock far
    # from FROZEN_AT shows any reading that slipped past them: it would change a timestamp,
    # and so the snapshot. The official SDKs are not on this path (the reference runs over
    # httpx here); skipping their ~4,000 modules, when another test imported them into this
    # worker, saves freezegun's first scan about a second.
    with freeze_time(instant, real_asyncio=True, ignore=IGNORED), batch():
        changed = [
            sid
            for sid, scenario in sorted(SCENARIOS.items())
            if snapshot_text(run_scenario(scenario).observation.snapshot())
            != (SNAPSHOTS / f"{sid}.json").read_text(encoding="utf-8")
        ]
    assert changed == []


def test_the_frozen_epoch_is_the_frozen_instant() -> None:
    assert int(datetime.fromisoformat(FROZEN_AT).timestamp()) == FROZEN_EPOCH


def test_no_absolute_path_reaches_a_snapshot() -> None:
    files = sorted(SNAPSHOTS.glob("*.json"))
    assert files  # which files must exist is tests/test_hygiene.py's check
    for file in files:
        text = file.read_text(encoding="utf-8")
        assert not re.search(r"(/tmp/|/work/|/home/|harness-[a-z0-9_]{6,})", text), file.name


def test_resume_inside_a_live_owner_is_still_delegated() -> None:
    llm = ScriptedLLM(
        {
            "old": [
                Turn.text("first life"),
                Turn.tool("ask_user_question", {"questions": [{"id": "q", "question": "?"}]}),
                Turn.text("second life"),
            ],
        }
    )

    async def go(store: SessionStore) -> list[dict[str, object]]:
        async with httpx.AsyncClient(transport=llm.transport()) as http:
            await assemble(http, store, agents=AgentRegistry()).start("old", "one")
            agents = AgentRegistry()
            owner = Agent("host")
            agents.enter(owner)
            await assemble(http, store, agents=agents).resume("old", "two", owner=owner)
        return store.read("old")

    with tempfile.TemporaryDirectory() as tmp:
        events = asyncio.run(go(SessionStore(Path(tmp))))
    resumed = [e for e in events if e["type"] == "session/resumed"]
    assert resumed and resumed[0]["owner"] == "host"
    (result,) = [e for e in events if e["type"] == "tool/result"]
    assert result["error"] == {"name": "UserQuestionError", "code": "DELEGATED_CALLER"}


def test_line_separators_survive_the_durable_log_and_sse() -> None:
    # Found by the fuzz test: U+2028, U+0085 and U+001C are raw inside JSON strings written
    # with ensure_ascii=False, and str.splitlines() (as httpx's aiter_lines) breaks at them.
    text = "hi\u2028there\x85and\x1cmore"
    scenario = dataclasses.replace(
        SCENARIOS["live-root-answered"],
        agents={"lead": AgentSpec("lead", (Turn.text(text),))},
        phases=(Phase("start", "lead", "go\u2028on"),),
        expect=Expect(outcome="completed", answerer_calls=0),
    )
    for wire in (Wire(), Wire(stream=True), Wire(stream=True, chunk=1)):
        result = run_scenario(scenario, wire=wire)
        assert result.status == "pass", (wire, result.mismatches)
        assert result.observation.final == {"lead": text}
