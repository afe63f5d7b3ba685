"""The wires the fake serves, in one table: each request is answered in the wire its path
names (harness.fake.wires), and a path no other wire claims is Chat Completions, the wire
the fake spoke first."""

from __future__ import annotations

from harness.fake.wires import (
    Endpoint,
    anthropic_messages,
    chat_completions,
    gemini_generate,
    openai_responses,
)

CHAT_COMPLETIONS = chat_completions.ENDPOINT
ENDPOINTS: tuple[Endpoint, ...] = (
    CHAT_COMPLETIONS,
    anthropic_messages.ENDPOINT,
    openai_responses.ENDPOINT,
    gemini_generate.ENDPOINT,
)
# Every fixed endpoint below a base URL, matched exactly; and the wires whose path carries
# part of the request (Gemini's model and method), matched by their pattern.
PATHS = tuple(endpoint.path for endpoint in ENDPOINTS if endpoint.pattern is None)
PATTERNED = tuple(endpoint for endpoint in ENDPOINTS if endpoint.pattern is not None)


def endpoint_for(path: str) -> Endpoint:
    """The wire a request to `path` speaks, bound to what its path carries."""
    for endpoint in ENDPOINTS[1:]:
        if endpoint.speaks(path):
            return endpoint.at(path)
    return CHAT_COMPLETIONS
