"""`ScriptedLLM`: one script per agent, replayed on one base URL as an OpenAI-compatible
Chat Completions endpoint, an Anthropic Messages one and an OpenAI Responses one.

Parent and child share one endpoint. The fake answers each request with its agent's next
scripted turn; which agent that is comes from the `X-Harness-Agent` header when the runtime
sends it, and otherwise from the conversation (harness.fake.routing has the rules). Every
way a script can be misused has its own exception; the fake records it, answers HTTP 400
with the wire's error body (OpenAI's or Anthropic's), and never wraps around or waits.

`complete()` is the whole fake, before any transport: the request checks
(harness.fake.request), routing, the reply (harness.fake.reply), the record of what was
sent (harness.fake.record) and the wire format (harness.fake.endpoints: the request's path
names its wire, whose module translates it at the edge into the conversation the checks
and routing read, and answers in its own shape). The in-process transport
(harness.fake.transport) and `harness serve` (harness.fake.asgi) both call it.

    llm = ScriptedLLM({"parent": [Turn.tool("subagent", {...}), Turn.text("done")]})
    client = httpx.AsyncClient(transport=llm.transport())
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, MutableSequence, Sequence
from contextlib import AbstractContextManager
from typing import Any

import httpx

from harness.contract import AGENT_HEADER, CapturedRequest
from harness.fake.dialect import REFERENCE_DELEGATION, Delegation, Dialect
from harness.fake.endpoints import endpoint_for
from harness.fake.hold import Holds
from harness.fake.record import PrefixLog, Record
from harness.fake.reply import AgentState, Finished, finished, follow_up, render
from harness.fake.request import (
    check_credentials,
    check_declared,
    check_request,
    checked_messages,
    declared_name,
    describe,
    describe_turn,
    parsed,
)
from harness.fake.routing import Routes, default_roots, message_text
from harness.fake.script import ScriptError, ScriptExhausted, UnconsumedSteps, UnknownAgent
from harness.fake.transport import (
    BASE_URL,
    Handler,
    httpx2_transport,
    response,
    respx_router,
)
from harness.fake.wires import Answer, Endpoint
from harness.scenario import Turn

# Awaited with (agent, step) before that step is served: a moment inside a run.
BeforeTurn = Callable[[str, int], Awaitable[None]]


class ScriptedLLM:
    """One script per agent, served on every wire of harness.fake.endpoints.

    `roots` are the agents that root phases start, in order (default: every agent no
    scripted delegation names); `session_header` is a header the runtime sends that keys a
    conversation (the two matter only to runtimes that do not send `X-Harness-Agent`);
    `dialect` is how the runtime spells the scenarios' tools (harness.fake.dialect);
    `delegation`, the spelling of `subagent {name, prompt}` alone, is its shorthand.

    `strict` refuses what the real API refuses beyond the shape and conversation checks
    that always apply: a request without a `model`, and a scripted tool call the request
    declared no tool for (harness.fake.request). `check_history` refuses a request that
    does not carry on the agent's conversation as served, the model's own replies
    included: no real API checks that (it keeps no state), but a runtime that garbles its
    history is wrong all the same, and a scripted model would not notice otherwise. `keep`
    bounds the captured requests to the last N (None keeps every one); `prefixes` sums up
    every request's model-visible prefix all the same. `error_bodies=False` keeps no body
    of a refused request, for a server, where such requests are what a flood is made of.
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
        dialect: Dialect | None = None,
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
        self.dialect = Dialect.of(delegation) if dialect is None else dialect
        self.routes = Routes(
            default_roots(self.scripts) if roots is None else roots, session_header
        )
        self.strict = strict
        self.check_history = check_history
        self.created = created
        self.record = Record(keep)
        self.error_bodies = error_bodies
        self.errors: list[ScriptError] = []
        self._state = {name: AgentState() for name in self.scripts}
        self._finished = Finished()
        self._sent: dict[str, dict[str, Any]] = {}  # each tool call sent, by id (transcript)
        self._call_ids = 0
        self._completion_ids = 0
        self._unscripted: dict[str, int] = {}  # requests per agent nobody scripted
        # Requests beside the agents' turns, in order: the side requests the dialect
        # declares, answered, and (behind a server) requests to no model endpoint at all.
        self.side: list[str] = []
        # The replies sent (the last `keep`), in order, with the agent each went to: what
        # each model said, for an adapter whose runtime shows no one a child's words.
        self.replies: deque[tuple[str, dict[str, Any]]] = deque(maxlen=keep)
        # Each tool call's result as the model that made it was shown it (call id -> text).
        self.results: dict[str, str] = {}
        self.before_turn: BeforeTurn | None = None
        self.holds = Holds(self.scripts)

    @property
    def requests(self) -> MutableSequence[CapturedRequest]:
        """The captured requests, the last `keep` of them."""
        return self.record.requests

    @property
    def served(self) -> int:
        """Requests answered, kept or not."""
        return self.record.served

    @property
    def prefixes(self) -> PrefixLog:
        """The model-visible prefix of every request answered, kept or not."""
        return self.record.prefixes

    def conversations(self) -> dict[str, str]:
        """Conversation key (the session header's value) -> the agent it was assigned: how
        a runtime's own ids map back to the scenario's agent names."""
        return dict(self.routes.keys)

    def caller(self, call_id: str) -> str | None:
        """The agent whose reply made the tool call `call_id` (an id this fake issued)."""
        return self.routes.owner(call_id)

    @property
    def delegation(self) -> Delegation:
        """The runtime's spelling of `subagent`, from its dialect."""
        return self.dialect.delegation

    # -- wiring -----------------------------------------------------------------------
    def transport(self, base_url: str = BASE_URL) -> httpx.MockTransport:
        """An httpx transport serving this script at `base_url`, for an AsyncClient."""
        return httpx.MockTransport(Handler(self, base_url).handle)

    def httpx2_transport(self, base_url: str = BASE_URL) -> Any:
        """The same as an httpx2 transport, for an SDK on httpx2 (openai 3.x, anthropic 1.x)."""
        return httpx2_transport(Handler(self, base_url))

    def router(self, base_url: str = BASE_URL) -> Any:
        """A respx router that routes to this script's handler and refuses anything it
        does not mock."""
        return respx_router(Handler(self, base_url), base_url)

    def intercept(self, base_url: str = BASE_URL) -> AbstractContextManager[None]:
        """While open, every httpx and httpx2 client in this process that uses its default
        transport is served: requests to `base_url`'s endpoints by this script, loopback as
        usual, anything else refused at once (harness.fake.intercept.OffLoopbackRequest).
        For a runtime that builds its own client, as the openai and anthropic SDKs do."""
        from harness.fake.intercept import intercepting

        return intercepting(Handler(self, base_url), base_url)

    @property
    def pauses(self) -> bool:
        """Whether a request may wait before it is answered: a `before_turn` hook, or a
        step held until another agent ends (harness.fake.hold)."""
        return self.before_turn is not None or bool(self.holds)

    async def before(self, request: httpx.Request) -> None:
        """The moment before an agent's scripted step is served: a held step waits for
        its agent, then `before_turn` runs. On the caller's event loop in-process, on the
        server's own behind `ServerThread` (so a hook there shares no loop with the
        runtime, only the moment)."""
        if not self.pauses:
            return
        turn = self._next_step(request)
        if turn is not None:
            await self.holds.wait(*turn)
            if self.before_turn is not None:
                await self.before_turn(*turn)

    def hold(self, request: httpx.Request) -> None:
        """`before` for a synchronous client: a held step waits in the caller's thread
        (there is no event loop to run `before_turn` on)."""
        if self.holds:
            turn = self._next_step(request)
            if turn is not None:
                self.holds.wait_sync(*turn)

    def _next_step(self, request: httpx.Request) -> tuple[str, int] | None:
        """(agent, the step it asks for), or None: no agent's turn, or a request
        complete() will refuse (and report, once)."""
        try:
            named = request.headers.get(AGENT_HEADER)
            body = self._body(request, endpoint_for(request.url.path), named)
            if self.dialect.side and self.dialect.side_request(body) is not None:
                return None  # no agent's turn
            agent = self.routes.place(request, body)
        except ScriptError:
            return None
        state = self._state.get(agent)
        if state is None or state.following:  # a delegation's second call: no step
            return None
        return agent, state.cursor + 1

    # -- the endpoint -----------------------------------------------------------------
    def respond(self, request: httpx.Request) -> httpx.Response:
        """The HTTP response to one request, whatever its URL."""
        return response(self.complete(request), request)

    def complete(self, request: httpx.Request) -> Answer:
        """The answer to one request, before any transport: the step it consumes, or the
        error that consumed none."""
        self.record.served += 1
        endpoint = endpoint_for(request.url.path)
        body: Any = None  # a request that is none of the wire's adds no prefix
        named = request.headers.get(AGENT_HEADER)  # read once: each lookup walks the headers
        try:
            check_credentials(request.headers, named, request.url.query)
            body = self._body(request, endpoint, named)
            side = self.dialect.side_request(body) if self.dialect.side else None
            if side is not None:  # no agent's turn: answered, and no script moves
                agent, step, message = None, None, {"role": "assistant", "content": side.reply}
                self.side.append(f"{side.about} (answered; no script consumed)")
            else:
                agent, step, message = self._reply(request, body, endpoint.call_prefix, named)
        except ScriptError as exc:
            self.errors.append(exc)
            self.record.add(request, exc.agent, exc.step, body, kept=self.error_bodies)
            return endpoint.error(exc.status, str(exc), exc.code, exc.param)
        self.record.add(request, agent, step, body)
        self._completion_ids += 1
        return endpoint.reply(
            body,
            message,
            serial=self._completion_ids,
            created=int(time.time()) if self.created is None else self.created,
            model=self.model,
            chunk=self.chunk,
        )

    def _body(self, request: httpx.Request, endpoint: Endpoint, agent: str | None) -> Any:
        """The request as the checks and routing read it: parsed, and translated from its
        wire into that conversation (MalformedRequest when it cannot be). `agent`: the
        agent header's value, if any."""
        body = endpoint.conversation(parsed(request.content), strict=self.strict, agent=agent)
        transcript = self.dialect.transcript
        if (
            transcript is not None
            and isinstance(body, dict)
            and isinstance(body.get("messages"), list)
        ):
            body = {**body, "messages": transcript.recall(body["messages"], self._sent)}
        return body

    def _reply(
        self, request: httpx.Request, body: Any, call_prefix: str, named: str | None
    ) -> tuple[str, int, dict[str, Any]]:
        """(agent, step, the assistant message) for a request the script can answer; the
        ScriptError that says why not otherwise, naming the agent and step it got to."""
        check_request(body, strict=self.strict, agent=named)
        agent = self.routes.place(request, body)
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
        history = state.history() if self.check_history and state.served else None
        messages = checked_messages(agent, step, body, history)
        for seen in messages:
            if isinstance(seen, dict) and seen.get("role") == "tool":
                self.results[str(seen.get("tool_call_id"))] = message_text(seen.get("content"))

        def next_call_id() -> str:
            self._call_ids += 1  # one counter, whatever the wire spells it as
            return f"{call_prefix}{self._call_ids}"

        if state.following:  # the second call of a delegation in two (the dialect's `then`)
            step = state.cursor  # the delegation's step, served again in its second call
            message = follow_up(agent, step, state, messages, self.dialect, next_call_id)
            return agent, step, self._served(agent, step, body, messages, message, [])
        if state.cursor >= len(script):
            raise ScriptExhausted(
                f"agent {agent} asked for step {step}, but its script has only "
                f"{len(script)} step(s); add a step or find why the runtime asked again; "
                f"request: {describe(body)}",
                agent=agent,
                step=step,
            )
        message, delegations = render(
            agent, step, state, script[state.cursor], messages, self.dialect, next_call_id
        )
        if step == len(script) and self.dialect.finish is not None:
            declared = {declared_name(t) for t in body.get("tools") or ()}
            message = finished(agent, step, message, declared, self.dialect, next_call_id)
        return agent, step, self._served(agent, step, body, messages, message, delegations)

    def _served(
        self,
        agent: str,
        step: int,
        body: Any,
        messages: list[Any],
        message: dict[str, Any],
        delegations: list[tuple[str, str]],
    ) -> dict[str, Any]:
        """`message`, checked and recorded as the reply `agent` is about to be sent: a new
        step moves its script on; a delegation's second call (`step` already served) not."""
        if self.strict:
            check_declared(agent, step, message, body)
        # Only a reply that will be sent may open delegations for routing.
        self.routes.issued(agent, message, delegations)
        self.replies.append((agent, message))
        for call in message.get("tool_calls") or ():
            self._sent[str(call.get("id"))] = call
        state = self._state[agent]
        state.cursor = max(state.cursor, step)
        ended = state.cursor == len(self.scripts[agent]) and not state.following
        if self.check_history:
            said = [m for m in messages if not (isinstance(m, dict) and m.get("role") == "system")]
            state.served = [*said, message]
            if ended:
                self._finished.add(state)
        if ended and self.holds:
            self.holds.ended(agent)
        return message

    def progress(self) -> dict[str, int]:
        """Steps served so far, per scripted agent: where each conversation has got to,
        for an adapter that decides whether anything can still move."""
        return {name: state.cursor for name, state in self._state.items()}

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
