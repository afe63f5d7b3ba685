"""The seam between the runner and the runtimes under test, below both: what every adapter
is (something that runs one scenario against a runtime and hands back an observation,
which the harness then judges the same way for every runtime), the options a run is given,
and the wire it runs over. `harness.run` and `harness.adapters` both import this module;
it imports neither."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from harness.run import Observation
    from harness.scenario import Scenario

# Wall-clock seconds per scenario. Defined here, where importing is cheap; harness.run
# re-exports it.
DEFAULT_BACKSTOP = 10.0

# The header the reference runtime names its session in under `routing="session"`: one the
# fake is configured to key conversations on, as a real runtime's session header would be.
SESSION_HEADER = "X-Harness-Session"
ROUTINGS = ("agent", "session", "content")


@dataclass(frozen=True)
class Wire:
    """How requests and replies travel: JSON, or SSE with deltas of `chunk` characters
    (None: each text or argument string in one delta); and how the fake tells agents apart:
    `agent` (the X-Harness-Agent header), `session` (a session header the fake was told
    of, new keys assigned by content) or `content` (no header: the conversation itself).
    Observations must not depend on any of it."""

    stream: bool = False
    chunk: int | None = None
    routing: str = "agent"

    def describe(self) -> str:
        shown = "json" if not self.stream else "sse" if self.chunk is None else f"sse-{self.chunk}"
        return shown if self.routing == "agent" else f"{shown}+{self.routing}"

    @property
    def agent_header(self) -> str | None:
        """What the runtime's client names each request's agent in, if anything."""
        from harness.runtime.llm import AGENT_HEADER  # the runtime (and httpx) only when asked

        return {"agent": AGENT_HEADER, "session": SESSION_HEADER}.get(self.routing)


class AdapterError(Exception):
    """An adapter could not be loaded, started or spoken to. The message is one line that
    names the adapter and says what to do next."""


@dataclass(frozen=True)
class RunOptions:
    backstop: float = DEFAULT_BACKSTOP  # wall-clock seconds per scenario
    guard: str | None = None  # a caller-check variant: the reference runtime's test seam only
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
