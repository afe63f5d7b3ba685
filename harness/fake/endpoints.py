"""The wires the fake serves, in one table: each request is answered in the wire its path
names (harness.fake.wires), and a path no other wire claims is Chat Completions, the wire
the fake spoke first."""

from __future__ import annotations

from harness.fake.wires import Endpoint, anthropic_messages, chat_completions, openai_responses

CHAT_COMPLETIONS = chat_completions.ENDPOINT
ENDPOINTS: tuple[Endpoint, ...] = (
    CHAT_COMPLETIONS,
    anthropic_messages.ENDPOINT,
    openai_responses.ENDPOINT,
)
PATHS = tuple(endpoint.path for endpoint in ENDPOINTS)  # every endpoint below a base URL


def endpoint_for(path: str) -> Endpoint:
    """The wire a request to `path` speaks."""
    for endpoint in ENDPOINTS[1:]:
        if endpoint.speaks(path):
            return endpoint
    return CHAT_COMPLETIONS
