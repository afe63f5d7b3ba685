"""A runtime in any language, in another process, speaking JSON lines on stdin/stdout.

The protocol is specified in scenarios/INTERPRETING.md ("The JSON-lines adapter
protocol"). In short: hello both ways, then one `run` line per scenario answered by one
`result` or `skip` line, then `bye`. Scenarios that drive a model get the base URL of the
scripted fake, served on loopback for that scenario alone. The adapter reports raw facts
(answers, errors with name, code and message); this side renders and judges them exactly
as it does the reference runtime's, so both meet the same golden snapshots.
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

from harness._routing import REFERENCE_DELEGATION, Delegation, DialectError
from harness._seam import AdapterError, RunOptions
from harness.adapters._reported import ProtocolError, observation

if TYPE_CHECKING:
    from harness.fake import ScriptedLLM
    from harness.run import Observation
    from harness.scenario import Scenario

PROTOCOL = 1
HELLO_TIMEOUT = 30.0  # seconds for the process to start and say hello (node, a JVM...)
GRACE = 5.0  # seconds past the backstop before a silent adapter is stopped


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
        # How its runtime's requests are told apart and how it spells a delegation (hello).
        self.session_header: str | None = None
        self.delegation = REFERENCE_DELEGATION
        self._prepare = prepare
        self._proc: subprocess.Popen[str] | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._stderr: deque[str] = deque(maxlen=12)

    # -- process ----------------------------------------------------------------------
    def open(self, scenarios_version: str) -> None:
        """Start the process and shake hands; learns the adapter's features."""
        if self._prepare is not None:
            self._prepare()
            self._prepare = None
        try:
            self._proc = subprocess.Popen(
                self.command,
                cwd=self.cwd,
                env=self.env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                errors="replace",
                bufsize=1,
            )
        except OSError as exc:
            raise AdapterError(
                f"adapter {self.name}: cannot start {' '.join(self.command)}: {exc.strerror or exc}"
            ) from None
        self._lines = queue.Queue()
        proc = self._proc
        threading.Thread(target=self._pump, args=(proc,), daemon=True).start()
        threading.Thread(target=self._drain, args=(proc,), daemon=True).start()
        try:
            self._send(
                {"type": "hello", "protocol": PROTOCOL, "scenarios_version": scenarios_version}
            )
            hello = self._receive(self.hello_timeout, "hello")
            if hello.get("type") != "hello" or hello.get("protocol") != PROTOCOL:
                raise ProtocolError(f"expected hello with protocol {PROTOCOL}, got {_show(hello)}")
            features = hello.get("features")
            if not isinstance(features, list) or not all(isinstance(f, str) for f in features):
                raise ProtocolError(f"hello must list its features as strings: {_show(hello)}")
            self.session_header, self.delegation = _routing(hello)
        except ProtocolError as exc:
            self.close(graceful=False)
            raise AdapterError(f"adapter {self.name}: {exc}{self._tail()}") from None
        self.features = frozenset(features)
        self.name = str(hello.get("adapter") or self.name)  # what it calls itself
        self.runtime = str(hello.get("runtime", ""))

    def _pump(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _drain(self, proc: subprocess.Popen[str]) -> None:
        # Read continuously: a full stderr pipe would block the adapter mid-run.
        assert proc.stderr is not None
        for line in proc.stderr:
            self._stderr.append(line.rstrip("\n"))

    def _tail(self) -> str:
        lines = list(self._stderr)
        return f"; its stderr ends: {' | '.join(lines[-3:])}" if lines else ""

    def _send(self, message: dict[str, Any]) -> None:
        if self._proc is None or self._proc.stdin is None:
            raise ProtocolError("the adapter process is not running")
        try:
            self._proc.stdin.write(json.dumps(message, ensure_ascii=False) + "\n")
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise ProtocolError(self._exited()) from None

    def _exited(self) -> str:
        code = None
        if self._proc is not None:
            try:  # its output ended a moment before it did: give its status time to arrive
                code = self._proc.wait(1)
            except subprocess.TimeoutExpired:
                code = None
        return (
            f"the adapter process exited (status {code})"
            if code is not None
            else ("the adapter process stopped reading its input")
        )

    def _receive(self, timeout: float, waiting_for: str) -> dict[str, Any]:
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise ProtocolError(f"no {waiting_for} within {timeout:g} s") from None
        if line is None:
            raise ProtocolError(f"{self._exited()} before its {waiting_for}")
        try:
            message = json.loads(line)
        except ValueError:
            raise ProtocolError(f"not a JSON line: {line.strip()[:200]!r}") from None
        if not isinstance(message, dict) or not isinstance(message.get("type"), str):
            raise ProtocolError(f"a protocol line is an object with a 'type': {line.strip()[:200]}")
        return message

    def close(self, *, graceful: bool = True) -> None:
        """Say bye and let it exit (5 s at most), or, for a process that broke the protocol
        or went silent, stop it at once: it is not going to listen."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            if not graceful:
                raise OSError("not graceful")
            if proc.stdin is not None:
                proc.stdin.write(json.dumps({"type": "bye"}) + "\n")
                proc.stdin.close()
            proc.wait(5)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()

    # -- one scenario -----------------------------------------------------------------
    def run(self, scenario: Scenario, options: RunOptions) -> Observation:
        from harness.run import Observation
        from harness.runtime.llm import AGENT_HEADER

        llm = server = None
        try:
            if self._proc is None or self._proc.poll() is not None:
                self._proc = None
                raise ProtocolError("the adapter process is not running (it stopped earlier)")
            model = None
            if any(p.kind != "ask" for p in scenario.phases):
                llm, server = self._serve(scenario, options)
                model = {"base_url": server.base_url, "agent_header": AGENT_HEADER,
                         "session_header": self.session_header,
                         "stream": options.wire.stream}  # fmt: skip
            self._send({"type": "run", "id": scenario.id, "scenario": _document(scenario),
                        "model": model, "backstop": options.backstop})  # fmt: skip
            reply = self._receive(options.backstop + self.grace, f"result for {scenario.id}")
            if reply.get("id") != scenario.id:
                raise ProtocolError(f"expected the result for {scenario.id}, got {_show(reply)}")
            if reply["type"] == "skip":
                return Observation.empty(scenario.id, "skipped", str(reply.get("reason", "")))
            if reply["type"] != "result" or not isinstance(reply.get("observation"), dict):
                raise ProtocolError(f"expected a result line, got {_show(reply)}")
            return observation(scenario, reply["observation"], llm)
        except ProtocolError as exc:
            if "within" in str(exc):
                self.close(graceful=False)  # silent past its backstop: no later run reaches it
            why = f"adapter {self.name}: {exc}{self._tail()}"
            return Observation.broken(scenario.id, why)
        finally:
            if server is not None:
                server.stop()

    def _serve(self, scenario: Scenario, options: RunOptions) -> tuple[ScriptedLLM, Any]:
        """The scenario's scripts on a loopback server of its own, routed and spelled as
        this adapter's runtime declared."""
        from harness._serve import ServerThread
        from harness.fake import ScriptedLLM

        llm = ScriptedLLM(
            {n: a.script for n, a in scenario.agents.items()},
            chunk=options.wire.chunk if options.wire.chunk is not None else scenario.stream_chunk,
            roots=scenario.roots(),
            session_header=self.session_header,
            delegation=self.delegation,
        )
        return llm, ServerThread(llm)


def _routing(hello: dict[str, Any]) -> tuple[str | None, Delegation]:
    """The session header and delegation dialect a hello declares (both optional)."""
    header = hello.get("session_header")
    if header is not None and (not isinstance(header, str) or not header.strip()):
        raise ProtocolError(f"hello.session_header must be a header name: {_show(hello)}")
    if "delegation" not in hello:
        return header, REFERENCE_DELEGATION
    try:
        return header, Delegation.from_json(hello["delegation"], "hello.delegation")
    except DialectError as exc:
        raise ProtocolError(str(exc)) from None


def _document(scenario: Scenario) -> Any:
    from harness.scenario._yaml import parse

    return parse(scenario.path.read_text(encoding="utf-8-sig")).value


def _show(message: dict[str, Any]) -> str:
    return json.dumps(message, ensure_ascii=False)[:200]
