"""The fake over real HTTP on loopback, and the official openai SDK as a client of both the
in-process fake (respx) and the loopback server."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from harness.cli import main
from harness.contract import SENTINEL_KEY
from harness.fake import ScriptedLLM
from harness.runtime.questions import DELEGATED_CALLER, MESSAGES
from tests.conftest import SCENARIOS
from tests.serving import Served

if TYPE_CHECKING:
    import openai
    from openai.types.chat import ChatCompletionFunctionToolParam, ChatCompletionMessageParam

SCENARIO = "live-root-answered"


def tools(*names: str) -> list[ChatCompletionFunctionToolParam]:
    """Declarations of these tools, as a runtime sends them; `serve` is strict by default
    and answers no scripted call to a tool the request did not declare."""
    return [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
            for n in names]  # fmt: skip


ASKING = tools("ask_user_question")
SCRIPTED_ARGS = dict(SCENARIOS[SCENARIO].agents["lead"].script[0].calls[0].args)


def sdk(base_url: str, http_client: httpx.Client | None = None) -> openai.OpenAI:
    # Imported here: the SDK takes most of a second to import, and every xdist worker
    # would pay for it at collection.
    import openai

    # The SDK insists on a key: the sentinel, the one the fake accepts (the runtime under
    # test sends none).
    return openai.OpenAI(
        base_url=base_url,
        api_key=SENTINEL_KEY,
        max_retries=0,
        http_client=http_client,  # type: ignore[arg-type]  # a legacy httpx client is accepted
        default_headers={"X-Harness-Agent": "lead"},
    )


def in_process() -> tuple[openai.OpenAI, ScriptedLLM]:
    llm = ScriptedLLM({n: a.script for n, a in SCENARIOS[SCENARIO].agents.items()})
    transport = httpx.MockTransport(llm.router("http://fake.invalid/v1").handler)
    return sdk("http://fake.invalid/v1", httpx.Client(transport=transport)), llm


@pytest.fixture
def served(serve_process: Callable[..., AbstractContextManager[Served]]) -> Iterator[Served]:
    with serve_process(SCENARIO, "--idle-timeout", "20") as server:
        yield server


def ask(client: openai.OpenAI, stream: bool) -> tuple[str, dict[str, object]]:
    messages: list[ChatCompletionMessageParam] = [{"role": "user", "content": "go"}]
    if not stream:
        reply = client.chat.completions.create(model="m", messages=messages, tools=ASKING)
        (call,) = reply.choices[0].message.tool_calls or []
        return call.function.name, json.loads(call.function.arguments)  # type: ignore[union-attr]
    name, fragments = "", []
    for chunk in client.chat.completions.create(
        model="m", messages=messages, stream=True, tools=ASKING
    ):
        for delta_call in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
            name += delta_call.function.name or "" if delta_call.function else ""
            fragments.append(delta_call.function.arguments or "" if delta_call.function else "")
    return name, json.loads("".join(fragments))


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_openai_sdk_through_respx(stream: bool) -> None:
    client, llm = in_process()
    assert ask(client, stream) == ("ask_user_question", SCRIPTED_ARGS)
    assert llm.errors == []


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_openai_sdk_through_the_loopback_server(served: Served, stream: bool) -> None:
    url = served.url
    assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
    assert ask(sdk(url), stream) == ("ask_user_question", SCRIPTED_ARGS)


def answered(result: str) -> Any:
    """The conversation after the scripted ask: the task, the call, its result."""
    call = {"id": "call_1", "type": "function",
            "function": {"name": "ask_user_question", "arguments": "{}"}}  # fmt: skip
    return [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": result},
    ]


def test_a_tool_result_without_its_call_is_refused_as_a_real_api_would() -> None:
    client, llm = in_process()
    ask(client, False)
    import openai

    with pytest.raises(openai.BadRequestError) as info:
        client.chat.completions.create(
            model="m", messages=[{"role": "tool", "tool_call_id": "call_1", "content": "x"}]
        )
    body = info.value.body
    assert isinstance(body, dict) and body["code"] == "invalid_conversation"
    assert body["message"] == (
        "agent lead, step 2: message 0 (tool) answers tool call 'call_1', which the assistant "
        "message before it did not make; send the assistant message with its tool_calls, then "
        "one tool message per call"
    )
    assert [type(e).__name__ for e in llm.errors] == ["InvalidConversation"]


def test_server_stops_once_the_scripts_are_consumed(
    served: Served,
) -> None:
    url = served.url
    client = sdk(url)
    ask(client, False)
    reply = client.chat.completions.create(model="m", messages=answered("ANSWER"), tools=ASKING)
    assert reply.choices[0].message.content == "ANSWERED: ANSWER"
    assert served.wait(10) == 0
    assert "all scripts consumed after 2 request(s)" in served.stderr()


def test_unexpected_request_gets_an_openai_error_naming_agent_and_step() -> None:
    client, llm = in_process()
    ask(client, False)
    client.chat.completions.create(model="m", messages=answered("x"))
    import openai

    with pytest.raises(openai.BadRequestError) as info:
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "again"}])
    assert info.value.status_code == 400
    body = info.value.body
    assert isinstance(body, dict) and body["code"] == "script_exhausted"
    assert "agent lead asked for step 3, but its script has only 2 step(s)" in body["message"]
    assert [type(e).__name__ for e in llm.errors] == ["ScriptExhausted"]


@pytest.mark.parametrize("host", ["0.0.0.0", "10.0.0.1", "example.com"])
def test_serve_refuses_anything_but_loopback(host: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", SCENARIO, "--host", host]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # never listened, so no base URL
    expected = "is not an IP address" if host == "example.com" else "loopback addresses only"
    assert expected in captured.err


def test_serve_stops_when_idle(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", SCENARIO, "--idle-timeout", "0.2"]) == 1
    captured = capsys.readouterr()
    assert captured.out.startswith("http://127.0.0.1:")
    assert (
        "idle for 0.2 s; stopping. agent lead: 2 scripted step(s) never requested" in captured.err
    )


# -- header-free: a runtime that names no agent ------------------------------------------
DELEGATED = "Error: " + MESSAGES[DELEGATED_CALLER]
TASK_DIALECT = {"tool": "task", "arguments": {"description": "{name}", "prompt": "{prompt}"}}


def run_agent(client: openai.OpenAI, prompt: str, *, depth: int, delegation_tool: str) -> str:
    """A runtime of a few lines on the official SDK, sending no routing header: each child is
    a fresh conversation whose one user message is its task, as real runtimes do."""
    messages: list[Any] = [{"role": "user", "content": prompt}]
    final = ""
    declared = tools("ask_user_question", delegation_tool)
    for _ in range(8):
        reply = client.chat.completions.create(model="m", messages=messages, tools=declared)
        message = reply.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        final = message.content or final
        if not message.tool_calls:
            return final
        for call in message.tool_calls:
            args = json.loads(call.function.arguments)  # type: ignore[union-attr]
            name = call.function.name  # type: ignore[union-attr]
            if name == delegation_tool:
                result = run_agent(client, args["prompt"], depth=depth + 1, delegation_tool=name)
            else:
                assert (name, depth > 0) == ("ask_user_question", True), "only children ask here"
                result = DELEGATED
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    raise AssertionError(f"no final answer to {prompt!r}")


@pytest.mark.parametrize("dialect", [None, TASK_DIALECT], ids=["subagent", "task-dialect"])
@pytest.mark.parametrize(
    ("served_id", "final"),
    [
        (
            "parallel-children-refused",
            "PARENT_COMPLETED: UNRESOLVED: Should gpu-pool use the CUDA fallback? | "
            "UNRESOLVED: How many threads should cpu-pool use?",
        ),
        ("grandchild-refused", "PARENT_COMPLETED"),
    ],
)
def test_openai_sdk_without_a_routing_header_runs_a_delegation_tree_to_completion(
    serve_process: Callable[..., AbstractContextManager[Served]],
    served_id: str,
    final: str,
    dialect: dict[str, Any] | None,
) -> None:
    import openai

    options = ["--delegation", json.dumps(dialect)] if dialect else []
    with serve_process(served_id, "--idle-timeout", "20", *options) as server:
        client = openai.OpenAI(base_url=server.url, api_key=SENTINEL_KEY, max_retries=0)
        tool = dialect["tool"] if dialect else "subagent"
        assert run_agent(client, "Prepare the deployment.", depth=0, delegation_tool=tool) == final
        assert server.wait(10) == 0, server.stderr()
        assert "all scripts consumed" in server.stderr()


def test_serve_refuses_a_bad_delegation_dialect(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", SCENARIO, "--delegation", '{"tool": "task", "arguments": {}}']) == 2
    assert "--delegation.arguments: no string carries {prompt}" in capsys.readouterr().err
