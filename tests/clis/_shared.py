"""The agent CLIs' adapters, shared by a test session: each opened once per worker, and
each scenario run once on it per set of run options, whichever test asks first.

A CLI scenario costs a second or more (a Node process per phase), and the CLI modules ask
for the same runs again and again: a whole-corpus `harness run` at one level, then the
other, and single scenarios that corpus run already ran. Every test still judges the
real CLI's observation of that scenario; only the run is not repeated. Runs that change
the adapter (a broken binary, offline off) build an adapter of their own, never shared.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from harness.contract import Observation, RunOptions
from harness.scenario import Scenario

CLIS = ("claude-code", "qwen-code", "opencode", "codex")


class Remembering:
    """An adapter whose runs are remembered: by the scenario's whole content (an edited
    copy under the same id is another scenario) and the run options."""

    def __init__(self, adapter: Any, memo: dict[tuple[str, str, RunOptions], Observation]) -> None:
        self._adapter = adapter
        self._memo = memo

    @property
    def name(self) -> str:
        return str(self._adapter.name)

    @property
    def features(self) -> Any:
        return self._adapter.features

    @property
    def expectations(self) -> Any:
        return self._adapter.expectations

    def run(self, scenario: Scenario, options: RunOptions) -> Observation:
        key = (self.name, repr(scenario), options)
        if key not in self._memo:
            self._memo[key] = self._adapter.run(scenario, options)
        return self._memo[key]

    def close(self) -> None:
        """Nothing: the session closes the adapter it shares, once, at its end."""

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._adapter, attr)


class SharedClis:
    def __init__(self) -> None:
        import harness.adapters

        # Taken now, before cli_runs_shared patches it: opening through the patched one
        # would come back here, without end, for a CLI no test has opened yet.
        self._opener = harness.adapters.open_adapter
        self._open: dict[str, Any] = {}
        self._memo: dict[tuple[str, str, RunOptions], Observation] = {}

    def get(self, spec: str) -> Any:
        if spec not in self._open:
            self._open[spec] = self._opener(spec)
        return Remembering(self._open[spec], self._memo)

    def close(self) -> None:
        for adapter in self._open.values():
            adapter.close()


@pytest.fixture(scope="session")
def shared_clis() -> Iterator[SharedClis]:
    shared = SharedClis()
    try:
        yield shared
    finally:
        shared.close()


@pytest.fixture
def cli_runs_shared(shared_clis: SharedClis, monkeypatch: pytest.MonkeyPatch) -> SharedClis:
    """For a test that runs the `harness` CLI on an agent CLI: `--adapter NAME` gets the
    session's shared adapter, so a scenario another test already ran is not run again."""
    import harness.adapters

    real = harness.adapters.open_adapter

    def opening(spec: str | None, scenarios: Any = None) -> Any:
        if spec in CLIS and scenarios is None:
            return shared_clis.get(spec)
        return real(spec, scenarios)

    monkeypatch.setattr(harness.adapters, "open_adapter", opening)
    return shared_clis
