"""opencode's own output -> the protocol's observation (scenarios/protocol.json).

`opencode run --format json` writes one JSON event a line, and only the root session's:
`step_start`, `tool_use` (a finished call, with its state), `text`, `step_finish` (with
the step's reason: `tool-calls` while it goes on) and `error`. A child (a `task` call's
session) writes nothing there. So the stream says only when a phase has ended and how;
every agent's calls, results and final text are read afterwards from the SQLite store
opencode keeps under its data dir (`$XDG_DATA_HOME/opencode/opencode.db`: `session`, with
`parent_id` for a child, and `part`, each message part as JSON), in `finish`.

Read in the scenario's names: a root session is the phase's root (its id is in every
event), a child session is named by the `task` call that started it (the dialect spells a
child's name as the call's `description`; the call's metadata carries the child's session
id). A call to a tool the agent does not have is recorded by opencode as a call of its
`invalid` tool, completed, whose input names the tool asked for: it is read as a call of
that tool, and, completed, as no error, which is what opencode made of it. Texts are
normalised: session ids become the agent's name; no timings or paths are kept.
"""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from harness.adapters._calls import Call, walk

DELEGATION = "task"
INVALID = "invalid"  # opencode's stand-in for a call to a tool the agent does not have
_ENDED = ("completed", "error")  # a tool part's states once its result is in
# Where the store is, under the scenario's folder (the adapter sets XDG_DATA_HOME there).
STORE = Path("home") / ".local" / "share" / "opencode" / "opencode.db"
# A child session's title, when no task call names it: "child (@general subagent)".
_CHILD_TITLE = re.compile(r"^(.*) \(@[\w-]+ subagent\)$")


@dataclass
class Events:
    """What one scenario's `opencode run` processes wrote and stored, one phase at a time."""

    # The files `finish` reads, as globs under the scenario's folder, and the store's
    # tables it reads (`_stored`).
    kept: ClassVar[tuple[str, ...]] = (STORE.as_posix(),)
    tables: ClassVar[tuple[str, ...]] = ("session", "message", "part")
    root: str = ""
    delegation: str = DELEGATION
    roots: list[str] = field(default_factory=list)  # each phase's, in order
    sessions: dict[str, str] = field(default_factory=dict)  # session id -> agent
    calls: dict[str, Call] = field(default_factory=dict)  # call id -> the call
    children: dict[str, str] = field(default_factory=dict)  # task call id -> child
    errors: dict[str, dict[str, Any]] = field(default_factory=dict)  # call id -> its error
    handed: dict[str, dict[str, Any]] = field(default_factory=dict)  # task call id -> handoff
    tool_errors: list[dict[str, Any]] = field(default_factory=list)
    handoffs: list[dict[str, Any]] = field(default_factory=list)
    final: dict[str, str] = field(default_factory=dict)
    result: dict[str, Any] | None = None  # set when the phase's root stops, or errs
    resulted: set[str] = field(default_factory=set)  # the calls whose result was read
    # What each agent said and was told, as the reference's durable log spells it (for
    # `harness repro`): each assistant message of the store, then its calls' results.
    transcript: list[dict[str, Any]] = field(default_factory=list)

    def read(self, event: dict[str, Any]) -> None:
        kind, session = event.get("type"), event.get("sessionID")
        if isinstance(session, str) and session not in self.sessions:
            self.sessions[session] = self.root
        part = _dict(event.get("part"))
        if kind == "tool_use" and _dict(part.get("state")).get("status") in _ENDED:
            self.resulted.add(str(part.get("callID")))
        if kind == "step_finish" and part.get("reason") != "tool-calls":
            self.result = {"is_error": False, "reason": part.get("reason")}
        elif kind == "error":
            error = _dict(event.get("error"))
            data = _dict(error.get("data"))
            why = data.get("message") or error.get("name") or json.dumps(error)
            self.result = {"is_error": True, "result": str(why)}

    def normalised(self, text: str) -> str:
        """A text the model was shown, with each session id as its agent's name."""
        for session, agent in sorted(self.sessions.items(), key=lambda s: -len(s[0])):
            text = text.replace(session, agent)
        return text

    def finish(self, folder: Path) -> None:
        """Every agent's calls, results and final text from the store, then the errors and
        handoffs in the order of a walk of the delegation tree."""
        store = folder / STORE
        if store.is_file():
            self._stored(store)
        self.tool_errors, self.handoffs = walk(
            self.roots, self.calls, self.children, self.handed, self.errors
        )
        for handoff in self.handoffs:
            handoff["child_final"] = self.final.get(handoff["child"])
            handoff["tool_result"] = self.normalised(handoff["tool_result"])
        for error in self.tool_errors:
            error["text"] = self.normalised(error["text"])
        for agent, text in self.final.items():
            self.final[agent] = self.normalised(text)
        for said in self.transcript:
            said["content"] = self.normalised(said["content"])

    def _stored(self, store: Path) -> None:
        with contextlib.closing(sqlite3.connect(store)) as db:
            sessions = db.execute(
                "SELECT id, parent_id, title FROM session ORDER BY time_created, id"
            ).fetchall()
            parts = db.execute(
                "SELECT p.session_id, p.message_id, p.data, m.data FROM part p "
                "JOIN message m ON m.id = p.message_id ORDER BY p.time_created, p.id"
            ).fetchall()
        # Roots the stream did not name (a phase that wrote no event): by order of start.
        unnamed = [r for r in self.roots if r not in self.sessions.values()]
        for session, parent, _title in sessions:
            if parent is None and session not in self.sessions and unnamed:
                self.sessions[session] = unnamed.pop(0)
        decoded = [(s, m, json.loads(p), json.loads(md)) for s, m, p, md in parts]
        # A child is named by the task call that started it, before any of its parts is read.
        for _session, _message, part, _meta in decoded:
            if part.get("type") == "tool" and part.get("tool") == self.delegation:
                state = _dict(part.get("state"))
                child = _dict(state.get("metadata"))
                name = _dict(state.get("input")).get("description")
                if isinstance(child.get("sessionId"), str) and isinstance(name, str):
                    self.sessions.setdefault(child["sessionId"], name)
        for session, _parent, title in sessions:
            match = _CHILD_TITLE.match(str(title))
            if session not in self.sessions and match:
                self.sessions[session] = match[1]
        messages: dict[str, tuple[str, list[dict[str, Any]]]] = {}  # id -> (agent, parts)
        for session, message, part, meta in decoded:
            if meta.get("role") == "assistant":
                agent = self.sessions.get(session, session)
                messages.setdefault(message, (agent, []))[1].append(part)
        for agent, parts in messages.values():  # in the order their first part was stored
            self._message(agent, parts)

    def _message(self, agent: str, parts: list[dict[str, Any]]) -> None:
        """One assistant message: its text (the agent's final so far), its calls, and
        their results, in the transcript as the reference's log spells them."""
        text = "".join(str(p["text"]) for p in parts if p.get("type") == "text" and p.get("text"))
        if text:
            self.final[agent] = text
        tools = [p for p in parts if p.get("type") == "tool"]
        calls = [self._tool(agent, p) for p in tools]
        if text or calls:
            made = [{"id": i, "name": c.tool, "arguments": json.dumps(c.input, sort_keys=True)}
                    for i, c in calls]  # fmt: skip
            self._said(agent, {"type": "message/assistant", "content": text, "tool_calls": made})
        for (call_id, call), part in zip(calls, tools, strict=True):
            state = _dict(part.get("state"))
            if state.get("status") not in _ENDED:
                continue
            self.resulted.add(call_id)
            failed = state.get("status") == "error"
            error = {"error": {"code": ""}} if failed else {}
            shown = state.get("error") if failed else state.get("output")
            said = {"type": "tool/result", "tool": call.tool, "call_id": call_id,
                    "is_error": failed, **error, "content": str(shown or "")}  # fmt: skip
            self._said(agent, said)

    def _said(self, agent: str, event: dict[str, Any]) -> None:
        self.transcript.append({"seq": len(self.transcript) + 1, "agent": agent, **event})

    def _tool(self, agent: str, part: dict[str, Any]) -> tuple[str, Call]:
        state = _dict(part.get("state"))
        inputs = _dict(state.get("input"))
        tool = str(part.get("tool"))
        if tool == INVALID and isinstance(inputs.get("tool"), str):
            tool = inputs["tool"]  # the tool the model asked for, which it does not have
        call_id = str(part.get("callID"))
        self.calls[call_id] = Call(agent, tool, dict(inputs))
        status = state.get("status")
        if tool == self.delegation:
            self.children[call_id] = str(inputs.get("description", call_id))
        if status == "error":
            self.errors[call_id] = {"agent": agent, "tool": tool, "code": "", "name": "Error",
                                    "text": str(state.get("error", ""))}  # fmt: skip
        elif status == "completed" and tool == self.delegation:
            self.handed[call_id] = {"parent": agent, "child": self.children[call_id],
                                    "child_final": None,
                                    "tool_result": str(state.get("output", ""))}  # fmt: skip
        return call_id, self.calls[call_id]


def _dict(value: Any) -> dict[str, Any]:
    """A JSON object of the store or stream, or an empty one where it has none."""
    return value if isinstance(value, dict) else {}
