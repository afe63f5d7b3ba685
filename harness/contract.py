"""The contract between the runner and the runtimes under test, below both: what every
adapter is (something that runs one scenario against a runtime and hands back an
observation, which the harness then judges the same way for every runtime), the options a
run is given, the wire it runs over, and the observation itself with its portable part.
The fake, every adapter and the runner import this module; it imports none of them, not
even for types."""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from harness.scenario import Scenario

# The backstop: seconds a runtime may go without any sign of progress before it is stopped
# (harness.adapters._watchdog), never a limit on a scenario's length. Enough for a real
# agent CLI on a loaded 2-core machine, where a start of opencode's or Qwen Code's shows
# nothing for several seconds; hangs are found by quiescence at once, not by this.
DEFAULT_BACKSTOP = 60.0

# Every run's clock, handed to the store (event timestamps) and the fake (completion
# times): nothing a run observes reads the wall clock, so no clock needs patching
# (tests/test_runner.py runs the corpus under freezegun at two far-apart instants to
# prove it). `harness serve` stamps its replies with the same instant.
FROZEN_AT = "2026-01-01T00:00:00+00:00"
FROZEN_EPOCH = 1767225600  # FROZEN_AT in seconds; tests/test_runner.py checks the two agree

# The header the reference runtime's client names each request's agent in (it is told the
# name from outside, as a real runtime would be configured): the fake routes on it.
AGENT_HEADER = "X-Harness-Agent"

# The header the reference runtime names its session in under `routing="session"`: one the
# fake is configured to key conversations on, as a real runtime's session header would be.
SESSION_HEADER = "X-Harness-Session"
ROUTINGS = ("agent", "session", "content")

# The one key a runtime that insists on a key is given (an SDK that refuses to start
# without one, a CLI that checks for it). The fake refuses any request carrying another
# credential, so a real key that leaked into a run fails it instead of being ignored.
SENTINEL_KEY = "sk-keyless-harness-sentinel"


# Conformance levels (scenarios/INTERPRETING.md), lowest first: each includes every
# expectation of those below. The runner judges by them; a known-failures file names one.
LEVELS = ("live", "rule", "upstream")

# The APIs the reference runtime can reach the fake by: its own client, or an official SDK.
APIS = ("chat-completions", "anthropic-messages", "openai-responses", "gemini-generate")


@dataclass(frozen=True)
class Wire:
    """How requests and replies travel: JSON, or SSE with deltas of `chunk` characters
    (None: each text or argument string in one delta); and how the fake tells agents apart:
    `agent` (the X-Harness-Agent header), `session` (a session header the fake was told
    of, new keys assigned by content) or `content` (no header: the conversation itself);
    and which API the reference runtime's model client speaks (APIS: its own Chat
    Completions client, or the official anthropic or openai SDK on Messages or Responses).
    Observations must not depend on any of it, in their portable part."""

    stream: bool = False
    chunk: int | None = None
    routing: str = "agent"
    api: str = "chat-completions"

    def describe(self) -> str:
        shown = "json" if not self.stream else "sse" if self.chunk is None else f"sse-{self.chunk}"
        shown = shown if self.routing == "agent" else f"{shown}+{self.routing}"
        return shown if self.api == APIS[0] else f"{shown}+{self.api}"

    @property
    def agent_header(self) -> str | None:
        """What the runtime's client names each request's agent in, if anything."""
        return {"agent": AGENT_HEADER, "session": SESSION_HEADER}.get(self.routing)


@dataclass(frozen=True)
class CapturedRequest:
    """One request the fake model endpoint was sent, as an observation keeps it."""

    agent: str | None
    step: int | None
    raw: bytes  # the exact bytes sent, for byte-level prefix comparisons
    headers: tuple[tuple[str, str], ...] = ()  # as sent, so tests can prove no key travels

    @property
    def body(self) -> Any:
        """The parsed request (None if it was not JSON), parsed on each access and not
        kept: the raw bytes are a third of what the parsed body would be."""
        try:
            return json.loads(self.raw)
        except ValueError:
            return None


Event = dict[str, Any]


@dataclass
class Observation:
    scenario_id: str
    outcome: str  # completed | error
    error: str | None
    answerer_calls: int
    tool_errors: list[dict[str, Any]]
    handoffs: list[dict[str, Any]]
    final: dict[str, str | None]
    # A Logs (decoded on access) for the reference runtime; a plain dict from adapters.
    sessions: Mapping[str, list[Event]]
    plan_mode: dict[str, bool] = field(default_factory=dict)
    direct: list[dict[str, Any]] = field(default_factory=list)
    hang: dict[str, Any] | None = None
    # The last requests the fake was sent, in full (a bounded number: see KEEP_REQUESTS),
    # and how many it was sent in all; `model_prefix` sums up every one of them.
    requests: list[CapturedRequest] = field(default_factory=list)
    served: int = 0
    model_prefix: dict[str, Any] = field(default_factory=dict)
    script_errors: list[str] = field(default_factory=list)
    # Every call that reached the answerer: {caller, questions} (Question.to_json's shape).
    asked: list[dict[str, Any]] = field(default_factory=list)
    # Requests the runtime made beside its agents' turns (a title, say), each answered by
    # the fake without consuming a script (harness.fake.side.Side): what each was.
    side_requests: list[str] = field(default_factory=list)
    # Why the adapter could not run the scenario at all (it crashed, went silent or broke
    # the protocol): the scenario is then an error, not a failure of the runtime's.
    adapter_error: str | None = None

    @classmethod
    def empty(cls, scenario_id: str, outcome: str, error: str) -> Observation:
        """An observation of a run that never happened: skipped, or an adapter that broke."""
        return cls(scenario_id, outcome, error, 0, [], [], {}, {})

    @classmethod
    def broken(cls, scenario_id: str, why: str) -> Observation:
        """The adapter could not run the scenario: `why` says what broke (one line)."""
        return cls(scenario_id, "error", why, 0, [], [], {}, {}, adapter_error=why)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "outcome": self.outcome,
            "answerer_calls": self.answerer_calls,
            "tool_errors": [
                {"agent": e["agent"], "tool": e["tool"], "code": e["code"]}
                for e in self.tool_errors
            ],
            "handoffs": [h["tool_result"] for h in self.handoffs],
            "final": dict(self.final),
            "plan_mode": dict(self.plan_mode),
            "asked": list(self.asked),
        }
        if self.error is not None:
            out["error"] = self.error
        if self.script_errors:
            out["script_errors"] = list(self.script_errors)
        if self.hang is not None:
            out["hang"] = self.hang
        if self.side_requests:
            out["side_requests"] = list(self.side_requests)
        return out

    def snapshot(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "scenario": self.scenario_id,
            "outcome": self.outcome,
            "answerer_calls": self.answerer_calls,
            "tool_errors": self.tool_errors,
            "handoffs": self.handoffs,
            "final": self.final,
            "plan_mode": self.plan_mode,
            "sessions": dict(self.sessions),
            "asked": self.asked,
        }
        if self.error is not None:
            doc["error"] = self.error
        if self.script_errors:
            doc["script_errors"] = self.script_errors
        if self.direct:
            doc["direct"] = self.direct
        if self.hang is not None:
            doc["hang"] = self.hang
        if self.model_prefix:
            doc["model_prefix"] = self.model_prefix
        return doc


# What every runtime can report, whatever its language: no durable logs (their format is
# the reference's), no hang graph, no error prose, no request bodies. Foreign adapters are
# held to exactly this part of the golden snapshot.
PORTABLE = (
    "outcome",
    "answerer_calls",
    "asked",
    "tool_errors",
    "handoffs",
    "final",
    "plan_mode",
    "direct",
)


def portable(doc: dict[str, Any]) -> dict[str, Any]:
    out = {key: doc.get(key, {} if key in ("final", "plan_mode") else []) for key in PORTABLE}
    # seq orders events within one runtime's logs; a direct call's place in `direct` is enough.
    out["direct"] = [{k: v for k, v in d.items() if k != "seq"} for d in out["direct"]]
    return out


def snapshot_text(doc: dict[str, Any]) -> str:
    """The exact bytes of a snapshot file: sorted keys, two-space indent, trailing newline."""
    return json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


# Observations are compared as JSON, not as Python: `true` is not `1`, `1.0` is not `1`.
def kind(value: Any) -> str:
    """A value's JSON type, with integer and non-integer numbers told apart."""
    if value is None:
        return "null"
    if isinstance(value, bool):  # before int: bool is an int to Python, never to JSON
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def json_equal(a: Any, b: Any) -> bool:
    """Equal as JSON values: the same type and value all the way down, key order aside."""
    ka = kind(a)
    if ka != kind(b):
        return False
    if ka == "object":
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if ka == "array":
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


class AdapterError(Exception):
    """An adapter could not be loaded, started or spoken to. The message is one line that
    names the adapter and says what to do next."""


@dataclass(frozen=True)
class RunOptions:
    backstop: float = DEFAULT_BACKSTOP  # seconds without progress before a runtime is stopped
    guard: str | None = None  # a caller-check guard: the reference runtime's test seam only
    wire: Wire = field(default_factory=Wire)


@runtime_checkable
class Adapter(Protocol):
    """A runtime under test.

    `features` names the scenario features it can run (scenarios/schema.json); a scenario
    with any other feature is skipped, not failed. None means every feature.
    `expectations` is its known-failures file, if it has one.
    """

    # Read-only, so an implementation may narrow them (a frozenset, a plain attribute).
    @property
    def name(self) -> str: ...
    @property
    def features(self) -> Collection[str] | None: ...
    @property
    def expectations(self) -> Path | None: ...

    def run(self, scenario: Scenario, options: RunOptions) -> Observation:
        """Run one scenario to completion and observe it. Never raises for anything the
        runtime did: a broken run is an observation with outcome `error`."""
        ...

    def close(self) -> None:
        """Release whatever the adapter holds (a process, a server). Idempotent."""
        ...


def runtime_of(adapter: Adapter) -> str:
    """What the adapter says it runs, with versions ("" if it does not say). Optional in the
    protocol, so an adapter written before it was asked for still loads."""
    return str(getattr(adapter, "runtime", "") or "")


def missing_features(adapter: Adapter, scenario: Scenario) -> list[str]:
    """The scenario's features the adapter cannot run, in the scenario's order."""
    if adapter.features is None:
        return []
    return [f for f in scenario.features if f not in adapter.features]


def release_of(adapter: Adapter) -> str | None:
    """The release of the runtime under test (an agent CLI's version, or what a local
    build says it is), which picks the entries of its expectations file that apply; None
    for a runtime that has none."""
    release = getattr(adapter, "release", None)
    return release if isinstance(release, str) else None


def is_reference(adapter: Adapter) -> bool:
    """Whether the golden snapshots are this adapter's own observations (the reference
    runtime's): it is then held to all of each, and runs on a scenarios directory of the
    user's own may go without goldens. Any other runtime is held to the portable part."""
    return bool(getattr(adapter, "reference", False))
