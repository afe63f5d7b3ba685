"""OpenAI Responses (POST {base}/responses), the one wire Codex speaks.

As on the Messages wire, the request is translated at the edge into the Chat
Completions-shaped conversation the rest of the fake checks, routes, compares with its
history and logs the prefix of (`conversation`), and the rendered turn goes the other way:
one JSON `response`, or the SSE events the API streams (`response.created` ...
`response.completed`, every event numbered by `sequence_number`). Errors are OpenAI's shape,
the Chat Completions wire's.

The translation, and what does not carry over:
- `instructions` is the system message 0; `input` as a string is one user message;
- a `message` item is a message of its role (`developer` stays `developer`), an assistant
  one with its `output_text` parts joined; `function_call` items are the tool calls of the
  assistant message they follow (or of one of their own), and a `function_call_output` is a
  `tool` message; so an `invalid_conversation` error counts the translated messages;
- `reasoning` items are left out: the fake never sends any;
- `previous_response_id` and `conversation` are refused: the fake keeps no responses, so a
  runtime must send the whole conversation each time (`store: false`, as Codex does);
- only `function` tools are declared to the checks and the prefix log, a `namespace`
  tool's functions among them (Codex keeps `spawn_agent` and `wait_agent` in one); a
  built-in tool (`web_search`, `local_shell`, ...) is taken and left out, since no script
  can call it. A call to a namespaced tool carries its `namespace` on the output item (the
  dialect's spelling says which), as a runtime needs to find the tool.
"""

from __future__ import annotations

import json
from typing import Any

from harness.fake.script import MalformedRequest
from harness.fake.wires import Answer, Endpoint
from harness.fake.wires.chat_completions import JSON_TYPE, SSE_TYPE, error, pieces, usage

PATH = "/responses"  # below the base URL
_encode = json.JSONEncoder(ensure_ascii=False, check_circular=False).encode
_ROLES = ("user", "assistant", "system", "developer")
_ITEMS = ("message", "function_call", "function_call_output", "reasoning")
_STATEFUL = ("previous_response_id", "conversation")
NAMESPACE = "namespace"  # on a translated tool: the namespace it was declared in


# -- the request ----------------------------------------------------------------------
def conversation(body: Any, *, strict: bool, agent: str | None) -> dict[str, Any]:
    """The Chat Completions-shaped body the fake's checks and routing read: `model`,
    `stream` and `instructions` as sent, `instructions` also as the first message, each
    input item translated, each function tool as a function. MalformedRequest, before any
    step is spent, for a body that is no Responses request (`param` the field at fault)."""
    problem = _problem(body)
    if problem is not None:
        param, text = problem
        raise MalformedRequest(text, agent=agent, step=None, param=param)
    out = {key: body[key] for key in ("model", "stream", "instructions") if key in body}
    instructions = body.get("instructions")
    messages: list[dict[str, Any]] = (
        [] if instructions is None else [{"role": "system", "content": instructions}]
    )
    items = body["input"]
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    out["messages"] = messages + _translated(items)
    if body.get("tools") is not None:
        out["tools"] = [_function(t, ns) for ns, t in _functions(body["tools"])]
    return out


def _functions(tools: list[dict[str, Any]]) -> list[tuple[str | None, dict[str, Any]]]:
    """The function tools declared, a namespace's own in its place, each with the name of
    the namespace it is in (None: at the top level)."""
    out: list[tuple[str | None, dict[str, Any]]] = []
    for tool in tools:
        if tool["type"] == "function":
            out.append((None, tool))
        elif tool["type"] == "namespace" and isinstance(tool.get("tools"), list):
            inner = [t for t in tool["tools"] if isinstance(t, dict)]
            out += [(str(tool.get("name")), t) for t in inner if isinstance(t.get("name"), str)
                    and t.get("type", "function") == "function"]  # fmt: skip
    return out


def _kind(item: dict[str, Any]) -> Any:
    # A message may leave out its type (EasyInputMessage); nothing else may.
    return item.get("type", "message" if "role" in item else None)


def _problem(body: Any) -> tuple[str | None, str] | None:
    """(param, message) for a body no step may be spent on; None if it is a Responses
    request. `model` and `stream` are checked on the translation, as on the other wires."""
    if not isinstance(body, dict):
        kind = "no JSON" if body is None else f"a JSON {type(body).__name__}"
        return None, f"the body is {kind}, not a responses request object"
    for key in _STATEFUL:
        if body.get(key) is not None:
            return key, (
                f"{key}: the fake keeps no responses; send the whole conversation as 'input' "
                "each time (store: false)"
            )
    instructions = body.get("instructions")
    if instructions is not None and not isinstance(instructions, str):
        return "instructions", "'instructions' must be a string"
    items = body.get("input")
    if isinstance(items, str):
        items = []
    if not isinstance(items, list):
        return "input", "body is not a responses request with 'input' (a string or items)"
    for i, item in enumerate(items):
        wrong = _item_problem(item)
        if wrong is not None:
            return f"input.{i}", f"input.{i}: {wrong}"
    tools = body.get("tools")
    if tools is not None and (
        not isinstance(tools, list)
        or not all(isinstance(t, dict) and isinstance(t.get("type"), str) for t in tools)
        or not all(isinstance(t.get("name"), str) for t in tools if t["type"] == "function")
    ):
        return "tools", "'tools' must be an array of {type: function, name, parameters}"
    return None


def _item_problem(item: Any) -> str | None:
    if not isinstance(item, dict):
        return "an input item is an object"
    kind = _kind(item)
    if kind not in _ITEMS:
        return f"an input item's type is one of {', '.join(_ITEMS)}, not {kind!r}"
    if kind == "message":
        if item.get("role") not in _ROLES:
            return f"a message's role is one of {', '.join(_ROLES)}"
        content = item.get("content")
        if isinstance(content, str):
            return None
        if not isinstance(content, list) or not all(
            isinstance(p, dict) and isinstance(p.get("type"), str) for p in content
        ):
            return "a message's content is a string or an array of {type, ...} parts"
        if any(p["type"].endswith("_text") and not isinstance(p.get("text"), str) for p in content):
            return "a text part needs a string text"
    if kind == "function_call":
        for key in ("call_id", "name", "arguments"):
            if not isinstance(item.get(key), str):
                return f"a function_call needs a string {key}"
    if kind == "function_call_output":
        if not isinstance(item.get("call_id"), str):
            return "a function_call_output needs a string call_id"
        if not isinstance(item.get("output"), str | list):
            return "a function_call_output's output is a string or an array of parts"
    return None


def _translated(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The input items as the Chat Completions messages they amount to."""
    out: list[dict[str, Any]] = []
    calling: dict[str, Any] | None = None  # the assistant message function calls join
    for item in items:
        kind = _kind(item)
        if kind == "reasoning":
            continue
        if kind == "function_call":
            call = {"id": item["call_id"], "type": "function",
                    "function": {"name": item["name"], "arguments": item["arguments"]}}  # fmt: skip
            if calling is None:
                calling = {"role": "assistant", "content": None}
                out.append(calling)
            calling.setdefault("tool_calls", []).append(call)
            continue
        calling = None
        if kind == "function_call_output":
            out.append({"role": "tool", "tool_call_id": item["call_id"], "content": item["output"]})
            continue
        role, content = item["role"], item["content"]
        if role == "assistant" and not isinstance(content, str):
            said = [p["text"] for p in content if p["type"] == "output_text"]
            content = "".join(said) if said else None
        out.append({"role": role, "content": content})
        if role == "assistant":
            calling = out[-1]
    return out


def _function(tool: dict[str, Any], namespace: str | None) -> dict[str, Any]:
    function = {key: tool[key] for key in ("name", "description", "parameters") if key in tool}
    out: dict[str, Any] = {"type": "function", "function": function}
    if namespace is not None:
        out[NAMESPACE] = namespace  # beside the function: the checks read the function alone
    return out


# -- the answer -----------------------------------------------------------------------
def items(
    message: dict[str, Any], serial: int, tools: list[dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """The rendered turn's output items, completed: its text as one `message` (`msg_N`),
    then each tool call as a `function_call` whose `call_id` is the fake's call id (and its
    item id `fc_` and the same number). A call the dialect puts in a namespace carries it
    unless the request (its `tools`, as translated) declares that tool at the top level and
    in no such namespace: the runtime's own release decides (Codex 0.132 declares
    spawn_agent plainly, 0.133 in multi_agent_v1)."""
    declared = {(t.get(NAMESPACE), t["function"].get("name")) for t in tools or ()}
    out: list[dict[str, Any]] = []
    if message.get("content"):
        text = {"type": "output_text", "text": message["content"], "annotations": []}
        out.append({"id": f"msg_{serial}", "type": "message", "status": "completed",
                    "role": "assistant", "content": [text]})  # fmt: skip
    for call in message.get("tool_calls") or ():
        function = call["function"]
        item = {"id": "fc_" + call["id"].removeprefix("call_"), "type": "function_call",
                "status": "completed", "call_id": call["id"], "name": function["name"],
                "arguments": function["arguments"]}  # fmt: skip
        namespace = call.get("namespace")
        plain = (None, function["name"]) in declared and (
            namespace,
            function["name"],
        ) not in declared
        if namespace is not None and not plain:
            item["namespace"] = namespace
        out.append(item)
    return out


def reply(
    request: dict[str, Any],
    message: dict[str, Any],
    *,
    serial: int,
    created: int,
    model: str,
    chunk: int | None,
) -> Answer:
    """The response answering `request` (the translated, checked request) with `message`:
    `resp_N` created at `created`, its tools and instructions echoed as the API does. Usage
    is the Chat Completions wire's estimate, under the Responses names."""
    counted = usage(request, message)
    spent = {
        "input_tokens": counted["prompt_tokens"],
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": counted["completion_tokens"],
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": counted["total_tokens"],
    }
    tools = [{"type": "function", **t["function"]} for t in request.get("tools") or ()]
    output = items(message, serial, request.get("tools"))
    head = {"id": f"resp_{serial}", "object": "response", "created_at": created,
            "status": "completed", "error": None, "incomplete_details": None,
            "instructions": request.get("instructions"), "metadata": {},
            "model": request.get("model", model), "output": output,
            "parallel_tool_calls": True, "tool_choice": "auto", "tools": tools,
            "usage": spent}  # fmt: skip
    if not request.get("stream"):
        return Answer(200, JSON_TYPE, (_encode(head).encode(),))
    sent = events(head, chunk)
    return Answer(200, SSE_TYPE, tuple(_sse(data) for data in sent), streamed=True)


def _sse(data: dict[str, Any]) -> bytes:
    return f"event: {data['type']}\ndata: {_encode(data)}\n\n".encode()


def events(response: dict[str, Any], chunk: int | None = None) -> list[dict[str, Any]]:
    """The stream of the completed `response`: response.created and .in_progress (no
    output, no usage yet); per output item its `output_item.added`, its deltas (a message's
    text part opened and closed around `output_text.delta`s, a function call's
    `function_call_arguments.delta`s) and `output_item.done`; then response.completed.
    Each event carries its `sequence_number`, from 0."""
    pending = {**response, "status": "in_progress", "output": [], "usage": None}
    out: list[dict[str, Any]] = [
        {"type": "response.created", "response": pending},
        {"type": "response.in_progress", "response": pending},
    ]
    for index, item in enumerate(response["output"]):
        at = {"item_id": item["id"], "output_index": index}
        if item["type"] == "message":
            text = item["content"][0]["text"]
            part = {"type": "output_text", "text": "", "annotations": []}
            added = {**item, "status": "in_progress", "content": []}
            out.append({"type": "response.output_item.added", "output_index": index, "item": added})
            out.append({"type": "response.content_part.added", **at, "content_index": 0,
                        "part": part})  # fmt: skip
            out += [{"type": "response.output_text.delta", **at, "content_index": 0,
                     "delta": piece, "logprobs": []} for piece in pieces(text, chunk)]  # fmt: skip
            out.append({"type": "response.output_text.done", **at, "content_index": 0,
                        "text": text, "logprobs": []})  # fmt: skip
            out.append({"type": "response.content_part.done", **at, "content_index": 0,
                        "part": {**part, "text": text}})  # fmt: skip
        else:
            added = {**item, "status": "in_progress", "arguments": ""}
            out.append({"type": "response.output_item.added", "output_index": index, "item": added})
            out += [{"type": "response.function_call_arguments.delta", **at, "delta": piece}
                    for piece in pieces(item["arguments"], chunk)]  # fmt: skip
            out.append({"type": "response.function_call_arguments.done", **at,
                        "name": item["name"], "arguments": item["arguments"]})  # fmt: skip
        out.append({"type": "response.output_item.done", "output_index": index, "item": item})
    out.append({"type": "response.completed", "response": response})
    return [{**event, "sequence_number": n} for n, event in enumerate(out)]


ENDPOINT = Endpoint("openai_responses", PATH, conversation, reply, error)
