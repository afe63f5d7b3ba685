"""stream-json -> the protocol's observation (scenarios/protocol.json): Claude Code's
output, and Qwen Code's, which writes the same events.

Claude Code in SDK mode writes stream-json events: the root's messages with
`parent_tool_use_id: null`, a child's tagged with the id of the `Agent` call that started
it, but not all of them (a child's final text and a grandchild's calls are missing). So
the root is read from the stream, and every subagent from the transcript the CLI writes for
it under its config dir (`projects/<cwd>/<session>/subagents/agent-<id>.jsonl`), named by
the stream's `task_started` event. Tool errors and handoffs are put in the order of a
walk of the delegation tree: each agent's calls in the order the fake numbered them, a
child's whole run before the handoff of the call that started it. That is the order of
any run that is sequential or nested, and, for children running side by side, whose
results race, the order their parent called them in.
Everything is read back in the scenario's names (the dialect spells a child's name as the
`Agent` call's `description`), and normalised: no session ids, uuids, timings or paths.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from harness.adapters._calls import Call, walk
from harness.adapters._handback import unframed

DELEGATION = "Agent"
# Where Claude Code keeps each subagent's transcript, under the scenario's folder.
SUBAGENTS = "config/projects/*/*/subagents/agent-*.jsonl"
# Numbers in the trailer of a handoff that vary from run to run.
_VARYING = re.compile(r"\b(subagent_tokens|duration_ms): \d+")


@dataclass
class Stream:
    """What one scenario's CLI processes wrote, read as it arrives (`read`), one phase's
    root at a time."""

    # The files `finish` reads, as globs under the scenario's folder, and the types of the
    # JSON-lines entries it reads in them (2.1.332 also writes attachments and request
    # shapes there, ten times their size, which it does not read).
    kept: ClassVar[tuple[str, ...]] = (SUBAGENTS,)
    entries: ClassVar[tuple[str, ...]] = ("assistant", "user")
    root: str = ""
    delegation: str = DELEGATION  # the runtime's name for the scenario's `subagent`
    # Whether a child's events are all in the stream (Qwen Code) or are read from the
    # transcripts the CLI keeps (Claude Code leaves some out of the stream).
    children_in_stream: bool = False
    roots: list[str] = field(default_factory=list)  # each phase's, in order
    calls: dict[str, Call] = field(default_factory=dict)  # tool_use id -> the call
    children: dict[str, str] = field(default_factory=dict)  # Agent call id -> child
    tasks: dict[str, str] = field(default_factory=dict)  # subagent (task) id -> child
    errors: dict[str, dict[str, Any]] = field(default_factory=dict)  # call id -> its error
    handed: dict[str, dict[str, Any]] = field(default_factory=dict)  # Agent call id -> handoff
    tool_errors: list[dict[str, Any]] = field(default_factory=list)
    handoffs: list[dict[str, Any]] = field(default_factory=list)
    final: dict[str, str] = field(default_factory=dict)
    result: dict[str, Any] | None = None  # the phase's `result` event
    resulted: set[str] = field(default_factory=set)  # the calls whose result was read
    # What each agent said and was told, as the reference's durable log spells it (for
    # `harness repro`), numbered in the order read: a child Claude Code keeps out of its
    # stream comes after the stream, from its transcript.
    transcript: list[dict[str, Any]] = field(default_factory=list)

    def read(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        parent_call = event.get("parent_tool_use_id")
        if parent_call is not None and self.children_in_stream:
            agent = self.children.get(parent_call, str(parent_call))
            if kind == "assistant":
                self._assistant(agent, event["message"].get("content") or [])
            elif kind == "user":
                self._results(event["message"].get("content"))
            return
        if parent_call is not None:
            # A subagent's: its transcript has all of them. Its calls are noted now all the
            # same, so that a question it puts to the human is known as its own.
            if kind == "assistant":
                agent = self.children.get(parent_call, str(parent_call))
                self._assistant(agent, event["message"].get("content") or [], calls_only=True)
            return
        if kind == "assistant":
            self._assistant(self.root, event["message"].get("content") or [])
        elif kind == "user":
            self._results(event["message"].get("content"))
        elif kind == "system" and event.get("subtype") == "task_started":
            # The dialect spells a child's scenario name as its Agent call's description.
            # Qwen Code 0.24 moved the fields under `data`; Claude Code's are at the top.
            task = event["data"] if isinstance(event.get("data"), dict) else event
            self.tasks[str(task["task_id"])] = str(task.get("description"))
        elif kind == "result":
            self.result = event
            if isinstance(event.get("result"), str) and event.get("subtype") == "success":
                self.final[self.root] = event["result"]

    def _assistant(
        self, agent: str, content: list[dict[str, Any]], calls_only: bool = False
    ) -> None:
        texts = [b["text"] for b in content if b.get("type") == "text" and b.get("text")]
        if texts and not calls_only:
            self.final[agent] = "".join(texts)
        made = []
        for block in content:
            if block.get("type") != "tool_use":
                continue
            call = Call(agent, str(block["name"]), dict(block.get("input") or {}))
            self.calls[str(block["id"])] = call
            made.append({"id": str(block["id"]), "name": call.tool,
                         "arguments": json.dumps(call.input, sort_keys=True)})  # fmt: skip
            if call.tool == self.delegation:
                self.children[str(block["id"])] = str(call.input.get("description", block["id"]))
        if (texts or made) and not calls_only:
            self._said(agent, {"type": "message/assistant", "content": "".join(texts),
                               "tool_calls": made})  # fmt: skip

    def _results(self, content: Any) -> None:
        for block in content if isinstance(content, list) else []:
            if block.get("type") != "tool_result":
                continue
            call = self.calls.get(str(block.get("tool_use_id")))
            if call is None:
                continue
            self.resulted.add(str(block["tool_use_id"]))
            text = _text(block.get("content"))
            call_id = str(block["tool_use_id"])
            error = {"error": {"code": ""}} if block.get("is_error") is True else {}
            self._said(call.agent, {"type": "tool/result", "tool": call.tool, "call_id": call_id,
                                    "is_error": bool(error), **error, "content": text})  # fmt: skip
            if block.get("is_error") is True:
                self.errors[call_id] = {"agent": call.agent, "tool": call.tool, "code": "",
                                        "name": "Error", "text": text}  # fmt: skip
            elif call.tool == self.delegation:
                self.handed[call_id] = {"parent": call.agent, "child": self.children[call_id],
                                        "child_final": None, "tool_result": text}  # fmt: skip

    def _said(self, agent: str, event: dict[str, Any]) -> None:
        self.transcript.append({"seq": len(self.transcript) + 1, "agent": agent, **event})

    def normalised(self, text: str) -> str:
        """A text the model was shown, without what varies per run: subagent ids become
        the child's name, token counts and durations 0; and a report's hand-back frame
        read off (harness.adapters.clis.handback)."""
        text = unframed(text)
        for task, child in self.tasks.items():
            text = text.replace(task, child)
        return _VARYING.sub(lambda m: f"{m[1]}: 0", text)

    def finish(self, folder: Path) -> None:
        """Every subagent's calls, results and final text, from the transcript the CLI kept
        of it under its config dir; then the errors and handoffs in the order of the walk,
        every text normalised."""
        for path in sorted(folder.glob(SUBAGENTS)):
            child = self.tasks.get(path.stem.removeprefix("agent-"))
            if child is None:
                continue
            for line in path.read_text(encoding="utf-8").splitlines():
                entry = json.loads(line) if line.strip() else {}
                message = entry.get("message")
                if not isinstance(message, dict):
                    continue
                if entry.get("type") == self.entries[0]:
                    self._assistant(child, message.get("content") or [])
                elif entry.get("type") == self.entries[1]:
                    self._results(message.get("content"))
        for agent, text in self.final.items():
            self.final[agent] = self.normalised(text)
        self.tool_errors, self.handoffs = walk(
            self.roots, self.calls, self.children, self.handed, self.errors
        )
        for handoff in self.handoffs:
            if self.children_in_stream and handoff["child"] not in self.final:
                # Qwen Code streams and records no child's text, and hands back its final
                # text as the delegation's result, as its agent tool promises.
                self.final[handoff["child"]] = handoff["tool_result"]
            handoff["child_final"] = self.final.get(handoff["child"])
            handoff["tool_result"] = self.normalised(handoff["tool_result"])
        for error in self.tool_errors:
            error["text"] = self.normalised(error["text"])
        for event in self.transcript:
            event["content"] = self.normalised(event["content"])


def _text(content: Any) -> str:
    """A tool result's content, a string or text blocks, as the one text the model read."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if b.get("type") == "text")
    return ""
