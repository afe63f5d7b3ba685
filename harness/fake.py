"""A scripted fake LLM: an OpenAI-compatible Chat Completions endpoint that replays one
script per agent.

Parent and child share one endpoint. The fake answers each request with its agent's next
scripted turn; which agent that is comes from the `X-Harness-Agent` header when the runtime
sends it, and otherwise from the conversation (harness._routing has the rules). Every way
a script can be misused has its own exception; the fake records it, answers HTTP 400 with
an OpenAI-style error body, and never wraps around or waits.

    llm = ScriptedLLM({"parent": [Turn.tool("subagent", {...}), Turn.text("done")]})
    client = httpx.AsyncClient(transport=llm.transport())
"""

from __future__ import annotations

import contextvars
import functools
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from harness import _completion, _template
from harness._routing import (
    DELEGATION_TOOL,
    REFERENCE_DELEGATION,
    Delegation,
    Routes,
    default_roots,
    message_text,
)
from harness._script import (
    AmbiguousDelegation,
    Call,
    MalformedArguments,
    MalformedRequest,
    ScriptError,
    ScriptExhausted,
    Turn,
    UnconsumedSteps,
    UnknownAgent,
    UnresolvedTemplate,
    UnroutableRequest,
)
from harness.runtime.llm import AGENT_HEADER

BASE_URL = "http://fake-llm.invalid/v1"

__all__ = [
    "BASE_URL",
    "AmbiguousDelegation",
    "Call",
    "CapturedRequest",
    "Delegation",
    "MalformedArguments",
    "MalformedRequest",
    "ScriptError",
    "ScriptExhausted",
    "ScriptedLLM",
    "Turn",
    "UnconsumedSteps",
    "UnknownAgent",
    "UnresolvedTemplate",
    "UnroutableRequest",
]


_SERVING: contextvars.ContextVar[ScriptedLLM] = contextvars.ContextVar("harness_fake_serving")


@functools.cache
def _shared_router(base_url: str) -> Any:
    import respx

    router = respx.Router(base_url=base_url, assert_all_mocked=True, assert_all_called=False)
    router.post("/chat/completions").mock(side_effect=_serve_current)
    return router


def _serve_current(request: httpx.Request) -> httpx.Response:
    return _SERVING.get().respond(request)


@dataclass(frozen=True)
class CapturedRequest:
    agent: str | None
    step: int | None
    raw: bytes  # the exact bytes sent, for byte-level prefix comparisons
    headers: tuple[tuple[str, str], ...] = ()  # as sent, so tests can prove no key travels

    @property
    def body(self) -> Any:
        """The parsed request (None if it was not JSON). Parsed on each access and not
        kept: a thousand-agent run holds every request, and the raw bytes are a third of
        what the parsed bodies would be."""
        try:
            return json.loads(self.raw)
        except ValueError:
            return None


@dataclass
class _AgentState:
    cursor: int = 0
    issued: dict[str, str] = field(default_factory=dict)  # label -> call id
    calls: dict[str, Call] = field(default_factory=dict)  # label -> scripted call


class ScriptedLLM:
    """One script per agent, served as a Chat Completions endpoint.

    `roots` are the agents that root phases start, in order (default: every agent no
    scripted delegation names); `session_header` is a header the runtime sends that keys a
    conversation (the two matter only to runtimes that do not send `X-Harness-Agent`);
    `delegation` is the runtime's spelling of `subagent {name, prompt}`.
    """

    def __init__(
        self,
        scripts: Mapping[str, Sequence[Turn]],
        *,
        model: str = "scripted",
        chunk: int | None = None,
        roots: Sequence[str] | None = None,
        session_header: str | None = None,
        delegation: Delegation = REFERENCE_DELEGATION,
    ):
        self.scripts = {name: tuple(turns) for name, turns in scripts.items()}
        self.model = model
        # Streaming delta size in characters: None sends each text or argument string whole.
        self.chunk = chunk
        self.delegation = delegation
        self.routes = Routes(
            default_roots(self.scripts) if roots is None else roots, session_header
        )
        self.requests: list[CapturedRequest] = []
        self.errors: list[ScriptError] = []
        self._state = {name: _AgentState() for name in self.scripts}
        self._call_ids = 0
        self._completion_ids = 0
        self._unscripted: dict[str, int] = {}  # requests per agent nobody scripted

    def conversations(self) -> dict[str, str]:
        """Conversation key (the session header's value) -> the agent it was assigned: how
        a runtime's own ids map back to the scenario's agent names."""
        return dict(self.routes.keys)

    # -- wiring -----------------------------------------------------------------------
    def router(self, base_url: str = BASE_URL) -> Any:
        """A respx router that serves this script and refuses anything it does not mock."""
        import respx

        router = respx.Router(base_url=base_url, assert_all_mocked=True, assert_all_called=False)
        router.post("/chat/completions").mock(side_effect=self.respond)
        return router

    def transport(self, base_url: str = BASE_URL) -> httpx.MockTransport:
        """An httpx transport serving this script through respx, for an AsyncClient.

        Building a respx router costs about as much as a whole delegation's requests (its
        call lists are unittest.mock objects), so every transport shares one router per
        base URL and names the fake it serves in a context variable. The router's call
        records are cleared after each request: nothing accumulates across scenarios.
        """
        router = _shared_router(base_url)

        async def handler(request: httpx.Request) -> httpx.Response:
            token = _SERVING.set(self)
            try:
                response: httpx.Response = await router.async_handler(request)
                return response
            finally:
                _SERVING.reset(token)
                router.reset()

        return httpx.MockTransport(handler)

    # -- the endpoint -----------------------------------------------------------------
    def respond(self, request: httpx.Request) -> httpx.Response:
        agent = request.headers.get(AGENT_HEADER)
        step: int | None = None
        try:
            body = json.loads(request.content)
        except ValueError:
            body = None
        try:
            messages = body.get("messages") if isinstance(body, dict) else None
            if agent is None:
                if not isinstance(messages, list):
                    raise MalformedRequest(
                        "body is not a chat completion request with 'messages', so no agent "
                        "can be told from it"
                    )
                agent = self.routes.agent_for(self.routes.key_of(request.headers), messages)
            state = self._state.get(agent)
            if state is None:
                known = ", ".join(sorted(self.scripts)) or "none"
                step = self._unscripted[agent] = self._unscripted.get(agent, 0) + 1
                raise UnknownAgent(
                    f"no script for agent {agent!r} (scripted agents: {known}); it asked for "
                    f"step {step}; request: {_describe(body)}",
                    agent=agent,
                    step=step,
                )
            step = state.cursor + 1
            script = self.scripts[agent]
            if not isinstance(messages, list):
                raise MalformedRequest(
                    f"agent {agent}, step {step}: body is not a chat completion request with "
                    "'messages'",
                    agent=agent,
                    step=step,
                )
            if state.cursor >= len(script):
                raise ScriptExhausted(
                    f"agent {agent} asked for step {step}, but its script has only "
                    f"{len(script)} step(s); add a step or find why the runtime asked again; "
                    f"request: {_describe(body)}",
                    agent=agent,
                    step=step,
                )
            turn = script[state.cursor]
            message = self._render(agent, step, state, turn, messages)
            state.cursor += 1
        except ScriptError as exc:
            self.errors.append(exc)
            self.requests.append(
                CapturedRequest(agent, step, request.content, tuple(request.headers.multi_items()))
            )
            return httpx.Response(
                400,
                json={
                    "error": {
                        "message": str(exc),
                        "type": "invalid_request_error",
                        "code": exc.code,
                    }
                },
            )
        self.requests.append(
            CapturedRequest(agent, step, request.content, tuple(request.headers.multi_items()))
        )
        self._completion_ids += 1
        head = {
            "id": f"chatcmpl-{self._completion_ids}",
            "created": int(time.time()),
            "model": body.get("model", self.model),
        }
        return _completion.reply(head, message, body, self.chunk)

    def _render(
        self, agent: str, step: int, state: _AgentState, turn: Turn, messages: list[Any]
    ) -> dict[str, Any]:
        results = {
            m.get("tool_call_id"): _result_text(m.get("content"))
            for m in messages
            if isinstance(m, dict) and m.get("role") == "tool"
        }

        def resolve(ref: _template.Ref) -> Any:
            where = f"agent {agent}, step {step}: {ref}"
            if ref.label not in state.calls:
                raise UnresolvedTemplate(
                    f"{where} names no earlier labelled call", agent=agent, step=step
                )
            call_id = state.issued[ref.label]
            if ref.field == "id":
                return call_id
            if ref.field == "args":
                try:
                    return _template.lookup(dict(state.calls[ref.label].args), ref.path)
                except LookupError as exc:
                    raise UnresolvedTemplate(f"{where}: {exc}", agent=agent, step=step) from None
            if call_id not in results:
                raise UnresolvedTemplate(
                    f"{where}: the request carries no tool result for {call_id}; the runtime "
                    "must send every tool result back to the model",
                    agent=agent,
                    step=step,
                )
            return results[call_id]

        try:
            content = _template.render(turn.say, resolve) if turn.say is not None else None
            # Non-mapping arguments pass through unrendered, for _arguments to refuse by name.
            rendered = [
                _template.render(dict(c.args) if isinstance(c.args, Mapping) else c.args, resolve)
                for c in turn.calls
            ]
        except _template.TemplateSyntaxError as exc:
            raise UnresolvedTemplate(
                f"agent {agent}, step {step}: {exc}", agent=agent, step=step
            ) from None
        message: dict[str, Any] = {"role": "assistant", "content": content}
        delegations: list[tuple[str, str]] = []
        if turn.calls:
            # Checked before any call id is issued, so a refused turn leaves no trace.
            spelled = [
                self._spell(agent, step, i, call.tool, args, delegations)
                for i, (call, args) in enumerate(zip(turn.calls, rendered, strict=True), 1)
            ]
            tool_calls = []
            for call, (tool, text) in zip(turn.calls, spelled, strict=True):
                self._call_ids += 1
                call_id = f"call_{self._call_ids}"
                if call.label is not None:
                    state.issued[call.label] = call_id
                    state.calls[call.label] = call
                tool_calls.append(
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": tool, "arguments": text},
                    }
                )
            message["tool_calls"] = tool_calls
        self.routes.issued(agent, message, delegations)
        return message

    def _spell(
        self,
        agent: str,
        step: int,
        index: int,
        tool: str,
        args: Any,
        delegations: list[tuple[str, str]],
    ) -> tuple[str, str]:
        """A scripted call as the runtime's model would send it: (tool name, argument
        text). A delegation is rewritten into the runtime's dialect and remembered, so its
        child's first request can be recognised by the prompt."""
        if tool != DELEGATION_TOOL or not isinstance(args, Mapping):
            return tool, _arguments(agent, step, index, tool, args)
        spelled = self.delegation.spell(args)
        if spelled is None:
            raise MalformedArguments(
                f"agent {agent}, step {step}, call {index} ({tool}): a delegation needs a "
                f"string name and prompt to be spelled as this runtime's {self.delegation.tool}",
                agent=agent,
                step=step,
            )
        if isinstance(args.get("name"), str) and isinstance(args.get("prompt"), str):
            delegations.append((args["name"], args["prompt"]))
        return self.delegation.tool, _arguments(agent, step, index, tool, spelled)

    # -- after the run ----------------------------------------------------------------
    def unconsumed(self) -> list[UnconsumedSteps]:
        """One error per agent whose script still has steps: a scenario that ends early
        must not pass silently."""
        out = []
        for agent, script in sorted(self.scripts.items()):
            cursor = self._state[agent].cursor
            if cursor < len(script):
                left = len(script) - cursor
                out.append(
                    UnconsumedSteps(
                        f"agent {agent}: {left} scripted step(s) never requested, starting at "
                        f"step {cursor + 1} ({_describe_turn(script[cursor])})",
                        agent=agent,
                        step=cursor + 1,
                    )
                )
        return out


def _arguments(agent: str, step: int, index: int, tool: str, args: Any) -> str:
    """A call's arguments as the JSON object text a model sends, or MalformedArguments."""
    where = f"agent {agent}, step {step}, call {index} ({tool})"
    if not isinstance(args, Mapping):
        raise MalformedArguments(
            f"{where}: arguments must be a mapping (a JSON object), got {type(args).__name__}",
            agent=agent,
            step=step,
        )
    try:
        # allow_nan=False: NaN and Infinity are not JSON, and a runtime's parser may refuse them.
        return json.dumps(dict(args), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise MalformedArguments(
            f"{where}: arguments are not JSON ({exc}); script strings, numbers, booleans, "
            "null, lists and mappings only",
            agent=agent,
            step=step,
        ) from None


def _result_text(content: Any) -> Any:
    # A runtime may send a tool result as content parts; a template wants its text.
    return message_text(content) if isinstance(content, list) else content


def _describe(body: Any) -> str:
    if not isinstance(body, dict) or not body.get("messages"):
        return "(no messages)"
    last = body["messages"][-1]
    if not isinstance(last, dict):
        return "(malformed last message)"
    content = last.get("content")
    text = content if isinstance(content, str) else json.dumps(content)
    if len(text) > 120:
        text = text[:117] + "..."
    return f"{len(body['messages'])} messages, last {last.get('role')}: {text!r}"


def _describe_turn(turn: Turn) -> str:
    if turn.calls:
        return "call " + ", ".join(c.tool for c in turn.calls)
    return f"say {turn.say!r}"
