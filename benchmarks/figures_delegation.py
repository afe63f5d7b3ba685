"""Figures 1-3, measured side by side in one sampling session: the HTTP floor, the harness's
assembled zero-depth delegation, and the same delegation in pydantic-ai."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import respx

from benchmarks._measure import Bench, Stats, now, profile_calls, ratio, sample_blocks
from benchmarks._report import Check, Section, num, profile_lines, times
from harness.adapters.reference.batch import batch
from harness.adapters.reference.phases import observe_scenario
from harness.contract import AGENT_HEADER
from harness.fake import BASE_URL, ScriptedLLM
from harness.run import Wire, run_scenario
from harness.scenario import Scenario, load_scenario, scenario_paths

SCENARIO = "zero-depth-live-child"
URL = BASE_URL + "/chat/completions"


def scenario(name: str = SCENARIO) -> Scenario:
    return load_scenario(next(p for p in scenario_paths() if p.stem == name))


@dataclass(frozen=True)
class Exchange:
    """One request the runtime really sent in the delegation, and the fake's reply to it."""

    agent: str
    body: dict[str, Any]
    reply: bytes
    content_type: str


def exchanges(sc: Scenario, wire: Wire, url: str = URL) -> list[Exchange]:
    """The delegation's four requests (parent, child, child, parent) as the runtime sent
    them over `wire`, each with the exact reply the fake gives at `url` (the wire's
    endpoint), so the floor moves the same bytes."""
    sent = observe_scenario(sc, wire=wire).requests
    llm = ScriptedLLM({name: a.script for name, a in sc.agents.items()})
    out = []
    for r in sent:
        assert r.agent is not None
        reply = llm.respond(httpx.Request("POST", url, headers=dict(r.headers), content=r.raw))
        out.append(Exchange(r.agent, r.body, reply.content, reply.headers["content-type"]))
    return out


class Floor:
    """The least any harness pays for these POSTs: httpx.AsyncClient over an
    httpx.MockTransport whose respx router (built once, as the harness's transports share
    one) answers each with canned bytes."""

    def __init__(self, sent: list[Exchange]) -> None:
        self.sent = sent
        self.step = 0  # which exchange is on the wire
        self.posts = 0
        self.router = respx.Router(base_url=BASE_URL, assert_all_mocked=True)
        floor = self

        class Canned(respx.Route):
            """Resolved straight to the canned reply, as the fake's own route is: no side
            effect for respx to inspect, no response to copy."""

            def resolve(self, request: httpx.Request, **kwargs: Any) -> httpx.Response:
                canned = floor.sent[floor.step]
                return httpx.Response(
                    200,
                    content=canned.reply,
                    headers={"content-type": canned.content_type},
                    request=request,
                )

        self.router.add(Canned(method="POST", path="/chat/completions"))
        self.runner: asyncio.Runner | None = None
        self.client: httpx.AsyncClient | None = None

    def _client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.MockTransport(self.router.async_handler))

    async def _post(self, client: httpx.AsyncClient, step: int) -> None:
        self.step = step
        ex = self.sent[step]
        headers = {AGENT_HEADER: ex.agent}
        if not ex.body.get("stream"):
            response = await client.post(URL, json=ex.body, headers=headers)
            response.json()
            return
        async with client.stream("POST", URL, json=ex.body, headers=headers) as response:
            async for text in response.aiter_text():
                for line in text.splitlines():
                    if line.startswith("data: {"):
                        json.loads(line[6:])

    async def _delegation(self) -> None:
        async with self._client() as client:
            for step in range(len(self.sent)):
                await self._post(client, step)

    def delegation(self) -> float:
        """A fresh client, then the four POSTs in order, on the block's event loop (as a
        batch of scenarios shares one)."""
        assert self.runner is not None
        start = now()
        self.runner.run(self._delegation())
        elapsed = now() - start
        self.router.reset()  # forget the recorded calls, untimed
        return elapsed

    @contextmanager
    def loop(self) -> Iterator[None]:
        with asyncio.Runner() as runner:
            self.runner, self.client = runner, self._client()
            yield
            runner.run(self.client.aclose())
            self.router.reset()

    async def _timed_post(self, step: int) -> float:
        assert self.client is not None
        start = now()
        await self._post(self.client, step)
        return now() - start

    def one_post(self) -> float:
        """One POST inside a running loop and an open client, timed inside the loop; the
        four exchanges in turn."""
        assert self.runner is not None
        self.posts += 1
        return self.runner.run(self._timed_post(self.posts % len(self.sent)))


def ours(sc: Scenario, wire: Wire) -> Bench:
    def run() -> None:
        result = run_scenario(sc, wire=wire)
        if result.status != "pass":
            raise AssertionError(f"{sc.id} over {wire.describe()}: {result.mismatches}")

    return Bench(f"ours: {sc.id} ({wire.describe()})", run, batch)


def measure(*, quick: bool, repeats: int, peer: bool) -> list[Section]:
    sc = scenario()
    json_floor, sse_floor = Floor(exchanges(sc, Wire())), Floor(exchanges(sc, Wire(stream=True)))
    benches = [
        Bench("floor: 1 POST (JSON)", json_floor.one_post, json_floor.loop),
        Bench("floor: 4-request delegation (JSON)", json_floor.delegation, json_floor.loop),
        Bench("floor: 4-request delegation (SSE)", sse_floor.delegation, sse_floor.loop),
        ours(sc, Wire()),
        ours(sc, Wire(stream=True)),
    ]
    peer_note, the_peer = "skipped (--skip peer)", None
    if peer:
        try:
            from benchmarks._peer import Peer
        except ImportError as exc:
            peer_note = f"skipped: pydantic-ai is not installed ({exc}); pip install -e '.[bench]'"
        else:
            peer_note, the_peer = "", Peer(sc)
            benches += the_peer.benches()
    blocks = 2 if quick else 20
    per_block, warmup = max(repeats // blocks, 1), 1 if quick else 3
    got = sample_blocks(benches, blocks=blocks, per_block=per_block, warmup=warmup)
    s = [got[b.name] for b in benches]
    sections = [
        _floor_section(s[0], s[1], s[2]),
        _ours_section(sc, s[1], s[2], s[3], s[4]),
        _peer_section(s[3], s[1], s[5:], peer_note, the_peer, quick),
    ]
    if not quick and not all(c.ok for section in sections for c in section.checks):
        with batch():
            prof = profile_calls(lambda: run_scenario(sc), 200)
        lines = profile_lines(f"ours (JSON), `run_scenario('{sc.id}')`", prof)
        extra = (s[3].median - s[1].median) * 1e3
        sections[1].dominates.append(
            f"Ours (JSON) takes {num(s[3].median * 1e3)} ms, {num(extra)} ms more than the "
            f"4-request floor's {num(s[1].median * 1e3)} ms: that is the harness's own work "
            "around the four POSTs (world, durable logs, the fake's script, the detecting "
            "loop, the observation).\n"
        )
        for section in sections:
            if not all(c.ok for c in section.checks):
                section.dominates += lines
    return sections


def _floor_section(post: Stats, four: Stats, four_sse: Stats) -> Section:
    section = Section(
        "1. Floor: OpenAI-shaped POSTs through httpx + respx",
        "The four requests the runtime really sends in the zero-depth delegation (parent, "
        "child, child, parent: system prompt, history and the three tool schemas), captured "
        "from a run, each answered with the fake's exact reply bytes by a respx router behind "
        "an `httpx.MockTransport`, the seam the harness uses. The client encodes the body "
        "(`json=`) and decodes the reply (SSE: each `data:` line); the router, built once as "
        "the harness's transports share one, resolves straight to the canned bytes (a route "
        "of its own, as the fake's, so respx inspects no side effect). '1 POST' takes the "
        "four in turn inside a running loop and an open client; the '4-request' floors "
        "include a fresh client, as one delegation needs, on one event loop per block of "
        "runs, as a batch of scenarios shares one.",
    )
    section.stats_table(
        [("1 POST (JSON)", post), ("4-request delegation (JSON)", four),
         ("4-request delegation (SSE)", four_sse)]
    )  # fmt: skip
    section.ratios += [
        ("4-request (JSON) / 1 POST", ratio(four, post)),
        ("4-request (SSE) / 4-request (JSON)", ratio(four_sse, four)),
    ]
    return section


def _ours_section(sc: Scenario, four: Stats, four_sse: Stats, plain: Stats, sse: Stats) -> Section:
    section = Section(
        "2. Ours: the assembled zero-depth delegation",
        f"`harness.run.run_scenario(load_scenario('{sc.id}'), wire=...)`, judged (each run "
        "must pass), inside one `harness.run.batch()` per block of runs, as `harness run` "
        "runs its scenarios (one deadlock-detecting event loop per batch). Each run builds "
        "its world (fake, durable store holding the JSONL logs in memory, answerer), runs, "
        "and reads the observation back from the durable logs.",
    )
    section.stats_table([("non-streaming (JSON)", plain), ("streaming (SSE)", sse)])
    # Streaming has more to parse and emit per reply: its bound is looser.
    for name, value, bound in (("JSON", ratio(plain, four), 1.7), ("SSE", ratio(sse, four), 2.0)):
        section.checks.append(
            Check(f"2 ours ({name}) / 4-request floor (JSON)", value, bound, times(value),
                  f"<= {num(bound)}x")
        )  # fmt: skip
    section.ratios.append(("ours (SSE) / 4-request floor (SSE)", ratio(sse, four_sse)))
    return section


def _peer_section(
    plain: Stats, four: Stats, peer: list[Stats], note: str, the_peer: Any, quick: bool
) -> Section:
    section = Section(
        "3. Peer: the same delegation in pydantic-ai",
        "`benchmarks/_peer.py`: a parent agent whose `subagent` tool runs a child agent; the "
        "child's `ask_user_question` tool returns the DELEGATED_CALLER error text, the child "
        "says 'UNRESOLVED: ...', the parent finishes (checked on every run). (a) pydantic-ai's "
        "`FunctionModel` in-process; (b) its `OpenAIChatModel` (openai SDK, the sentinel key, "
        "`max_retries=0`) over an `httpx.AsyncClient` whose MockTransport serves the "
        "harness's own `ScriptedLLM` with the scenario's scripts (fresh each run, so the fake's "
        "cost is the same as ours). Agents and clients are built once and reused, on one "
        "long-lived event loop per block: the peer's best case.",
    )
    if note:
        section.notes.append(f"pydantic-ai: {note}")
        return section
    function, http = peer
    section.stats_table([("(a) FunctionModel", function), ("(b) OpenAIChatModel over HTTP", http)])
    value = ratio(plain, http)
    section.checks.append(
        Check("3 ours (JSON) / pydantic-ai over HTTP", value, 0.1, times(value), "<= 0.1x")
    )
    section.ratios += [
        ("ours (JSON) / pydantic-ai FunctionModel", ratio(plain, function)),
        ("pydantic-ai over HTTP / 4-request floor (JSON)", ratio(http, four)),
        ("pydantic-ai FunctionModel / 4-request floor (JSON)", ratio(function, four)),
    ]
    if not quick and not section.checks[0].ok:
        calls = 50
        with the_peer.loop():
            prof = profile_calls(the_peer.run_http, calls)
        section.dominates += [
            f"Ours takes {num(plain.median * 1e3)} ms; the 0.1x target would need pydantic-ai "
            f"over HTTP to take {num(plain.median * 1e4)} ms, and it takes "
            f"{num(http.median * 1e3)} ms. Where the peer's time goes:",
            "",
            *profile_lines("pydantic-ai over HTTP, one delegation", prof, harness=False),
            "And where ours goes:",
            "",
        ]
    return section
