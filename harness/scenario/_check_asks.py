"""Checks of direct ask phases a schema cannot express: the registry each declares (entered
before it is named), a while ask's moment, the host's provider lifecycle calls, and no
`interrupt` answer to a question no run asks."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from harness.scenario._features import Problem, unknown


def no_provider_to_dispose(
    world: dict[str, Any], phases: list[dict[str, Any]]
) -> Iterator[Problem]:
    if world.get("answerer", "tripwire") != "none":
        return
    for i, phase in enumerate(phases):
        if "dispose" in phase.get("ask", {}).get("provider", ()):
            yield (
                f"/phases/{i}/ask/provider",
                "dispose calls the world provider's disposer, and answerer: none registers "
                "none; give the world an answerer or remove dispose",
            )


def no_direct_interrupt(world: dict[str, Any], phases: list[dict[str, Any]]) -> Iterator[Problem]:
    """`interrupt` stops the asking agent's run; a direct ask is no run's."""
    answers = world.get("answers", {})
    for i, phase in enumerate(phases):
        for j, question in enumerate(phase.get("ask", {}).get("questions", ())):
            if answers.get(question.get("id")) == "interrupt":
                yield (
                    f"/phases/{i}/ask/questions/{j}/id",
                    f"world.answers.{question['id']} is interrupt, which stops the asking "
                    "agent's run, and a direct ask has none; use abort, or ask it from a script",
                )


def direct_ask(ask: dict[str, Any], where: str, agents: dict[str, Any]) -> Iterator[Problem]:
    if "while" in ask:
        yield from _during(ask, where, agents)
    seen: set[str] = set()
    for j, question in enumerate(ask["questions"]):
        if question["id"] in seen:
            yield (
                f"{where}/questions/{j}/id",
                f"question id {question['id']!r} is already used in this batch; answers are "
                "matched by id",
            )
        seen.add(question["id"])
    live: list[str] = []  # entered so far, in order
    for j, entry in enumerate(ask.get("live", [])):
        name, owner = entry["agent"], entry.get("owner")
        if name in live:
            yield f"{where}/live/{j}/agent", f"{name!r} is already entered; use reenter"
        if owner is not None and owner not in live:
            yield (
                f"{where}/live/{j}/owner",
                f"owner {owner!r} must be entered in live before {name}",
            )
        live.append(name)
    for key in ("reenter", "detach"):
        for j, name in enumerate(ask.get(key, [])):
            if name not in live:
                yield f"{where}/{key}/{j}", f"{name!r} is not entered in live; add it there first"
    for j, name in enumerate(ask.get("detach_replaced", [])):
        if name not in ask.get("reenter", []):
            yield (
                f"{where}/detach_replaced/{j}",
                f"{name!r} was never replaced; list it in reenter first",
            )
    caller = ask.get("caller")
    stale = ask.get("caller_object", "live") == "stale"
    if caller is not None and not stale and caller not in live and "while" not in ask:
        yield (
            f"{where}/caller",
            (f"caller {caller!r} is not entered in live; enter it, or set caller_object: stale"),
        )


def _during(ask: dict[str, Any], where: str, agents: dict[str, Any]) -> Iterator[Problem]:
    """An ask made while a model phase runs uses that runtime's registry, as it is then."""
    for key in ("live", "reenter", "detach", "detach_replaced", "provider"):
        if key in ask:
            what = "service" if key == "provider" else "registry"
            yield (
                f"{where}/{key}",
                f"a while ask uses the running runtime's {what} as it is; remove {key}",
            )
    agent, step = ask["while"]["agent"], ask["while"]["before_step"]
    names = sorted(agents)
    if agent not in agents:
        yield f"{where}/while/agent", unknown("agent", agent, names)
    elif step > len(agents[agent]["script"]):
        yield (
            f"{where}/while/before_step",
            f"{agent}'s script has {len(agents[agent]['script'])} step(s), so it never asks "
            f"for step {step}",
        )
    caller = ask.get("caller")
    if caller is not None and caller not in agents:
        yield f"{where}/caller", unknown("agent", caller, names)
