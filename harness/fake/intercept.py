"""Every httpx and httpx2 client in this process, routed while the fake runs in-process:
a request to the fake's endpoints is answered by its handler, one to loopback goes out as
it would, and any other fails at once with `OffLoopbackRequest`, before a socket opens.

A runtime tested in-process may build its own HTTP client instead of taking the fake's
transport: openai-python 3.x and anthropic 1.x do, on httpx2, which respx does not patch.
Such a client would otherwise send its requests to the real API. What is patched is the
default transport of each library (`HTTPTransport.handle_request`,
`AsyncHTTPTransport.handle_async_request`), the one every client uses unless given another;
a client handed a transport of its own (a MockTransport) is left to it.
"""

from __future__ import annotations

import contextlib
import importlib
import ipaddress
from collections.abc import Iterator
from typing import Any

import httpx

from harness.fake.transport import BASE_URL, Handler, as_httpx, as_httpx2

LIBRARIES = ("httpx", "httpx2")  # httpx2 only where it is installed (the SDKs bring it)


class OffLoopbackRequest(RuntimeError):
    """A client tried to reach a host that is neither the fake nor loopback."""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@contextlib.contextmanager
def intercepting(handler: Handler, base_url: str = BASE_URL) -> Iterator[None]:
    """While open, every httpx and httpx2 request in this process goes as the module says.
    Nested uses stack: the innermost fake answers first; each exit restores what it found."""
    undo: list[tuple[type[Any], str, Any]] = []
    try:
        for name in LIBRARIES:
            try:
                module = importlib.import_module(name)
            except ImportError:
                continue
            undo += _patch(module, handler, base_url)
        yield
    finally:
        for cls, attribute, original in reversed(undo):
            setattr(cls, attribute, original)


def _patch(module: Any, handler: Handler, base_url: str) -> list[tuple[type[Any], str, Any]]:
    sync, asynchronous = module.HTTPTransport, module.AsyncHTTPTransport
    send, send_async = sync.handle_request, asynchronous.handle_async_request

    def handle_request(transport: Any, request: Any) -> Any:
        ours = _as_httpx(module, request, request.read())
        if handler.serves(ours):
            return _back(module, handler.respond(ours), request)
        _refuse_unless_loopback(request, base_url)
        return send(transport, request)

    async def handle_async_request(transport: Any, request: Any) -> Any:
        ours = _as_httpx(module, request, await request.aread())
        if handler.serves(ours):
            return _back(module, await handler.handle(ours), request)
        _refuse_unless_loopback(request, base_url)
        return await send_async(transport, request)

    sync.handle_request = handle_request
    asynchronous.handle_async_request = handle_async_request
    return [(sync, "handle_request", send), (asynchronous, "handle_async_request", send_async)]


def _refuse_unless_loopback(request: Any, base_url: str) -> None:
    if not is_loopback(request.url.host):
        raise OffLoopbackRequest(
            f"{request.method} {request.url}: keyless-harness lets no request leave loopback "
            f"while the fake is in-process; point the client's base URL at {base_url}"
        )


def _as_httpx(module: Any, request: Any, body: bytes) -> httpx.Request:
    return request if module is httpx else as_httpx(request, body)


def _back(module: Any, response: httpx.Response, request: Any) -> Any:
    return response if module is httpx else as_httpx2(response, request)
