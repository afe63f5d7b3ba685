"""Google's Gemini API: POST {base}/models/{model}:generateContent (JSON) and
:streamGenerateContent?alt=sse (SSE, each event `data: {GenerateContentResponse}`), the wire
google-genai and Gemini CLI speak.

Its path carries what the other wires' bodies do, the model and whether to stream, so the
endpoint is matched by a pattern (`ENDPOINT.pattern`) and `ENDPOINT.at(path)` binds both
into the translation. The API version may be in the base URL or after it: `{base}/v1/models`
(google-genai 3.x's default, given a base URL without a version; `v1beta` and `v1alpha` too)
or `{base}/models` (a base URL that carries the version, as the Vercel AI SDK's does).

As on the other wires, the request is translated at the edge into the Chat
Completions-shaped conversation the rest of the fake checks, routes, compares with its
history and logs the prefix of (`conversation`); the rendered turn goes the other way, as
one GenerateContentResponse or its SSE chunks; a refused request gets Google's error shape.

The translation, and what does not carry over:
- `systemInstruction` is the system message 0, its text parts joined;
- a `user` content (or one without a role) is a user message (its text as a string when it
  is one text part), and each `functionResponse` part a `tool` message, in their order; a
  `model` content is an assistant message: its text parts joined (`thought` parts left out:
  the fake sends none), each `functionCall` a tool call whose arguments are `args`
  re-encoded as the fake encodes arguments (so a runtime that reorders keys is told its
  history differs, as on the Messages wire); an `invalid_conversation` error counts the
  translated messages;
- a tool result's text is the `response` object's one string value when it has one key
  (`{"output": ...}` as Gemini CLI sends, `{"result": ...}` as google-genai's automatic
  calling does), else that object as JSON: what a `{{label.result}}` template reads;
- call ids: the API returns an `id` with each functionCall and newer clients (google-genai
  3.x, Gemini CLI) send it back, so the fake sends one from its one counter. A call sent back
  without one is `name#N` (N its part's index) and a functionResponse without one answers
  the first unanswered call of its name in the model content before it, as Gemini pairs
  them; the history check then says the ids differ from those served;
- field names in camelCase or snake_case: Google's JSON parser takes both, and google-genai
  3.6 sends `parameters_json_schema`;
- `cachedContent` is refused: the fake keeps no cache, so the whole conversation must be in
  `contents`;
- only `functionDeclarations` are declared to the checks and the prefix log (name,
  description, and `parameters` or `parametersJsonSchema` as parameters); another tool
  (`googleSearch`, `codeExecution`, ...) is taken and left out, since no script can call it;
- `generationConfig`, `toolConfig` and `safetySettings` are taken and not read: the script
  decides the reply, always one candidate;
- a stream is always SSE (the `alt=sse` every SDK asks for), never the JSON-array stream.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from harness.fake.script import MalformedRequest
from harness.fake.wires import Answer, Endpoint
from harness.fake.wires.anthropic_messages import CODE_HEADER, PARAM_HEADER
from harness.fake.wires.chat_completions import JSON_TYPE, SSE_TYPE, pieces, usage

# The path below the base URL: an optional API version, the model, the method. The groups
# are unnamed: respx hands a route's named groups to its side effect, the fake's handler.
PATTERN = re.compile(
    r"(?:/v1(?:alpha|beta)?)?/models/([^/:]+):(generateContent|streamGenerateContent)\Z"
)
PATH = "/models/{model}:generateContent"  # as listings and messages show it
STREAM_METHOD = "streamGenerateContent"

_encode = json.JSONEncoder(ensure_ascii=False, check_circular=False).encode
# google.rpc status names of the HTTP statuses the fake answers with.
_STATUSES = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
             404: "NOT_FOUND", 408: "DEADLINE_EXCEEDED", 409: "ABORTED",
             429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 501: "UNIMPLEMENTED",
             503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}  # fmt: skip
_ROLES = ("user", "model")


@functools.cache
def _snake(name: str) -> str:
    return re.sub(r"[A-Z]", lambda m: "_" + m.group().lower(), name)


def _get(obj: dict[str, Any], name: str) -> Any:
    """A field by its camelCase name, or its snake_case one (Google's parser takes both)."""
    value = obj.get(name)
    return obj.get(_snake(name)) if value is None else value


# -- the request ----------------------------------------------------------------------
def conversation(
    body: Any, *, strict: bool, agent: str | None, model: str | None = None, stream: bool = False
) -> dict[str, Any]:
    """The Chat Completions-shaped body the fake's checks and routing read: `model` and
    `stream` from the path (`ENDPOINT.at` binds them), `systemInstruction` as the first
    message, each content translated, each function declaration as a function.
    MalformedRequest, before any step is spent, for a body that is no generateContent
    request (`param` the field at fault)."""
    problem = _problem(body)
    if problem is not None:
        param, text = problem
        raise MalformedRequest(text, agent=agent, step=None, param=param)
    out: dict[str, Any] = {} if model is None else {"model": model}
    out["stream"] = stream
    system = _get(body, "systemInstruction")
    messages: list[dict[str, Any]] = (
        [] if system is None else [{"role": "system", "content": _text(_get(system, "parts"))}]
    )
    open_calls: list[tuple[str, str]] = []  # (name, id) of the last model content's calls
    for content in body["contents"]:
        if _role(content) == "model":
            message, open_calls = _assistant(content["parts"])
            messages.append(message)
        else:
            messages += _user(content["parts"], open_calls)
    out["messages"] = messages
    tools = body.get("tools")
    if tools is not None:
        declared = (d for t in tools for d in _get(t, "functionDeclarations") or ())
        out["tools"] = [_function(d) for d in declared]
    return out


def _problem(body: Any) -> tuple[str | None, str] | None:
    """(param, message) for a body no step may be spent on; None if it is a generateContent
    request. The model is the path's, so it is never missing."""
    if not isinstance(body, dict):
        kind = "no JSON" if body is None else f"a JSON {type(body).__name__}"
        return None, f"the body is {kind}, not a generateContent request object"
    if _get(body, "cachedContent") is not None:
        return "cachedContent", (
            "cachedContent: the fake keeps no cached contents; send the whole conversation "
            "in 'contents' each time"
        )
    system = _get(body, "systemInstruction")
    if system is not None and (not isinstance(system, dict) or not _texts(_get(system, "parts"))):
        return "systemInstruction", "systemInstruction: a Content whose parts are {text} parts"
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        return "contents", "contents: a non-empty array of {role, parts} is required"
    for i, content in enumerate(contents):
        where = f"contents.{i}"
        if not isinstance(content, dict) or _role(content) not in _ROLES:
            return where, f"{where}: a content is {{role: user or model, parts}}"
        parts = content.get("parts")
        if not isinstance(parts, list) or not parts:
            return f"{where}.parts", f"{where}.parts: a non-empty array of parts is required"
        for j, part in enumerate(parts):
            wrong = _part_problem(_role(content), part)
            if wrong is not None:
                return f"{where}.parts.{j}", f"{where}.parts.{j}: {wrong}"
    return _tools_problem(body.get("tools"))


def _role(content: dict[str, Any]) -> Any:
    return content.get("role") or "user"  # unset (or empty, proto's unset) is the user's


def _texts(parts: Any) -> bool:
    return isinstance(parts, list) and all(
        isinstance(p, dict) and isinstance(p.get("text"), str) for p in parts
    )


def _part_problem(role: str, part: Any) -> str | None:
    if not isinstance(part, dict):
        return "a part is an object"
    if "text" in part and not isinstance(part["text"], str):
        return "a text part's text is a string"
    call, response = _get(part, "functionCall"), _get(part, "functionResponse")
    if call is not None:
        if role != "model":
            return "a functionCall part belongs in a model content"
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            return "a functionCall needs a string name"
        if not isinstance(call.get("args") or {}, dict):
            return "a functionCall's args is an object"
        if call.get("id") is not None and not isinstance(call["id"], str):
            return "a functionCall's id is a string"
    if response is not None:
        if role != "user":
            return "a functionResponse part belongs in a user content"
        if not isinstance(response, dict) or not isinstance(response.get("name"), str):
            return "a functionResponse needs a string name"
        if not isinstance(response.get("response"), dict):
            return "a functionResponse's response is an object"
        if response.get("id") is not None and not isinstance(response["id"], str):
            return "a functionResponse's id is a string"
    return None


def _tools_problem(tools: Any) -> tuple[str | None, str] | None:
    if tools is None:
        return None
    if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
        return "tools", "tools: an array of {functionDeclarations: [...]} objects"
    for k, tool in enumerate(tools):
        declared = _get(tool, "functionDeclarations")
        if declared is None:
            continue  # another kind of tool: taken, and no script can call it
        where = f"tools.{k}.functionDeclarations"
        if not isinstance(declared, list):
            return where, f"{where}: an array of {{name, description, parameters}}"
        for n, function in enumerate(declared):
            if not isinstance(function, dict) or not isinstance(function.get("name"), str):
                return f"{where}.{n}", f"{where}.{n}: a function declaration needs a string name"
            if function.get("parameters") is not None and _schema(function) is not None:
                return f"{where}.{n}", (
                    f"{where}.{n}: parameters and parametersJsonSchema are mutually exclusive"
                )
    return None


def _schema(function: dict[str, Any]) -> Any:
    return _get(function, "parametersJsonSchema")


def _text(parts: list[dict[str, Any]]) -> str:
    return "".join(p["text"] for p in parts if "text" in p and not p.get("thought"))


def _assistant(parts: list[dict[str, Any]]) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """A model content as the assistant message it amounts to, and its calls' (name, id)."""
    said = [p["text"] for p in parts if "text" in p and not p.get("thought")]
    message: dict[str, Any] = {"role": "assistant", "content": "".join(said) if said else None}
    calls: list[dict[str, Any]] = []
    for j, part in enumerate(parts):
        call = _get(part, "functionCall")
        if call is None:
            continue
        # Encoded as the fake encodes a scripted call's arguments (harness.fake.reply).
        arguments = json.dumps(call.get("args") or {}, ensure_ascii=False, separators=(",", ":"))
        calls.append({"id": call.get("id") or f"{call['name']}#{j}", "type": "function",
                      "function": {"name": call["name"], "arguments": arguments}})  # fmt: skip
    if calls:
        message["tool_calls"] = calls
    return message, [(c["function"]["name"], c["id"]) for c in calls]


def _user(parts: list[dict[str, Any]], open_calls: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """A user content as the messages it amounts to: each functionResponse a tool message,
    the parts between them user messages. `open_calls` (the model's calls not yet answered)
    pairs a response without an id with its call, by name."""
    out: list[dict[str, Any]] = []
    said: list[dict[str, Any]] = []
    for part in parts:
        response = _get(part, "functionResponse")
        if response is None:
            said.append(part)
            continue
        if said:
            out.append(_said(said))
            said = []
        answered = response.get("id") or next(
            (i for name, i in open_calls if name == response["name"]), response["name"]
        )
        open_calls[:] = [c for c in open_calls if c[1] != answered]
        out.append({"role": "tool", "tool_call_id": answered, "content": _result(response)})
    if said or not out:
        out.append(_said(said))
    return out


def _said(parts: list[dict[str, Any]]) -> dict[str, Any]:
    if len(parts) == 1 and isinstance(parts[0].get("text"), str):
        return {"role": "user", "content": parts[0]["text"]}
    # Text parts as Chat Completions text parts (routing reads them); others as sent.
    translated = [{"type": "text", "text": p["text"]} if "text" in p else p for p in parts]
    return {"role": "user", "content": translated}


def _result(response: dict[str, Any]) -> str:
    value = response["response"]
    if len(value) == 1:
        (only,) = value.values()
        if isinstance(only, str):
            return only
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _function(declared: dict[str, Any]) -> dict[str, Any]:
    function: dict[str, Any] = {k: declared[k] for k in ("name", "description") if k in declared}
    schema = declared.get("parameters")
    schema = _schema(declared) if schema is None else schema
    if schema is not None:
        function["parameters"] = schema
    return {"type": "function", "function": function}


# -- the answer -----------------------------------------------------------------------
def error(status: int, message: str, code: str, param: str | None = None) -> Answer:
    """Google's error shape, {"error": {"code", "message", "status", "details"}}: the
    fake's code as an ErrorInfo's reason, the field at fault as a BadRequest's field
    violation; both also in the x-harness-error-code (-param) headers, as on Messages."""
    details: list[dict[str, Any]] = [{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                                      "reason": code, "domain": "keyless-harness"}]  # fmt: skip
    if param:
        violation = {"field": param, "description": message}
        details.append({"@type": "type.googleapis.com/google.rpc.BadRequest",
                        "fieldViolations": [violation]})  # fmt: skip
    kind = _STATUSES.get(status, "INTERNAL" if status >= 500 else "INVALID_ARGUMENT")
    body = {"error": {"code": status, "message": message, "status": kind, "details": details}}
    headers = ((CODE_HEADER, code),) + (((PARAM_HEADER, param),) if param else ())
    return Answer(status, JSON_TYPE, (_encode(body).encode(),), headers=headers)


def parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The rendered turn's parts: its text (if any), then each tool call as a functionCall,
    its arguments as the object they encode and its id the fake's."""
    out: list[dict[str, Any]] = []
    if message.get("content"):
        out.append({"text": message["content"]})
    for call in message.get("tool_calls") or ():
        function = call["function"]
        called = {"name": function["name"], "args": json.loads(function["arguments"])}
        out.append({"functionCall": {**called, "id": call["id"]}})
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
    """The GenerateContentResponse answering `request` (translated and checked: its model
    and stream are the path's) with `message`: one candidate, finishReason STOP (Gemini
    stops so after function calls too), `responseId` numbered by `serial`, `modelVersion`
    the model asked for. No time is sent (`created` is unused). Usage is the Chat
    Completions wire's estimate, under Gemini's names."""
    counted = usage(request, message)
    spent = {"promptTokenCount": counted["prompt_tokens"],
             "candidatesTokenCount": counted["completion_tokens"],
             "totalTokenCount": counted["total_tokens"]}  # fmt: skip
    tail = {"modelVersion": request.get("model", model), "responseId": f"resp_{serial}"}
    if not request.get("stream"):
        said = parts(message) or [{"text": ""}]
        body = {"candidates": [_candidate(said, "STOP")], "usageMetadata": spent, **tail}
        return Answer(200, JSON_TYPE, (_encode(body).encode(),))
    sent = events(message, spent, tail, chunk)
    return Answer(200, SSE_TYPE, tuple(_sse(e) for e in sent), streamed=True)


def _candidate(said: list[dict[str, Any]], finish: str | None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"parts": said, "role": "model"}}
    if finish is not None:
        candidate["finishReason"] = finish
    return {**candidate, "index": 0}


def _sse(data: dict[str, Any]) -> bytes:
    # Google frames each event with CRLFs; SSE readers take any line ending.
    return f"data: {_encode(data)}\r\n\r\n".encode()


def events(
    message: dict[str, Any], spent: dict[str, int], tail: dict[str, Any], chunk: int | None
) -> list[dict[str, Any]]:
    """The stream: one GenerateContentResponse per text delta of `chunk` characters, then
    one carrying every functionCall whole (Gemini never splits arguments); the last one
    carries the finishReason and the whole usage, the others the prompt's count alone."""
    text = message.get("content")
    chunks = [[{"text": t}] for t in pieces(text, chunk)] if text else []
    calls = [p for p in parts(message) if "functionCall" in p]
    chunks += [calls] if calls else []
    chunks = chunks or [[{"text": ""}]]
    prompt = spent["promptTokenCount"]
    running = {"promptTokenCount": prompt, "totalTokenCount": prompt}
    last = len(chunks) - 1
    return [{"candidates": [_candidate(c, "STOP" if n == last else None)],
             "usageMetadata": spent if n == last else running, **tail}
            for n, c in enumerate(chunks)]  # fmt: skip


@dataclass(frozen=True)
class _ModelEndpoint(Endpoint):
    """The wire whose path names the model and the method: `at` binds both."""

    def at(self, path: str) -> Endpoint:
        found = PATTERN.search(path)
        if found is None:
            return self
        model, method = found.groups()
        return _bound(model, method == STREAM_METHOD)


@functools.lru_cache(maxsize=64)
def _bound(model: str, stream: bool) -> Endpoint:
    translate: Callable[..., Any] = functools.partial(conversation, model=model, stream=stream)
    return replace(ENDPOINT, conversation=translate)


ENDPOINT = _ModelEndpoint("gemini_generate", PATH, conversation, reply, error, pattern=PATTERN)
