"""Codex's own output -> the protocol's observation (scenarios/protocol.json).

`codex exec --json` writes the root thread's events alone (`thread.started`, its
`agent_message`s and `collab_tool_call`s, `turn.completed`), so a phase's end and its root
thread are read from the stream, and every thread, children included, from the rollout
Codex keeps of it under CODEX_HOME/sessions (`rollout-<time>-<thread id>.jsonl`: its
`session_meta`, then `response_item`s: the model's `function_call`s and messages, and
each call's `function_call_output`). A child is the thread whose id its parent's
`spawn_agent` returned, named by the prompt it was given (the scenario's delegation
prompt); its handoff is the output of the `wait_agent` call on that id.

Neither the wire nor the rollout flags a failed tool result: Codex's tool router logs each
one on stderr (`ERROR codex_core::tools::router: error=MESSAGE`) and gives the model
MESSAGE as the output. So a call is an error tool result when its output is a message the
router logged as an error in that run (its stderr, kept beside the rollout, `ERRORS`).

Everything comes back in the scenario's names and normalised: thread ids and the
nicknames Codex draws for its children become agent names, and no timing, token count or
path is kept. The rollouts also give `harness repro`'s transcript (`transcript`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from harness.adapters._calls import Call, serial

SPAWN, WAIT = "spawn_agent", "wait_agent"
ERRORS = "codex-stderr.log"  # each phase's stderr, in the scenario's folder (adapter.py)
ROLLOUTS = "home/.codex/sessions/**/rollout-*.jsonl"  # each thread's, under the folder
_ROUTER = re.compile(r"ERROR codex_core::tools::router: error=(.*)$")


@dataclass
class Thread:
    """One Codex thread, as its rollout has it."""

    agent: str
    calls: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)  # id, tool, args
    outputs: dict[str, str] = field(default_factory=dict)  # call id -> output text
    final: str | None = None
    # Its model turns and tool results in the order written: ("said", text), ("call",
    # call id), ("result", call id).
    order: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class Events:
    """What one scenario's `codex exec` processes wrote, read as it arrives (`read`), then
    its rollouts (`finish`)."""

    # The files `finish` reads, as globs under the scenario's folder.
    kept: ClassVar[tuple[str, ...]] = (ROLLOUTS, ERRORS)
    root: str = ""
    delegation: str = SPAWN  # the runtime's name for the scenario's `subagent`
    roots: list[str] = field(default_factory=list)  # each phase's, in order
    prompts: dict[str, str] = field(default_factory=dict)  # delegation prompt -> child
    calls: dict[str, Call] = field(default_factory=dict)  # call id -> the call
    tool_errors: list[dict[str, Any]] = field(default_factory=list)
    handoffs: list[dict[str, Any]] = field(default_factory=list)
    final: dict[str, str] = field(default_factory=dict)
    result: dict[str, Any] | None = None  # the phase's turn.completed (or .failed)
    # The calls whose result was read: known from the rollouts, once the run is over (a
    # call of Codex's human tool never waits headless, so none is watched for while it runs).
    resulted: set[str] = field(default_factory=set)
    # What each agent said and was told, in the reference's durable-log terms, numbered in
    # the order of the rollouts (`harness repro`'s transcript).
    transcript: list[dict[str, Any]] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)  # thread id -> agent
    nicknames: dict[str, str] = field(default_factory=dict)  # a child's nickname -> agent

    def read(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "thread.started":
            self.names[str(event["thread_id"])] = self.root
        elif kind == "item.completed" and event["item"].get("type") == "agent_message":
            self.final[self.root] = str(event["item"].get("text", ""))
        elif kind == "turn.completed":
            self.result = {"is_error": False}
        elif kind == "turn.failed":
            # The turn's end, failed (an `error` item, such as the model metadata it lacks
            # for `scripted`, is only a warning, and a top-level `error` precedes this).
            self.result = {"is_error": True, "result": (event.get("error") or {}).get("message")}

    def normalised(self, text: str) -> str:
        """A text the model was shown, with Codex's thread ids, and the nicknames it draws
        at random for its children (whole words), as the scenario's names."""
        for thread, agent in sorted(self.names.items(), key=lambda kv: -len(kv[0])):
            text = text.replace(thread, agent)
        for nickname, agent in self.nicknames.items():
            text = re.sub(rf"\b{re.escape(nickname)}\b", agent.replace("\\", "\\\\"), text)
        return text

    def finish(self, folder: Path) -> None:
        """Every thread's calls, outputs and final text from its rollout, named; then the
        errors and handoffs in the order of a walk of the delegation tree."""
        threads = self._threads(folder)
        errors = _logged_errors(folder / ERRORS)
        spawned: dict[str, str] = {}  # spawn call id -> child agent
        waited: dict[str, str] = {}  # child agent -> the wait_agent call id on it
        for thread in threads.values():
            for call_id, tool, args in thread.calls:
                output = thread.outputs.get(call_id)
                if tool == SPAWN and output is not None:
                    child = self._spawned(output, str(args.get("message", "")), threads)
                    if child is not None:
                        spawned[call_id] = child
                if tool == WAIT:
                    for target in args.get("targets") or ():
                        waited.setdefault(self.names.get(str(target), str(target)), call_id)
        for thread in threads.values():  # every child named now: its calls are its own
            self.calls.update({c: Call(thread.agent, t, a) for c, t, a in thread.calls})
            self.resulted.update(thread.outputs)
            if thread.final is not None:
                self.final[thread.agent] = thread.final
        by_agent = {t.agent: t for t in threads.values()}
        walked: set[str] = set()

        def walk(agent: str) -> None:
            if agent in walked or agent not in by_agent:
                return
            walked.add(agent)
            thread = by_agent[agent]
            for call_id, tool, _ in sorted(thread.calls, key=lambda c: serial(c[0])):
                output = thread.outputs.get(call_id)
                if call_id in spawned:
                    child = spawned[call_id]
                    walk(child)
                    wait = waited.get(child)
                    result = by_agent[agent].outputs.get(wait) if wait else None
                    if result is not None:
                        self.handoffs.append({"parent": agent, "child": child,
                                              "child_final": self.final.get(child),
                                              "tool_result": self.normalised(result)})  # fmt: skip
                elif output is not None and output in errors and tool != WAIT:
                    self.tool_errors.append({"agent": agent, "tool": tool, "code": "",
                                             "name": "Error",
                                             "text": self.normalised(output)})  # fmt: skip

        for root in self.roots:
            walk(root)
        self.final = {a: self.normalised(t) for a, t in self.final.items()}
        for thread in threads.values():
            self._told(thread, errors)

    def _told(self, thread: Thread, errors: set[str]) -> None:
        """The thread's turns and results as transcript events: an assistant message with
        the calls that follow it, then each call's result."""
        said: dict[str, Any] | None = None  # the assistant message calls still join
        args = {call_id: (tool, a) for call_id, tool, a in thread.calls}
        for kind, value in thread.order:
            if kind == "said" or (kind == "call" and said is None):
                said = {"type": "message/assistant", "tool_calls": [],
                        "content": self.normalised(value) if kind == "said" else ""}  # fmt: skip
                self._said(thread.agent, said)
            if kind == "call" and said is not None:
                tool, given = args[value]
                text = self.normalised(json.dumps(given, sort_keys=True))  # a thread id
                said["tool_calls"].append({"id": value, "name": tool, "arguments": text})
            elif kind == "result":
                said, text = None, thread.outputs[value]
                error = {"error": {"code": ""}} if text in errors else {}
                self._said(thread.agent, {"type": "tool/result", "tool": args.get(value, ("",))[0],
                                          "call_id": value, "is_error": bool(error), **error,
                                          "content": self.normalised(text)})  # fmt: skip

    def _said(self, agent: str, event: dict[str, Any]) -> None:
        self.transcript.append({"seq": len(self.transcript) + 1, "agent": agent, **event})

    def _threads(self, folder: Path) -> dict[str, Thread]:
        """Each rollout under the scenario's folder, by thread id, in the order started."""
        out: dict[str, Thread] = {}
        for path in sorted(folder.glob(ROLLOUTS)):
            lines = path.read_text(encoding="utf-8").splitlines()
            entries = [json.loads(line) for line in lines if line.strip()]
            meta: dict[str, Any] = next(
                (e["payload"] for e in entries if e.get("type") == "session_meta"), {}
            )
            thread = Thread(self.names.get(str(meta.get("id")), str(meta.get("id"))))
            for entry in entries:
                item = entry.get("payload") if entry.get("type") == "response_item" else None
                if not isinstance(item, dict):
                    continue
                if item.get("type") == "function_call":
                    args = json.loads(item.get("arguments") or "{}")
                    thread.calls.append((str(item["call_id"]), str(item["name"]), args))
                    thread.order.append(("call", str(item["call_id"])))
                elif item.get("type") == "function_call_output":
                    thread.outputs[str(item["call_id"])] = _text(item.get("output"))
                    thread.order.append(("result", str(item["call_id"])))
                elif item.get("type") == "message" and item.get("role") == "assistant":
                    said = "".join(p.get("text", "") for p in item.get("content") or ()
                                   if p.get("type") == "output_text")  # fmt: skip
                    thread.final = said or thread.final
                    thread.order.append(("said", said))
            out[str(meta.get("id"))] = thread
        return out

    def _spawned(self, output: str, prompt: str, threads: dict[str, Thread]) -> str | None:
        """The child a spawn_agent output names ({agent_id, nickname}), named by its
        prompt; None when the spawn failed (no agent id)."""
        try:
            spawned = json.loads(output)
        except ValueError:
            return None
        agent_id = spawned.get("agent_id") if isinstance(spawned, dict) else None
        if not isinstance(agent_id, str):
            return None
        child = self.prompts.get(prompt, agent_id)
        self.names[agent_id] = child
        if isinstance(spawned.get("nickname"), str) and spawned["nickname"]:
            self.nicknames[spawned["nickname"]] = child
        if agent_id in threads:
            threads[agent_id].agent = child
        return child


def _text(output: Any) -> str:
    """A function_call_output's output: a string, or content items of which the text."""
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        return "\n".join(str(p.get("text", "")) for p in output if isinstance(p, dict))
    return json.dumps(output)


def _logged_errors(path: Path) -> set[str]:
    """The messages Codex's tool router logged as errors (a failed tool call's output)."""
    if not path.is_file():
        return set()
    found = (_ROUTER.search(line) for line in path.read_text("utf-8", "replace").splitlines())
    return {m[1].strip() for m in found if m}
