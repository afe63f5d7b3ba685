"""`harness repro ID --mermaid`: a run as a Mermaid sequence diagram, which GitHub renders
in issues and pull requests, so a hang report can be pasted as it is.

Lifelines: each agent in the order it appeared, the user-questions service, the answerer
(and the host, for direct asks). Each model turn is a note on its agent; a human-
interaction call is an arrow to the service, a refusal a crossed arrow back marked with its
code, a question that reached the answerer an arrow on to it; a delegation is an arrow to
the child with its task, the handoff an arrow back. A hang ends in its wait-for chains.
"""

from __future__ import annotations

from typing import Any

from harness.run._observe import Observation

ASKING = ("ask_user_question", "exit_plan_mode")
SERVICE, ANSWERER, HOST = "S", "H", "D"
_ENTITIES = str.maketrans({"#": "#35;", ";": "#59;"})  # at once: '#35;' keeps its ';'


def text(value: Any, width: int = 70) -> str:
    """Message text Mermaid reads literally: one line; '#' and ';' as entity codes."""
    flat = " ".join(str(value or "").split())
    flat = flat if len(flat) <= width else flat[: width - 3] + "..."
    return flat.translate(_ENTITIES) or " "


def sequence(observation: Observation) -> list[str]:
    sessions = observation.sessions
    order = sorted(sessions, key=lambda sid: sessions[sid][0]["seq"] if sessions[sid] else 0)
    ids = {sid: f"A{i}" for i, sid in enumerate(order, 1)}
    lines = ["sequenceDiagram"]
    for sid in order:
        header = sessions[sid][0] if sessions[sid] else {}
        role = f"child of {header['parent_session']}" if header.get("parent_session") else "root"
        lines.append(f"    participant {ids[sid]} as {text(f'{sid} ({role})')}")
    if observation.direct:
        lines.append(f"    participant {HOST} as host (direct asks)")
    lines += [f"    participant {SERVICE} as user-questions service",
              f"    participant {ANSWERER} as answerer"]  # fmt: skip
    asked = list(observation.asked)
    events: list[tuple[str | None, dict[str, Any]]] = [
        (sid, e) for sid in order for e in sessions[sid]
    ]
    events += [(None, d) for d in observation.direct]
    for who, event in sorted(events, key=lambda p: p[1]["seq"]):
        if who is None:
            lines += _direct(event, asked)
            continue
        lines += _event(who, event, ids, sessions, asked)
    if observation.hang is not None:
        lines += _hang(observation, ids, asked)
    else:
        outcome = text(f"outcome: {observation.outcome} {observation.error or ''}")
        lines.append(f"    Note over {ids[order[0]] if order else HOST}: {outcome}")
    return lines


def _event(
    sid: str,
    event: dict[str, Any],
    ids: dict[str, str],
    sessions: dict[str, list[dict[str, Any]]],
    asked: list[dict[str, Any]],
) -> list[str]:
    me, kind = ids[sid], event["type"]
    if kind == "message/user":
        parent = sessions[sid][0].get("parent_session") if sessions[sid] else None
        if parent in ids:
            return [f"    {ids[parent]}->>{me}: subagent: {text(event['content'])}"]
        return [f"    Note right of {me}: task: {text(event['content'])}"]
    if kind == "session/resumed":
        owner = event.get("owner") or "none: a runtime root"
        return [f"    Note over {me}: resumed in a new process, owner {text(owner)}"]
    if kind == "plan/mode":
        return [f"    Note over {me}: plan mode {'on' if event['active'] else 'off'}"]
    if kind == "message/assistant":
        said = [f"says {event['content']!r}"] if event.get("content") else []
        said += [f"calls {c['name']}" for c in event.get("tool_calls") or []]
        out = [f"    Note over {me}: model: {text('; '.join(said) or 'nothing')}"]
        return out + [f"    {me}->>{SERVICE}: {c['name']} ({c['id']})"
                      for c in event.get("tool_calls") or [] if c["name"] in ASKING]  # fmt: skip
    if kind != "tool/result":
        return []
    if event.get("child") in ids:
        return [f"    {ids[event['child']]}-->>{me}: handoff: {text(event['content'])}"]
    if event["tool"] not in ASKING:
        code = f"[{event['error']['code']}] " if event.get("is_error") else ""
        return [f"    Note over {me}: {text(event['tool'] + ' -> ' + code + event['content'])}"]
    out = []
    if asked and asked[0]["caller"] == sid:  # this call reached the human
        out += _reached(asked.pop(0))
        out.append(f"    {ANSWERER}-->>{SERVICE}: answers")
    if event.get("is_error"):
        code = event["error"]["code"] or event["error"]["name"]
        return [*out, f"    {SERVICE}--x{me}: {text(code + ': ' + event['content'])}"]
    return [*out, f"    {SERVICE}-->>{me}: {text(event['content'])}"]


def _reached(call: dict[str, Any]) -> list[str]:
    ids = ", ".join(q["id"] for q in call["questions"])
    return [f"    {SERVICE}->>{ANSWERER}: {text('asks ' + ids)}"]


def _direct(entry: dict[str, Any], asked: list[dict[str, Any]]) -> list[str]:
    caller = entry["caller"] or "an agentless call"
    out = [f"    {HOST}->>{SERVICE}: {text('ask() by ' + caller)}"]
    if asked and asked[0]["caller"] == entry["caller"]:
        out += [*_reached(asked.pop(0)), f"    {ANSWERER}-->>{SERVICE}: answers"]
    if entry["error"]:
        return [*out, f"    {SERVICE}--x{HOST}: {text(entry['error']['code'])}"]
    return [*out, f"    {SERVICE}-->>{HOST}: {text(entry['text'])}"]


def _hang(
    observation: Observation,
    ids: dict[str, str],
    asked: list[dict[str, Any]],
) -> list[str]:
    out = []
    for call in asked:  # reached the human, and no answer ever came back
        out += _reached(call)
        out.append(f"    Note over {ANSWERER}: never answers")
    report = observation.hang or {}
    span = f"{min(ids.values())},{ANSWERER}" if ids else ANSWERER
    for chain in [*report.get("graph", []), *report.get("cycles", [])]:
        out.append(f"    Note over {span}: {text('hang: ' + chain, 160)}")
    return out
