"""The fake in-process: one handler, `httpx.MockTransport`-shaped, that answers a POST to
each wire's endpoint below the base URL ({base}/chat/completions, /messages, /responses,
/models/{model}:generateContent: harness.fake.endpoints) with the fake's answer and refuses
anything else.

A refused request raises respx's `AllMockedAssertionError` with respx's own message, as the
respx router the harness used before did with `assert_all_mocked`: an assertion, not an
httpx error, so a runtime pointed at the wrong URL cannot mistake it for a model's refusal.
Each endpoint is matched as that router matched it: method, scheme, host and path, and the
port only when the base URL names one; the query is not looked at (the fake reads a
`?key=` credential itself). A wire whose path carries part of the request (Gemini's model
and method) is matched by its pattern on the whole path below the base URL.
`ScriptedLLM.transport()` hands this handler to httpx directly, and `ScriptedLLM.router()`
is a respx router that routes to it, for tests that compose respx routes of their own.
"""

from __future__ import annotations

import functools
import re
from typing import Any, NoReturn, Protocol

import httpx

from harness.fake.endpoints import PATHS, PATTERNED
from harness.fake.wires import Answer

BASE_URL = "http://fake-llm.invalid/v1"


def response(answer: Answer, request: httpx.Request | None = None) -> httpx.Response:
    """The HTTP response carrying `answer`, bound to the `request` it answers if given."""
    headers = [("content-type", answer.content_type), *answer.headers]
    return httpx.Response(answer.status, content=answer.content(), headers=headers, request=request)


class Fake(Protocol):
    """What the handler serves (ScriptedLLM): a hook to await before a step, and the answer
    to a request."""

    @property
    def pauses(self) -> bool: ...

    async def before(self, request: httpx.Request) -> None: ...

    def hold(self, request: httpx.Request) -> None: ...

    def complete(self, request: httpx.Request) -> Answer: ...


class Handler:
    """The fake behind one base URL. `handle` is the `httpx.MockTransport` handler: the
    fake's `before_turn` hook is awaited, then `respond` answers. `respond` is the same
    answer without the hook, for synchronous callers (a respx route, an httpx.Client)."""

    def __init__(self, llm: Fake, base_url: str = BASE_URL) -> None:
        self.llm = llm
        self._scheme, self._host, self._port, self._below, self._paths = _endpoints(base_url)

    def serves(self, request: httpx.Request) -> bool:
        url = request.url
        return (
            request.method == "POST"
            and (url.path in self._paths or self._patterned(url.path))
            and url.host == self._host
            and url.scheme == self._scheme
            and (self._port is None or url.port == self._port)
        )

    def _patterned(self, path: str) -> bool:
        # Only after the exact paths missed: most requests never get here.
        below = self._below
        if not path.startswith(below + "/"):
            return False
        return any(endpoint.below(path[len(below) :]) for endpoint in PATTERNED)

    def respond(self, request: httpx.Request) -> httpx.Response:
        if not self.serves(request):
            _refuse(request)
        if self.llm.pauses:
            self.llm.hold(request)
        return response(self.llm.complete(request), request)

    async def handle(self, request: httpx.Request) -> httpx.Response:
        if not (self.llm.pauses and self.serves(request)):
            return self.respond(request)
        await self.llm.before(request)
        return response(self.llm.complete(request), request)


@functools.cache
def _endpoints(base_url: str) -> tuple[str, str, int | None, str, frozenset[str]]:
    """(scheme, host, port or None, the base path, the fixed endpoints' paths) of
    `base_url`: parsed once per base URL, since parsing one costs about as much as
    answering a request."""
    base = httpx.URL(base_url)
    below = base.path.rstrip("/")
    return base.scheme, base.host, base.port, below, frozenset(below + path for path in PATHS)


def _refuse(request: httpx.Request) -> NoReturn:
    from respx.models import AllMockedAssertionError

    raise AllMockedAssertionError(f"RESPX: {request!r} not mocked!")


def httpx2_transport(handler: Handler) -> Any:
    """The handler as an `httpx2.MockTransport`, for a client on httpx2 (openai-python 3.x
    and anthropic 1.x take only such a client): the fake's twin transport."""
    import httpx2

    async def handle(request: Any) -> Any:
        response = await handler.handle(as_httpx(request, await request.aread()))
        return as_httpx2(response, request)

    return httpx2.MockTransport(handle)


def as_httpx(request: Any, body: bytes) -> httpx.Request:
    """An httpx2 request as the httpx one the handler reads."""
    headers = list(request.headers.multi_items())
    return httpx.Request(request.method, str(request.url), headers=headers, content=body)


def as_httpx2(response: httpx.Response, request: Any) -> Any:
    """The handler's httpx response as httpx2's, bound to the httpx2 `request`."""
    import httpx2

    headers = list(response.headers.multi_items())
    return httpx2.Response(
        response.status_code, headers=headers, content=response.content, request=request
    )


def respx_router(handler: Handler, base_url: str) -> Any:
    """A respx router whose routes, a POST to each wire's endpoint below `base_url`, route
    to `handler`, and which refuses anything it does not mock."""
    import respx

    router = respx.Router(base_url=base_url, assert_all_mocked=True, assert_all_called=False)
    for path in PATHS:
        router.post(path).mock(side_effect=handler.respond)
    for endpoint in PATTERNED:
        assert endpoint.pattern is not None
        # respx searches its regex in the path below the base URL: anchored, it matches the
        # whole path there, as the handler does.
        whole = re.compile(rf"\A(?:{endpoint.pattern.pattern})")
        router.post(path__regex=whole).mock(side_effect=handler.respond)
    return router
