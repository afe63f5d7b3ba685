"""Durable sessions: a header plus an append-only JSONL event log per session, in a file
or in memory.

The header is lineage (who delegated to whom, how deep). It survives resume, which is why
it can never be the authority on whether a human answerer exists.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

Event = dict[str, Any]
Message = dict[str, Any]
Clock = Callable[[], datetime]


# json.dumps(event, sort_keys=True, ensure_ascii=False), byte for byte, without building
# an encoder per event (and without the cycle check: an event is plain JSON data).
_encode = json.JSONEncoder(sort_keys=True, ensure_ascii=False, check_circular=False).encode


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class SessionHeader:
    id: str
    parent_session: str | None = None
    origin: str = "root"
    # None means the durable header lacks the field, as incomplete upstream headers do.
    delegation_depth: int | None = 0

    def to_event(self) -> Event:
        event: Event = {
            "type": "session/header",
            "id": self.id,
            "parent_session": self.parent_session,
            "origin": self.origin,
        }
        if self.delegation_depth is not None:
            event["delegation_depth"] = self.delegation_depth
        return event

    @classmethod
    def from_event(cls, event: Event) -> SessionHeader:
        return cls(
            id=event["id"],
            parent_session=event.get("parent_session"),
            origin=event.get("origin", "root"),
            delegation_depth=event.get("delegation_depth"),
        )

    def with_overrides(self, overrides: dict[str, Any]) -> SessionHeader:
        return replace(self, **overrides) if overrides else self


class SessionError(Exception):
    """A session could not be created or opened."""


class _FileLogs:
    """One JSONL file per session under `root`, each written through one handle kept open
    for the store's life: opening a file per event cost more than the event. Lines sit in
    the handle's buffer until a flush, which every read, every reopen and the end of every
    top-level run does (Runtime.start/resume), so whatever reads the log sees it all."""

    # A thousand-agent tree would otherwise hold a thousand descriptors, near the usual
    # limit of 1,024; a session rarely writes again once its next sibling has started.
    MAX_OPEN = 64

    def __init__(self, root: Path) -> None:
        self.dir = root
        self._handles: dict[str, TextIO] = {}

    @property
    def root(self) -> Path | None:
        return self.dir

    def _path(self, id: str) -> Path:
        return self.dir / f"{id}.jsonl"

    def exists(self, id: str) -> bool:
        return id in self._handles or self._path(id).exists()

    def append(self, id: str, line: str) -> None:
        handle = self._handles.get(id)
        if handle is None:
            if len(self._handles) >= self.MAX_OPEN:
                self._handles.pop(next(iter(self._handles))).close()  # the longest open
            handle = self._handles[id] = self._path(id).open("a", encoding="utf-8")
        handle.write(line)

    def text(self, id: str) -> str | None:
        handle = self._handles.get(id)
        if handle is not None:
            handle.flush()
        try:
            return self._path(id).read_text(encoding="utf-8")
        except FileNotFoundError:
            return None

    def ids(self) -> list[str]:
        return sorted(p.stem for p in self.dir.glob("*.jsonl"))

    def flush(self) -> None:
        for handle in self._handles.values():
            handle.flush()

    def close(self) -> None:
        handles, self._handles = self._handles, {}
        for handle in handles.values():
            handle.close()


class _MemoryLogs:
    """The same JSONL lines, kept in memory: what a file would hold, byte for byte, without
    the file system. Reads decode the stored text, so a resume still goes through exactly
    what was written."""

    root: Path | None = None  # nothing on disk

    def __init__(self) -> None:
        self._lines: dict[str, list[str]] = {}

    def exists(self, id: str) -> bool:
        return id in self._lines

    def append(self, id: str, line: str) -> None:
        self._lines.setdefault(id, []).append(line)

    def text(self, id: str) -> str | None:
        lines = self._lines.get(id)
        if lines is None:
            return None
        if len(lines) > 1:  # kept joined: a reader holding the text then shares it
            lines[:] = ["".join(lines)]
        return lines[0]

    def ids(self) -> list[str]:
        return sorted(self._lines)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass


class SessionStore:
    """All sessions of one world. A sequence number shared by every session orders events
    across sessions, so observations never depend on timestamps.

    `SessionStore(root)` keeps one JSONL file per session under `root`; `SessionStore()`
    keeps the same lines in memory. Both hold the log as encoded text and rebuild sessions
    from it, and the same tests run both. Close a file-backed store (or use it as a context
    manager) to flush and release its files.
    """

    def __init__(self, root: Path | None = None, clock: Clock = utc_now) -> None:
        self._logs = _MemoryLogs() if root is None else _FileLogs(root)
        self._clock = clock
        self._seq = 0
        self._stamp: tuple[datetime | None, str] = (None, "")  # the last time, formatted

    @property
    def root(self) -> Path | None:
        """The directory of a file-backed store; None for one in memory."""
        return self._logs.root

    def create(self, header: SessionHeader) -> Session:
        if self._logs.exists(header.id):
            raise SessionError(f"session {header.id!r} already exists; choose another id")
        session = Session(self, header)
        session.append(header.to_event())
        return session

    def open(self, id: str) -> Session:
        """Load a stored session from its log, as a new process would on resume."""
        text = self._logs.text(id)
        if text is None:
            raise SessionError(f"no stored session {id!r} to resume")
        events = decode(text)
        if not events or events[0].get("type") != "session/header":
            raise SessionError(f"session {id!r} has no header line")
        return Session(self, SessionHeader.from_event(events[0]), events)

    def ids(self) -> list[str]:
        return self._logs.ids()

    def read(self, id: str) -> list[Event]:
        """Events as the log holds them: the durable truth observations are built from."""
        return decode(self.text(id))

    def text(self, id: str) -> str:
        """A session's log as stored, undecoded: about a third of the memory of its events."""
        text = self._logs.text(id)
        if text is None:
            raise SessionError(f"no stored session {id!r}")
        return text

    def flush(self) -> None:
        """Make every appended event durable (a no-op in memory)."""
        self._logs.flush()

    def close(self) -> None:
        self._logs.close()

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def next_seq(self) -> int:
        """The next number in the order shared by every event of this store's world."""
        self._seq += 1
        return self._seq

    def _write(self, id: str, event: Event) -> Event:
        now = self._clock()
        if now is not self._stamp[0]:  # a frozen clock's one instant is formatted once
            self._stamp = (now, now.isoformat())
        stamped = {"seq": self.next_seq(), "ts": self._stamp[1], **event}
        self._logs.append(id, _encode(stamped) + "\n")
        return stamped


class Session:
    def __init__(
        self, store: SessionStore, header: SessionHeader, events: list[Event] | None = None
    ) -> None:
        self.store = store
        self.header = header
        self.events: list[Event] = events or []
        # What plan_mode_logged(self.events) says, kept as events are appended: it is read
        # at every step (the plan:policy prompt section), and would walk the log each time.
        self.plan_mode: bool | None = plan_mode_logged(self.events)

    @property
    def id(self) -> str:
        return self.header.id

    def append(self, event: Event) -> Event:
        stamped = self.store._write(self.id, event)
        self.events.append(stamped)
        if stamped["type"] == "plan/mode":
            self.plan_mode = bool(stamped["active"])
        return stamped

    def messages(self) -> list[Message]:
        """The conversation as the model saw it, rebuilt from durable events."""
        return to_messages(self.events)


def decode(text: str) -> list[Event]:
    # JSONL lines end at "\n" only. str.splitlines() also breaks at U+2028, U+0085 and
    # other separators, which ensure_ascii=False leaves raw inside a JSON string.
    lines = [line for line in text.split("\n") if line]
    try:
        # One document per log, so the decoder shares each key string across its events
        # (a fifth less memory than line by line, for a thousand sessions).
        events: list[Event] = json.loads("[" + ",".join(lines) + "]")
    except ValueError:
        events = []
    if len(events) != len(lines):  # a bad line (or two values on one): decode it alone
        return [json.loads(line) for line in lines]
    return events


def to_messages(events: list[Event]) -> list[Message]:
    return list(_messages(events))


def _messages(events: list[Event]) -> Iterator[Message]:
    for event in events:
        kind = event["type"]
        if kind == "message/user":
            yield {"role": "user", "content": event["content"]}
        elif kind == "message/assistant":
            message: Message = {"role": "assistant", "content": event.get("content")}
            if event.get("tool_calls"):
                message["tool_calls"] = [
                    {
                        "id": call["id"],
                        "type": "function",
                        "function": {"name": call["name"], "arguments": call["arguments"]},
                    }
                    for call in event["tool_calls"]
                ]
            yield message
        elif kind == "tool/result":
            yield {"role": "tool", "tool_call_id": event["call_id"], "content": event["content"]}


def plan_mode_logged(events: list[Event]) -> bool | None:
    """The plan-mode state a session's durable log ends in, or None if it never had one:
    read here, with the rest of the log, by the runtime and by whatever observes a run."""
    for event in reversed(events):
        if event["type"] == "plan/mode":
            return bool(event["active"])
    return None
