"""The fake's in-process seam: one handler answers POST {base}/chat/completions (and
{base}/messages: tests/test_wire_anthropic.py) and refuses anything else as respx's
`assert_all_mocked` does; `transport()` hands it to httpx with no respx in the path, and
`router()` is a respx router that routes to it."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
import respx

from harness.fake import BASE_URL, ScriptedLLM, Turn
from harness.fake.transport import Handler

URL = f"{BASE_URL}/chat/completions"
BODY = {"model": "m", "messages": [{"role": "user", "content": "go"}]}
HEADERS = {"X-Harness-Agent": "lead"}


def fake() -> ScriptedLLM:
    return ScriptedLLM({"lead": [Turn.text("hi"), Turn.text("again")]}, created=1)


async def _post(transport: httpx.AsyncBaseTransport, method: str, url: str) -> httpx.Response:
    async with httpx.AsyncClient(transport=transport) as client:
        return await client.request(method, url, json=BODY, headers=HEADERS)


def post(transport: httpx.AsyncBaseTransport, url: str = URL, method: str = "POST") -> Any:
    return asyncio.run(_post(transport, method, url))


def test_the_router_routes_to_the_fakes_handler() -> None:
    llm = fake()
    router = llm.router()
    # Chat Completions, Messages, Responses, and Gemini's generateContent (by its pattern)
    route, messages, responses, gemini = router.routes
    handler = route.side_effect.__self__
    assert isinstance(handler, Handler) and handler.llm is llm
    assert {r.side_effect for r in (route, messages, responses, gemini)} == {handler.respond}
    # Synchronously (an httpx.Client, the openai SDK's) and asynchronously alike.
    with httpx.Client(transport=httpx.MockTransport(router.handler)) as client:
        first = client.post(URL, json=BODY, headers=HEADERS)
    second = post(httpx.MockTransport(router.async_handler))
    assert [r.json()["choices"][0]["message"]["content"] for r in (first, second)] == [
        "hi",
        "again",
    ]
    assert route.call_count == 2 and [r.step for r in llm.requests] == [1, 2]


def test_the_transport_and_the_router_send_the_same_bytes() -> None:
    through_transport, through_router = fake(), fake()
    for _ in range(3):  # two steps, then the script is exhausted: a 400 both ways
        a = post(through_transport.transport())
        b = post(httpx.MockTransport(through_router.router().async_handler))
        assert (a.status_code, a.headers["content-type"], a.content) == (
            b.status_code,
            b.headers["content-type"],
            b.content,
        )
    assert a.status_code == 400 and json.loads(a.content)["error"]["code"] == "script_exhausted"


@pytest.mark.parametrize(
    ("method", "url"),
    [
        ("POST", f"{BASE_URL}/models"),
        ("POST", f"{BASE_URL}/completions"),
        ("POST", f"{URL}/"),
        ("POST", "http://fake-llm.invalid/chat/completions"),  # without the base's /v1
        ("POST", URL.replace("http:", "https:")),
        ("POST", "http://example.com/v1/chat/completions"),
        ("GET", URL),
        ("PUT", URL),
    ],
)
def test_the_transport_refuses_what_it_does_not_mock(method: str, url: str) -> None:
    llm = fake()
    waited: list[tuple[str, int]] = []

    async def hook(agent: str, step: int) -> None:
        waited.append((agent, step))

    llm.before_turn = hook
    with pytest.raises(respx.models.AllMockedAssertionError) as refused:
        post(llm.transport(), url, method)
    assert str(refused.value) == f"RESPX: <Request({method!r}, {url!r})> not mocked!"
    # Refused before anything of the fake ran: no step, no record, no hook.
    assert llm.requests == [] and llm.served == 0 and waited == []
    assert len(llm.unconsumed()) == 1


@pytest.mark.parametrize(
    "url",
    [
        f"{URL}?api-version=1",  # the query is not looked at
        "http://FAKE-LLM.invalid/v1/chat/completions",  # hosts are case-blind
        "http://fake-llm.invalid:8080/v1/chat/completions",  # the base names no port
    ],
)
def test_the_transport_answers_its_endpoint_as_respx_matched_it(url: str) -> None:
    llm = fake()
    assert post(llm.transport(), url).json()["choices"][0]["message"]["content"] == "hi"


def test_a_base_url_with_a_port_is_matched_on_it() -> None:
    base = "http://127.0.0.1:8000/api/"
    llm = fake()
    assert post(llm.transport(base), "http://127.0.0.1:8000/api/chat/completions").is_success
    with pytest.raises(respx.models.AllMockedAssertionError, match="not mocked"):
        post(llm.transport(base), "http://127.0.0.1:8001/api/chat/completions")
    with pytest.raises(respx.models.AllMockedAssertionError, match="not mocked"):
        post(
            httpx.MockTransport(llm.router(base).async_handler),
            "http://127.0.0.1:8001/api/chat/completions",
        )
    assert llm.served == 1


def test_the_hook_is_awaited_before_each_step_in_process() -> None:
    llm = fake()
    waited: list[tuple[str, int]] = []

    async def hook(agent: str, step: int) -> None:
        assert len(llm.requests) == step - 1  # before the step is served
        waited.append((agent, step))

    llm.before_turn = hook
    transport = llm.transport()
    post(transport)
    post(transport)
    assert waited == [("lead", 1), ("lead", 2)]
