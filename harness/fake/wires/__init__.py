"""The wire formats the fake answers in, one module each: `chat_completions` (OpenAI Chat
Completions, POST {base}/chat/completions), `anthropic_messages` (Anthropic Messages, POST
{base}/messages), `openai_responses` (OpenAI Responses, POST {base}/responses) and
`gemini_generate` (Google's Gemini API, POST {base}/models/{model}:generateContent or
:streamGenerateContent, the version before /models optional).

A wire module is pure functions, gathered in its `ENDPOINT`: from a parsed request to the
conversation the fake's checks and routing read (a Chat Completions-shaped body, so those
stay one implementation), from that and the rendered turn (the assistant message the fake
sends) to an `Answer`, JSON or SSE, and the error shape that API refuses a request in. An
answer is bytes before it meets a transport: the in-process handler sends it whole, and
`harness serve` writes a stream's pieces one at a time, flushing each. harness.fake.endpoints
lists the wires; a new API is one more module here and one more row there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class Answer:
    """One answer: a status, a content type, and the body as the pieces a stream sends
    (one piece for a body that is not streamed); `headers`, any headers beyond the content
    type (none on the Chat Completions wire)."""

    status: int
    content_type: str
    pieces: tuple[bytes, ...]
    streamed: bool = False
    headers: tuple[tuple[str, str], ...] = ()

    def content(self) -> bytes:
        return b"".join(self.pieces)


class ErrorShape(Protocol):
    """A wire's `error`: the answer refusing a request, in that API's error shape."""

    def __call__(
        self, status: int, message: str, code: str, param: str | None = None
    ) -> Answer: ...


class Translate(Protocol):
    """A wire's `conversation`: the parsed body as the Chat Completions-shaped request the
    checks and routing read; MalformedRequest, before any step is spent, for a body that is
    no request of this wire (`agent` as the agent header names it)."""

    def __call__(self, body: Any, *, strict: bool, agent: str | None) -> Any: ...


class Reply(Protocol):
    """A wire's `reply`: the answer to the translated, checked `request` carrying `message`.
    `serial` numbers the reply's ids, `created` is its time (where the wire sends one),
    `model` the name sent when the request gives none, `chunk` characters per streamed delta
    (None: each string whole)."""

    def __call__(
        self,
        request: dict[str, Any],
        message: dict[str, Any],
        *,
        serial: int,
        created: int,
        model: str,
        chunk: int | None,
    ) -> Answer: ...


@dataclass(frozen=True)
class Endpoint:
    """One wire as the fake serves it: its `path` below the base URL, and its functions.
    `call_prefix` spells the fake's tool call ids on this wire (`call_1`, `toolu_1`).
    `pattern`, for a wire whose path carries part of the request (Gemini's model and
    method), matches the path below the base URL instead, anchored at its end; `path` then
    only shows it, in listings and messages."""

    name: str
    path: str
    conversation: Translate
    reply: Reply
    error: ErrorShape
    call_prefix: str = "call_"
    pattern: re.Pattern[str] | None = None

    def speaks(self, path: str) -> bool:
        """Whether a request to `path` (below any base URL) is for this wire."""
        if self.pattern is None:
            return path.endswith(self.path)
        return self.pattern.search(path) is not None

    def below(self, path: str) -> bool:
        """Whether `path`, the whole path below a base URL, is this wire's endpoint."""
        if self.pattern is None:
            return path == self.path
        return self.pattern.fullmatch(path) is not None

    def at(self, path: str) -> Endpoint:
        """The wire as it answers a request to `path` (one it speaks): itself, unless its
        path carries part of the request, which its module then binds into `conversation`."""
        return self
