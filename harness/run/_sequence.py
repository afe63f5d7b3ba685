"""A run as a sequence of messages between its parties, drawn two ways: as Mermaid text
(`harness repro ID --mermaid`, which GitHub renders in issues and pull requests) and as SVG
(`harness report`).

Lifelines: each agent in the order it appeared, the user-questions service, the answerer
(and the host, for direct asks). Each model turn is a note on its agent; a human-
interaction call is an arrow to the service, a refusal a crossed arrow back marked with its
code, a question that reached the answerer an arrow on to it; a delegation is an arrow to
the child with its task, the handoff an arrow back. A hang ends in its wait-for chains.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.contract import Observation

ASKING = ("ask_user_question", "exit_plan_mode")
SERVICE, ANSWERER, HOST = "S", "H", "D"
_ENTITIES = str.maketrans({"#": "#35;", ";": "#59;"})  # at once: '#35;' keeps its ';'


@dataclass(frozen=True)
class Step:
    """An arrow (`call`, `reply`, or `refusal`, crossed) from `src` to `dst`, or a `note`
    over `src` (through `dst`, when it spans two lifelines)."""

    kind: str
    src: str
    dst: str
    text: str


@dataclass
class Diagram:
    participants: list[tuple[str, str]] = field(default_factory=list)  # (id, label)
    steps: list[Step] = field(default_factory=list)

    def arrow(self, kind: str, src: str, dst: str, said: Any) -> None:
        self.steps.append(Step(kind, src, dst, clip(said)))

    def note(self, over: str, said: Any, through: str | None = None, width: int = 70) -> None:
        self.steps.append(Step("note", over, through or over, clip(said, width)))


def clip(value: Any, width: int = 70) -> str:
    flat = " ".join(str(value or "").split())
    return flat if len(flat) <= width else flat[: width - 3] + "..."


def diagram(observation: Observation) -> Diagram:
    sessions = dict(observation.sessions)  # decoded once: a Logs decodes on every access
    order = sorted(sessions, key=lambda sid: sessions[sid][0]["seq"] if sessions[sid] else 0)
    ids = {sid: f"A{i}" for i, sid in enumerate(order, 1)}
    out = Diagram()
    for sid in order:
        header = sessions[sid][0] if sessions[sid] else {}
        role = f"child of {header['parent_session']}" if header.get("parent_session") else "root"
        out.participants.append((ids[sid], clip(f"{sid} ({role})")))
    if observation.direct:
        out.participants.append((HOST, "host (direct asks)"))
    out.participants += [(SERVICE, "user-questions service"), (ANSWERER, "answerer")]
    asked = list(observation.asked)
    events: list[tuple[str | None, dict[str, Any]]] = [
        (sid, e) for sid in order for e in sessions[sid]
    ]
    events += [(None, d) for d in observation.direct]
    for who, event in sorted(events, key=lambda p: p[1]["seq"]):
        if who is None:
            _direct(out, event, asked)
        else:
            _event(out, who, event, ids, sessions, asked)
    if observation.hang is not None:
        for call in asked:  # reached the human, and no answer ever came back
            _reached(out, call)
            out.note(ANSWERER, "never answers")
        first = ids[order[0]] if order else ANSWERER
        for chain in [*observation.hang.get("graph", []), *observation.hang.get("cycles", [])]:
            out.note(first, f"hang: {chain}", through=ANSWERER, width=160)
    else:
        out.note(ids[order[0]] if order else SERVICE,
                 f"outcome: {observation.outcome} {observation.error or ''}")  # fmt: skip
    return out


def _event(
    out: Diagram,
    sid: str,
    event: dict[str, Any],
    ids: dict[str, str],
    sessions: dict[str, list[dict[str, Any]]],
    asked: list[dict[str, Any]],
) -> None:
    me, kind = ids[sid], event["type"]
    if kind == "message/user":
        parent = sessions[sid][0].get("parent_session") if sessions[sid] else None
        if parent in ids:
            out.arrow("call", ids[parent], me, f"subagent: {event['content']}")
        else:
            out.note(me, f"task: {event['content']}")
    elif kind == "session/resumed":
        out.note(me, f"resumed in a new process, owner {event.get('owner') or 'none: a root'}")
    elif kind == "plan/mode":
        out.note(me, f"plan mode {'on' if event['active'] else 'off'}")
    elif kind == "message/assistant":
        said = [f"says {event['content']!r}"] if event.get("content") else []
        said += [f"calls {c['name']}" for c in event.get("tool_calls") or []]
        out.note(me, "model: " + ("; ".join(said) or "nothing"))
        for call in event.get("tool_calls") or []:
            if call["name"] in ASKING:
                out.arrow("call", me, SERVICE, f"{call['name']} ({call['id']})")
    elif kind == "tool/result":
        _result(out, sid, me, event, ids, asked)


def _result(
    out: Diagram,
    sid: str,
    me: str,
    event: dict[str, Any],
    ids: dict[str, str],
    asked: list[dict[str, Any]],
) -> None:
    if event.get("child") in ids:
        out.arrow("reply", ids[event["child"]], me, f"handoff: {event['content']}")
        return
    if event["tool"] not in ASKING:
        code = f"[{event['error']['code']}] " if event.get("is_error") else ""
        out.note(me, f"{event['tool']} -> {code}{event['content']}")
        return
    if asked and asked[0]["caller"] == sid:  # this call reached the human
        _reached(out, asked.pop(0))
        out.arrow("reply", ANSWERER, SERVICE, "answers")
    if event.get("is_error"):
        code = event["error"]["code"] or event["error"]["name"]
        out.arrow("refusal", SERVICE, me, f"{code}: {event['content']}")
    else:
        out.arrow("reply", SERVICE, me, event["content"])


def _reached(out: Diagram, call: dict[str, Any]) -> None:
    out.arrow("call", SERVICE, ANSWERER, "asks " + ", ".join(q["id"] for q in call["questions"]))


def _direct(out: Diagram, entry: dict[str, Any], asked: list[dict[str, Any]]) -> None:
    out.arrow("call", HOST, SERVICE, f"ask() by {entry['caller'] or 'an agentless call'}")
    if asked and asked[0]["caller"] == entry["caller"]:
        _reached(out, asked.pop(0))
        out.arrow("reply", ANSWERER, SERVICE, "answers")
    if entry["error"]:
        out.arrow("refusal", SERVICE, HOST, entry["error"]["code"])
    else:
        out.arrow("reply", SERVICE, HOST, entry["text"])


# -- Mermaid --------------------------------------------------------------------------
_MERMAID_ARROWS = {"call": "->>", "reply": "-->>", "refusal": "--x"}


def mermaid_text(value: str) -> str:
    """Message text Mermaid reads literally: '#' and ';' as entity codes."""
    return value.translate(_ENTITIES) or " "


def mermaid(drawn: Diagram) -> list[str]:
    lines = ["sequenceDiagram"]
    lines += [
        f"    participant {pid} as {mermaid_text(label)}" for pid, label in drawn.participants
    ]
    for step in drawn.steps:
        said = mermaid_text(step.text)
        if step.kind != "note":
            lines.append(f"    {step.src}{_MERMAID_ARROWS[step.kind]}{step.dst}: {said}")
        elif step.src != step.dst:
            lines.append(f"    Note over {step.src},{step.dst}: {said}")
        elif step.text.startswith("task: "):
            lines.append(f"    Note right of {step.src}: {said}")
        else:
            lines.append(f"    Note over {step.src}: {said}")
    return lines


def sequence(observation: Observation) -> list[str]:
    return mermaid(diagram(observation))
