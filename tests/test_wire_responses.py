"""The fake's OpenAI Responses wire (POST {base}/responses), the one Codex speaks, driven by
the official openai SDK against the in-process fake: a whole parent -> child delegation
routed by content alone (no agent header), plain and streamed through the SDK's stream
accumulator (which checks every event's order and ids), with the child's ask_user_question
refused as a runtime-owned child's must be; the reply's shape; OpenAI's error shape; and
the other two wires still served beside it. The SDK-free checks are in
tests/test_wire_responses_checks.py.

The openai SDK speaks httpx2 but still takes an httpx client, so no bridge is needed here
(the anthropic SDK's is in tests/test_wire_anthropic.py).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from harness.contract import SENTINEL_KEY
from harness.fake import BASE_URL, ScriptedLLM, Turn
from tests.test_wire_anthropic import ASK, PROMPT, QUESTION, REFUSAL, SCRIPTS

if TYPE_CHECKING:
    import openai

RESPONSES_URL = f"{BASE_URL}/responses"
CHILD_FINAL = f"UNRESOLVED: {QUESTION} ({REFUSAL})"
PARENT_INSTRUCTIONS = "You lead. Delegate the environment check."
CHILD_INSTRUCTIONS = "You are a subagent."
OBJECT = {"type": "object"}
TOOLS = [
    {"type": "function", "name": "subagent", "description": "Delegate a task",
     "parameters": OBJECT, "strict": False},
    {"type": "function", "name": "ask_user_question", "description": "Ask the human",
     "parameters": OBJECT, "strict": False},
]  # fmt: skip


def body(**fields: Any) -> dict[str, Any]:
    """A Responses request body: `go`, unless `fields` say otherwise."""
    return {"model": "m", "input": "go", "store": False, **fields}


def output(call_id: str, text: str) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": text}


def sdk(llm: ScriptedLLM) -> openai.OpenAI:
    import openai

    # The SDK insists on a key: the sentinel, the one credential the fake accepts.
    transport = httpx.MockTransport(llm.router().handler)
    http = httpx.Client(transport=transport)  # a legacy httpx client: the SDK accepts one
    return openai.OpenAI(base_url=BASE_URL, api_key=SENTINEL_KEY, max_retries=0,
                         http_client=http)  # type: ignore[arg-type]  # fmt: skip


def fake(scripts: dict[str, list[Turn]] = SCRIPTS, **options: Any) -> ScriptedLLM:
    # Strict and history-checked: every check the Chat Completions wire gets.
    return ScriptedLLM(scripts, strict=True, check_history=True, **options)


class Runtime:
    """A few-line Responses runtime, as Codex runs one: stateless (`store: false`, the
    whole input each time), `subagent` run as a child conversation whose final text is the
    function's output, and a child's ask_user_question refused with that output."""

    def __init__(self, client: openai.OpenAI, stream: bool) -> None:
        self.client = client
        self.stream = stream

    def create(self, instructions: str, items: list[Any]) -> openai.types.responses.Response:
        asked: dict[str, Any] = {"model": "gpt-scripted", "instructions": instructions,
                                 "input": items, "tools": TOOLS, "store": False}  # fmt: skip
        if not self.stream:
            response: openai.types.responses.Response = self.client.responses.create(**asked)
            return response
        with self.client.responses.stream(**asked) as stream:
            return stream.get_final_response()

    def run(self, task: str, *, child: bool = False) -> str:
        instructions = CHILD_INSTRUCTIONS if child else PARENT_INSTRUCTIONS
        items: list[Any] = [{"role": "user", "content": task}]
        while True:
            reply = self.create(instructions, items)
            items += [item.model_dump(exclude_none=True) for item in reply.output]
            calls = [item for item in reply.output if item.type == "function_call"]
            if not calls:
                return reply.output_text
            for call in calls:
                if call.name == "subagent":
                    handed = self.run(json.loads(call.arguments)["prompt"], child=True)
                    items.append(output(call.call_id, handed))
                elif call.name == "ask_user_question" and child:
                    items.append(output(call.call_id, REFUSAL))
                else:
                    raise AssertionError(f"unscripted call {call.name}")


def sent(llm: ScriptedLLM, index: int) -> Any:
    return json.loads(llm.requests[index].raw)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_a_delegation_runs_to_completion_over_the_responses_wire(stream: bool) -> None:
    llm = fake(chunk=5)
    final = Runtime(sdk(llm), stream).run("Prepare the deployment.")
    assert final == f"PARENT_COMPLETED: {CHILD_FINAL}"  # the child's final text, handed back
    assert llm.errors == [] and llm.unconsumed() == []
    # Routed by content alone: the child's first input is the delegation prompt, and each
    # later request carries back a call id the fake issued to one agent.
    assert [r.agent for r in llm.requests] == ["parent", "child", "child", "parent"]
    assert all(k.lower() != "x-harness-agent" for r in llm.requests for k, _ in r.headers)
    assert sent(llm, 1)["input"] == [{"role": "user", "content": PROMPT}]
    assert sent(llm, 2)["input"][-1] == output("call_2", REFUSAL)
    assert sent(llm, 3)["input"][-1] == output("call_1", CHILD_FINAL)
    # The prefix log reads the translation: instructions as the system message, the tools
    # as functions.
    functions = [{"type": "function", "function": {"name": t["name"], "parameters": OBJECT,
                  "description": t["description"]}} for t in TOOLS]  # fmt: skip
    assert llm.prefixes.summary() == {
        "system": {"parent": PARENT_INSTRUCTIONS, "child": CHILD_INSTRUCTIONS},
        "tools": functions,
    }


def test_the_parents_function_call_and_the_reply_are_the_responses_shape() -> None:
    llm = fake(created=1_700_000_000)
    raw = sdk(llm).responses.with_raw_response.create(
        **body(model="gpt-scripted", instructions=PARENT_INSTRUCTIONS, tools=TOOLS)
    )
    assert raw.headers["content-type"] == "application/json; charset=utf-8"
    arguments = json.dumps({"name": "child", "prompt": PROMPT}, separators=(",", ":"))
    call = {"id": "fc_1", "type": "function_call", "status": "completed", "call_id": "call_1",
            "name": "subagent", "arguments": arguments}  # fmt: skip
    # The Chat Completions wire's estimate: per message, one token per four characters.
    prompt_tokens = -(-len(PARENT_INSTRUCTIONS) // 4) + 1
    assert json.loads(raw.content) == {
        "id": "resp_1", "object": "response", "created_at": 1_700_000_000,
        "status": "completed", "error": None, "incomplete_details": None,
        "instructions": PARENT_INSTRUCTIONS, "metadata": {}, "model": "gpt-scripted",
        "output": [call], "parallel_tool_calls": True, "tool_choice": "auto",
        # Echoed as the API echoes them, without the `strict` flag the fake does not read.
        "tools": [{"type": "function", **{k: t[k] for k in ("name", "description", "parameters")}}
                  for t in TOOLS],
        "usage": {"input_tokens": prompt_tokens, "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens": -(-len(arguments) // 4),
                  "output_tokens_details": {"reasoning_tokens": 0},
                  "total_tokens": prompt_tokens + -(-len(arguments) // 4)},
    }  # fmt: skip
    parsed = raw.parse()
    assert parsed.output[0].type == "function_call" and parsed.output_text == ""


def test_a_script_error_is_openais_error_shape() -> None:
    import openai

    llm = fake({"lead": [Turn.text("hi")]})
    with pytest.raises(openai.BadRequestError) as info:
        sdk(llm).responses.create(**body(input=[output("call_9", "r")]))
    message = (
        "agent lead, step 1: message 0 (tool) answers tool call 'call_9', which the assistant "
        "message before it did not make; send the assistant message with its tool_calls, then "
        "one tool message per call"
    )
    assert info.value.body == {
        "message": message,
        "type": "invalid_request_error",
        "param": "messages",
        "code": "invalid_conversation",
    }
    assert llm.unconsumed() != []  # no step was spent on it


def test_previous_response_id_is_refused_with_what_to_send_instead() -> None:
    import openai

    llm = fake({"lead": [Turn.text("hi"), Turn.text("again")]})
    client = sdk(llm)
    first = client.responses.create(**body())
    with pytest.raises(openai.BadRequestError) as info:
        client.responses.create(**body(previous_response_id=first.id, input="more"))
    assert info.value.body == {
        "message": (
            "previous_response_id: the fake keeps no responses; send the whole conversation "
            "as 'input' each time (store: false)"
        ),
        "type": "invalid_request_error",
        "param": "previous_response_id",
        "code": "malformed_request",
    }
    assert [e.step for e in llm.errors] == [None] and len(llm.unconsumed()) == 1


def test_one_conversation_carries_on_across_all_three_wires() -> None:
    import openai

    from tests.test_wire_anthropic import sdk as anthropic_sdk

    scripts = {"lead": [Turn.text("hi"), Turn.text("again"), Turn.text("and more")]}
    llm = fake(scripts, created=1)
    said = sdk(llm).responses.create(**body())
    assert said.output_text == "hi" and said.id == "resp_1"
    history = [{"role": "user", "content": "go"}, {"role": "assistant", "content": "hi"},
               {"role": "user", "content": "more"}]  # fmt: skip
    http = httpx.Client(transport=httpx.MockTransport(llm.router().handler))  # legacy: accepted
    chat = openai.OpenAI(base_url=BASE_URL, api_key=SENTINEL_KEY, max_retries=0,
                         http_client=http)  # type: ignore[arg-type]  # fmt: skip
    again = chat.chat.completions.create(model="m", messages=history)  # type: ignore[arg-type]
    assert again.choices[0].message.content == "again" and again.id == "chatcmpl-2"
    history += [{"role": "assistant", "content": "again"}, {"role": "user", "content": "go on"}]
    more = anthropic_sdk(llm).messages.create(model="m", max_tokens=8, messages=history)  # type: ignore[arg-type]
    assert [(b.type, b.text) for b in more.content] == [("text", "and more")]  # type: ignore[union-attr]
    # Routed by the text served, whatever the wire; every id numbered by one counter.
    assert [r.agent for r in llm.requests] == ["lead"] * 3 and llm.errors == []
    assert more.id == "msg_3"


def test_several_function_calls_in_one_step_stream_with_their_output_indices() -> None:
    from harness.fake import Call

    calls = (Call("ask_user_question", ASK), Call("ask_user_question", {"questions": []}))
    llm = fake({"lead": [Turn(say="Asking twice.", calls=calls)]}, chunk=8)
    with sdk(llm).responses.stream(**body(tools=TOOLS)) as stream:
        events = list(stream)
        final = stream.get_final_response()
    assert [e.sequence_number for e in events] == list(range(len(events)))
    added = [e for e in events if e.type == "response.output_item.added"]
    assert [(e.output_index, e.item.type, e.item.id) for e in added] == [
        (0, "message", "msg_1"),
        (1, "function_call", "fc_1"),
        (2, "function_call", "fc_2"),
    ]
    arguments = [json.dumps(ASK, separators=(",", ":")), '{"questions":[]}']
    for index, text in enumerate(arguments, start=1):
        deltas = [e for e in events if e.type == "response.function_call_arguments.delta"
                  and e.output_index == index]  # fmt: skip
        assert len(deltas) == -(-len(text) // 8)  # one per 8 characters (the fake's chunk)
        assert "".join(d.delta for d in deltas) == text
    assert final.output_text == "Asking twice."
    assert [(i.call_id, i.arguments) for i in final.output[1:]] == [  # type: ignore[union-attr]
        ("call_1", arguments[0]),
        ("call_2", arguments[1]),
    ]
