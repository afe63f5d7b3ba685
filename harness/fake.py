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

import collections
import contextvars
import functools
import json
import time
from collections.abc import Awaitable, Callable, Mapping, MutableSequence, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from harness import _completion
from harness._completion import Completion
from harness._conversation import continuation_problem, conversation_problem
from harness._prefix import PrefixLog
from harness._request import describe, describe_turn, parsed, request_problem, undeclared
from harness._routing import (
    REFERENCE_DELEGATION,
    Delegation,
    Routes,
    default_roots,
)
from harness._script import (
    AmbiguousDelegation,
    Call,
    InvalidConversation,
    MalformedArguments,
    MalformedRequest,
    ScriptError,
    ScriptExhausted,
    Turn,
    UnconsumedSteps,
    UndeclaredTool,
    UnknownAgent,
    UnresolvedTemplate,
    UnroutableRequest,
)
from harness._turns import AgentState, render
from harness.runtime.llm import AGENT_HEADER

BASE_URL = "http://fake-llm.invalid/v1"

__all__ = [
    "BASE_URL",
    "AmbiguousDelegation",
    "Call",
    "CapturedRequest",
    "Delegation",
    "InvalidConversation",
    "MalformedArguments",
    "MalformedRequest",
    "ScriptError",
    "ScriptExhausted",
    "ScriptedLLM",
    "Turn",
    "UnconsumedSteps",
    "UndeclaredTool",
    "UnknownAgent",
    "UnresolvedTemplate",
    "UnroutableRequest",
]


_SERVING: contextvars.ContextVar[ScriptedLLM] = contextvars.ContextVar("harness_fake_serving")
# Finished agents whose served histories stay as they are; older ones are compressed.
KEEP_FINISHED = 32
_PLACED = "harness.agent"  # request extension: the agent routing decided on, or its error
# Awaited with (agent, step) before that step is served: a moment inside a run.
BeforeTurn = Callable[[str, int], Awaitable[None]]


@functools.cache
def _shared_router(base_url: str) -> Any:
    import respx

    class FakeRoute(respx.Route):
        """The one route, resolved straight to the fake serving now. A side effect would
        make respx inspect its signature and copy its response on every request; what
        this route calls and returns is known when it is built."""

        def resolve(self, request: httpx.Request, **kwargs: Any) -> httpx.Response:
            return _SERVING.get().respond(request)

    router = respx.Router(base_url=base_url, assert_all_mocked=True, assert_all_called=False)
    router.add(FakeRoute(method="POST", path="/chat/completions"))
    return router


@dataclass(frozen=True)
class CapturedRequest:
    agent: str | None
    step: int | None
    raw: bytes  # the exact bytes sent, for byte-level prefix comparisons
    headers: tuple[tuple[str, str], ...] = ()  # as sent, so tests can prove no key travels

    @property
    def body(self) -> Any:
        """The parsed request (None if it was not JSON), parsed on each access and not
        kept: the raw bytes are a third of what the parsed body would be."""
        try:
            return json.loads(self.raw)
        except ValueError:
            return None


class ScriptedLLM:
    """One script per agent, served as a Chat Completions endpoint.

    `roots` are the agents that root phases start, in order (default: every agent no
    scripted delegation names); `session_header` is a header the runtime sends that keys a
    conversation (the two matter only to runtimes that do not send `X-Harness-Agent`);
    `delegation` is the runtime's spelling of `subagent {name, prompt}`.

    `strict` refuses what the real API refuses beyond the shape and conversation checks
    that always apply: a request without a `model`, and a scripted tool call the request
    declared no tool for (harness._request). `check_history` refuses a request that does
    not carry on the agent's conversation as served, the model's own replies included: no
    real API checks that (it keeps no state), but a runtime that garbles its history is
    wrong all the same, and a scripted model would not notice otherwise. `keep` bounds the
    captured requests to the last N (None keeps every one); `prefixes` sums up every
    request's model-visible prefix all the same. `error_bodies=False` keeps no body of a
    refused request, for a server, where such requests are what a flood is made of.
    `created` fixes the completions' `created` time (default: the clock at each reply).
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
        strict: bool = False,
        check_history: bool = False,
        keep: int | None = None,
        error_bodies: bool = True,
        created: int | None = None,
    ):
        self.scripts = {name: tuple(turns) for name, turns in scripts.items()}
        self.model = model
        # Streaming delta size in characters: None sends each text or argument string whole.
        self.chunk = chunk
        self.delegation = delegation
        self.routes = Routes(
            default_roots(self.scripts) if roots is None else roots, session_header
        )
        self.strict = strict
        self.check_history = check_history
        self.created = created
        self.requests: MutableSequence[CapturedRequest] = (
            [] if keep is None else collections.deque(maxlen=keep)
        )
        self.served = 0  # requests answered, kept or not
        self.prefixes = PrefixLog()  # of every request answered, kept or not
        self.error_bodies = error_bodies
        self.errors: list[ScriptError] = []
        self._state = {name: AgentState() for name in self.scripts}
        self._done: collections.deque[AgentState] = collections.deque()
        self._call_ids = 0
        self._completion_ids = 0
        self._unscripted: dict[str, int] = {}  # requests per agent nobody scripted
        self.before_turn: BeforeTurn | None = None

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
                if self.before_turn is not None:
                    await self._before_turn(request, self.before_turn)
                response: httpx.Response = await router.async_handler(request)
                return response
            finally:
                _SERVING.reset(token)
                router.reset()

        return httpx.MockTransport(handler)

    async def _before_turn(self, request: httpx.Request, hook: BeforeTurn) -> None:
        """Give the hook its moment before an agent's scripted step is served (in-process
        transports only: a loopback server has no event loop to share)."""
        try:
            agent = self._agent_of(request, parsed(request.content))
        except ScriptError:
            return  # respond() reports it, once
        state = self._state.get(agent)
        if state is not None:
            await hook(agent, state.cursor + 1)

    def _agent_of(self, request: httpx.Request, body: Any) -> str:
        """The request's agent. Routing by content assigns keys and claims delegations, so
        it is decided once per request and kept on it."""
        placed = request.extensions.get(_PLACED)
        if placed is None:
            try:
                placed = self._route(request, body)
            except ScriptError as exc:
                placed = exc
            request.extensions[_PLACED] = placed
        if isinstance(placed, ScriptError):
            raise placed
        return str(placed)

    def _route(self, request: httpx.Request, body: Any) -> str:
        agent = request.headers.get(AGENT_HEADER)
        if agent is not None:
            return str(agent)
        messages = body.get("messages") if isinstance(body, dict) else None
        if not isinstance(messages, list):
            raise MalformedRequest(
                "body is not a chat completion request with 'messages', so no agent can be "
                "told from it"
            )
        return self.routes.agent_for(self.routes.key_of(request.headers), messages)

    # -- the endpoint -----------------------------------------------------------------
    def respond(self, request: httpx.Request) -> httpx.Response:
        return self.complete(request).response(request)

    def complete(self, request: httpx.Request) -> Completion:
        """The answer to one request, before any transport: the step it consumes, or the
        error that consumed none."""
        agent = request.headers.get(AGENT_HEADER)
        step: int | None = None
        body = parsed(request.content)
        self.served += 1
        try:
            problem = request_problem(body, strict=self.strict)
            if problem is not None:
                param, text = problem
                raise MalformedRequest(text, agent=agent, step=None, param=param)
            messages = body.get("messages") if isinstance(body, dict) else None
            agent = self._agent_of(request, body)
            state = self._state.get(agent)
            if state is None:
                known = ", ".join(sorted(self.scripts)) or "none"
                step = self._unscripted[agent] = self._unscripted.get(agent, 0) + 1
                raise UnknownAgent(
                    f"no script for agent {agent!r} (scripted agents: {known}); it asked for "
                    f"step {step}; request: {describe(body)}",
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
                    param="messages",
                )
            wrong = conversation_problem(messages)
            if wrong is not None:
                raise InvalidConversation(
                    f"agent {agent}, step {step}: {wrong}", agent=agent, step=step, param="messages"
                )
            if self.check_history and state.served:
                broken = continuation_problem(state.history(), messages)
                if broken is not None:
                    raise InvalidConversation(
                        f"agent {agent}, step {step}: {broken}", agent=agent, step=step,
                        param="messages",
                    )  # fmt: skip
            if state.cursor >= len(script):
                raise ScriptExhausted(
                    f"agent {agent} asked for step {step}, but its script has only "
                    f"{len(script)} step(s); add a step or find why the runtime asked again; "
                    f"request: {describe(body)}",
                    agent=agent,
                    step=step,
                )
            turn = script[state.cursor]
            message = self._render(agent, step, state, turn, body)
            state.cursor += 1
            if self.check_history:
                said = [
                    m for m in messages if not (isinstance(m, dict) and m.get("role") == "system")
                ]
                state.served = [*said, message]
                if state.cursor == len(script):
                    self._finished(state)
        except ScriptError as exc:
            self.errors.append(exc)
            self._capture(request, agent, step, body, kept=self.error_bodies)
            return _completion.error(400, str(exc), exc.code, exc.param)
        self._capture(request, agent, step, body)
        self._completion_ids += 1
        head = {
            "id": f"chatcmpl-{self._completion_ids}",
            "created": int(time.time()) if self.created is None else self.created,
            "model": body.get("model", self.model),
        }
        return _completion.reply(head, message, body, self.chunk)

    def _finished(self, state: AgentState) -> None:
        # The last few finished agents keep their histories as served; older ones are
        # compressed, which a thousand-agent tree needs and a small scenario need not pay.
        self._done.append(state)
        if len(self._done) > KEEP_FINISHED:
            self._done.popleft().finish()

    def _capture(
        self,
        request: httpx.Request,
        agent: str | None,
        step: int | None,
        body: Any,
        kept: bool = True,
    ) -> None:
        self.prefixes.add(agent, body)
        raw = request.content if kept else b""
        self.requests.append(
            CapturedRequest(agent, step, raw, tuple(request.headers.multi_items()))
        )

    def _render(
        self, agent: str, step: int, state: AgentState, turn: Turn, body: dict[str, Any]
    ) -> dict[str, Any]:
        message, delegations = render(
            agent, step, state, turn, body["messages"], self.delegation, self._next_call_id
        )
        missing = undeclared(message, body) if self.strict else []
        if missing:
            declared = ", ".join(
                sorted(str(t["function"]["name"]) for t in body.get("tools") or ())
            )
            raise UndeclaredTool(
                f"agent {agent}, step {step}: the script calls {', '.join(missing)}, but the "
                f"request declared {'only ' + declared if declared else 'no tools'}; a real "
                "model can only call declared tools, so the runtime and the script disagree",
                agent=agent,
                step=step,
                param="tools",
            )
        # Only a reply that will be sent may open delegations for routing.
        self.routes.issued(agent, message, delegations)
        return message

    def _next_call_id(self) -> str:
        self._call_ids += 1
        return f"call_{self._call_ids}"

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
                        f"step {cursor + 1} ({describe_turn(script[cursor])})",
                        agent=agent,
                        step=cursor + 1,
                    )
                )
        return out
