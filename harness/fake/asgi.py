"""The scripted fake LLM as an ASGI app: what `harness serve` runs on uvicorn.

Every request gets an answer, and it is JSON in the wire's error shape (Anthropic's on
/v1/messages, Google's on /v1/models/{model}:generateContent, OpenAI's elsewhere) unless it
is a reply: 404 (OpenAI's shape) for another path, 405 (with `Allow: POST`) for another
method, 411 without a length, 413 over the body cap, 408 when the body stops arriving, 400
for a body or script the fake cannot answer, 500 (and one line on stderr) for a bug of
ours. A request is checked whole before it consumes a scripted step (harness.fake.request),
and a stream is written event by event, each flushed as produced. What the fake answers is
`ScriptedLLM.complete()`, the same answer the in-process transport sends whole.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

import httpx

from harness.fake.endpoints import CHAT_COMPLETIONS, ENDPOINTS, PATTERNED
from harness.fake.scripted import ScriptedLLM
from harness.fake.wires import Answer, Endpoint, ErrorShape

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

# Each wire's endpoint, with or without the /v1 a base URL may carry (those in PATTERNED
# are matched by their pattern instead: `route`).
ROUTES: dict[str, Endpoint] = {
    prefix + endpoint.path: endpoint
    for endpoint in ENDPOINTS
    if endpoint.pattern is None
    for prefix in ("/v1", "")
}
_LISTED = ", ".join(f"/v1{endpoint.path}" for endpoint in ENDPOINTS)


def route(path: str) -> Endpoint | None:
    """The wire a request to `path` is for, if any: a fixed endpoint, or one whose path
    carries part of the request (Gemini's model and method), with or without the /v1."""
    path = path.rstrip("/")
    wire = ROUTES.get(path)
    if wire is not None or not PATTERNED:
        return wire
    below = (path, path[3:]) if path.startswith("/v1/") else (path,)
    return next((e for e in PATTERNED for p in below if e.below(p)), None)


def errors_for(path: str) -> ErrorShape:
    """The error shape a request to `path` is answered in: its wire's (OpenAI's off them)."""
    return (route(path) or CHAT_COMPLETIONS).error


@dataclass(frozen=True)
class Limits:
    """How much the server takes, and how it may misbehave on purpose."""

    max_body: int = 8 * 1024 * 1024  # bytes of request body
    read_timeout: float = 10.0  # seconds the next piece of a body may take to arrive
    chunk_delay: float = 0.0  # seconds before each streamed event: a slow or stalled model
    cut_after: int | None = None  # end each stream after this many events, with no [DONE]


def _log(line: str) -> None:
    print(f"harness serve: {line}", file=sys.stderr, flush=True)


class FakeApp:
    def __init__(
        self, llm: ScriptedLLM, limits: Limits = Limits(), log: Callable[[str], None] = _log
    ) -> None:
        self.llm = llm
        self.limits = limits
        self.log = log
        self.activity = asyncio.Event()  # set after each answered request
        self.disconnects = 0
        # Requests being answered now: an adapter decides a hang by quiescence (none in
        # flight while the human end holds a question), never by a timeout.
        self.in_flight = 0
        # Requests that have reached it, answered or not: a sign of life for an adapter's
        # no-progress watchdog (harness.adapters._watchdog).
        self.received = 0

    async def __call__(self, scope: Message, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        started = False
        self.in_flight += 1
        self.received += 1

        async def tracked(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self._handle(scope, receive, tracked)
        except Exception as exc:
            # A bug of ours: the client still gets an answer, and the log one line.
            self.log(f"internal error answering {scope['method']} {scope['path']}: "
                     f"{type(exc).__name__}: {exc}; this is a bug in keyless-harness")  # fmt: skip
            if not started:
                error = errors_for(scope["path"])
                await _answer(send, error(500, "the fake failed; see its stderr", "internal_error"))
        finally:
            # Counted even when the client left early: the step it consumed is served.
            self.in_flight -= 1
            self.activity.set()

    async def _handle(self, scope: Message, receive: Receive, send: Send) -> None:
        path, method = scope["path"], scope["method"]
        wire = route(path)
        if wire is None:
            # Shown beside the run (a CLI's preflight HEAD /, say): it reached no script.
            self.llm.side.append(f"{method} {path} (no model endpoint: answered 404)")
            message = f"no route {path}; POST one of {_LISTED}"
            return await _answer(send, CHAT_COMPLETIONS.error(404, message, "not_found"))
        # The path complete() reads the wire from (and a patterned one, what it carries).
        endpoint = "/v1" + wire.path if wire.pattern is None else path.rstrip("/")
        error = wire.error
        if method != "POST":
            message = f"{method} is not allowed on {path}; POST {endpoint}"
            refused = error(405, message, "method_not_allowed")
            return await _answer(send, refused, [(b"allow", b"POST")])
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]]
        names = {k.lower(): v for k, v in headers}
        if "content-length" not in names and "chunked" not in names.get("transfer-encoding", ""):
            message = f"a request to {endpoint} needs a body with a Content-Length"
            return await _answer(send, error(411, message, "length_required"))
        body = await self._read(receive, names.get("content-length"), error)
        if body is None:  # the client left before sending it all
            return None
        if isinstance(body, Answer):
            return await _answer(send, body, [(b"connection", b"close")])
        # The query goes along: a credential may be in it (Google's ?key=).
        query = scope.get("query_string", b"").decode("latin-1")
        url = f"http://fake{endpoint}" + (f"?{query}" if query else "")
        request = httpx.Request("POST", url, headers=headers, content=body)
        if self.llm.pauses:  # a held step, or an adapter's moment before one (ServerThread)
            await self.llm.before(request)
        answer = self.llm.complete(request)
        if not answer.streamed:
            return await _answer(send, answer)
        return await self._stream(answer, receive, send)

    async def _read(
        self, receive: Receive, length: str | None, error: ErrorShape
    ) -> bytes | Answer | None:
        cap = self.limits.max_body
        too_large = error(
            413, f"the request body is over {cap} bytes; serve with a larger --max-body-mib",
            "request_too_large", None,
        )  # fmt: skip
        if length is not None and length.isdigit() and int(length) > cap:
            return too_large
        parts: list[bytes] = []
        size = 0
        while True:
            try:
                message = await asyncio.wait_for(receive(), self.limits.read_timeout)
            except TimeoutError:
                return error(
                    408,
                    f"the request body stopped arriving for {self.limits.read_timeout:g} s (a "
                    "Content-Length longer than the body?)",
                    "request_timeout",
                )
            if message["type"] == "http.disconnect":
                return None
            part = message.get("body", b"")
            size += len(part)
            if size > cap:
                return too_large
            parts.append(part)
            if not message.get("more_body"):
                return b"".join(parts)

    async def _stream(self, answer: Answer, receive: Receive, send: Send) -> None:
        served = self.llm.requests[-1]  # complete() just captured it; nothing ran between
        await send({"type": "http.response.start", "status": answer.status,
                    "headers": [(b"content-type", answer.content_type.encode()),
                                (b"cache-control", b"no-cache")]})  # fmt: skip
        # uvicorn drops writes to a closed connection silently; only receive() says it closed.
        gone = asyncio.ensure_future(receive())
        events = answer.pieces
        cut = self.limits.cut_after
        try:
            for sent, event in enumerate(events):
                if cut is not None and sent >= cut:
                    self.log(f"cut agent {served.agent}'s step {served.step} after {cut} "
                             f"of {len(events)} events, as --cut-stream-after says")  # fmt: skip
                    break
                if self.limits.chunk_delay:
                    await asyncio.sleep(self.limits.chunk_delay)
                if gone.done():
                    self.disconnects += 1
                    self.log(f"the client left during agent {served.agent}'s step "
                             f"{served.step}, after {sent} of {len(events)} events; the step "
                             "counts as served")  # fmt: skip
                    return
                await send({"type": "http.response.body", "body": event, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            gone.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await gone


async def _answer(
    send: Send, answer: Answer, extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    content = answer.content()
    headers = [
        (b"content-type", answer.content_type.encode()),
        (b"content-length", str(len(content)).encode()),
        *((name.encode(), value.encode("latin-1")) for name, value in answer.headers),
        *(extra or []),
    ]
    await send({"type": "http.response.start", "status": answer.status, "headers": headers})
    await send({"type": "http.response.body", "body": content})
