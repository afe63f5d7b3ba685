"""Figure 9: the delegation over the other two wires, Anthropic Messages and OpenAI
Responses, each against its own floor: the official SDK (the client the reference runtime
composes on that wire) making the same four calls against canned replies, measured side by
side in one sampling session."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from benchmarks._measure import Bench, Stats, sample_blocks
from benchmarks._report import Check, Section, num, times
from benchmarks.figures_delegation import Exchange, exchanges, ours, scenario
from harness.contract import AGENT_HEADER, SENTINEL_KEY
from harness.fake import BASE_URL
from harness.run import Wire

# Each wire: its endpoint under the fake's base URL, and the SDK's call for it.
WIRES = {"anthropic-messages": "/messages", "openai-responses": "/responses"}
# ours / floor, at most: the targets (streaming has more to parse per reply).
BOUNDS = {False: 2.0, True: 2.5}


class SdkFloor:
    """The least a harness on this wire pays: a fresh SDK client (as each run composes
    one), then the four calls in order, each answered with canned bytes by an
    httpx2.MockTransport, on the block's event loop."""

    def __init__(self, api: str, stream: bool, sent: list[Exchange]) -> None:
        import httpx2

        self.api, self.stream, self.sent, self.step = api, stream, sent, 0

        async def canned(request: Any) -> Any:
            ex = self.sent[self.step]
            return httpx2.Response(
                200, content=ex.reply, headers={"content-type": ex.content_type}, request=request
            )

        self.transport = httpx2.MockTransport(canned)
        self.runner: asyncio.Runner | None = None

    def _client(self) -> Any:
        import httpx2

        http = httpx2.AsyncClient(transport=self.transport)
        if self.api == "anthropic-messages":
            import anthropic

            return anthropic.AsyncAnthropic(
                base_url=BASE_URL.removesuffix("/v1"), api_key=SENTINEL_KEY, max_retries=0,
                http_client=http,
            )  # fmt: skip
        import openai

        return openai.AsyncOpenAI(
            base_url=BASE_URL, api_key=SENTINEL_KEY, max_retries=0, http_client=http
        )

    async def _call(self, sdk: Any, ex: Exchange) -> None:
        asked = {k: v for k, v in ex.body.items() if k != "stream"}
        asked["extra_headers"] = {AGENT_HEADER: ex.agent}
        calls = sdk.messages if self.api == "anthropic-messages" else sdk.responses
        if not self.stream:
            await calls.create(**asked)
            return
        async with calls.stream(**asked) as events:
            if self.api == "anthropic-messages":
                await events.get_final_message()
            else:
                await events.get_final_response()

    async def _delegation(self) -> None:
        sdk = self._client()
        try:
            for step, ex in enumerate(self.sent):
                self.step = step
                await self._call(sdk, ex)
        finally:
            await sdk.close()

    def delegation(self) -> None:
        assert self.runner is not None
        self.runner.run(self._delegation())

    @contextmanager
    def loop(self) -> Iterator[None]:
        with asyncio.Runner() as runner:
            self.runner = runner
            yield


def measure(*, quick: bool, repeats: int) -> Section:
    sc = scenario()
    benches: list[Bench] = []
    pairs: list[tuple[str, bool, str, str]] = []
    for api in WIRES:
        for stream in (False, True):
            kind = "SSE" if stream else "JSON"
            wire = Wire(stream=stream, api=api)
            floor = SdkFloor(api, stream, exchanges(sc, wire, BASE_URL + WIRES[api]))
            names = (f"floor: {api} ({kind})", f"ours: {api} ({kind})")
            benches += [
                Bench(names[0], floor.delegation, floor.loop),
                ours(sc, wire),
            ]
            benches[-1].name = names[1]
            pairs.append((api, stream, *names))
    blocks = 2 if quick else 20
    per_block, warmup = max(repeats // blocks, 1), 1 if quick else 3
    got = sample_blocks(benches, blocks=blocks, per_block=per_block, warmup=warmup)
    section = Section(
        "9. The other wires: Anthropic Messages and OpenAI Responses",
        f"The zero-depth delegation (`{sc.id}`) with the reference runtime's model client on "
        "each wire, the official SDK (`harness run --api WIRE`), against that wire's floor: "
        "the same SDK, a fresh client per delegation as each run composes one, making the "
        "four calls the runtime made (their captured bodies, the agent header beside) against "
        "an httpx2.MockTransport that answers each with the fake's exact reply bytes. "
        "Streaming reads each reply through the SDK's stream helper to its final message, "
        "as the runtime does. Ours is `run_scenario` judged, in one batch per block, as "
        "figure 2.",
    )
    rows: list[tuple[str, Stats]] = []
    for api, stream, floor_name, ours_name in pairs:
        rows += [(floor_name, got[floor_name]), (ours_name, got[ours_name])]
        value = got[ours_name].median / got[floor_name].median
        kind, bound = ("SSE" if stream else "JSON"), BOUNDS[stream]
        section.checks.append(
            Check(f"9 ours / floor: {api} ({kind})", value, bound, times(value),
                  f"<= {num(bound)}x")
        )  # fmt: skip
    section.stats_table(rows)
    return section
