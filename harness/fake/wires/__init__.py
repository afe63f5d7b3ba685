"""The wire formats the fake answers in, one module each: `chat_completions` (OpenAI Chat
Completions, POST {base}/chat/completions) and `anthropic_messages` (Anthropic Messages,
POST {base}/messages).

A wire module is a pure function from a checked request and the rendered turn (the
assistant message the fake sends) to an `Answer`, JSON or SSE, plus the error shape that
API answers a refused request in. An answer is bytes before it meets a transport: the
in-process handler sends it whole, and `harness serve` writes a stream's pieces one at a
time, flushing each. A new API (Responses) is one more module here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


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
