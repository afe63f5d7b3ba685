"""OpenAI-compatible Chat Completions over httpx: the runtime's real path to a model.

Tests never replace this module. They give it an httpx transport (respx, or a loopback
server), which is the one seam a fake model plugs into.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import httpx

# How a shared endpoint tells parent from child. The reference runtime names the calling
# agent on every request; a foreign runtime must do the same to use the scripted fake.
AGENT_HEADER = "X-Harness-Agent"


class ChatError(Exception):
    """The model endpoint refused or garbled a request. The message is the endpoint's own."""

    def __init__(self, message: str, *, status: int | None = None, code: str | None = None):
        super().__init__(message)
        self.status = status
        self.code = code


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # a JSON string, exactly as the model produced it


@dataclass(frozen=True)
class Reply:
    content: str | None
    tool_calls: tuple[ToolCall, ...]


class ChatClient:
    def __init__(self, http: httpx.AsyncClient, *, base_url: str, model: str = "scripted") -> None:
        self._http = http
        self._url = base_url.rstrip("/") + "/chat/completions"
        self.model = model

    async def complete(
        self,
        *,
        agent: str,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]],
    ) -> Reply:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": list(messages),
            "tools": list(tools),
            "tool_choice": "auto",
        }
        try:
            response = await self._http.post(self._url, json=body, headers={AGENT_HEADER: agent})
        except httpx.HTTPError as exc:
            raise ChatError(f"request to {self._url} failed: {exc}") from exc
        if response.status_code >= 400:
            raise _error_from(response)
        try:
            return parse_reply(response.json())
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise ChatError(f"malformed chat completion from {self._url}: {exc!r}") from exc


def parse_reply(payload: dict[str, Any]) -> Reply:
    message = payload["choices"][0]["message"]
    calls = tuple(
        ToolCall(id=c["id"], name=c["function"]["name"], arguments=c["function"]["arguments"])
        for c in message.get("tool_calls") or ()
    )
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise TypeError(f"message content is {type(content).__name__}, not a string")
    return Reply(content=content, tool_calls=calls)


def _error_from(response: httpx.Response) -> ChatError:
    try:
        error = response.json()["error"]
        return ChatError(str(error["message"]), status=response.status_code, code=error.get("code"))
    except (ValueError, KeyError, TypeError):
        text = response.text.strip()[:200] or "(empty body)"
        return ChatError(f"HTTP {response.status_code}: {text}", status=response.status_code)
