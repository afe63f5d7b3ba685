"""The whole corpus on the reference runtime over every wire: its model client swapped, from
outside, for the official anthropic SDK (Messages), openai SDK (Responses) or google-genai
(Gemini's generateContent), JSON and streamed. Every observation's portable part equals its
golden snapshot, pinned over Chat Completions: the rule does not depend on the wire, and
neither does the fake.

The Gemini client is composed here, as harness.adapters.reference.sdk_chat composes the
others, and put in that module's table for the test alone: `--api` (harness.contract.APIS)
does not name Gemini yet."""

from __future__ import annotations

import functools
import json
import ssl
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest

from harness.adapters import ReferenceAdapter
from harness.adapters.reference import sdk_chat
from harness.cli import main
from harness.contract import APIS, SENTINEL_KEY, RunOptions, Wire, portable
from harness.runtime.llm import ChatClient, ChatError, Reply, ToolCall
from tests.conftest import SCENARIOS

GOLDENS = Path(__file__).parents[1] / "snapshots"
GEMINI = "gemini-generate"  # the Gemini client's name in sdk_chat.CLIENTS, for these tests
# What the request body of each API carries and the others' do not.
MARK = {"anthropic-messages": "max_tokens", "openai-responses": "input", GEMINI: "contents"}


class GeminiChat(ChatClient):
    """The runtime's client over Gemini's generateContent, through google-genai's async
    client (`client.aio`) on the fake's httpx2 transport: the whole conversation as
    `contents` each time, the system messages as `systemInstruction`, each tool result a
    functionResponse with its call's id and name."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        transport: Any,
        *,
        base_url: str,
        stream: bool,
        agent_header: str | None,
    ) -> None:
        # `http` is the runtime's own client, unused here: the SDK brings its own (httpx2).
        super().__init__(http, base_url=base_url, stream=stream, agent_header=agent_header)
        import httpx2
        from google import genai
        from google.genai import errors, types

        self._errors, self._types = errors, types
        # Both HTTP clients given, so the SDK builds neither, and one TLS context for its
        # websockets (the Live API's) shared: each would load the CA bundle, some 40 ms a
        # client, and a run builds one per agent. The sync client is never used. The SDK
        # adds /v1/models/... to the base URL itself.
        options = types.HttpOptions(
            base_url=base_url.removesuffix("/v1"),
            api_version="v1",  # its default, named: GOOGLE_GENAI_API_VERSION cannot move it
            httpx_async_client=httpx2.AsyncClient(transport=transport),
            httpx_client=httpx2.Client(transport=transport),
            async_client_args={"ssl": _tls()},
        )
        self._sdk = genai.Client(api_key=SENTINEL_KEY, http_options=options)

    async def complete(
        self, *, agent: str, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]
    ) -> Reply:
        types = self._types
        system = [m["content"] for m in messages if m["role"] == "system"]
        declared = [types.FunctionDeclaration(
            name=t["function"]["name"], description=t["function"].get("description", ""),
            parameters_json_schema=t["function"].get("parameters") or {"type": "object"},
        ) for t in tools]  # fmt: skip
        config = types.GenerateContentConfig(
            system_instruction="\n\n".join(system) if system else None,
            tools=[types.Tool(function_declarations=declared)] if declared else None,
            http_options=types.HttpOptions(headers={self.agent_header: agent})
            if self.agent_header
            else None,
        )
        asked = {"model": "scripted", "contents": _contents(messages), "config": config}
        parts: list[Any] = []
        try:
            if self.stream:
                async for chunk in await self._sdk.aio.models.generate_content_stream(**asked):
                    parts += chunk.candidates[0].content.parts or []  # type: ignore[index, union-attr]
            else:
                reply = await self._sdk.aio.models.generate_content(**asked)
                parts = reply.candidates[0].content.parts or []  # type: ignore[index, union-attr]
        except self._errors.APIError as exc:
            raise ChatError(str(exc.message), status=exc.code) from None
        text = "".join(p.text for p in parts if p.text)
        calls = tuple(
            ToolCall(p.function_call.id or "", p.function_call.name or "",
                     json.dumps(p.function_call.args or {}, ensure_ascii=False,
                                separators=(",", ":")))
            for p in parts if p.function_call
        )  # fmt: skip
        return Reply(text or None, calls)


@functools.cache
def _tls() -> ssl.SSLContext:
    return ssl.create_default_context()


def _contents(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Chat Completions messages as Gemini contents: each run of tool results one user
    content of functionResponses, named after the calls they answer."""
    names: dict[str, str] = {}
    out: list[dict[str, Any]] = []
    for message in messages:
        role, content = message["role"], message.get("content")
        if role == "system":
            continue
        if role == "tool":
            response = {"id": message["tool_call_id"], "name": names[message["tool_call_id"]],
                        "response": {"output": content or ""}}  # fmt: skip
            if out and out[-1]["role"] == "user" and "functionResponse" in out[-1]["parts"][0]:
                out[-1]["parts"].append({"functionResponse": response})
            else:
                out.append({"role": "user", "parts": [{"functionResponse": response}]})
        elif role == "assistant":
            parts: list[dict[str, Any]] = [{"text": content}] if content else []
            for call in message.get("tool_calls") or ():
                function = call["function"]
                names[call["id"]] = function["name"]
                called = {"id": call["id"], "name": function["name"],
                          "args": json.loads(function["arguments"])}  # fmt: skip
                parts.append({"functionCall": called})
            out.append({"role": "model", "parts": parts})
        else:
            out.append({"role": "user", "parts": [{"text": content}]})
    return out


@pytest.fixture
def gemini(monkeypatch: pytest.MonkeyPatch) -> str:
    """The Gemini client in sdk_chat's table while the test runs; its name as an --api."""
    monkeypatch.setitem(sdk_chat.CLIENTS, GEMINI, GeminiChat)  # type: ignore[arg-type]
    return GEMINI


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize("api", [*APIS[1:], GEMINI])
@pytest.mark.usefixtures("gemini")
def test_every_observation_equals_its_golden_over_the_sdk(api: str, stream: bool) -> None:
    wire = Wire(stream=stream, chunk=3 if stream else None, api=api)
    differ, sent = [], 0
    with ReferenceAdapter() as reference:
        for sid, scenario in sorted(SCENARIOS.items()):
            observed = reference.run(scenario, RunOptions(wire=wire))
            golden = json.loads((GOLDENS / f"{sid}.json").read_text("utf-8"))
            if portable(observed.snapshot()) != portable(golden):
                differ.append(sid)
            for request in observed.requests:  # it did travel on that API
                body = json.loads(request.raw)
                assert MARK[api] in body
                sent += 1
    assert differ == []
    assert sent > 60  # the assembled scenarios' requests, every one on this API


def test_the_cli_knows_the_apis() -> None:
    from harness.cli._options import API_NAMES

    assert API_NAMES == APIS


def test_harness_run_takes_the_api(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--api", "anthropic-messages", "--stream", "grandchild-refused"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == "1 passed, 0 failed"
    args = ["run", "--api", "openai-responses", "--adapter", "jsonl:true"]
    assert main(args) == 2
    assert "--api is the reference runtime's model client" in capsys.readouterr().err
