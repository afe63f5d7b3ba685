"""The fake's Anthropic Messages wire (POST {base}/messages), driven by the official
anthropic SDK against the in-process fake: a whole parent -> child delegation routed by
content alone (no agent header), plain and streamed, with the child's ask_user_question
refused as a runtime-owned child's must be; the SSE events of a step with several tool
calls; Anthropic's error shape; and Chat Completions still served beside it.

The SDK (1.0 on) speaks httpx2, not httpx, and refuses an httpx client, so the fake's
handler is bridged to an httpx2 MockTransport here: `bridged` (the respx router,
synchronously) and `bridged_async` (the fake's own transport, with its hook).
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any, cast

import httpx
import pytest

from harness.contract import SENTINEL_KEY
from harness.fake import BASE_URL, ScriptedLLM, Turn
from harness.runtime.questions import DELEGATED_CALLER, MESSAGES

if TYPE_CHECKING:
    import anthropic
    import httpx2

SDK_BASE = BASE_URL.removesuffix("/v1")  # the SDK adds /v1/messages itself
MESSAGES_URL = f"{BASE_URL}/messages"
PROMPT = "Check the deployment environment and decide whether the CUDA fallback is needed."
QUESTION = "Should deployment use the CUDA fallback?"
ASK = {"questions": [{"id": "cuda-fallback", "header": "Deployment", "question": QUESTION,
                      "options": [{"label": "Yes"}, {"label": "No"}]}]}  # fmt: skip
# What the reference runtime's refused child gets back (harness.runtime), as a tool_result.
REFUSAL = f"Error: {MESSAGES[DELEGATED_CALLER]}"
SCRIPTS = {
    "parent": [
        Turn.tool("subagent", {"name": "child", "prompt": PROMPT}, label="delegate"),
        Turn.text("PARENT_COMPLETED: {{delegate.result}}"),
    ],
    "child": [
        Turn.tool("ask_user_question", ASK, label="ask"),
        Turn.text("UNRESOLVED: {{ask.args.questions.0.question}} ({{ask.result}})"),
    ],
}
CHILD_FINAL = f"UNRESOLVED: {QUESTION} ({REFUSAL})"
PARENT_SYSTEM = "You lead. Delegate the environment check."
CHILD_SYSTEM = [{"type": "text", "text": "You are a subagent.",
                 "cache_control": {"type": "ephemeral"}}]  # fmt: skip
OBJECT = {"type": "object"}
TOOLS = [
    {"name": "subagent", "description": "Delegate a task", "input_schema": OBJECT},
    {"name": "ask_user_question", "description": "Ask the human", "input_schema": OBJECT},
]
GO = [{"role": "user", "content": "go"}]


def body(**fields: Any) -> dict[str, Any]:
    """A Messages request body: `go`, unless `fields` say otherwise."""
    return {"model": "m", "max_tokens": 8, "messages": GO, **fields}


def tool_result(use_id: str, content: Any, **extra: Any) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": use_id, "content": content, **extra}


def _to_httpx(request: httpx2.Request, content: bytes) -> httpx.Request:
    return httpx.Request(
        request.method, str(request.url), headers=request.headers.multi_items(), content=content
    )


def _to_httpx2(response: httpx.Response) -> httpx2.Response:
    import httpx2

    headers = response.headers.multi_items()
    return httpx2.Response(response.status_code, headers=headers, content=response.content)


def bridged(llm: ScriptedLLM) -> httpx2.Client:
    """An httpx2 client whose every request goes to the fake's respx router."""
    import httpx2

    router = llm.router()
    return httpx2.Client(
        transport=httpx2.MockTransport(lambda r: _to_httpx2(router.handler(_to_httpx(r, r.read()))))
    )


def bridged_async(llm: ScriptedLLM) -> httpx2.AsyncClient:
    """An httpx2 client whose every request goes to the fake's own async transport."""
    import httpx2

    transport = llm.transport()

    async def handle(request: httpx2.Request) -> httpx2.Response:
        response = await transport.handle_async_request(_to_httpx(request, await request.aread()))
        await response.aread()
        return _to_httpx2(response)

    return httpx2.AsyncClient(transport=httpx2.MockTransport(handle))


def sdk(llm: ScriptedLLM) -> anthropic.Anthropic:
    import anthropic

    # The SDK insists on a key: the sentinel, the one credential the fake accepts.
    return anthropic.Anthropic(
        base_url=SDK_BASE, api_key=SENTINEL_KEY, max_retries=0, http_client=bridged(llm)
    )


def fake(scripts: dict[str, list[Turn]] = SCRIPTS, **options: Any) -> ScriptedLLM:
    # Strict and history-checked: every check the Chat Completions wire gets.
    return ScriptedLLM(scripts, strict=True, check_history=True, **options)


class Runtime:
    """A few-line Anthropic runtime: an agent loop per conversation, `subagent` run as a
    child conversation whose final text is the tool's result, and a child's
    ask_user_question refused with an error tool_result, as a runtime refusing it must."""

    def __init__(self, client: anthropic.Anthropic, stream: bool) -> None:
        self.client = client
        self.stream = stream

    def create(self, system: Any, messages: list[dict[str, Any]]) -> anthropic.types.Message:
        asked = {"model": "claude-scripted", "max_tokens": 1024, "system": system,
                 "messages": messages, "tools": TOOLS}  # fmt: skip
        if not self.stream:
            message: anthropic.types.Message = self.client.messages.create(**asked)
            return message
        with self.client.messages.stream(**asked) as stream:
            return stream.get_final_message()

    def run(self, task: str, *, child: bool = False) -> str:
        system = CHILD_SYSTEM if child else PARENT_SYSTEM
        messages: list[dict[str, Any]] = [{"role": "user", "content": task}]
        while True:
            reply = self.create(system, messages)
            said = [b.model_dump(include={"type", "text", "id", "name", "input"})
                    for b in reply.content]  # fmt: skip
            messages.append({"role": "assistant", "content": said})
            if reply.stop_reason != "tool_use":
                return "".join(b.text for b in reply.content if b.type == "text")
            results = []
            for use in (b for b in reply.content if b.type == "tool_use"):
                if use.name == "subagent":
                    handed = self.run(cast(str, use.input["prompt"]), child=True)
                    results.append(tool_result(use.id, [{"type": "text", "text": handed}]))
                elif use.name == "ask_user_question" and child:
                    results.append(tool_result(use.id, REFUSAL, is_error=True))
                else:
                    raise AssertionError(f"unscripted call {use.name}")
            messages.append({"role": "user", "content": results})


def sent(llm: ScriptedLLM, index: int) -> Any:
    return json.loads(llm.requests[index].raw)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_a_delegation_runs_to_completion_over_the_messages_wire(stream: bool) -> None:
    llm = fake(chunk=5)
    final = Runtime(sdk(llm), stream).run("Prepare the deployment.")
    assert final == f"PARENT_COMPLETED: {CHILD_FINAL}"  # the child's final text, handed back
    assert llm.errors == [] and llm.unconsumed() == []
    # Routed by content alone: the child's first user message is the delegation prompt,
    # and each later request carries a toolu_ id the fake issued to one agent.
    assert [r.agent for r in llm.requests] == ["parent", "child", "child", "parent"]
    assert all(k.lower() != "x-harness-agent" for r in llm.requests for k, _ in r.headers)
    assert sent(llm, 1)["messages"] == [{"role": "user", "content": PROMPT}]
    refused = sent(llm, 2)["messages"][-1]["content"]
    assert refused == [tool_result("toolu_2", REFUSAL, is_error=True)]
    handoff = sent(llm, 3)["messages"][-1]["content"]
    assert handoff == [tool_result("toolu_1", [{"type": "text", "text": CHILD_FINAL}])]
    # The prefix log reads the translation: each system as sent, the tools as functions.
    functions = [{"type": "function", "function": {"name": t["name"], "parameters": OBJECT,
                  "description": t["description"]}} for t in TOOLS]  # fmt: skip
    assert llm.prefixes.summary() == {
        "system": {"parent": PARENT_SYSTEM, "child": CHILD_SYSTEM},
        "tools": functions,
    }


def test_the_parents_tool_use_and_the_reply_are_anthropics_shape() -> None:
    llm = fake()
    client = sdk(llm)
    response = client.messages.with_raw_response.create(
        **body(model="claude-scripted", tools=TOOLS)
    )
    assert response.headers["content-type"] == "application/json; charset=utf-8"
    delegation = {"name": "child", "prompt": PROMPT}
    arguments = json.dumps(delegation, separators=(",", ":"))
    assert json.loads(response.http_response.content) == {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-scripted",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "subagent", "input": delegation}],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        # The Chat Completions wire's estimate: one token per four characters, rounded up.
        "usage": {"input_tokens": 1, "output_tokens": -(-len(arguments) // 4)},
    }


def test_a_script_error_is_anthropics_error_shape_with_the_code_in_a_header() -> None:
    import anthropic

    llm = fake({"lead": [Turn.text("hi")]})
    orphan = [{"role": "user", "content": [tool_result("call_1", "r")]}]
    with pytest.raises(anthropic.BadRequestError) as info:
        sdk(llm).messages.create(**body(messages=orphan))
    assert info.value.status_code == 400
    message = (
        "agent lead, step 1: message 0 (tool) answers tool call 'call_1', which the assistant "
        "message before it did not make; send the assistant message with its tool_calls, then "
        "one tool message per call"
    )
    error = {"type": "invalid_request_error", "message": message}
    assert info.value.body == {"type": "error", "error": error}
    headers = info.value.response.headers
    code, param = headers["x-harness-error-code"], headers["x-harness-error-param"]
    assert (code, param) == ("invalid_conversation", "messages")
    assert llm.unconsumed() != []  # no step was spent on it


# The same refusal on both wires: the Chat Completions request, and its Messages twin.
TWINS = {
    "exhausted": ({"model": "m", "messages": GO}, body(), 2),  # the second finds the script done
    "orphan-tool-result": (
        {"model": "m", "messages": [{"role": "tool", "tool_call_id": "x", "content": "r"}]},
        body(messages=[{"role": "user", "content": [tool_result("x", "r")]}]),
        1,
    ),
    "no-model": ({"messages": GO}, {"max_tokens": 8, "messages": GO}, 1),
}


@pytest.mark.parametrize("case", sorted(TWINS))
def test_a_refusal_says_the_same_on_both_wires(case: str) -> None:
    chat, messages, times = TWINS[case]
    answers = []
    for path, sent in (("/chat/completions", chat), ("/messages", messages)):
        llm = fake({"lead": [Turn.text("hi")]})
        for _ in range(times):
            request = httpx.Request(
                "POST", BASE_URL + path, json=sent, headers={"X-Harness-Agent": "lead"}
            )
            answers.append(llm.respond(request))
    openai, anthropic = answers[times - 1], answers[-1]
    assert openai.status_code == anthropic.status_code == 400
    error = openai.json()["error"]
    assert anthropic.json() == {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": error["message"]},
    }
    assert anthropic.headers["x-harness-error-code"] == error["code"]
    assert anthropic.headers.get("x-harness-error-param") == error["param"]
    assert "x-harness-error-code" not in openai.headers  # the Chat Completions wire as it was


def test_chat_completions_is_still_served_beside_it() -> None:
    import openai

    llm = fake({"lead": [Turn.text("hi"), Turn.text("again")]}, created=1)
    said = sdk(llm).messages.create(**body())
    assert [(b.type, b.text) for b in said.content] == [("text", "hi")]
    transport = httpx.MockTransport(llm.router().handler)
    http = httpx.Client(transport=transport)  # a legacy httpx client: the SDK accepts one
    chat = openai.OpenAI(base_url=BASE_URL, api_key=SENTINEL_KEY, max_retries=0,
                         http_client=http)  # type: ignore[arg-type]  # fmt: skip
    history = [*GO, {"role": "assistant", "content": "hi"}, {"role": "user", "content": "more"}]
    reply = chat.chat.completions.with_raw_response.create(
        model="m",
        messages=history,  # type: ignore[arg-type]  # plain dicts, as JSON sends them
    )
    # One conversation, carried on from one wire to the other (routed by the text served).
    assert [r.agent for r in llm.requests] == ["lead", "lead"] and llm.errors == []
    choice = {"index": 0, "message": {"role": "assistant", "content": "again", "refusal": None},
              "logprobs": None, "finish_reason": "stop"}  # fmt: skip
    assert json.loads(reply.content) == {
        "id": "chatcmpl-2", "created": 1, "model": "m", "system_fingerprint": "fp_keyless_harness",
        "object": "chat.completion", "choices": [choice],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
    }  # fmt: skip


def test_the_async_transport_and_its_hook_read_the_messages_wire() -> None:
    import anthropic

    llm = fake({"lead": [Turn.tool("ask_user_question", ASK), Turn.text("hi")]})
    waited: list[tuple[str, int]] = []

    async def hook(agent: str, step: int) -> None:
        waited.append((agent, step))

    llm.before_turn = hook

    async def go() -> str:
        # `?beta=true`, as Claude Code posts it: the query is not looked at.
        client = anthropic.AsyncAnthropic(base_url=SDK_BASE, api_key=SENTINEL_KEY, max_retries=0,
                                          default_query={"beta": "true"},
                                          http_client=bridged_async(llm))  # fmt: skip
        asked = await client.messages.create(**body(tools=TOOLS))
        (use,) = asked.content
        # The second request is placed (for the hook, before the step) by the tool_use id
        # it carries back, which only the translation shows; no header names the agent.
        answered = [*GO, {"role": "assistant", "content": [use.model_dump(exclude_none=True)]},
                    {"role": "user", "content": [tool_result(use.id, "yes")]}]  # fmt: skip
        async with client.messages.stream(**body(messages=answered)) as stream:
            return await stream.get_final_text()

    assert asyncio.run(go()) == "hi"
    assert waited == [("lead", 1), ("lead", 2)] and llm.errors == []
