"""The reference runtime's model client on the other wires, composed from outside: the
runtime speaks Chat Completions through its own `ChatClient`; here that client's one method
is answered through the official anthropic SDK (Messages), openai SDK (Responses) or
google-genai SDK (Gemini's generateContent) instead, so the same scenarios run the same
runtime over every wire the fake speaks. Each
translates the runtime's Chat Completions-shaped conversation into the SDK's request and
the SDK's reply back into the runtime's `Reply`; the fake's httpx2 transport carries it.

The SDKs are the test extra's (`pip install -e '.[test]'`) and imported only here.
"""

from __future__ import annotations

import functools
import json
import ssl
from collections.abc import Sequence
from typing import Any

import httpx

from harness.runtime.llm import ChatClient, ChatError, Reply, ToolCall

MODEL = "scripted"
KEY_NOTE = "the SDK insists on a key: the sentinel, the one the fake accepts"


def _arguments(value: Any) -> str:
    # Encoded as the fake encodes a scripted call's arguments, so a call reads the same on
    # every wire.
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class MessagesChat(ChatClient):
    """The runtime's client over Anthropic Messages, through anthropic.AsyncAnthropic."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        transport: Any,
        *,
        base_url: str,
        stream: bool,
        agent_header: str | None,
    ) -> None:
        # `http` is the runtime's own client, unused here: the SDK brings its own (httpx2).
        super().__init__(http, base_url=base_url, stream=stream, agent_header=agent_header)
        try:
            import anthropic
            import httpx2
        except ImportError as exc:
            raise ChatError(f"the Messages wire needs the anthropic SDK: {exc}") from None
        from harness.contract import SENTINEL_KEY

        self._anthropic = anthropic
        self._sdk = anthropic.AsyncAnthropic(
            base_url=base_url.removesuffix("/v1"),  # the SDK adds /v1/messages itself
            api_key=SENTINEL_KEY,  # KEY_NOTE
            max_retries=0,
            http_client=httpx2.AsyncClient(transport=transport),
        )

    async def complete(
        self, *, agent: str, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]
    ) -> Reply:
        system = [m["content"] for m in messages if m["role"] == "system"]
        asked: dict[str, Any] = {
            "model": MODEL,
            "max_tokens": 4096,
            "messages": _messages([m for m in messages if m["role"] != "system"]),
            "tools": [_tool(t) for t in tools],
            "extra_headers": {self.agent_header: agent} if self.agent_header else None,
        }
        if system:
            asked["system"] = "\n\n".join(system)
        try:
            if self.stream:
                async with self._sdk.messages.stream(**asked) as stream:
                    reply = await stream.get_final_message()
            else:
                reply = await self._sdk.messages.create(**asked)
        except self._anthropic.APIStatusError as exc:
            raise ChatError(str(exc.message), status=exc.status_code) from None
        except self._anthropic.APIError as exc:
            raise ChatError(f"messages request failed: {exc}") from None
        text = "".join(b.text for b in reply.content if b.type == "text")
        calls = tuple(
            ToolCall(b.id, b.name, _arguments(b.input))
            for b in reply.content
            if b.type == "tool_use"
        )
        return Reply(text or None, calls)


def _tool(tool: dict[str, Any]) -> dict[str, Any]:
    function = tool["function"]
    return {"name": function["name"], "description": function.get("description", ""),
            "input_schema": function.get("parameters") or {"type": "object"}}  # fmt: skip


def _messages(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Chat Completions messages as Messages ones: tool results gathered into the user
    message that follows the assistant's calls, as Anthropic requires."""
    out: list[dict[str, Any]] = []
    for message in messages:
        role, content = message["role"], message.get("content")
        if role == "tool":
            result = {"type": "tool_result", "tool_use_id": message["tool_call_id"],
                      "content": content or ""}  # fmt: skip
            if out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], list):
                out[-1]["content"].append(result)
            else:
                out.append({"role": "user", "content": [result]})
        elif role == "assistant":
            blocks: list[dict[str, Any]] = [{"type": "text", "text": content}] if content else []
            blocks += [
                {"type": "tool_use", "id": c["id"], "name": c["function"]["name"],
                 "input": json.loads(c["function"]["arguments"])}
                for c in message.get("tool_calls") or ()
            ]  # fmt: skip
            out.append({"role": "assistant", "content": blocks})
        else:
            out.append({"role": "user", "content": content})
    return out


class ResponsesChat(ChatClient):
    """The runtime's client over OpenAI Responses, through openai.AsyncOpenAI: stateless,
    the whole conversation as input items each time (`store: false`)."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        transport: Any,
        *,
        base_url: str,
        stream: bool,
        agent_header: str | None,
    ) -> None:
        # `http` is the runtime's own client, unused here: the SDK brings its own (httpx2).
        super().__init__(http, base_url=base_url, stream=stream, agent_header=agent_header)
        try:
            import httpx2
            import openai
        except ImportError as exc:
            raise ChatError(f"the Responses wire needs the openai SDK: {exc}") from None
        from harness.contract import SENTINEL_KEY

        self._openai = openai
        self._sdk = openai.AsyncOpenAI(
            base_url=base_url, api_key=SENTINEL_KEY, max_retries=0,  # KEY_NOTE
            http_client=httpx2.AsyncClient(transport=transport),
        )  # fmt: skip

    async def complete(
        self, *, agent: str, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]
    ) -> Reply:
        system = [m["content"] for m in messages if m["role"] == "system"]
        asked: dict[str, Any] = {
            "model": MODEL,
            "input": _items([m for m in messages if m["role"] != "system"]),
            "tools": [{"type": "function", **_function(t)} for t in tools],
            "store": False,
            "extra_headers": {self.agent_header: agent} if self.agent_header else None,
        }
        if system:
            asked["instructions"] = "\n\n".join(system)
        try:
            if self.stream:
                async with self._sdk.responses.stream(**asked) as stream:
                    reply = await stream.get_final_response()
            else:
                reply = await self._sdk.responses.create(**asked)
        except self._openai.APIStatusError as exc:
            raise ChatError(str(exc.message), status=exc.status_code) from None
        except self._openai.APIError as exc:
            raise ChatError(f"responses request failed: {exc}") from None
        calls = tuple(
            ToolCall(item.call_id, item.name, item.arguments)
            for item in reply.output
            if item.type == "function_call"
        )
        return Reply(reply.output_text or None, calls)


def _function(tool: dict[str, Any]) -> dict[str, Any]:
    function = tool["function"]
    return {"name": function["name"], "description": function.get("description", ""),
            "parameters": function.get("parameters") or {"type": "object"}}  # fmt: skip


def _items(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Chat Completions messages as Responses input items."""
    out: list[dict[str, Any]] = []
    for message in messages:
        role, content = message["role"], message.get("content")
        if role == "tool":
            out.append({"type": "function_call_output", "call_id": message["tool_call_id"],
                        "output": content or ""})  # fmt: skip
        elif role == "assistant":
            if content:
                out.append({"role": "assistant", "content": content})
            out += [
                {"type": "function_call", "call_id": c["id"], "name": c["function"]["name"],
                 "arguments": c["function"]["arguments"]}
                for c in message.get("tool_calls") or ()
            ]  # fmt: skip
        else:
            out.append({"role": "user", "content": content})
    return out


class GeminiChat(ChatClient):
    """The runtime's client over Gemini's generateContent, through google-genai's async
    client (`client.aio`) on the fake's httpx2 transport: the whole conversation as
    `contents` each time, the system messages as `systemInstruction`, each tool result a
    functionResponse with its call's id and name."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        transport: Any,
        *,
        base_url: str,
        stream: bool,
        agent_header: str | None,
    ) -> None:
        # `http` is the runtime's own client, unused here: the SDK brings its own (httpx2).
        super().__init__(http, base_url=base_url, stream=stream, agent_header=agent_header)
        try:
            import httpx2
            from google import genai
            from google.genai import errors, types
        except ImportError as exc:
            raise ChatError(f"the Gemini wire needs the google-genai SDK: {exc}") from None
        from harness.contract import SENTINEL_KEY

        self._errors, self._types = errors, types
        # Both HTTP clients given, so the SDK builds neither, and one TLS context for its
        # websockets (the Live API's) shared: each would load the CA bundle, some 40 ms a
        # client, and a run builds one per agent. The sync client is never used. The SDK
        # adds /v1/models/... to the base URL itself.
        options = types.HttpOptions(
            base_url=base_url.removesuffix("/v1"),
            api_version="v1",  # its default, named: GOOGLE_GENAI_API_VERSION cannot move it
            httpx_async_client=httpx2.AsyncClient(transport=transport),
            httpx_client=httpx2.Client(transport=transport),
            async_client_args={"ssl": _tls()},
        )
        self._sdk = genai.Client(api_key=SENTINEL_KEY, http_options=options)  # KEY_NOTE

    async def complete(
        self, *, agent: str, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]
    ) -> Reply:
        types = self._types
        system = [m["content"] for m in messages if m["role"] == "system"]
        declared = [types.FunctionDeclaration(
            name=t["function"]["name"], description=t["function"].get("description", ""),
            parameters_json_schema=t["function"].get("parameters") or {"type": "object"},
        ) for t in tools]  # fmt: skip
        config = types.GenerateContentConfig(
            system_instruction="\n\n".join(system) if system else None,
            tools=[types.Tool(function_declarations=declared)] if declared else None,
            http_options=types.HttpOptions(headers={self.agent_header: agent})
            if self.agent_header
            else None,
        )
        asked = {"model": MODEL, "contents": _gemini_contents(messages), "config": config}
        parts: list[Any] = []
        try:
            if self.stream:
                async for chunk in await self._sdk.aio.models.generate_content_stream(**asked):
                    parts += chunk.candidates[0].content.parts or []  # type: ignore[index, union-attr]
            else:
                reply = await self._sdk.aio.models.generate_content(**asked)
                parts = reply.candidates[0].content.parts or []  # type: ignore[index, union-attr]
        except self._errors.APIError as exc:
            raise ChatError(str(exc.message), status=exc.code) from None
        text = "".join(p.text for p in parts if p.text)
        calls = tuple(
            ToolCall(p.function_call.id or "", p.function_call.name or "",
                     _arguments(p.function_call.args or {}))
            for p in parts if p.function_call
        )  # fmt: skip
        return Reply(text or None, calls)


@functools.cache
def _tls() -> ssl.SSLContext:
    return ssl.create_default_context()


def _gemini_contents(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Chat Completions messages as Gemini contents: each run of tool results one user
    content of functionResponses, named after the calls they answer."""
    names: dict[str, str] = {}
    out: list[dict[str, Any]] = []
    for message in messages:
        role, content = message["role"], message.get("content")
        if role == "system":
            continue
        if role == "tool":
            response = {"id": message["tool_call_id"], "name": names[message["tool_call_id"]],
                        "response": {"output": content or ""}}  # fmt: skip
            if out and out[-1]["role"] == "user" and "functionResponse" in out[-1]["parts"][0]:
                out[-1]["parts"].append({"functionResponse": response})
            else:
                out.append({"role": "user", "parts": [{"functionResponse": response}]})
        elif role == "assistant":
            parts: list[dict[str, Any]] = [{"text": content}] if content else []
            for call in message.get("tool_calls") or ():
                function = call["function"]
                names[call["id"]] = function["name"]
                called = {"id": call["id"], "name": function["name"],
                          "args": json.loads(function["arguments"])}  # fmt: skip
                parts.append({"functionCall": called})
            out.append({"role": "model", "parts": parts})
        else:
            out.append({"role": "user", "parts": [{"text": content}]})
    return out


CLIENTS = {"anthropic-messages": MessagesChat, "openai-responses": ResponsesChat,
           "gemini-generate": GeminiChat}  # fmt: skip
