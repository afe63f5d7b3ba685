"""`ScriptedLLM.intercept()`: a runtime that builds its own client (the openai and anthropic
SDKs do, on httpx2, which respx does not patch) is served in-process all the same; a
request to loopback goes out as usual; any other fails at once, before a socket opens.
(The suite's offline guard, tests/_offline.py, would fail any test here that opened one.)
And the one credential the fake takes is the sentinel key."""

from __future__ import annotations

import asyncio
import importlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from harness.contract import SENTINEL_KEY
from harness.fake import BASE_URL, OffLoopbackRequest, ScriptedLLM, Turn
from harness.fake.intercept import LIBRARIES, is_loopback

REFUSED = (
    r"POST https://api\.anthropic\.com/v1/messages: keyless-harness lets no request leave "
    r"loopback while the fake is in-process; point the client's base URL at "
    r"http://fake-llm\.invalid/v1"
)


def hello() -> ScriptedLLM:
    return ScriptedLLM({"lead": [Turn.text("hello")]})


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_the_anthropic_sdk_on_its_own_httpx2_client_runs_a_delegation(stream: bool) -> None:
    import anthropic

    from tests.test_wire_anthropic import CHILD_FINAL, SDK_BASE, Runtime, fake

    llm = fake(chunk=5)
    with llm.intercept():
        client = anthropic.Anthropic(base_url=SDK_BASE, api_key=SENTINEL_KEY, max_retries=0)
        assert type(client._client._transport).__module__ == "httpx2"  # no transport given
        final = Runtime(client, stream).run("Prepare the deployment.")
    assert final == f"PARENT_COMPLETED: {CHILD_FINAL}"
    assert [r.agent for r in llm.requests] == ["parent", "child", "child", "parent"]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_the_openai_sdk_on_its_own_httpx2_client_runs_a_delegation(stream: bool) -> None:
    import openai

    from tests.test_wire_responses import CHILD_FINAL, Runtime, fake

    llm = fake(chunk=5)
    with llm.intercept():
        client = openai.OpenAI(base_url=BASE_URL, api_key=SENTINEL_KEY, max_retries=0)
        assert type(client._client._transport).__module__ == "httpx2"
        final = Runtime(client, stream).run("Prepare the deployment.")
    assert final == f"PARENT_COMPLETED: {CHILD_FINAL}"


def test_an_async_sdk_client_is_served_with_the_before_turn_hook() -> None:
    import openai

    turns: list[tuple[str, int]] = []

    async def before(agent: str, step: int) -> None:
        turns.append((agent, step))

    llm = hello()
    llm.before_turn = before

    async def go() -> str | None:
        client = openai.AsyncOpenAI(base_url=BASE_URL, api_key=SENTINEL_KEY, max_retries=0)
        async with client:
            reply = await client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "go"}]
            )
        return reply.choices[0].message.content

    with llm.intercept():
        assert asyncio.run(go()) == "hello"
    assert turns == [("lead", 1)]


@pytest.mark.parametrize("library", LIBRARIES)
def test_a_client_aimed_at_a_public_address_fails_at_once(library: str) -> None:
    module: Any = importlib.import_module(library)
    llm = hello()
    with llm.intercept(), module.Client() as client:
        with pytest.raises(OffLoopbackRequest, match=REFUSED):
            client.post("https://api.anthropic.com/v1/messages", json={})
        with pytest.raises(OffLoopbackRequest, match=r"http://93\.184\.216\.34/"):
            client.get("http://93.184.216.34/")
    assert llm.requests == []


def test_an_sdk_left_on_the_real_api_fails_at_once_and_says_why() -> None:
    import anthropic

    with hello().intercept():
        client = anthropic.Anthropic(api_key=SENTINEL_KEY, max_retries=0)
        with pytest.raises(anthropic.APIConnectionError) as raised:
            client.messages.create(model="m", max_tokens=8, messages=[])
    assert isinstance(raised.value.__cause__, OffLoopbackRequest)
    assert "keyless-harness lets no request leave loopback" in str(raised.value.__cause__)


@pytest.fixture
def local_server() -> Iterator[str]:
    class Answer(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("content-length", "5")
            self.end_headers()
            self.wfile.write(b"local")

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Answer)
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.mark.parametrize("library", LIBRARIES)
def test_loopback_goes_out_as_usual(library: str, local_server: str) -> None:
    module: Any = importlib.import_module(library)
    with hello().intercept(), module.Client() as client:
        assert client.get(local_server).text == "local"


def test_each_exit_restores_what_it_found() -> None:
    import httpx2

    found = {
        m: (m.HTTPTransport.handle_request, m.AsyncHTTPTransport.handle_async_request)
        for m in (httpx, httpx2)
    }
    outer, inner = hello(), ScriptedLLM({"lead": [Turn.text("inner")]})
    reply: httpx.Response | httpx2.Response
    with outer.intercept():
        with inner.intercept():  # the innermost fake answers first
            reply = httpx2.post(f"{BASE_URL}/chat/completions", json=_chat())
            assert reply.json()["choices"][0]["message"]["content"] == "inner"
        reply = httpx.post(f"{BASE_URL}/chat/completions", json=_chat())
        assert reply.json()["choices"][0]["message"]["content"] == "hello"
    now = {
        m: (m.HTTPTransport.handle_request, m.AsyncHTTPTransport.handle_async_request)
        for m in (httpx, httpx2)
    }
    assert now == found


def _chat() -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": "go"}]}


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("localhost", True), ("127.0.0.1", True), ("127.8.9.10", True), ("[::1]", True),
     ("::1", True), ("fake-llm.invalid", False), ("10.0.0.1", False), ("localhost.evil", False)],
)  # fmt: skip
def test_what_counts_as_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


# -- the sentinel key ---------------------------------------------------------------------
WIRES = [
    ("/chat/completions", _chat()),
    ("/messages", {"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "go"}]}),
    ("/responses", {"model": "m", "input": "go"}),
]


@pytest.mark.parametrize(
    "headers",
    [{}, {"authorization": f"Bearer {SENTINEL_KEY}"}, {"x-api-key": SENTINEL_KEY},
     {"api-key": SENTINEL_KEY}],
    ids=["none", "bearer", "x-api-key", "api-key"],
)  # fmt: skip
def test_no_credential_or_the_sentinel_is_served(headers: dict[str, str]) -> None:
    llm = hello()
    with httpx.Client(transport=httpx.MockTransport(llm.router().handler)) as client:
        reply = client.post(f"{BASE_URL}/chat/completions", json=_chat(), headers=headers)
    assert reply.status_code == 200, reply.text


@pytest.mark.parametrize(("path", "body"), WIRES, ids=["chat", "messages", "responses"])
@pytest.mark.parametrize(
    "headers",
    [{"authorization": "Bearer sk-live-0123"}, {"x-api-key": "sk-ant-0123"},
     {"authorization": f"Basic {SENTINEL_KEY}"}, {"x-goog-api-key": "AIza0123"}],
    ids=["bearer", "x-api-key", "basic", "google"],
)  # fmt: skip
def test_any_other_credential_is_refused_in_the_wires_shape(
    path: str, body: dict[str, Any], headers: dict[str, str]
) -> None:
    llm = hello()
    with httpx.Client(transport=httpx.MockTransport(llm.router().handler)) as client:
        reply = client.post(f"{BASE_URL}{path}", json=body, headers=headers)
    assert reply.status_code == 401
    (name,) = headers
    assert f"header {name} carries a credential that is not the harness's sentinel" in reply.text
    assert headers[name] not in reply.text  # a leaked key is never repeated
    error = reply.json()["error"]
    if path == "/messages":
        assert error["type"] == "authentication_error"
    else:
        assert (error["code"], error["param"]) == ("invalid_api_key", name)
    assert llm.unconsumed() != []  # no step was spent on it
