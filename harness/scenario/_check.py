"""Checks a schema cannot express: names that must refer to each other, templates that
must resolve. Runs on the raw document so every problem gets a JSON pointer."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import harness.scenario._template as _template
from harness.runtime.tools import default_tools
from harness.scenario._check_asks import direct_ask, no_direct_interrupt, no_provider_to_dispose
from harness.scenario._features import Problem, feature_problems, step_calls, unknown

TOOLS = tuple(t.name for t in default_tools())
# What a direct ask phase calls on the service, named as a failed call's `tool`.
DIRECT_CALLS = ("ask", "register_provider")
CALLER_TOOLS = (
    "ask_user_question",
    "exit_plan_mode",
)  # tools that forward the calling agent to ask()


def semantic_problems(
    doc: dict[str, Any],
    stem: str,
    clauses: dict[str, str],
    broken: frozenset[str] = frozenset(),
) -> list[Problem]:
    """Problems a schema cannot see. `broken` names the top-level sections the schema
    refused: a check runs only when every section it reads is sound, so one mistake is
    reported once and not again as the confusion it causes elsewhere."""

    def sound(*keys: str) -> bool:
        return not broken.intersection(keys)

    out: list[Problem] = []
    if sound("id") and isinstance(doc.get("id"), str) and doc["id"] != stem:
        out.append(("/id", f"id {doc['id']!r} must equal the file name {stem!r}; rename one"))
    if sound("covers") and "covers" in doc:
        out += _covers(doc["covers"], clauses)
    if sound("world"):
        out += _world(doc.get("world", {}))
    if sound("world", "phases") and "phases" in doc:
        out += _no_service(doc.get("world", {}), doc["phases"])
        out += _no_owner_without_registry(doc.get("world", {}), doc["phases"])
        out += no_provider_to_dispose(doc.get("world", {}), doc["phases"])
        out += no_direct_interrupt(doc.get("world", {}), doc["phases"])
    if sound("features") and "features" in doc:
        out += feature_problems(doc, sound)
    if not sound("agents"):
        return out
    agents: dict[str, Any] = doc.get("agents", {})
    out += _lineage(agents, sorted(agents))
    for name in sorted(agents):
        out += _script(name, agents)
    out += _delegations(agents)
    out += _holds(agents)
    if sound("phases") and "phases" in doc:
        out += _phases(doc["phases"], agents)
    if sound("faults"):
        out += _faults(doc.get("faults", []), agents)
    if sound("faults", "world"):
        registry = doc.get("world", {}).get("registry", "present") == "present"
        if not registry and any(f["kind"] == "aborted" for f in doc.get("faults", [])):
            # The fault finds the live agent whose run it aborts through the registry.
            why = ("an aborted fault aborts a live agent's run, which it finds through the "
                   "agent registry: give the world one (registry: present)")  # fmt: skip
            out.append(("/faults", why))
    if sound("phases", "expect") and "phases" in doc and "expect" in doc:
        out += _expect(doc["expect"], agents, doc["phases"])
    return out


def _covers(covers: list[str], clauses: dict[str, str]) -> Iterator[Problem]:
    for i, clause in enumerate(covers):
        if clause not in clauses:
            yield (
                f"/covers/{i}",
                f"unknown clause {clause!r}; the ids are in scenarios/clauses.yaml",
            )


def _world(world: dict[str, Any]) -> Iterator[Problem]:
    if world.get("answerer", "tripwire") == "scripted":
        return
    for key in ("answers", "answer_delay_ms"):
        if key in world:
            yield (
                f"/world/{key}",
                f"only the scripted answerer uses {key}; set answerer: scripted or remove it",
            )


def _no_owner_without_registry(
    world: dict[str, Any], phases: list[dict[str, Any]]
) -> Iterator[Problem]:
    if world.get("registry", "present") != "absent":
        return
    entered = {"owner": "an owner is", "alongside": "each agent alongside is"}
    for i, phase in enumerate(phases):
        for field, who in entered.items():
            if "resume" in phase and field in phase:
                yield (
                    f"/phases/{i}/{field}",
                    f"{who} entered in the agent registry, and world.registry is absent; "
                    f"drop {field} or the registry setting",
                )


def _no_service(world: dict[str, Any], phases: list[dict[str, Any]]) -> Iterator[Problem]:
    if world.get("user_questions", "present") == "present":
        return
    if "answerer" in world:
        yield (
            "/world/answerer",
            "with no user-questions service there is nothing to register an answerer with; "
            "remove answerer or set user_questions: present",
        )
    for i, phase in enumerate(phases):
        if "ask" in phase:
            yield (
                f"/phases/{i}",
                "an ask phase calls the user-questions service, which user_questions: absent "
                "leaves out; set user_questions: present or remove the phase",
            )


def _faults(faults: list[dict[str, Any]], agents: dict[str, Any]) -> Iterator[Problem]:
    for i, fault in enumerate(faults):
        where = f"/faults/{i}"
        if fault["agent"] not in agents:
            yield f"{where}/agent", unknown("agent", fault["agent"], sorted(agents))
        if fault["tool"] not in CALLER_TOOLS:
            yield f"{where}/tool", unknown("caller-forwarding tool", fault["tool"], CALLER_TOOLS)


def _expect(
    expect: dict[str, Any], agents: dict[str, Any], phases: list[dict[str, Any]]
) -> Iterator[Problem]:
    names = sorted(agents)
    # Agents of direct ask phases exist only in those phases' registries.
    direct = {
        n
        for p in phases
        if "ask" in p
        for n in [*(e["agent"] for e in p["ask"].get("live", [])), p["ask"].get("caller")]
        if n is not None
    }
    for i, err in enumerate(expect.get("tool_errors", [])):
        if err["agent"] is not None and err["agent"] not in agents and err["agent"] not in direct:
            yield f"/expect/tool_errors/{i}/agent", unknown("agent", err["agent"], names)
        if err["tool"] not in (*TOOLS, *DIRECT_CALLS):
            yield f"/expect/tool_errors/{i}/tool", unknown("tool", err["tool"], TOOLS)
    for key in ("final", "plan_mode"):
        for name in expect.get(key, {}):
            if name not in agents:
                yield f"/expect/{key}/{name}", unknown("agent", name, names)
    asks = sum("ask" in p for p in phases)
    if "direct" in expect and len(expect["direct"]) != asks:
        yield (
            "/expect/direct",
            f"{len(expect['direct'])} entries for {asks} ask phase(s); give one per ask phase, "
            "in order",
        )
    for i, call in enumerate(expect.get("asked", [])):
        caller = call.get("caller")
        if caller is not None and caller not in agents and caller not in direct:
            yield f"/expect/asked/{i}/caller", unknown("agent", caller, names)
    if "asked" in expect and len(expect["asked"]) != expect["answerer_calls"]:
        yield (
            "/expect/asked",
            f"{len(expect['asked'])} call(s) listed, but answerer_calls is "
            f"{expect['answerer_calls']}; list every call that reaches the answerer",
        )


def _lineage(agents: dict[str, Any], names: list[str]) -> Iterator[Problem]:
    for name in names:
        owner = agents[name].get("spawned_by")
        if owner is None:
            if not agents[name]["script"]:  # a child's may be: one the runtime must refuse
                why = ("a root's script is empty; give it the replies it is to make (only a "
                       "child that never starts has none)")  # fmt: skip
                yield f"/agents/{name}/script", why
            continue
        if owner not in agents:
            yield f"/agents/{name}/spawned_by", unknown("agent", owner, names)
            continue
        seen = {name}
        while owner is not None and owner in agents:
            if owner in seen:
                yield (
                    f"/agents/{name}/spawned_by",
                    "spawned_by forms a cycle; one agent must be a root",
                )
                break
            seen.add(owner)
            owner = agents[owner].get("spawned_by")


def _script(name: str, agents: dict[str, Any]) -> Iterator[Problem]:
    children = sorted(n for n, a in agents.items() if a.get("spawned_by") == name)
    labels: dict[str, dict[str, Any]] = {}  # label -> args of the labelled call
    for i, step in enumerate(agents[name]["script"]):
        where = f"/agents/{name}/script/{i}"
        visible = dict(labels)  # a step may only refer to calls of earlier steps
        if "say" in step:
            yield from _refs(step["say"], f"{where}/say", visible)
        for call, at in step_calls(step, where):
            args = call.get("args", {})
            yield from _refs(args, f"{at}/args", visible)
            if call["call"] not in TOOLS:
                yield f"{at}/call", unknown("tool", call["call"], TOOLS)
            if call["call"] == "subagent":
                child = args.get("name")
                if isinstance(child, str) and "{{" not in child and child not in children:
                    yield (
                        f"{at}/args/name",
                        (
                            f"subagent name {child!r} is not an agent spawned_by {name}; "
                            f"declare it with spawned_by: {name}"
                        ),
                    )
            label = call.get("as")
            if label is not None:
                if label in labels:
                    yield f"{at}/as", f"label {label!r} is already used by an earlier call"
                labels[label] = args


def _refs(value: Any, where: str, labels: dict[str, dict[str, Any]]) -> Iterator[Problem]:
    try:
        refs = _template.refs_in(value)
    except _template.TemplateSyntaxError as exc:
        yield where, str(exc)
        return
    for ref in refs:
        if ref.label not in labels:
            known = ", ".join(sorted(labels)) or "none yet"
            yield where, f"{ref} names no earlier labelled call (labels so far: {known})"
        elif ref.field == "args":
            try:
                _template.lookup(labels[ref.label], ref.path)
            except LookupError as exc:
                yield where, f"{ref}: {exc}"


def _phases(phases: list[dict[str, Any]], agents: dict[str, Any]) -> Iterator[Problem]:
    names = sorted(agents)
    started: set[str] = set()
    stored: set[str] = set()  # sessions in the durable store once the phases so far ran
    for i, phase in enumerate(phases):
        if "start" in phase:
            agent = phase["start"]
            if agent not in agents:
                yield f"/phases/{i}/start", unknown("agent", agent, names)
            elif agents[agent].get("spawned_by") is not None:
                yield (
                    f"/phases/{i}/start",
                    (
                        f"{agent} is spawned_by {agents[agent]['spawned_by']}; only a root can be "
                        "started, a child is created by its parent's subagent call"
                    ),
                )
            elif agent in started:
                yield f"/phases/{i}/start", f"{agent} was already started; use resume"
            started.add(agent)
            stored |= _descendants(agent, agents)
        elif "resume" in phase:
            agent = phase["resume"]
            if agent not in agents:
                yield f"/phases/{i}/resume", unknown("session", agent, names)
            elif agent not in stored:
                yield (
                    f"/phases/{i}/resume",
                    (
                        f"session {agent!r} does not exist yet; an earlier phase must start it "
                        "or its parent"
                    ),
                )
            if phase.get("owner") == agent:
                yield f"/phases/{i}/owner", f"{agent} cannot own itself; name another agent"
            beside = phase.get("alongside") or []
            for j, name in enumerate(beside):
                if name in (agent, phase.get("owner")):
                    yield (f"/phases/{i}/alongside/{j}", f"{name} is the resumed session or its "
                           "owner, entered already; name another live agent")  # fmt: skip
            stored |= _descendants(agent, agents)
        else:
            yield from direct_ask(phase["ask"], f"/phases/{i}/ask", agents)
    run = {p.get("start") for p in phases} | {p.get("resume") for p in phases}
    for name in names:
        if agents[name].get("spawned_by") is None and name not in run:
            yield (
                f"/agents/{name}",
                f"{name} is never run: add a phase 'start: {name}', or give it spawned_by",
            )


def _descendants(agent: str, agents: dict[str, Any]) -> set[str]:
    """The agent and every agent its delegations can create, transitively."""
    found, frontier = {agent}, [agent]
    while frontier:
        parent = frontier.pop()
        for name, spec in agents.items():
            if spec.get("spawned_by") == parent and name not in found:
                found.add(name)
                frontier.append(name)
    return found


def _holds(agents: dict[str, Any]) -> Iterator[Problem]:
    """A step held `after` an agent must be able to be released: by another agent of the
    scenario whose script ends, and never by one that can only end after it does."""
    waits: dict[str, set[str]] = {}  # agent -> the agents its holds wait for
    for name in sorted(agents):
        for i, step in enumerate(agents[name]["script"]):
            other = step.get("after")
            if other is None:
                continue
            where = f"/agents/{name}/script/{i}/after"
            if other not in agents:
                yield where, unknown("agent", other, sorted(agents))
            elif other == name or name in _descendants(other, agents) - {other}:
                what = "itself" if other == name else f"{other}, which it is delegated by"
                yield where, (f"{name} cannot wait for {what}: {other} cannot end before "
                              f"{name} does; name a sibling or another root")  # fmt: skip
            elif not agents[other]["script"]:
                yield where, (f"{other}'s script is empty, so it never ends in the fake; "
                              "name an agent that makes requests")  # fmt: skip
            else:
                waits.setdefault(name, set()).add(other)
    for name in sorted(waits):
        for other in sorted(waits[name]):
            if name in _waits_on(other, waits):
                yield (
                    f"/agents/{name}/script",
                    (
                        f"{name}'s hold until {other} ends closes a circle of holds, so none "
                        "can be released; remove one after"
                    ),
                )
                return


def _waits_on(agent: str, waits: dict[str, set[str]]) -> set[str]:
    found, frontier = set(), [agent]
    while frontier:
        for other in waits.get(frontier.pop(), ()):
            if other not in found:
                found.add(other)
                frontier.append(other)
    return found


def _delegations(agents: dict[str, Any]) -> Iterator[Problem]:
    """A child whose parent never delegates to it would leave its script unconsumed."""
    for name in sorted(agents):
        parent = agents[name].get("spawned_by")
        if parent not in agents:
            continue
        targets = [
            call.get("args", {}).get("name")
            for i, step in enumerate(agents[parent]["script"])
            for call, _ in step_calls(step, "")
            if call["call"] == "subagent"
        ]
        if any(not isinstance(t, str) or "{{" in t for t in targets):
            continue  # a templated or malformed name: the runtime decides, not this check
        if name not in targets:
            yield (
                f"/agents/{name}/spawned_by",
                (
                    f"{parent}'s script never calls subagent with name {name}; add that call "
                    "or remove the agent"
                ),
            )


def warnings(doc: dict[str, Any]) -> list[Problem]:
    """What is valid but almost certainly not meant; reported, never refused."""
    out: list[Problem] = []
    expect = doc.get("expect")
    if not isinstance(expect, dict) or expect.get("outcome") != "completed":
        return out
    # An agent whose run a fault aborts on a tool asks for nothing after that call.
    aborted = {(f.get("agent"), f.get("tool")) for f in doc.get("faults") or ()
               if isinstance(f, dict) and f.get("kind") == "aborted"}  # fmt: skip
    for name, spec in sorted(doc.get("agents", {}).items()):
        script = spec.get("script") or []
        last = script[-1] if script and isinstance(script[-1], dict) else {}
        calls = [last] if "call" in last else list(last.get("calls") or ())
        tools = [c.get("call") for c in calls if isinstance(c, dict)]
        if tools and not any((name, tool) in aborted for tool in tools):
            out.append(
                (
                    f"/agents/{name}/script/{len(script) - 1}",
                    "the script ends in a tool call, so the runtime will ask for one more "
                    "step and the run cannot complete; end it with a say: step, or expect "
                    "outcome hang or error",
                )
            )
    return out
