"""One scenario on a foreign CLI that writes JSON events on stdout (Claude Code, Qwen Code,
opencode, Codex): its phases in order, one CLI process each, in a fresh folder, offline
where Linux allows (harness.adapters._offline); what the CLI writes read as it comes, by
the CLI's own `Reader`; and a hang decided by quiescence: a question waits on a human who
will never answer it (the human end holds it, or the CLI never let it reach the human end:
`Cli.unasked`), no request is in flight at the fake, and every agent still going waits on
the human or on a child that does (`wait_for`). Never by a timeout: the backstop, a
no-progress watchdog (harness.adapters._watchdog), ends only a run that has shown no sign
of life for that long, as an error that says what it was last seen doing and that nothing
hung.

What differs per CLI is its `Cli`: the command, the environment (built from nothing), its
reader, the first lines on stdin if it takes any, and its control channel if it has one.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import threading
import time
from collections import deque
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from harness.adapters._calls import Call, scripted_questions
from harness.adapters._calls import offered as offered_to
from harness.adapters._quiescence import wait_for
from harness.adapters._watchdog import Watchdog
from harness.contract import RunOptions

if TYPE_CHECKING:
    from harness.fake import ScriptedLLM
    from harness.fake.serve import ServerThread
    from harness.scenario import Scenario

POLL = 0.02  # seconds between looks at a phase that has said nothing new
# A scheduled answer on the control channel: (when, request id, reply).
Due = tuple[float, str, dict[str, Any]]


class Reader(Protocol):
    """What a CLI wrote, read as it arrives: each event of its stdout (`read`), then what
    it keeps on disk under the scenario's folder (`finish`), in the scenario's names."""

    # The files `finish` reads, as globs under the scenario's folder: what a recording of a
    # run keeps beside its events (tests/clis/record.py).
    kept: ClassVar[tuple[str, ...]]
    root: str  # this phase's root
    roots: list[str]  # each phase's, in order
    calls: dict[str, Call]  # call id -> the call (who made it: a question's asker)
    tool_errors: list[dict[str, Any]]
    handoffs: list[dict[str, Any]]
    final: dict[str, str]
    # The phase's last event, once written: {"is_error": bool, "result": text, ...}.
    result: dict[str, Any] | None
    resulted: set[str]  # the calls whose result it has read
    # What each agent said and was told, in the reference's durable-log terms, numbered
    # (`seq`) in the order read and tagged with the `agent`: `harness repro`'s transcript.
    transcript: list[dict[str, Any]]

    def read(self, event: dict[str, Any]) -> None: ...
    def finish(self, folder: Path) -> None: ...
    def normalised(self, text: str) -> str: ...


class Cli(Protocol):
    """What CliRun asks of the CLI under test."""

    @property
    def program(self) -> str: ...  # how errors name it ("claude")
    @property
    def offline(self) -> bool: ...

    def reader(self, delegation: str) -> Reader: ...  # `delegation`: its subagent tool
    def argv(self, run: CliRun, root: str, prompt: str) -> list[str]: ...
    def environment(self, run: CliRun, home: Path, port: int) -> dict[str, str]: ...
    def opening(self, run: CliRun, prompt: str) -> list[dict[str, Any]]:
        """Its first stdin lines; none: the prompt is in its argv, and stdin is closed."""
        ...

    def control(
        self, run: CliRun, process: subprocess.Popen[str], event: dict[str, Any]
    ) -> list[Due]: ...
    def override_header(self, run: CliRun, child: str, session: Mapping[str, Any]) -> str | None:
        """Write a child's header override where the CLI records it; why not, if it cannot."""
        ...

    def unasked(self, run: CliRun) -> dict[str, tuple[str, str]]:
        """The human tools' calls that wait on a human who can never see them: call id ->
        (the question's id, what it waits on, the end of the wait-for graph)."""
        ...


class CliRun:
    """One scenario on a CLI that writes stream-json: its phases in order, one process
    each, what the CLI wrote, and whether the run can still move. What differs per CLI
    (its command, its environment, its control channel) is the `Cli`'s."""

    def __init__(
        self,
        cli: Cli,
        scenario: Scenario,
        llm: ScriptedLLM,
        server: ServerThread,
        folder: Path,
        options: RunOptions,
    ) -> None:
        self.cli, self.scenario, self.llm, self.server = cli, scenario, llm, server
        self.folder = folder
        # Counted from the scenario's start, after the install and the adapter's opening:
        # neither is this scenario's doing.
        self.watchdog = Watchdog(options.backstop, cli.program, held=llm.holds.describe)
        self.stream = cli.reader(llm.dialect.delegation.tool)
        self.asked: list[dict[str, Any]] = []
        self.held: dict[str, str] = {}  # tool_use id -> the question the human holds
        self.hang: dict[str, Any] | None = None
        self.failure: str | None = None  # the human end could not do as the scenario says
        # Every scripted question: Claude's questions carry no id (question_back).
        self.scripted = scripted_questions(scenario)

    async def _before(self, agent: str, step: int) -> None:
        """The moment before `agent`'s step is served: a child's header override is written
        into the CLI's record of it before its first step (so before any call of its is
        decided), as the reference's store writes it into the child's session header."""
        session = self.scenario.agents[agent].session
        if step == 1 and session:
            why = self.cli.override_header(self, agent, session)
            if why is not None and self.failure is None:
                self.failure = f"the header override of {agent} could not be written: {why}"

    def phases(self) -> dict[str, Any]:
        outcome, error = "completed", None
        self.llm.before_turn = self._before
        for phase in self.scenario.phases:
            assert phase.agent is not None  # start phases only: the features say so
            outcome, error = self._phase(phase.agent, phase.prompt)
            if outcome != "completed":
                break
        self.stream.finish(self.folder)
        for call in self.asked:
            for question in call["questions"]:
                if isinstance(question.get("question"), str):
                    question["question"] = self.stream.normalised(question["question"])
        return {
            "outcome": outcome, "error": error, "answerer_calls": len(self.asked),
            "asked": self.asked, "direct": [], "tool_errors": self.stream.tool_errors,
            "handoffs": self.stream.handoffs, "final": self.stream.final, "plan_mode": {},
        }  # fmt: skip

    # -- one phase: one CLI process ------------------------------------------------------
    def _phase(self, root: str, prompt: str) -> tuple[str, str | None]:
        self.stream.root = root
        self.stream.roots.append(root)
        work, home = self.folder / "work", self.folder / "home"
        work.mkdir(exist_ok=True)
        home.mkdir(exist_ok=True)
        port = int(self.server.base_url.rsplit(":", 1)[1].split("/")[0])
        argv = self.cli.argv(self, root, prompt)
        if self.cli.offline:
            from harness.adapters._offline import command

            argv = command(self.folder / "fake.sock", port, argv)
        process = subprocess.Popen(
            argv, cwd=work, env=self.cli.environment(self, home, port), stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8",
            errors="replace", bufsize=1, start_new_session=True,
        )  # fmt: skip
        self.watchdog.saw(f"starting its process for phase {len(self.stream.roots)} ({root})")
        lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=_pump, args=(process.stdout, lines), daemon=True).start()
        stderr = _Tail(process.stderr)
        try:
            opening = self.cli.opening(self, prompt)
            for message in opening:
                self.send(process, message)
            if not opening and process.stdin is not None:  # its prompt is in its argv
                process.stdin.close()
            return self._follow(process, lines, stderr)
        finally:
            _stop(process)

    def _follow(
        self,
        process: subprocess.Popen[str],
        lines: queue.Queue[str | None],
        stderr: _Tail,
    ) -> tuple[str, str | None]:
        noise: list[str] = []  # stdout lines that are no stream-json event
        due: list[Due] = []  # scripted answers waiting to go
        while True:
            try:
                line = lines.get(timeout=POLL)
            except queue.Empty:
                line = ""
            if line is None:  # its output ended
                code = process.wait()
                if self.stream.result is not None and code == 0:
                    return "completed", None
                tail = " | ".join(stderr.ended()[-3:]) or "nothing on stderr"
                tail += f"; its stdout also had: {' | '.join(noise[-3:])}" if noise else ""
                return (
                    "error",
                    f"{self.cli.program} exited with status {code} before its result ({tail})",
                )
            event = _event(line) if line.strip() else None
            if line.strip() and event is None:
                noise.append(line.strip()[:200])  # not stream-json: kept, to be shown
            if line:
                kind = event.get("type") if event is not None else "a line that is no event"
                self.watchdog.saw(f"writing on its stdout ({kind})")
            if event is not None:
                if event.get("type") == "control_request":
                    due += self.cli.control(self, process, event)
                else:
                    before = self.stream.result
                    self.stream.read(event)
                    ended = self.stream.result
                    if ended is not None and ended is not before:
                        if ended.get("is_error"):
                            why = ended.get("result") or ended.get("error")
                            return "error", f"{self.cli.program}'s result is an error: {why}"
                        if process.stdin is not None:
                            process.stdin.close()
            now = time.monotonic()
            for entry in [d for d in due if d[0] <= now]:
                due.remove(entry)
                self.answer(process, entry[1], entry[2])
                self.watchdog.saw("being answered by the human end")
            self._progress(stderr)
            if self.failure is not None:
                return "error", self.failure
            unasked = self.cli.unasked(self)
            if (self.held or unasked) and not due and (graph := self._stuck(unasked)):
                self.hang = graph
                return "hang", "hang: nothing can run; " + "; ".join(graph["graph"])
            if not due and self.watchdog.expired():  # an answer of ours due: we hold it
                return "error", self.watchdog.report()

    def _progress(self, stderr: _Tail) -> None:
        """What the CLI did that its stdout does not show: a line on stderr, a request that
        reached the fake."""
        self.watchdog.stderr(stderr.count, stderr.lines[-1] if stderr.lines else "")
        self.watchdog.requests(self.server.received)

    def offered(self, agent: str) -> frozenset[str]:
        """The tools `agent` was offered in its latest request (harness.adapters._calls)."""
        return offered_to(self.llm, agent)

    def send(self, process: subprocess.Popen[str], message: dict[str, Any]) -> None:
        assert process.stdin is not None
        with contextlib.suppress(OSError):
            process.stdin.write(json.dumps(message) + "\n")
            process.stdin.flush()

    def answer(self, process: subprocess.Popen[str], request: str, reply: dict[str, Any]) -> None:
        self.send(process, {"type": "control_response", "response": {
            "subtype": "success", "request_id": request, "response": reply}})  # fmt: skip

    # -- the human end -------------------------------------------------------------------
    def _stuck(self, unasked: Mapping[str, tuple[str, str]]) -> dict[str, Any] | None:
        """The wait-for graph, if nothing can move (`wait_for`)."""
        if self.server.in_flight:
            return None
        answerer = f"{self.scenario.world.answerer} answerer"
        held = {c: (q, answerer) for c, q in self.held.items()} | dict(unasked)
        held_by = {self.stream.calls[c].agent: q for c, q in held.items()
                   if c in self.stream.calls}  # fmt: skip
        return wait_for(self.scenario, self.llm.progress(), held_by)


def _event(line: str) -> dict[str, Any] | None:
    """One stream-json event, or None for a line that is none."""
    try:
        event = json.loads(line)
    except ValueError:
        return None
    return event if isinstance(event, dict) else None


def _pump(stream: Any, lines: queue.Queue[str | None]) -> None:
    for line in stream:
        lines.put(line)
    lines.put(None)


class _Tail:
    """A process's stderr, read as it comes by a thread of its own: its last lines, and how
    many there have been (a sign of life for the watchdog)."""

    def __init__(self, stream: Any) -> None:
        self.lines: deque[str] = deque(maxlen=20)
        self.count = 0
        self._keeper = threading.Thread(target=self._keep, args=(stream,), daemon=True)
        self._keeper.start()

    def _keep(self, stream: Any) -> None:
        for line in stream:
            self.lines.append(line.rstrip("\n"))
            self.count += 1

    def ended(self) -> list[str]:
        """All of it, once the process has ended: its last line is let in first."""
        self._keeper.join(5)
        return list(self.lines)


def _stop(process: subprocess.Popen[str]) -> None:
    """End the phase's process group (the bridge and the CLI alike), if it still runs."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, 9)
    process.wait()
