"""A small JSON-lines adapter in a second process, for testing the protocol end to end:
`python -m tests.process.jsonl_adapter`. It runs service-level scenarios on the reference runtime's
registry and user-questions service, doing from the raw scenario document what a runtime
in another language would do (scenarios/INTERPRETING.md), and skips the rest.

`--features` overrides what its hello announces; `--misbehave KIND` makes it break the
protocol on purpose, `--omit FIELD` leaves a field out of every observation, and
`--crash-on ID,...` exits in the middle of those scenarios only, so the harness's side of
every failure can be tested.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from typing import Any

from harness.runtime.questions import (
    AbortSignal,
    Answer,
    AskUserQuestionRequest,
    Intent,
    Option,
    Question,
    UserQuestionError,
    UserQuestionService,
)
from harness.runtime.registry import Agent, AgentRegistry

SERVICE_FEATURES = ["service", "intent", "no-registry", "no-answerer", "provider-lifecycle"]


class Provider:
    """The human end: scripted answers, or a UI that never answers (tripwire, unreachable)."""

    def __init__(self, world: dict[str, Any]) -> None:
        self.kind = world.get("answerer", "tripwire")
        self.answers = world.get("answers", {})
        self.calls = 0
        self.asked: list[dict[str, Any]] = []
        self.reached = asyncio.Event()

    async def answer(self, request: AskUserQuestionRequest) -> list[Answer]:
        self.calls += 1
        caller = request.agent.id if request.agent else None
        self.asked.append({"caller": caller, "questions": [q.to_json() for q in request.questions]})
        if self.kind != "scripted":
            self.reached.set()
            await asyncio.Event().wait()
        missing = [q.id for q in request.questions if q.id not in self.answers]
        if missing:
            raise LookupError(f"scripted human has no answer for question(s) {', '.join(missing)}")
        return [
            Answer(q.id, tuple(self.answers[q.id]["selected"]), self.answers[q.id].get("custom"))
            for q in request.questions
        ]


class Dismissing:
    """The second provider a phase's `provider: [register]` registers: its human closes
    every question."""

    async def answer(self, request: AskUserQuestionRequest) -> list[Answer]:
        raise UserQuestionError("ASK_CANCELLED")


def question(doc: dict[str, Any]) -> Question:
    intent = doc.get("intent")
    return Question(
        id=doc["id"],
        question=doc["question"],
        header=doc.get("header"),
        options=tuple(Option(o["label"], o.get("description")) for o in doc.get("options", [])),
        multi_select=doc.get("multi_select", False),
        detail=doc.get("detail"),
        intent=Intent(intent["kind"], intent["approve"]) if intent else None,
    )


async def phase(ask: dict[str, Any], world: dict[str, Any], provider: Provider) -> dict[str, Any]:
    registry = AgentRegistry() if world.get("registry", "present") != "absent" else None
    objects: dict[str, Agent] = {}
    previous: dict[str, Agent] = {}
    detach = {}
    owners = {e["agent"]: e.get("owner") for e in ask.get("live", [])}
    for name, owner in owners.items():  # in list order: a dict keeps insertion order
        objects[name] = Agent(name)
        if registry is not None:
            detach[name] = registry.enter(objects[name], objects[owner] if owner else None)
    for name in ask.get("reenter", []):
        previous[name] = objects[name]
        objects[name] = Agent(name)
        if registry is not None:
            detach[name]()
            owner = owners[name]
            detach[name] = registry.enter(objects[name], objects[owner] if owner else None)
    for name in ask.get("detach", []):
        if name in detach:
            detach[name]()
    caller = ask.get("caller")
    agent = None
    if caller is not None:
        stale = ask.get("caller_object") == "stale"
        agent = (previous.get(caller) or Agent(caller)) if stale else objects[caller]
    answerer = provider if world.get("answerer", "tripwire") != "none" else None
    service = UserQuestionService(registry)
    dispose = service.register(answerer) if answerer is not None else None
    registrations: list[dict[str, str] | None] = []
    for call in ask.get("provider", []):  # the host's provider lifecycle calls, in order
        if call == "dispose" and dispose is not None:
            dispose()
        elif call == "register":
            try:
                service.register(Dismissing())
                registrations.append(None)
            except UserQuestionError as exc:
                registrations.append({"name": exc.name, "code": exc.code, "message": exc.message})
    reported: dict[str, Any] = {"registrations": registrations} if registrations else {}
    request = AskUserQuestionRequest(
        questions=tuple(question(q) for q in ask["questions"]),
        agent=agent,
        signal=AbortSignal(aborted=ask.get("aborted", False)),
    )
    asking = asyncio.ensure_future(service.ask(request))
    reached = asyncio.ensure_future(provider.reached.wait())
    await asyncio.wait({asking, reached}, return_when=asyncio.FIRST_COMPLETED)
    reached.cancel()
    if not asking.done():
        asking.cancel()
        raise TimeoutError("the answerer was reached and never answers")
    try:
        answers = asking.result()
    except UserQuestionError as exc:
        error = {"name": exc.name, "code": exc.code, "message": exc.message}
        return {**reported, "caller": caller, "answers": None, "error": error}
    return {**reported, "caller": caller, "answers": [a.to_json() for a in answers], "error": None}


async def observe(doc: dict[str, Any]) -> dict[str, Any]:
    world = doc.get("world", {})
    provider = Provider(world)
    direct: list[dict[str, Any]] = []
    # Every field, though a service scenario has no model tools, delegations or finals.
    observation: dict[str, Any] = {"outcome": "completed", "direct": direct, "tool_errors": [],
                                   "handoffs": [], "final": {}, "plan_mode": {}}  # fmt: skip
    for p in doc["phases"]:
        try:
            direct.append(await phase(p["ask"], world, provider))
        except TimeoutError as exc:
            observation.update(outcome="hang", error=str(exc))
            break
        except Exception as exc:
            observation.update(outcome="error", error=f"{type(exc).__name__}: {exc}")
            break
    observation["answerer_calls"] = provider.calls
    observation["asked"] = provider.asked
    return observation


PROBE_SESSION = "probe-session-1"  # the id a runtime gives its root, as the probe reports it


def probe(doc: dict[str, Any], model: dict[str, Any]) -> dict[str, Any]:
    """One real request to the served fake, as the first started agent: proof that the
    base URL and the agent header (or, when the hello declared one, a session header of the
    runtime's own) reach the scenario's scripts over loopback."""
    import urllib.request

    agent = next(p["start"] for p in doc["phases"] if "start" in p)
    body = {"model": "m", "messages": [{"role": "user", "content": "go"}]}
    if model.get("session_header"):  # named as a runtime would: by its own session id
        agent, routing = PROBE_SESSION, {model["session_header"]: PROBE_SESSION}
    else:
        routing = {model["agent_header"]: agent}
    request = urllib.request.Request(
        model["base_url"] + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json", **routing},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        message = json.load(response)["choices"][0]["message"]
    said = message.get("content") or json.dumps(message.get("tool_calls"))
    return {"outcome": "completed", "answerer_calls": 0, "asked": [], "direct": [],
            "tool_errors": [], "handoffs": [], "final": {agent: said}, "plan_mode": {}}  # fmt: skip


def reply(message: dict[str, Any]) -> None:
    print(json.dumps(message, ensure_ascii=False), flush=True)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--features", default=",".join(SERVICE_FEATURES))
    parser.add_argument("--misbehave", default=None)
    parser.add_argument("--omit", default=None, help="leave this field out of observations")
    parser.add_argument("--crash-on", default="", help="scenario ids to exit in the middle of")
    parser.add_argument("--probe-model", action="store_true", help="ask the served fake once")
    parser.add_argument("--session-header", default=None, help="declare it in the hello")
    parser.add_argument("--delegation", default=None, help="a dialect (JSON) for the hello")
    parser.add_argument("--dialect", default=None, help="a dialect (JSON, or a shipped name)")
    args = parser.parse_args()
    misbehave = args.misbehave
    crash_on = set(filter(None, args.crash_on.split(",")))
    if crash_on:  # which process wrote what, for the stderr tails a crash is reported with
        print(f"adapter: started (pid {os.getpid()})", file=sys.stderr, flush=True)
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            reply({"type": "error", "message": f"not JSON: {line.strip()[:80]}"})
            continue
        kind = message.get("type")
        if kind == "hello":
            if misbehave == "no-hello":
                time.sleep(60)
            if misbehave == "hello-error":  # as an adapter for another major version answers
                reply({"type": "error", "message": "this adapter runs scenarios 9.x only"})
                return 2
            protocol = 2 if misbehave == "protocol-2" else 1
            features = [f for f in args.features.split(",") if f]
            runtime = os.environ.get("ADAPTER_RUNTIME_NOTE", "the reference service")
            hello = {"type": "hello", "protocol": protocol, "adapter": "py", "features": features,
                     "runtime": runtime}  # fmt: skip
            if args.session_header is not None:
                hello["session_header"] = args.session_header
            if args.delegation is not None:
                hello["delegation"] = json.loads(args.delegation)
            if args.dialect is not None:
                shipped = args.dialect.replace("-", "").isalnum()
                hello["dialect"] = args.dialect if shipped else json.loads(args.dialect)
            reply(hello)
        elif kind == "bye":
            return 0
        elif kind == "run":
            sid, doc = message["id"], message["scenario"]
            if misbehave == "crash":
                print("adapter: crashing on purpose", file=sys.stderr, flush=True)
                return 3
            if sid in crash_on:
                print(f"adapter: crashing on {sid} (pid {os.getpid()})", file=sys.stderr)
                return 4
            if misbehave == "silent":
                continue
            if misbehave == "slow":  # slow but moving: a line on stderr every 0.1 s, for 1 s
                for _ in range(10):
                    print("adapter: still working", file=sys.stderr, flush=True)
                    time.sleep(0.1)
            if misbehave == "garbage":
                print("this is not json", flush=True)
                continue
            if misbehave == "refuse":  # a line it cannot use: an error line, and it carries on
                reply({"type": "error", "message": "refusing on purpose"})
                continue
            if args.probe_model and message.get("model"):
                reply({"type": "result", "id": sid, "observation": probe(doc, message["model"])})
                continue
            if any("ask" not in p for p in doc["phases"]):
                reply({"type": "skip", "id": sid, "reason": "needs a model"})
                continue
            observation = asyncio.run(observe(doc))
            if misbehave == "bad-observation":
                observation["answerer_calls"] = "many"
            if args.omit:
                del observation[args.omit]
            if misbehave == "reword":
                for entry in observation["direct"]:
                    if entry["error"]:
                        entry["error"]["message"] += "!"
            reply({"type": "result", "id": sid, "observation": observation})
        else:
            reply({"type": "error", "message": f"unknown type {kind!r}"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
