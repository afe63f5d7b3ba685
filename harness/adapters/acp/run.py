"""One scenario on an ACP agent: one agent process, in a fresh folder, offline where Linux
allows (harness.adapters._offline), driven as an editor drives it: `initialize`, then per
phase a `session/new` for its root in the scenario's work dir, the mode the root needs, and
one `session/prompt`. The harness is the client (host.Host), through the official SDK's
connection.

A hang is decided by quiescence, as for the CLIs: the prompt not answered, no request in
flight at the fake, a question waiting on a human who never answers it (the client holds
it, or the agent never let it reach the client: `Agent.unasked`), and every agent still
going waits on that human or on a child that does (harness.adapters._quiescence). Never
by a timeout: the backstop, a no-progress watchdog, ends only a run that has shown no sign
of life (an update, a line on stderr, a request at the fake) for that long.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
from collections import deque
from collections.abc import Awaitable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from harness.adapters._calls import scripted_questions
from harness.adapters._quiescence import wait_for
from harness.adapters._watchdog import Watchdog
from harness.fake.dialect import ASK_TOOL, PLAN_TOOL

if TYPE_CHECKING:
    from harness.contract import RunOptions
    from harness.fake import ScriptedLLM
    from harness.fake.dialect import Dialect
    from harness.fake.serve import ServerThread
    from harness.scenario import Scenario
    from harness.scenario._model import Reply

POLL = 0.02  # seconds between looks at a run that has said nothing new
_NOTICE = re.compile(r"\[MODE_UPDATE\] \w+")  # Gemini CLI's word that a mode changed
LINE_LIMIT = 1 << 24  # an update may carry a whole file; the SDK's reader takes lines this long
T = TypeVar("T")


class Agent(Protocol):
    """What AcpRun asks of the agent under test (acp.adapter.AcpAdapter)."""

    @property
    def program(self) -> str: ...  # how errors name it
    @property
    def offline(self) -> bool: ...
    @property
    def dialect(self) -> Dialect: ...

    def argv(self, run: AcpRun) -> list[str]: ...
    def environment(self, run: AcpRun, home: Path, port: int) -> dict[str, str]: ...
    def capabilities(self) -> dict[str, Any]:
        """The client capabilities advertised in `initialize`, as JSON."""
        ...

    async def enter(self, run: AcpRun, conn: Any, session: Any, root: str) -> None:
        """Put the new `session` of `root` in the mode the scenario says (plan mode)."""
        ...

    def permission_reply(
        self,
        tool: str,
        given: dict[str, Any],
        questions: list[dict[str, Any]],
        answers: dict[str, Reply],
    ) -> tuple[bool, dict[str, Any]]:
        """(allowed, fields beside the outcome) answering a human tool's permission."""
        ...

    def unasked(self, run: AcpRun) -> dict[str, tuple[str, str]]:
        """The human tools' calls in progress that no client will ever see: call id ->
        (the question's id, what it waits on, the end of the wait-for graph)."""
        ...

    def failed(self, run: AcpRun, call_id: str, text: str) -> bool:
        """Whether a call the agent showed no client ended as an error."""
        ...

    def normalised(self, run: AcpRun, text: str) -> str:
        """`text` without what varies per run (session ids, timings)."""
        ...

    def call_id(self, run: AcpRun, shown: str) -> str:
        """The id the fake issued for a call the agent shows as `shown` (its toolCallId)."""
        ...


class Stopped(Exception):
    """The run cannot go on: `outcome` (hang, error) and why."""

    def __init__(self, outcome: str, why: str) -> None:
        super().__init__(why)
        self.outcome = outcome


class AcpRun:
    """One scenario on an ACP agent process."""

    def __init__(
        self,
        agent: Agent,
        scenario: Scenario,
        llm: ScriptedLLM,
        server: ServerThread,
        folder: Path,
        options: RunOptions,
    ) -> None:
        self.agent, self.scenario, self.llm, self.server = agent, scenario, llm, server
        self.folder = folder
        self.watchdog = Watchdog(options.backstop, agent.program, held=llm.holds.describe)
        self.roots: dict[str, str] = {}  # ACP session id -> the phase's root
        self.current: str | None = None  # the root being prompted
        self.updates: list[tuple[str, dict[str, Any]]] = []  # every session/update, in order
        self.tools: dict[str, dict[str, Any]] = {}  # the fake's call id -> its latest state
        self.said: dict[str, list[list[str]]] = {}  # session -> its messages' text chunks
        self._message: dict[str, Any] = {}  # session -> the messageId of its last chunk
        self._made: tuple[int, dict[str, tuple[str, str, dict[str, Any]]]] = (-1, {})
        self.asked: list[dict[str, Any]] = []
        self.held: dict[str, tuple[str, str]] = {}  # call id -> (asker, question) held
        self.hang: dict[str, Any] | None = None
        self.failure: str | None = None
        self.stderr: deque[str] = deque(maxlen=20)
        self.stderr_lines = 0
        self.scripted = scripted_questions(scenario)

    # -- what the agent says ------------------------------------------------------------
    def saw(self, doing: str) -> None:
        self.watchdog.saw(doing)

    def updated(self, session: str, update: dict[str, Any]) -> None:
        self.updates.append((session, update))
        kind = str(update.get("sessionUpdate"))
        self.saw(f"sending a session/update ({kind})")
        messages = self.said.setdefault(session, [])
        if kind in ("tool_call", "tool_call_update"):
            shown = self.agent.call_id(self, str(update.get("toolCallId")))
            call = self.tools.setdefault(shown, {"session": session})
            call.update({k: v for k, v in update.items() if k != "sessionUpdate"})
            if messages and messages[-1]:
                messages.append([])  # text after a call is a message of its own
        elif kind == "agent_message_chunk" and not _aside(update):
            content = update.get("content") or {}
            message = update.get("messageId")
            if not messages or (message and message != self._message.get(session)):
                messages.append([])  # a message of its own, however its chunks come
            self._message[session] = message
            if content.get("type") == "text":
                messages[-1].append(str(content.get("text", "")))

    def tool_of(self, call_id: str | None) -> str | None:
        """The scenario's name of the tool the fake issued `call_id` for."""
        made = self._issued().get(call_id or "")
        return self.agent.dialect.scenario_tool(made[1]) if made else None

    def arguments_of(self, call_id: str) -> dict[str, Any]:
        made = self._issued().get(call_id)
        return dict(made[2]) if made else {}

    def issued(self, call_id: str) -> tuple[str, str, dict[str, Any]] | None:
        """(the agent, the runtime's tool name, its arguments) of a call the fake issued."""
        return self._issued().get(call_id)

    def issued_calls(self) -> dict[str, tuple[str, str, dict[str, Any]]]:
        """Every call the fake issued: id -> (the agent, the runtime's tool, arguments)."""
        return self._issued()

    def _issued(self) -> dict[str, tuple[str, str, dict[str, Any]]]:
        """Every call the fake issued; read again only when it has replied again (a run is
        looked at every POLL)."""
        from harness.adapters._calls import issued

        replied = len(self.llm.replies)  # unbounded here: the adapter's fake keeps every one
        if self._made[0] != replied:
            self._made = (replied, issued(self.llm))
        return self._made[1]

    def waiting_call(self, agent: str) -> str | None:
        """The latest human tool call of `agent` that has no result yet."""
        for call_id, (owner, tool, _) in reversed(self._issued().items()):
            human = self.agent.dialect.scenario_tool(tool) in (ASK_TOOL, PLAN_TOOL)
            if owner == agent and human and call_id not in self.llm.results:
                return call_id
        return None

    # -- the run ------------------------------------------------------------------------
    def phases(self) -> tuple[str, str | None]:
        """Run every phase; (outcome, error)."""
        quiet = _Unserved()
        logging.getLogger().addFilter(quiet)
        try:
            asyncio.run(self._phases())
        except Stopped as stop:
            return stop.outcome, str(stop)
        finally:
            logging.getLogger().removeFilter(quiet)
        return "completed", None

    async def _phases(self) -> None:
        import acp
        from acp.schema import ClientCapabilities, Implementation

        from harness.adapters._offline import command

        work, home = self.folder / "work", self.folder / "home"
        work.mkdir(exist_ok=True)
        home.mkdir(exist_ok=True)
        port = int(self.server.base_url.rsplit(":", 1)[1].split("/")[0])
        argv = self.agent.argv(self)
        if self.agent.offline:
            argv = command(self.folder / "fake.sock", port, argv)
        env = self.agent.environment(self, home, port)
        process = await asyncio.create_subprocess_exec(
            *argv, cwd=work, env=env, stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            start_new_session=True, limit=LINE_LIMIT,
        )  # fmt: skip
        self.saw("starting its process")
        assert process.stdin is not None and process.stdout is not None
        drain = asyncio.create_task(self._drain(process.stderr))
        from harness.adapters.acp.host import Host

        # Host serves what a client advertising no file system or terminal is asked; the
        # SDK's Client protocol lists those methods too, and answers them unserved.
        host: Any = Host(self)
        conn = acp.connect_to_agent(host, process.stdin, process.stdout, use_unstable_protocol=True)
        try:
            capabilities = ClientCapabilities.model_validate(self.agent.capabilities())
            client = Implementation(name="keyless-harness", version="1")
            await self._until(process, conn.initialize(
                protocol_version=acp.PROTOCOL_VERSION, client_capabilities=capabilities,
                client_info=client), "initialize")  # fmt: skip
            for phase in self.scenario.phases:
                assert phase.agent is not None  # start phases only: the features say so
                await self._phase(process, conn, work, phase.agent, phase.prompt)
        finally:
            _stop(process)
            drain.cancel()
            with contextlib.suppress(Exception):
                await conn.close()
            await process.wait()
            # Closed on this loop: left to the garbage collector, the transport closes its
            # pipes after asyncio.run has closed the loop, and says so on stderr.
            transport = getattr(process, "_transport", None)
            if transport is not None:
                transport.close()

    async def _phase(self, process: Any, conn: Any, work: Path, root: str, prompt: str) -> None:
        import acp

        self.current = root
        session = await self._until(
            process, conn.new_session(cwd=str(work), mcp_servers=[]), "session/new"
        )
        self.roots[session.session_id] = root
        await self._until(process, self.agent.enter(self, conn, session, root), "its mode")
        answered = await self._until(
            process,
            conn.prompt(session_id=session.session_id, prompt=[acp.text_block(prompt)]),
            "session/prompt",
            prompting=True,
        )
        stop = str(answered.stop_reason)
        if stop != "end_turn":
            raise Stopped("error", f"{self.agent.program}'s prompt ended with {stop}")

    async def _until(
        self, process: Any, awaited: Awaitable[T], what: str, prompting: bool = False
    ) -> T:
        """`awaited`'s result, watching the run meanwhile: the process ending, the human
        end failing, a hang (while a prompt is out), the backstop."""
        from acp import RequestError

        task = asyncio.ensure_future(awaited)
        try:
            while True:
                done, _ = await asyncio.wait({task}, timeout=POLL)
                if done:
                    try:
                        return task.result()
                    except RequestError as exc:
                        raise Stopped("error", f"{self.agent.program} refused {what}: "
                                      f"{exc}") from None  # fmt: skip
                    except ConnectionError as exc:
                        raise Stopped("error", self._ended(process, what, exc)) from None
                self.watchdog.stderr(self.stderr_lines, self.stderr[-1] if self.stderr else "")
                self.watchdog.requests(self.server.received)
                if process.returncode is not None:
                    raise Stopped("error", self._ended(process, what, None))
                if self.failure is not None:
                    raise Stopped("error", self.failure)
                if prompting and (graph := self._stuck()):
                    self.hang = graph
                    raise Stopped("hang", "hang: nothing can run; " + "; ".join(graph["graph"]))
                if self.watchdog.expired():
                    raise Stopped("error", self.watchdog.report())
        finally:
            task.cancel()

    def _ended(self, process: Any, what: str, exc: BaseException | None) -> str:
        tail = " | ".join(list(self.stderr)[-3:]) or "nothing on stderr"
        status = process.returncode
        how = f"exited with status {status}" if status is not None else f"closed ({exc})"
        return f"{self.agent.program} {how} during {what} ({tail})"

    async def _drain(self, stream: Any) -> None:
        """Its stderr, read as it comes: a sign of life, and the last lines for errors."""
        while line := await stream.readline():
            self.stderr.append(line.decode("utf-8", "replace").rstrip("\n"))
            self.stderr_lines += 1

    def _stuck(self) -> dict[str, Any] | None:
        """The wait-for graph, if nothing can move."""
        unasked = self.agent.unasked(self)
        if not (self.held or unasked) or self.server.in_flight:
            return None
        answerer = f"the client's {self.scenario.world.answerer} answerer"
        held_by: dict[str, tuple[str, str]] = {
            asker: (question, answerer) for asker, question in self.held.values()
        }
        issued = self._issued()
        for call_id, (question, holder) in unasked.items():
            if call_id in issued:
                held_by[issued[call_id][0]] = (question, holder)
        return wait_for(self.scenario, self.llm.progress(), held_by)

    def in_progress(self, tool: str) -> dict[str, Mapping[str, Any]]:
        """The calls of the scenario's `tool` that the agent shows as still running."""
        return {
            call_id: state
            for call_id, state in self.tools.items()
            if state.get("status") in ("pending", "in_progress") and self.tool_of(call_id) == tool
        }


class _Unserved(logging.Filter):
    """The SDK logs each notification no client serves (an agent's own, such as Qwen
    Code's `qwen/notify/session/mode-update`) as an error with its traceback; the agent
    goes on, and a client may leave them unserved, so they are not shown."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Unhandled error while handling notification")


def _aside(update: Mapping[str, Any]) -> bool:
    """A chunk that is no words of the session's root: a child's, linked to the call that
    started it (Qwen Code's `parentToolCallId`, Claude Code's `parentToolUseId`), or the
    agent's own notice (Claude Code's `informational`, Gemini CLI's `[MODE_UPDATE] MODE`)."""
    content = update.get("content")
    if isinstance(content, dict) and _NOTICE.fullmatch(str(content.get("text", ""))):
        return True
    meta = update.get("_meta")
    if not isinstance(meta, dict):
        return False
    claude = meta.get("claudeCode")
    claude = claude if isinstance(claude, dict) else {}
    return bool(
        meta.get("parentToolCallId")
        or claude.get("parentToolUseId")
        or claude.get("kind") == "informational"
    )


def _stop(process: Any) -> None:
    """End the agent's process group (the offline bridge and the agent alike)."""
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, 9)
