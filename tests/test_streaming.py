"""SSE streaming on the wire: the fake's chunks have the OpenAI shape, and the runtime's
client reassembles them exactly."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

import httpx
import pytest

from harness.cli import main
from harness.contract import AGENT_HEADER
from harness.fake import BASE_URL, Call, ScriptedLLM, Turn
from harness.runtime.llm import ChatClient, ChatError

ARGS = {"questions": [{"id": "q", "question": "Déployer le repli CUDA ? 🚀"}]}


def sse_events(llm: ScriptedLLM, agent: str = "a") -> list[str]:
    request = httpx.Request(
        "POST",
        BASE_URL + "/chat/completions",
        headers={"X-Harness-Agent": agent},
        json={
            "model": "m",
            "messages": [{"role": "user", "content": "go"}],
            "stream": True,
            "stream_options": {"include_usage": True},
        },
    )
    response = llm.respond(request)
    assert response.headers["content-type"] == "text/event-stream; charset=utf-8"
    return [line[6:] for line in response.text.split("\n\n") if line.startswith("data: ")]


def test_chunks_have_the_openai_shape_and_order() -> None:
    llm = ScriptedLLM(
        {"a": [Turn(say="hi!", calls=(Call("ask_user_question", ARGS), Call("subagent", {})))]},
        chunk=1,
    )
    *events, done = sse_events(llm)
    assert done == "[DONE]"
    chunks = [json.loads(e) for e in events]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
    assert deltas[0] == {"role": "assistant", "content": "", "refusal": None}
    assert {c["system_fingerprint"] for c in chunks} == {"fp_keyless_harness"}
    assert all(c["choices"][0]["logprobs"] is None for c in chunks if c["choices"])
    assert [d["content"] for d in deltas[1:4]] == ["h", "i", "!"]
    calls = [d["tool_calls"][0] for d in deltas if "tool_calls" in d]
    first = calls[0]
    assert first["index"] == 0 and first["id"] == "call_1"
    assert first["function"] == {"name": "ask_user_question", "arguments": ""}
    fragments = [c["function"]["arguments"] for c in calls if c["index"] == 0 and "id" not in c]
    assert all(len(f) == 1 for f in fragments)
    assert json.loads("".join(fragments)) == ARGS
    assert {c["index"] for c in calls} == {0, 1} and calls[-1]["index"] == 1
    assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"
    # usage is the documented estimate, a token per four characters rounded up: "go" is 1,
    # and the reply is its text plus each call's arguments.
    said = "hi!" + "".join(json.dumps(a, separators=(",", ":"), ensure_ascii=False)
                           for a in (ARGS, {}))  # fmt: skip
    assert chunks[-1]["choices"] == []
    assert chunks[-1]["usage"] == {
        "prompt_tokens": 1,
        "completion_tokens": -(-len(said) // 4),
        "total_tokens": 1 + -(-len(said) // 4),
    }


@pytest.mark.parametrize("chunk", [None, 1, 5])
def test_client_reassembles_the_stream_exactly(chunk: int | None) -> None:
    llm = ScriptedLLM(
        {"a": [Turn(say="x" * 23, calls=(Call("ask_user_question", ARGS),))]}, chunk=chunk
    )

    async def go() -> object:
        async with httpx.AsyncClient(transport=llm.transport()) as http:
            client = ChatClient(http, base_url=BASE_URL, stream=True, agent_header=AGENT_HEADER)
            return await client.complete(
                agent="a", messages=[{"role": "user", "content": "go"}], tools=[]
            )

    reply = asyncio.run(go())
    assert reply.content == "x" * 23  # type: ignore[attr-defined]
    (call,) = reply.tool_calls  # type: ignore[attr-defined]
    assert (call.id, call.name) == ("call_1", "ask_user_question")
    assert json.loads(call.arguments) == ARGS
    assert llm.requests[0].body["stream"] is True


def test_a_stream_without_done_is_an_error_not_a_truncated_reply() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        chunk = {"choices": [{"index": 0, "delta": {"content": "partial"}}]}
        return httpx.Response(200, content=f"data: {json.dumps(chunk)}\n\n".encode())

    async def go() -> None:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
            await ChatClient(
                http, base_url=BASE_URL, stream=True, agent_header=AGENT_HEADER
            ).complete(agent="a", messages=[], tools=[])

    with pytest.raises(ChatError, match=r"without data: \[DONE\]"):
        asyncio.run(go())


def test_misuse_while_streaming_is_still_a_named_error() -> None:
    llm = ScriptedLLM({"a": []})

    async def go() -> None:
        async with httpx.AsyncClient(transport=llm.transport()) as http:
            await ChatClient(
                http, base_url=BASE_URL, stream=True, agent_header=AGENT_HEADER
            ).complete(agent="a", messages=[{"role": "user", "content": "go"}], tools=[])

    with pytest.raises(ChatError, match="agent a asked for step 1"):
        asyncio.run(go())


def test_chunk_needs_stream(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--chunk", "3"]) == 2
    assert "--chunk takes a positive number" in capsys.readouterr().err
    assert main(["run", "--stream", "--chunk", "1", "zero-depth-live-child"]) == 0


def served_deltas(monkeypatch: pytest.MonkeyPatch, run: Callable[[], object]) -> set[int]:
    """The lengths of every content and argument delta the fake streamed during `run`, read
    off the bytes on the wire."""
    import httpx

    from harness.adapters.reference.world import LiveWorld

    bodies: list[bytes] = []
    real = LiveWorld.http

    def http(world: LiveWorld) -> httpx.AsyncClient:
        inner = real(world)._transport  # the fake's own, as the runtime would get it

        class Recording(httpx.AsyncBaseTransport):
            async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
                response = await inner.handle_async_request(request)
                body = await response.aread()
                bodies.append(body)
                return httpx.Response(response.status_code, headers=response.headers,
                                      content=body)  # fmt: skip

        return httpx.AsyncClient(transport=Recording(), trust_env=False)

    monkeypatch.setattr(LiveWorld, "http", http)
    run()
    sizes = set()
    for body in bodies:
        for line in body.decode().splitlines():
            if not line.startswith("data: {"):
                continue
            for choice in json.loads(line[6:])["choices"]:
                delta = choice["delta"]
                texts = [delta.get("content") or ""]
                texts += [c["function"].get("arguments", "") for c in delta.get("tool_calls", [])]
                sizes |= {len(t) for t in texts if t}
    return sizes


def test_a_scenario_can_set_its_own_chunk_size_and_a_run_overrides_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import dataclasses

    from harness.adapters.reference.phases import observe_scenario
    from harness.run import Wire
    from tests.conftest import SCENARIOS

    scenario = dataclasses.replace(SCENARIOS["zero-depth-live-child"], stream_chunk=2)
    own = served_deltas(monkeypatch, lambda: observe_scenario(scenario, wire=Wire(stream=True)))
    assert own == {1, 2}  # every text in pieces of two (an odd length ends in one)
    run = served_deltas(
        monkeypatch, lambda: observe_scenario(scenario, wire=Wire(stream=True, chunk=9))
    )
    assert max(run) == 9
    # And the observation is the same whatever the pieces.
    snapshots = [
        observe_scenario(scenario, wire=wire).snapshot()
        for wire in (Wire(stream=True), Wire(stream=True, chunk=9), Wire())
    ]
    assert snapshots[0] == snapshots[1] == snapshots[2]


def test_misuse_on_the_wire_ends_the_scenario_as_an_error_naming_agent_and_step() -> None:
    import dataclasses

    from harness.run import Wire, run_scenario
    from harness.scenario import AgentSpec
    from tests.conftest import SCENARIOS

    base = SCENARIOS["zero-depth-live-child"]
    short = AgentSpec("parent", base.agents["parent"].script[:1])  # no final turn scripted
    scenario = dataclasses.replace(base, agents={**base.agents, "parent": short})
    for wire in (Wire(), Wire(stream=True, chunk=1)):
        result = run_scenario(scenario, wire=wire)
        assert result.status == "error"
        assert result.observation.outcome == "error"
        assert (
            "agent parent asked for step 2, but its script has only 1 step(s)"
            in (result.mismatches[0])
        )
