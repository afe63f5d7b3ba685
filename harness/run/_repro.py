"""`harness repro`: what happened, in order, up to where the run stopped, for a person."""

from __future__ import annotations

from typing import Any

from harness.adapters.reference.detect import render_hang
from harness.contract import Observation


def _clip(text: str | None, width: int = 110) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= width else flat[: width - 3] + "..."


def _describe(event: dict[str, Any]) -> str:
    kind = event["type"]
    if kind == "session/header":
        depth = event.get("delegation_depth", "absent")
        parent = f" of {event['parent_session']}" if event.get("parent_session") else ""
        return f"session created: {event['origin']}{parent}, delegation_depth {depth}"
    if kind == "session/resumed":
        return f"session resumed, owner {event['owner'] or 'none (a runtime root)'}"
    if kind == "message/user":
        return f"user: {_clip(event['content'])}"
    if kind == "message/assistant":
        calls = [f"{c['name']}({c['id']}) {_clip(c['arguments'], 70)}" for c in event["tool_calls"]]
        said = f"says {_clip(event['content'])!r}" if event.get("content") else ""
        return "assistant " + "; ".join(filter(None, [said, *(f"calls {c}" for c in calls)]))
    if kind == "tool/result":
        # An error with no code (a foreign runtime's own refusal) is still shown as one.
        code = f" [{event['error']['code'] or 'error'}]" if event.get("is_error") else ""
        return f"{event['tool']}({event['call_id']}) ->{code} {_clip(event['content'])}"
    if kind == "plan/mode":
        return f"plan mode {'on' if event['active'] else 'off'}"
    return f"{kind}: {_clip(event.get('message'))}"


def _direct(entry: dict[str, Any]) -> str:
    caller = entry["caller"] or "an agentless call"
    code = f" [{entry['error']['code']}]" if entry["error"] else ""
    return f"direct ask by {caller} ->{code} {_clip(entry['text'])}"


def transcript(observation: Observation, where: str, mismatches: list[str]) -> list[str]:
    """Every durable event and direct ask, in the one order the store's counter gives them,
    then the outcome, any wait-for graph, and what the run's verdict found. `where` says
    what ran it: `under guard NAME` (the reference) or `on RUNTIME`."""
    events = [(sid, e, _describe(e)) for sid, evs in observation.sessions.items() for e in evs]
    events += [("(ask)", d, _direct(d)) for d in observation.direct]
    events.sort(key=lambda p: p[1]["seq"])
    width = max((len(sid) for sid, _, _ in events), default=0)
    lines = [f"{observation.scenario_id} {where}"]
    lines += [f"  #{e['seq']:<3} {sid:<{width}}  {said}" for sid, e, said in events]
    lines.append(
        f"outcome: {observation.outcome}"
        + (f" ({observation.error})" if observation.error and not observation.hang else "")
    )
    if observation.hang is not None:
        lines += render_hang(observation.hang)
    lines += ["verdict: pass"] if not mismatches else ["verdict:", *(f"  {m}" for m in mismatches)]
    return lines
