"""OpenAI-compatible Chat Completions over httpx: the runtime's real path to a model.

Tests never replace this module. They give it an httpx transport (respx, or a loopback
server), which is the one seam a fake model plugs into.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import httpx


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
    def __init__(
        self,
        http: httpx.AsyncClient,
        *,
        base_url: str,
        model: str = "scripted",
        stream: bool = False,
        agent_header: str | None = None,
    ) -> None:
        self._http = http
        self._url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.stream = stream
        # The header naming the calling agent's id (its session id) on every request, so a
        # shared endpoint can tell parent from child; None (the default) sends none. Its
        # name is the host's to configure, as a real runtime's session header would be.
        self.agent_header = agent_header

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
        if self.stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        headers = {self.agent_header: agent} if self.agent_header else {}
        try:
            if not self.stream:
                response = await self._http.post(self._url, json=body, headers=headers)
                try:
                    if response.status_code >= 400:
                        raise _error_from(response)
                    return parse_reply(response.json())
                finally:
                    _unlink(response)
            streamed: httpx.Response | None = None
            try:
                async with self._http.stream(
                    "POST", self._url, json=body, headers=headers
                ) as streamed:
                    if streamed.status_code >= 400:
                        await streamed.aread()
                        raise _error_from(streamed)
                    return await _read_stream(streamed)
            finally:
                if streamed is not None:  # closed by now: the `async with` has exited
                    _unlink(streamed)
        except httpx.HTTPError as exc:
            raise ChatError(f"request to {self._url} failed: {exc}") from exc
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise ChatError(f"malformed chat completion from {self._url}: {exc!r}") from exc


def _unlink(response: httpx.Response) -> None:
    # httpx links a response and its stream both ways (the stream holds the response to
    # time and close it), so every response, its request and both bodies would wait for
    # the cycle collector: a thousand-deep chain held ~6 MB of them at its end. Only a
    # closed response comes here (post() reads and closes; a stream's `async with` has
    # exited), so its connection is back in the pool and nothing reads it again.
    response.stream = _SPENT


_SPENT = httpx.ByteStream(b"")


def parse_reply(payload: dict[str, Any]) -> Reply:
    message = payload["choices"][0]["message"]
    calls = tuple(
        ToolCall(id=c["id"], name=c["function"]["name"], arguments=c["function"]["arguments"])
        for c in message.get("tool_calls") or ()
    )
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise TypeError(f"message content is {type(content).__name__}, not a string")
    # An empty string and null both mean "no text"; streaming cannot tell them apart.
    return Reply(content=content or None, tool_calls=calls)


async def _read_stream(response: httpx.Response) -> Reply:
    """Reassemble SSE `chat.completion.chunk` deltas. Tool calls arrive by index: the id and
    name first, then argument fragments to concatenate in order."""
    content: list[str] = []
    calls: dict[int, dict[str, Any]] = {}

    def take(line: str) -> bool:
        """One line; True at `data: [DONE]`."""
        if not line.startswith("data:"):
            return False  # blank separators, comments, event: lines
        data = line[5:].strip()
        if data == "[DONE]":
            return True
        chunk = json.loads(data)
        for choice in chunk.get("choices") or ():
            delta = choice.get("delta") or {}
            if delta.get("content"):
                content.append(delta["content"])
            for part in delta.get("tool_calls") or ():
                call = calls.setdefault(part["index"], {"id": None, "name": "", "arguments": []})
                call["id"] = part.get("id") or call["id"]
                function = part.get("function") or {}
                call["name"] += function.get("name") or ""
                call["arguments"].append(function.get("arguments") or "")
        return False

    # Lines as SSE defines them: ended by CR, LF or CRLF only (httpx's aiter_lines() also
    # breaks at U+2028, U+0085 and the like, which a JSON string may carry raw), in UTF-8
    # whatever the content-type's charset says (as the SSE spec and OpenAI's SDKs decode
    # them; aiter_text() would parse the charset through the email package on every reply).
    # Each arrival's lines are taken in a plain loop: a generator step per line cost more
    # than the line.
    decoder = _UTF8(errors="replace")
    done = False
    pending = ""
    dropped = 0
    async for data in response.aiter_bytes():
        if done:
            # Read to the end and drop it, as OpenAI's SDK does: leaving httpx's stream
            # generators unfinished would leave their closing to the event loop's
            # finalizer, a task per generator on every streamed reply. A server that goes
            # on sending is cut off rather than read forever.
            dropped += len(data)
            if dropped > _AFTER_DONE_LIMIT:
                break
            continue
        text = pending + decoder.decode(data)
        *lines, pending = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        for line in lines:
            if take(line):
                done = True
                break
    if not done:
        pending += decoder.decode(b"", final=True)
        if not (pending and take(pending)):
            raise ValueError("stream ended without data: [DONE]")
    tool_calls = []
    for index in sorted(calls):
        call = calls[index]
        if not call["id"] or not call["name"]:
            raise ValueError(f"tool call at index {index} never received its id and name")
        tool_calls.append(ToolCall(call["id"], call["name"], "".join(call["arguments"])))
    return Reply(content="".join(content) if content else None, tool_calls=tuple(tool_calls))


_UTF8 = codecs.getincrementaldecoder("utf-8")
_AFTER_DONE_LIMIT = 64 * 1024  # bytes read and dropped after data: [DONE], at most


def _error_from(response: httpx.Response) -> ChatError:
    try:
        error = response.json()["error"]
        return ChatError(str(error["message"]), status=response.status_code, code=error.get("code"))
    except (ValueError, KeyError, TypeError):
        text = response.text.strip()[:200] or "(empty body)"
        return ChatError(f"HTTP {response.status_code}: {text}", status=response.status_code)
