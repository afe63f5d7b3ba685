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

from harness.adapters._base import AdapterError, RunOptions

if TYPE_CHECKING:
    from harness.fake import ScriptedLLM
    from harness.run import Observation
    from harness.scenario import Scenario

PROTOCOL = 1
HELLO_TIMEOUT = 30.0  # seconds for the process to start and say hello (node, a JVM...)
GRACE = 5.0  # seconds past the backstop before a silent adapter is stopped
OUTCOMES = ("completed", "error", "hang")


class ProtocolError(Exception):
    """The adapter said something the protocol does not allow; the message says what."""


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
    ) -> None:
        self.name = name
        self.hello_timeout = hello_timeout
        self.grace = grace
        self.command = list(command)
        self.cwd = cwd
        self.expectations = expectations
        self.features: frozenset[str] | None = frozenset()  # until hello says otherwise
        self.runtime = ""  # what the adapter says it runs, for reports
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

        llm = server = None
        try:
            if self._proc is None or self._proc.poll() is not None:
                self._proc = None
                raise ProtocolError("the adapter process is not running (it stopped earlier)")
            model = None
            if any(p.kind != "ask" for p in scenario.phases):
                llm, server = _serve(scenario)
                model = {"base_url": server.base_url, "agent_header": "X-Harness-Agent",
                         "stream": options.wire.stream}  # fmt: skip
            self._send({"type": "run", "id": scenario.id, "scenario": _document(scenario),
                        "model": model})  # fmt: skip
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
            return Observation.empty(scenario.id, "error", why)
        finally:
            if server is not None:
                server.shutdown()
                server.server_close()


def _document(scenario: Scenario) -> Any:
    from harness.scenario._yaml import parse

    return parse(scenario.path.read_text(encoding="utf-8-sig")).value


def _serve(scenario: Scenario) -> tuple[ScriptedLLM, Any]:
    from harness._serve import FakeServer
    from harness.fake import ScriptedLLM

    llm = ScriptedLLM(
        {n: a.script for n, a in scenario.agents.items()}, chunk=scenario.stream_chunk
    )
    server = FakeServer(llm, "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return llm, server


def _show(message: dict[str, Any]) -> str:
    return json.dumps(message, ensure_ascii=False)[:200]


# -- what the adapter reported -> Observation ------------------------------------------
def observation(scenario: Scenario, data: dict[str, Any], llm: ScriptedLLM | None) -> Observation:
    """Validate an adapter's observation and render it as the reference's would be."""
    from harness.run import Observation

    outcome = data.get("outcome")
    if outcome not in OUTCOMES:
        raise ProtocolError(f"observation.outcome must be one of {', '.join(OUTCOMES)}")
    calls = data.get("answerer_calls", 0)
    if not isinstance(calls, int) or isinstance(calls, bool) or calls < 0:
        raise ProtocolError("observation.answerer_calls must be a count")
    direct, tool_errors = _direct(_list(data, "direct"))
    tool_errors += [_tool_error(e, i) for i, e in enumerate(_list(data, "tool_errors"))]
    script_errors = [str(e) for e in llm.errors] if llm else []
    if llm is not None and outcome == "completed":
        script_errors += [str(e) for e in llm.unconsumed()]
    return Observation(
        scenario_id=scenario.id,
        outcome=str(outcome),
        error=None if outcome == "completed" else str(data.get("error") or outcome),
        answerer_calls=calls,
        tool_errors=tool_errors,
        handoffs=[_handoff(h, i) for i, h in enumerate(_list(data, "handoffs"))],
        final=_mapping(data, "final", (str, type(None))),
        sessions={},
        plan_mode=_mapping(data, "plan_mode", (bool,)),
        direct=direct,
        requests=list(llm.requests) if llm else [],
        script_errors=script_errors,
    )


def _list(data: dict[str, Any], key: str) -> list[Any]:
    value = data.get(key, [])
    if not isinstance(value, list):
        raise ProtocolError(f"observation.{key} must be a list")
    return value


def _mapping(data: dict[str, Any], key: str, types: tuple[type, ...]) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict) or not all(isinstance(v, types) for v in value.values()):
        raise ProtocolError(f"observation.{key} must map agent names to {types[0].__name__}")
    return dict(value)


def _text(entry: dict[str, Any], key: str, where: str) -> str:
    value = entry.get(key)
    if not isinstance(value, str):
        raise ProtocolError(f"{where}.{key} must be a string")
    return value


def _direct(entries: list[Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    from harness.runtime.questions import Answer, answers_text

    direct, errors = [], []
    for i, entry in enumerate(entries):
        where = f"observation.direct[{i}]"
        if not isinstance(entry, dict):
            raise ProtocolError(f"{where} must be an object")
        caller = entry.get("caller")
        if caller is not None and not isinstance(caller, str):
            raise ProtocolError(f"{where}.caller must be a name or null")
        error = entry.get("error")
        if isinstance(error, dict):
            name, code = (
                _text(error, "name", where + ".error"),
                _text(error, "code", where + ".error"),
            )
            text = f"Error: {_text(error, 'message', where + '.error')}"
            errors.append({"agent": caller, "tool": "ask", "code": code, "name": name,
                           "is_error": True, "text": text})  # fmt: skip
            direct.append({"seq": i + 1, "caller": caller, "text": text,
                           "error": {"name": name, "code": code}})  # fmt: skip
            continue
        answers = entry.get("answers")
        if error is not None or not isinstance(answers, list):
            raise ProtocolError(f"{where} needs answers (a list) or an error (an object)")
        try:
            parsed = [Answer(a["id"], tuple(a["selected"]), a.get("custom")) for a in answers]
        except (TypeError, KeyError):
            raise ProtocolError(f"{where}.answers: each is {{id, selected[, custom]}}") from None
        direct.append({"seq": i + 1, "caller": caller, "text": answers_text(parsed), "error": None})
    return direct, errors


def _tool_error(entry: Any, i: int) -> dict[str, Any]:
    where = f"observation.tool_errors[{i}]"
    if not isinstance(entry, dict):
        raise ProtocolError(f"{where} must be an object")
    return {
        "agent": _text(entry, "agent", where),
        "tool": _text(entry, "tool", where),
        "code": _text(entry, "code", where),
        "name": _text(entry, "name", where),
        "is_error": True,
        "text": _text(entry, "text", where),
    }


def _handoff(entry: Any, i: int) -> dict[str, Any]:
    where = f"observation.handoffs[{i}]"
    if not isinstance(entry, dict):
        raise ProtocolError(f"{where} must be an object")
    final = entry.get("child_final")
    if final is not None and not isinstance(final, str):
        raise ProtocolError(f"{where}.child_final must be a string or null")
    return {
        "parent": _text(entry, "parent", where),
        "child": _text(entry, "child", where),
        "child_final": final,
        "tool_result": _text(entry, "tool_result", where),
    }
