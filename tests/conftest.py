from __future__ import annotations

import pytest

from harness.run import Wire
from harness.scenario import Scenario, load_all

# Suite-wide guarantees, each its own plugin: no socket off loopback, shuffled order on
# demand, and the fuzz profiles registered before hypothesis applies --hypothesis-profile.
pytest_plugins = ["tests._offline", "tests._order", "tests.fuzzing"]

SCENARIOS = {s.id: s for s in load_all()}

# The second tier, marked `slow`: modules whose tests start processes (the CLI as a
# subprocess, `harness serve`, Node, Chromium, inner pytest sessions) or run for seconds
# (the fuzzers, the 1,000-deep chain, the benchmarks' smoke run). `pytest -m "not slow"` is
# the inner loop; the README's `pytest -n auto` runs both tiers, and so does CI.
SLOW_MODULES = frozenset({
    "test_adapters", "test_benchmarks", "test_deep", "test_determinism", "test_fuzz",
    "test_hygiene", "test_node_dsh", "test_offline", "test_report", "test_serve",
    "test_serve_load", "test_serve_sdks",
})  # fmt: skip


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        module = getattr(item, "module", None)
        if module is not None and module.__name__.rpartition(".")[2] in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)


# Every scenario runs over each wire and must give the same observation and snapshot: JSON
# or SSE deltas of every size, and requests routed by X-Harness-Agent, by a session header
# alone, or by nothing but the conversation (what a real runtime sends).
WIRES = [
    Wire(),
    Wire(stream=True),
    Wire(stream=True, chunk=7),
    Wire(stream=True, chunk=1),
    Wire(routing="session"),
    Wire(stream=True, chunk=1, routing="content"),
]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "scenario_id" in metafunc.fixturenames:
        metafunc.parametrize("scenario_id", sorted(SCENARIOS))
    if "wire" in metafunc.fixturenames:
        metafunc.parametrize("wire", WIRES, ids=[w.describe() for w in WIRES])


@pytest.fixture
def scenario(scenario_id: str) -> Scenario:
    return SCENARIOS[scenario_id]
