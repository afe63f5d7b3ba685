"""A runtime that keeps its tool calls in its messages' text, read back as the calls the fake
sent (the dialect's `transcript`).

smolagents sends its model no tool messages: a step's calls come back as an assistant text,
`Calling tools:\\n[{'id': 'call_1', ...}]`, and their results as the next user text,
`Observation:\\n...`, one text for all of a step's calls. The fake routes a conversation by
the calls it carries, fills `{{LABEL.result}}` from their results and checks that a
conversation carries on what it was served, all from tool messages; so such a request is
read as the conversation it stands for first: each calls text the assistant message the
fake sent (found by the call ids it issued), and the results text after it one tool
message per call, each the whole observation (the runtime gives no finer split).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


class TranscriptError(ValueError):
    """A declared transcript that cannot be used; the message names where and why."""


@dataclass(frozen=True)
class Transcript:
    """How the runtime's texts begin: `calls` (an assistant's tool calls) and `results`
    (the user text with their results)."""

    calls: str
    results: str

    def to_json(self) -> dict[str, Any]:
        return {"calls": self.calls, "results": self.results}

    @classmethod
    def from_json(cls, value: Any, where: str) -> Transcript:
        if not isinstance(value, dict) or set(value) != {"calls", "results"}:
            raise TranscriptError(f"{where}: write {{calls: PREFIX, results: PREFIX}}")
        if not all(isinstance(v, str) and v for v in value.values()):
            raise TranscriptError(f"{where}: calls and results are the texts' non-empty openings")
        return cls(value["calls"], value["results"])

    def recall(self, messages: Sequence[Any], sent: Mapping[str, dict[str, Any]]) -> list[Any]:
        """`messages` with each calls text that names calls in `sent` (call id -> the tool
        call as the fake sent it) made that assistant message again, and the results text
        after it one tool message per call. Texts naming no call the fake sent stay."""
        out: list[Any] = []
        waiting: list[str] = []  # the calls of the message just recalled, awaiting results
        for message in messages:
            role, text = _role(message), _text(message)
            if role == "assistant" and text.startswith(self.calls):
                ids = _named(text, sent)
                if ids:
                    calls = [sent[i] for i in ids]
                    # A step that spoke and called comes as two messages; the fake sent one.
                    if out and _role(out[-1]) == "assistant" and not out[-1].get("tool_calls"):
                        out[-1] = {**out[-1], "tool_calls": calls}
                    else:
                        out.append({"role": "assistant", "content": None, "tool_calls": calls})
                    waiting = ids
                    continue
            if role == "user" and waiting and text.startswith(self.results):
                result = text[len(self.results) :]
                out += [{"role": "tool", "tool_call_id": i, "content": result} for i in waiting]
                waiting = []
                continue
            waiting = []
            out.append(message)
        return out


def _role(message: Any) -> str | None:
    return message.get("role") if isinstance(message, dict) else None


def _text(message: Any) -> str:
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


def _named(text: str, sent: Mapping[str, dict[str, Any]]) -> list[str]:
    """The ids of calls in `sent` that `text` names, in its order (whole ids only: call_1
    is not in call_12)."""
    found = []
    for call_id in sent:
        at = re.search(rf"(?<![\w-]){re.escape(call_id)}(?![\w-])", text)
        if at is not None:
            found.append((at.start(), call_id))
    return [call_id for _, call_id in sorted(found)]
