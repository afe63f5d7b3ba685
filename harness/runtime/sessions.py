"""Durable sessions: a header plus an append-only JSONL event log, one file per session.

The header is lineage (who delegated to whom, how deep). It survives resume, which is why
it can never be the authority on whether a human answerer exists.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

Event = dict[str, Any]
Message = dict[str, Any]
Clock = Callable[[], datetime]


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


class SessionStore:
    """All sessions of one world, under one directory. A sequence number shared by every
    session orders events across sessions, so observations never depend on timestamps."""

    def __init__(self, root: Path, clock: Clock = utc_now) -> None:
        self.root = root
        self._clock = clock
        self._seq = 0

    def _path(self, id: str) -> Path:
        return self.root / f"{id}.jsonl"

    def create(self, header: SessionHeader) -> Session:
        path = self._path(header.id)
        if path.exists():
            raise SessionError(f"session {header.id!r} already exists; choose another id")
        session = Session(self, header, path)
        session.append(header.to_event())
        return session

    def open(self, id: str) -> Session:
        """Load a stored session from disk, as a new process would on resume."""
        path = self._path(id)
        try:
            events = _decode(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise SessionError(f"no stored session {id!r} to resume") from None
        if not events or events[0].get("type") != "session/header":
            raise SessionError(f"session {id!r} has no header line")
        return Session(self, SessionHeader.from_event(events[0]), path, events)

    def ids(self) -> list[str]:
        return sorted(p.stem for p in self.root.glob("*.jsonl"))

    def read(self, id: str) -> list[Event]:
        """Events as they are on disk: the durable truth observations are built from."""
        return _decode(self._path(id).read_text(encoding="utf-8"))

    def next_seq(self) -> int:
        """The next number in the order shared by every event of this store's world."""
        self._seq += 1
        return self._seq

    def _stamp(self, event: Event) -> Event:
        return {"seq": self.next_seq(), "ts": self._clock().isoformat(), **event}


class Session:
    def __init__(
        self,
        store: SessionStore,
        header: SessionHeader,
        path: Path,
        events: list[Event] | None = None,
    ) -> None:
        self.store = store
        self.header = header
        self.path = path
        self.events: list[Event] = events or []

    @property
    def id(self) -> str:
        return self.header.id

    def append(self, event: Event) -> Event:
        stamped = self.store._stamp(event)
        self.events.append(stamped)
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(stamped, sort_keys=True, ensure_ascii=False) + "\n")
        return stamped

    def messages(self) -> list[Message]:
        """The conversation as the model saw it, rebuilt from durable events."""
        return to_messages(self.events)


def _decode(text: str) -> list[Event]:
    # JSONL lines end at "\n" only. str.splitlines() also breaks at U+2028, U+0085 and
    # other separators, which ensure_ascii=False leaves raw inside a JSON string.
    return [json.loads(line) for line in text.split("\n") if line]


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
