"""A runtime in any language, in another process, speaking JSON lines on stdin/stdout.

The protocol is specified in scenarios/INTERPRETING.md ("The JSON-lines adapter
protocol") and, line by line, by scenarios/protocol.json, against which every line the
adapter sends is checked. In short: hello both ways, then one `run` line per scenario
answered by one `result` or `skip` line, then `bye`. Scenarios that drive a model get the
base URL of the scripted fake, served on loopback for that scenario alone. The adapter
reports raw facts (answers, errors with name, code and message); this side renders and
judges them exactly as it does the reference runtime's, so both meet the same golden
snapshots.

A process that crashes, shows no progress for its backstop (and a grace), or breaks the
protocol costs the scenario it was running (an error saying what happened) and no more: the
next scenario starts a new process and says hello again. Progress is what the harness can
see of it: a request that reached the fake, a line on its stderr (harness.adapters._watchdog).
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.adapters._reported import ProtocolError, check, observation
from harness.adapters._watchdog import Watchdog
from harness.contract import AdapterError, RunOptions
from harness.fake.dialect import REFERENCE_DIALECT, Delegation, Dialect, DialectError

if TYPE_CHECKING:
    from harness.contract import Observation
    from harness.fake import ScriptedLLM
    from harness.scenario import Scenario

PROTOCOL = 1
HELLO_TIMEOUT = 30.0  # seconds for the process to start and say hello (node, a JVM...)
# Seconds without progress past the backstop before the harness stops the process itself:
# the adapter, told the backstop, should have given up first and reported what it saw.
GRACE = 5.0
POLL = 0.05  # seconds between looks for progress while a result is awaited
REPLIES = ("result", "skip", "error")  # what may answer a run line


class JsonLinesAdapter:
    def __init__(
        self,
        name: str,
        command: Sequence[str],
        *,
        cwd: Path | None = None,
        expectations: Path | None = None,
        prepare: Callable[[], None] | None = None,
        hello_timeout: float = HELLO_TIMEOUT,
        grace: float = GRACE,
        env: dict[str, str] | None = None,
    ) -> None:
        self.name = name
        self.hello_timeout = hello_timeout
        self.grace = grace
        self.command = list(command)
        self.cwd = cwd
        self.expectations = expectations
        self.env = env  # the process's environment (None: this one's); `prepare` may fill it
        self.features: frozenset[str] | None = frozenset()  # until hello says otherwise
        self.runtime = ""  # what the adapter says it runs, for reports
        # How its runtime's requests are told apart and how it spells the scenario's tools
        # (hello).
        self.session_header: str | None = None
        self.dialect = REFERENCE_DIALECT
        self._prepare = prepare
        self._proc: _Process | None = None
        self._version = ""  # the scenarios' VERSION, for the hello of every process
        self._stopped = ""  # how the last process stopped, for a restart's report
        self._restart_failed: str | None = None  # the scenario whose restart failed
        self._closed = False

    # -- process ----------------------------------------------------------------------
    def open(self, scenarios_version: str) -> None:
        """Start the process and shake hands; learns the adapter's features."""
        if self._prepare is not None:
            self._prepare()
            self._prepare = None
        self._version = scenarios_version
        self._proc = self._start()

    def _start(self, context: str = "") -> _Process:
        """A new process that has said hello; AdapterError (one line) if it cannot."""
        try:
            proc = _Process(self.command, self.cwd, self.env)
        except OSError as exc:
            raise AdapterError(
                f"adapter {self.name}: {context}cannot start {' '.join(self.command)}: "
                f"{exc.strerror or exc}"
            ) from None
        try:
            hello_line = {"type": "hello", "protocol": PROTOCOL, "scenarios_version": self._version}
            proc.send(hello_line, awaiting="hello")
            hello = check(proc.receive(self.hello_timeout, "hello"), "hello")
            if hello["type"] == "error":
                raise ProtocolError(f"it answered hello with an error: {hello['message']}")
            if hello["type"] != "hello":
                raise ProtocolError(f"expected its hello, got {_show(hello)}")
            self.session_header, self.dialect = _routing(hello)
        except ProtocolError as exc:
            proc.stop(graceful=False)
            raise AdapterError(f"adapter {self.name}: {context}{exc}{proc.tail()}") from None
        self.features = frozenset(hello["features"])
        self.name = hello.get("adapter") or self.name  # what it calls itself
        self.runtime = hello.get("runtime", "")
        return proc

    def _running(self, scenario_id: str) -> _Process | str:
        """The process to run `scenario_id` on, started again if the last one stopped; or
        why there is none."""
        if self._closed:
            return f"adapter {self.name}: closed; open a new adapter to run {scenario_id}"
        if self._proc is not None and self._proc.alive():
            return self._proc
        if self._restart_failed is not None:  # it does not start: spare every later scenario
            return (
                f"adapter {self.name}: no process: starting a new one for "
                f"{self._restart_failed} failed, so it is not tried again"
            )
        stopped = self._stopped or "exited between scenarios"
        try:
            self._proc = self._start(f"starting a new process (the last one {stopped}): ")
        except AdapterError as exc:
            self._proc, self._restart_failed = None, scenario_id
            return str(exc)
        self._stopped = ""
        return self._proc

    def close(self) -> None:
        """Say bye and let it exit (5 s at most). Idempotent; runs after it are errors."""
        self._closed = True
        proc, self._proc = self._proc, None
        if proc is not None:
            proc.stop(graceful=True)

    # -- one scenario -----------------------------------------------------------------
    def run(self, scenario: Scenario, options: RunOptions) -> Observation:
        from harness.contract import AGENT_HEADER, Observation

        proc = self._running(scenario.id)
        if isinstance(proc, str):
            return Observation.broken(scenario.id, proc)
        llm = server = None
        try:
            model = None
            if any(p.kind != "ask" for p in scenario.phases):
                llm, server = self._serve(scenario, options)
                model = {"base_url": server.base_url, "agent_header": AGENT_HEADER,
                         "session_header": self.session_header,
                         "stream": options.wire.stream}  # fmt: skip
            proc.send({"type": "run", "id": scenario.id, "scenario": _document(scenario),
                       "model": model, "backstop": options.backstop},
                      awaiting=f"result for {scenario.id}")  # fmt: skip
            line = proc.await_result(
                Watchdog(options.backstop + self.grace, f"adapter {self.name}"),
                f"result for {scenario.id}",
                server,
            )
            kind = line.get("type") if isinstance(line, dict) else None
            label = f"{kind} for {scenario.id}" if kind in REPLIES else f"reply to {scenario.id}"
            reply = check(line, label)
            if reply["type"] == "error":  # it could not use the line, and carries on
                why = f"adapter {self.name}: it could not run {scenario.id}: {reply['message']}"
                return Observation.broken(scenario.id, why)
            if reply["type"] not in REPLIES or reply["id"] != scenario.id:
                raise ProtocolError(f"expected the result for {scenario.id}, got {_show(reply)}")
            if reply["type"] == "skip":
                return Observation.empty(scenario.id, "skipped", reply["reason"])
            return observation(scenario, reply["observation"], llm)
        except ProtocolError as exc:
            # Crashed, silent past its backstop, or out of step with the protocol: this
            # process is not going to be right again, so the next scenario gets a new one.
            self._proc = None
            proc.stop(graceful=False)
            self._stopped = f"stopped during {scenario.id}"
            return Observation.broken(scenario.id, f"adapter {self.name}: {exc}{proc.tail()}")
        finally:
            if server is not None:
                server.stop()

    def _serve(self, scenario: Scenario, options: RunOptions) -> tuple[ScriptedLLM, Any]:
        """The scenario's scripts on a loopback server of its own, routed and spelled as
        this adapter's runtime declared."""
        from harness.fake import ScriptedLLM
        from harness.fake.serve import ServerThread

        llm = ScriptedLLM(
            {n: a.script for n, a in scenario.agents.items()},
            chunk=options.wire.chunk if options.wire.chunk is not None else scenario.stream_chunk,
            roots=scenario.roots(),
            session_header=self.session_header,
            dialect=self.dialect,
        )
        return llm, ServerThread(llm)


class _Process:
    """One adapter process and what it wrote: its stdout's lines (None once it ends) and its
    stderr's last lines. Each process has its own, so a report about one never shows what
    the process started after it wrote."""

    def __init__(self, command: list[str], cwd: Path | None, env: dict[str, str] | None) -> None:
        self.popen = subprocess.Popen(
            command,
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
            bufsize=1,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.stderr: deque[str] = deque(maxlen=12)
        self.stderr_lines = 0  # how many, kept or not: a sign of life
        threading.Thread(target=self._pump, daemon=True).start()
        self._drainer = threading.Thread(target=self._drain, daemon=True)
        self._drainer.start()

    def _pump(self) -> None:
        assert self.popen.stdout is not None
        for line in self.popen.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _drain(self) -> None:
        # Read continuously: a full stderr pipe would block the adapter mid-run.
        assert self.popen.stderr is not None
        for line in self.popen.stderr:
            self.stderr.append(line.rstrip("\n"))
            self.stderr_lines += 1

    def alive(self) -> bool:
        return self.popen.poll() is None

    def tail(self) -> str:
        if not self.alive():  # it has ended: let what it wrote last be read first
            self._drainer.join(1)
        lines = list(self.stderr)
        return f"; its stderr ends: {' | '.join(lines[-3:])}" if lines else ""

    def send(self, message: dict[str, Any], *, awaiting: str) -> None:
        """Write one line. A process that has already exited is reported as receive()
        would report it once the line had gone (`before its {awaiting}`): which of the two
        notices first is a race, and the report must not depend on it."""
        assert self.popen.stdin is not None
        try:
            self.popen.stdin.write(json.dumps(message, ensure_ascii=False) + "\n")
            self.popen.stdin.flush()
        except (BrokenPipeError, OSError):
            raise ProtocolError(f"{self.exited()} before its {awaiting}") from None

    def exited(self) -> str:
        try:  # its output ended a moment before it did: give its status time to arrive
            code = self.popen.wait(1)
        except subprocess.TimeoutExpired:
            return "the adapter process stopped reading its input"
        return f"the adapter process exited (status {code})"

    def receive(self, timeout: float, waiting_for: str) -> Any:
        """The next line, parsed; what it holds is for `check` to judge."""
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise ProtocolError(f"no {waiting_for} within {timeout:g} s") from None
        return self._parsed(line, waiting_for)

    def await_result(self, watchdog: Watchdog, waiting_for: str, server: Any) -> Any:
        """The next line, parsed, however long it takes while the adapter shows progress:
        a request reaching the fake (`server`, if the scenario has one) or a line on its
        stderr. One that shows none for the watchdog's limit is stopped."""
        watchdog.saw(f"being sent its run line, for the {waiting_for}")
        while True:
            try:
                line = self.lines.get(timeout=POLL)
            except queue.Empty:
                if server is not None:
                    watchdog.requests(server.received)
                watchdog.stderr(self.stderr_lines, self.stderr[-1] if self.stderr else "")
                if watchdog.expired():
                    raise ProtocolError(
                        f"no {waiting_for} after {watchdog.limit:g} s without progress (the "
                        f"backstop and a grace); it was last seen {watchdog.doing}"
                    ) from None
                continue
            return self._parsed(line, waiting_for)

    def _parsed(self, line: str | None, waiting_for: str) -> Any:
        if line is None:
            raise ProtocolError(f"{self.exited()} before its {waiting_for}")
        try:
            return json.loads(line)
        except ValueError:
            raise ProtocolError(f"not a JSON line: {line.strip()[:200]!r}") from None

    def stop(self, *, graceful: bool) -> None:
        """Say bye and let it exit (5 s at most), or, for a process that broke the protocol
        or went silent, stop it at once: it is not going to listen."""
        try:
            if not graceful:
                raise OSError("not graceful")
            if self.popen.stdin is not None:
                self.popen.stdin.write(json.dumps({"type": "bye"}) + "\n")
                self.popen.stdin.close()
            self.popen.wait(5)
        except (OSError, subprocess.TimeoutExpired):
            self.popen.kill()
            self.popen.wait()


def _routing(hello: dict[str, Any]) -> tuple[str | None, Dialect]:
    """The session header and dialect a checked hello declares (all optional): `dialect`
    (a shipped one's name, or the whole object), or `delegation`, its subagent alone. The
    schema has checked their shapes, the dialect's parser checks its templates."""
    header = hello.get("session_header")
    try:
        if "dialect" in hello and "delegation" in hello:
            raise DialectError("hello: delegation is the dialect's subagent alone; send one")
        if isinstance(hello.get("dialect"), str):
            return header, Dialect.load(hello["dialect"])
        if "dialect" in hello:
            return header, Dialect.from_json(hello["dialect"], "hello.dialect")
        if "delegation" in hello:
            delegation = Delegation.from_json(hello["delegation"], "hello.delegation")
            return header, Dialect.of(delegation)
    except DialectError as exc:
        raise ProtocolError(str(exc)) from None
    return header, REFERENCE_DIALECT


def _document(scenario: Scenario) -> Any:
    from harness.scenario._yaml import parse

    return parse(scenario.path.read_text(encoding="utf-8-sig")).value


def _show(message: dict[str, Any]) -> str:
    return json.dumps(message, ensure_ascii=False)[:200]
