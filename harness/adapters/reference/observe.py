"""World after a run -> Observation: what happened, read back from the durable logs.

`to_json()` is the machine-readable contract of `harness run --json`; `snapshot()` is the
normalised document pinned under snapshots/. Both are pure functions of the durable
events, the answerer's call count and the fake's errors.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from harness.adapters.reference.world import LiveWorld
from harness.contract import Event, Observation
from harness.fake.script import script_error_text
from harness.runtime.sessions import decode, plan_mode_logged


class Logs(Mapping[str, list[Event]]):
    """Every session's durable log, kept as the text the store holds and decoded on each
    access: a thousand-agent tree's decoded events took three times the memory of its
    text, and most runs only ever need the summary `observe` reads from them once."""

    def __init__(self, texts: dict[str, str], root: str | None = None) -> None:
        self._texts = texts
        self._root = root  # a file-backed store's directory, scrubbed from what is read

    def __getitem__(self, sid: str) -> list[Event]:
        events = decode(self._texts[sid])
        return events if self._root is None else [_scrub(e, self._root) for e in events]

    def __iter__(self) -> Iterator[str]:
        return iter(self._texts)

    def __len__(self) -> int:
        return len(self._texts)

    def __repr__(self) -> str:
        return f"Logs({sorted(self._texts)})"


def observe(world: LiveWorld, outcome: str, error: str | None) -> Observation:
    store = world.store
    root = None if store.root is None else str(store.root)  # in memory: no path to leak
    sessions = Logs({sid: store.text(sid) for sid in store.ids()}, root)
    # One session decoded at a time, keeping only what the observation reports of it.
    tool_errors: list[tuple[int, dict[str, Any]]] = []
    delegations: list[tuple[int, str, str, str]] = []  # (seq, parent, child, tool result)
    said: dict[str, list[tuple[int, str]]] = {}
    final: dict[str, str | None] = {}
    plan_mode: dict[str, bool] = {}
    tree = DelegationTree()
    for sid, events in sessions.items():
        tree.add(sid, events)
        for e in events:
            if e["type"] != "tool/result":
                continue
            if e["is_error"]:
                tool_errors.append(
                    (e["seq"], _tool_error(sid, e["tool"], e["error"], e["content"]))
                )
            elif e.get("child"):
                delegations.append((e["seq"], sid, e["child"], e["content"]))
        said[sid] = [
            (e["seq"], e["content"])
            for e in events
            if e["type"] == "message/assistant" and e.get("content")
        ]
        # Conversations only: a direct ask phase's session holds a durable header, no turns.
        if any(e["type"] == "message/user" for e in events):
            final[sid] = said[sid][-1][1] if said[sid] else None
        if (state := plan_mode_logged(events)) is not None:
            plan_mode[sid] = state
    # A direct ask() phase's errors sit where the store's counter put the call: a refused
    # provider registration (no agent makes one) first, as it came first.
    for r in world.direct:
        tool_errors += [
            (r.seq, _tool_error(None, "register_provider", e, f"Error: {e['message']}"))
            for e in r.registrations
            if e is not None
        ]
        if r.error is not None:
            tool_errors.append((r.seq, _tool_error(r.caller, "ask", r.error, r.text)))
    handoffs = [
        {
            "parent": parent,
            "child": child,
            "child_final": _last_said(said.get(child, []), before=seq),
            "tool_result": content,
        }
        for seq, parent, child, content in sorted(delegations, key=lambda d: tree.key(d[1], d[0]))
    ]
    scenario = world.scenario
    script_errors = [script_error_text(e, scenario) for e in world.llm.errors]
    if outcome == "completed":
        # A run cut short leaves steps unrequested as a consequence, not a cause; so does
        # an agent whose script already failed.
        failed = {e.agent for e in world.llm.errors}
        script_errors += [
            script_error_text(e, scenario) for e in world.llm.unconsumed() if e.agent not in failed
        ]
        script_errors += [f"{what} ({scenario.path})" for what in world.never_asked()]
    return Observation(
        scenario_id=world.scenario.id,
        outcome=outcome,
        error=error,
        answerer_calls=len(world.answerer.calls) if world.answerer else 0,
        tool_errors=[found for _, found in sorted(tool_errors, key=tree.error_key)],
        handoffs=handoffs,
        final=final,
        sessions=sessions,
        plan_mode=plan_mode,
        script_errors=script_errors,
        direct=[r.to_json() for r in world.direct],
        asked=[c.to_json() for c in world.answerer.calls] if world.answerer else [],
        requests=list(world.llm.requests),
        served=world.llm.served,
        model_prefix=world.llm.prefixes.summary(),
        hang=world.hang,
    )


class DelegationTree:
    """Where each logged event sits in the delegation tree's order: an agent's events in log
    order, each child's run at the point its parent started it (its session header's), and
    children in the order they were started. Concurrent children's events interleave in the
    logs by chance; in this order they do not, and it is the order a runtime that runs its
    calls one by one logs (scenarios/INTERPRETING.md). A session's events from a later
    resume on are in log order: that run was no delegation."""

    def __init__(self) -> None:
        self._parent: dict[str, tuple[str, int]] = {}  # sid -> (parent sid, header seq)
        self._resumed: dict[str, int] = {}  # sid -> seq of its first session/resumed
        self._paths: dict[str, tuple[int, ...]] = {}
        self._sids: set[str] = set()

    def add(self, sid: str, events: list[Event]) -> None:
        self._sids.add(sid)
        for e in events:
            if e["type"] == "session/header" and e.get("parent_session"):
                self._parent[sid] = (e["parent_session"], e["seq"])
            elif e["type"] == "session/resumed":
                self._resumed[sid] = e["seq"]
                break

    def key(self, sid: str, seq: int) -> tuple[int, ...]:
        resumed = self._resumed.get(sid)
        if resumed is not None and seq >= resumed:
            return (seq,)
        return (*self._path(sid), seq)

    def error_key(self, entry: tuple[int, dict[str, Any]]) -> tuple[int, ...]:
        seq, error = entry
        agent = error["agent"]
        # A direct ask's error (no session of its own, or agentless) sits where it was made.
        return self.key(agent, seq) if agent in self._sids else (seq,)

    def _path(self, sid: str) -> tuple[int, ...]:
        # Iterative: a delegation chain may be as deep as the runtime allows.
        chain = []
        node = sid
        while node not in self._paths:
            link = self._parent.get(node)
            if link is None or link[0] not in self._sids or link[0] in chain or link[0] == node:
                self._paths[node] = ()
                break
            chain.append(node)
            node = link[0]
        for node in reversed(chain):
            parent, at = self._parent[node]
            self._paths[node] = self.key(parent, at)
        return self._paths[sid]


def _tool_error(agent: str | None, tool: str, error: dict[str, Any], text: str) -> dict[str, Any]:
    return {
        "agent": agent,
        "tool": tool,
        "code": error["code"],
        "name": error["name"],
        "is_error": True,
        "text": text,
    }


def _last_said(said: list[tuple[int, str]], before: int) -> str | None:
    last = None
    for seq, content in said:
        if seq > before:
            break
        last = content
    return last


def _scrub(value: Any, root: str) -> Any:
    """No absolute path of this machine may reach a snapshot."""
    if isinstance(value, str):
        return value.replace(root, "{{store}}") if root in value else value
    if isinstance(value, dict):
        return {k: _scrub(v, root) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v, root) for v in value]
    return value
