"""The fake's Gemini API wire (POST {base}/models/{model}:generateContent, and
:streamGenerateContent?alt=sse), driven by the official google-genai SDK: a whole parent ->
child delegation routed by content alone (no agent header), plain and streamed, in-process
through `ScriptedLLM.intercept()` (the SDK builds its own httpx2 client) and through the
fake's async transport handed to the SDK (its hook seeing each step), and a scenario's
delegation tree against `harness serve`, the Python twin of tests/test_serve_sdks.py's
Node runs; and Google's error shape as the SDK reads it. The SDK-free checks are in
tests/test_wire_gemini_checks.py.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from harness.contract import SENTINEL_KEY
from harness.fake import BASE_URL, ScriptedLLM, Turn
from tests.conftest import SCENARIOS
from tests.serving import Served
from tests.test_wire_anthropic import ASK, PROMPT, QUESTION, REFUSAL, SCRIPTS

if TYPE_CHECKING:
    from google import genai
    from google.genai import types

SDK_BASE = BASE_URL.removesuffix("/v1")  # google-genai 3.x adds /v1/models/... itself
MODEL = "gemini-scripted"
GENERATE_URL = f"{BASE_URL}/models/{MODEL}:generateContent"
STREAM_URL = f"{BASE_URL}/models/{MODEL}:streamGenerateContent?alt=sse"
CHILD_FINAL = f"UNRESOLVED: {QUESTION} ({REFUSAL})"
PARENT_SYSTEM = "You lead. Delegate the environment check."
CHILD_SYSTEM = "You are a subagent."
OBJECT = {"type": "object"}
REFUSED = ("ask_user_question", "exit_plan_mode")  # a child's, to the human
# Declared for the SDK-free requests: strict mode answers only calls to declared tools.
TOOLS = [{"functionDeclarations": [{"name": "subagent"}, {"name": "ask_user_question"}]}]


def body(**fields: Any) -> dict[str, Any]:
    """A generateContent body: `go`, unless `fields` say otherwise."""
    return {"contents": [user("go")], **fields}


def user(*parts: Any) -> dict[str, Any]:
    return {"role": "user", "parts": [{"text": p} if isinstance(p, str) else p for p in parts]}


def answer(name: str, text: str, call_id: str | None = None) -> dict[str, Any]:
    sent = {"name": name, "response": {"output": text}}
    return {"functionResponse": sent if call_id is None else {**sent, "id": call_id}}


def fake(scripts: dict[str, list[Turn]] = SCRIPTS, **options: Any) -> ScriptedLLM:
    # Strict and history-checked: every check the Chat Completions wire gets.
    return ScriptedLLM(scripts, strict=True, check_history=True, **options)


def sdk(base_url: str = SDK_BASE, **options: Any) -> genai.Client:
    from google import genai
    from google.genai import types

    # The SDK insists on a key: the sentinel, the one credential the fake accepts. The
    # version is its default, named so that GOOGLE_GENAI_API_VERSION cannot move it.
    http = types.HttpOptions(base_url=base_url, api_version="v1", **options)
    return genai.Client(api_key=SENTINEL_KEY, http_options=http)


def declarations(names: tuple[str, ...]) -> list[types.ToolUnion]:
    from google.genai import types

    # Both spellings of a schema: JSON Schema, and Gemini's own (OpenAPI-like) Schema.
    *json_schema, last = names
    declared = [
        types.FunctionDeclaration(
            name=n, description=f"the {n} tool", parameters_json_schema=OBJECT
        )
        for n in json_schema
    ]
    schema = types.Schema(type=types.Type.OBJECT)
    declared.append(types.FunctionDeclaration(name=last, description=f"the {last} tool",
                                              parameters=schema))  # fmt: skip
    return [types.Tool(function_declarations=declared)]


def merged(chunks: Any) -> types.Content:
    """A streamed reply as the one content it amounts to: its text deltas joined, each
    function call whole in the chunk it came in; only the last chunk says it stopped."""
    from google.genai import types

    text, calls, finishes = "", [], []
    for chunk in chunks:
        (candidate,) = chunk.candidates
        finishes.append(candidate.finish_reason)
        for part in candidate.content.parts:
            if part.function_call is not None:
                calls.append(part)
            else:
                text += part.text or ""
    assert finishes[-1] == types.FinishReason.STOP and not any(finishes[:-1])
    return types.Content(role="model", parts=[types.Part(text=text)] * bool(text) + calls)


class Runtime:
    """A few-line runtime on google-genai, as Gemini CLI runs one: the whole conversation
    as `contents` each time, each reply's content kept as the SDK read it, every function
    call answered by a functionResponse carrying its id; the delegation tool run as a child
    conversation whose final text is its response (and a handoff), a child's question to the
    human refused."""

    def __init__(self, client: genai.Client, stream: bool, delegation: str = "subagent") -> None:
        self.client, self.stream, self.delegation = client, stream, delegation
        self.tools = declarations((delegation, *REFUSED))
        self.handoffs: list[str] = []

    def step(self, system: str, contents: list[Any]) -> types.Content:
        from google.genai import types

        config = types.GenerateContentConfig(system_instruction=system, tools=self.tools)
        asked: dict[str, Any] = {"model": MODEL, "contents": contents, "config": config}
        if self.stream:
            return merged(self.client.models.generate_content_stream(**asked))
        (candidate,) = self.client.models.generate_content(**asked).candidates or []
        assert candidate.finish_reason == types.FinishReason.STOP and candidate.content
        return candidate.content

    def run(self, task: str, depth: int = 0) -> str:
        from google.genai import types

        contents: list[Any] = [types.Content(role="user", parts=[types.Part(text=task)])]
        for _ in range(8):
            said = self.step(CHILD_SYSTEM if depth else PARENT_SYSTEM, contents)
            contents.append(said)
            calls = [p.function_call for p in said.parts or () if p.function_call]
            if not calls:
                return "".join(p.text or "" for p in said.parts or ())
            answers = []
            for call in calls:
                assert call.id and call.name and call.args is not None  # ids on every call
                if call.name == self.delegation:
                    text = self.run(call.args["prompt"], depth + 1)
                    self.handoffs.append(text)
                else:
                    assert call.name in REFUSED and depth > 0, f"unscripted call {call.name}"
                    text = REFUSAL
                response = types.FunctionResponse(id=call.id, name=call.name,
                                                  response={"output": text})  # fmt: skip
                answers.append(types.Part(function_response=response))
            contents.append(types.Content(role="user", parts=answers))
        raise AssertionError(f"no final answer to {task!r}")


def sent(llm: ScriptedLLM, index: int) -> Any:
    return json.loads(llm.requests[index].raw)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_a_delegation_runs_to_completion_over_the_gemini_wire(stream: bool) -> None:
    llm = fake(chunk=5)
    with llm.intercept():  # the SDK's own httpx2 client, served in-process
        runtime = Runtime(sdk(), stream)
        final = runtime.run("Prepare the deployment.")
    assert final == f"PARENT_COMPLETED: {CHILD_FINAL}"  # the child's final, handed back
    assert runtime.handoffs == [CHILD_FINAL]
    assert llm.errors == [] and llm.unconsumed() == []
    # Routed by content alone: the child's first contents are the delegation prompt, and
    # each later request carries back a call id the fake issued to one agent.
    assert [r.agent for r in llm.requests] == ["parent", "child", "child", "parent"]
    assert all(k.lower() != "x-harness-agent" for r in llm.requests for k, _ in r.headers)
    assert sent(llm, 1)["contents"] == [user(PROMPT)]
    assert sent(llm, 2)["contents"][-1] == user(answer("ask_user_question", REFUSAL, "call_2"))
    assert sent(llm, 3)["contents"][-1] == user(answer("subagent", CHILD_FINAL, "call_1"))
    # The prefix log reads the translation: the system instruction as the system message,
    # the declarations as functions, either schema spelling as their parameters.
    tools = [{"type": "function", "function": {"name": n, "description": f"the {n} tool",
              "parameters": OBJECT if n != REFUSED[-1] else {"type": "OBJECT"}}}
             for n in ("subagent", *REFUSED)]  # fmt: skip
    assert llm.prefixes.summary() == {
        "system": {"parent": PARENT_SYSTEM, "child": CHILD_SYSTEM},
        "tools": tools,
    }


def test_the_async_client_on_the_fakes_transport_gets_text_and_a_call() -> None:
    from google.genai import types

    llm = fake({"lead": [Turn.text("hello there"), Turn.tool("ask_user_question", ASK)]})
    steps: list[tuple[str, int]] = []

    async def before(agent: str, step: int) -> None:  # the transport's hook sees each step
        steps.append((agent, step))

    llm.before_turn = before

    async def ask() -> tuple[str | None, list[types.FunctionCall]]:
        client = sdk(httpx_async_client=httpx.AsyncClient(transport=llm.transport()))
        config = types.GenerateContentConfig(tools=declarations(("ask_user_question",)))
        text = await client.aio.models.generate_content(model=MODEL, contents="go")
        history: list[Any] = ["go", text.candidates[0].content, "more"]  # type: ignore[index]
        chunks = await client.aio.models.generate_content_stream(
            model=MODEL, contents=history, config=config
        )
        said = merged([chunk async for chunk in chunks])
        return text.text, [p.function_call for p in said.parts or () if p.function_call]

    text, calls = asyncio.run(ask())
    assert text == "hello there"
    assert [(c.id, c.name, c.args) for c in calls] == [("call_1", "ask_user_question", ASK)]
    assert steps == [("lead", 1), ("lead", 2)] and llm.errors == []


@pytest.mark.slow  # starts `harness serve`
@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize(
    ("served_id", "dialect"),
    [("grandchild-refused", None),
     ("parallel-children-refused",
      {"tool": "task", "arguments": {"description": "{name}", "prompt": "{prompt}"}})],
    ids=["nested-subagent", "parallel-task-dialect"],
)  # fmt: skip
def test_google_genai_runs_a_delegation_tree_against_serve(
    serve_process: Callable[..., AbstractContextManager[Served]],
    served_id: str,
    dialect: dict[str, Any] | None,
    stream: bool,
) -> None:
    # The Python twin of tests/test_serve_sdks.py's Node runs, on the fourth wire.
    options = ["--delegation", json.dumps(dialect)] if dialect else []
    with serve_process(served_id, "--idle-timeout", "20", *options) as server:
        runtime = Runtime(sdk(server.url.removesuffix("/v1")), stream, (dialect or {}).get(
            "tool", "subagent"))  # fmt: skip
        final = runtime.run("Prepare the deployment.")
        assert server.wait(10) == 0, server.stderr()
    expect = SCENARIOS[served_id].expect
    assert final == expect.final["parent"].equals
    assert runtime.handoffs == [handoff.equals for handoff in expect.handoffs or ()]
    assert "all scripts consumed" in server.stderr()


def test_a_script_error_is_googles_error_shape_through_the_sdk() -> None:
    from google.genai import errors

    llm = fake({"lead": [Turn.text("hi")]})
    client = sdk()  # held: a Client closes its HTTP client once no one holds it
    # The wire's own JSON (a camelCase functionResponse), not the SDK's dict types.
    contents: list[Any] = [user("go"), user(answer("subagent", "r", "call_9"))]
    with llm.intercept(), pytest.raises(errors.ClientError) as info:
        client.models.generate_content(model=MODEL, contents=contents)
    message = (
        "agent lead, step 1: message 1 (tool) answers tool call 'call_9', which the assistant "
        "message before it did not make; send the assistant message with its tool_calls, then "
        "one tool message per call"
    )
    assert (info.value.code, info.value.status, info.value.message) == (
        400, "INVALID_ARGUMENT", message
    )  # fmt: skip
    assert info.value.details["error"]["details"] == [
        {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "invalid_conversation",
         "domain": "keyless-harness"},
        {"@type": "type.googleapis.com/google.rpc.BadRequest",
         "fieldViolations": [{"field": "messages", "description": message}]},
    ]  # fmt: skip
    assert llm.unconsumed() != []  # no step was spent on it
