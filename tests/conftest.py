from __future__ import annotations

import pytest

from harness.run import Wire
from harness.scenario import Scenario, load_all

# Suite-wide guarantees, each its own plugin: no socket off loopback, shuffled order on
# demand, and the fuzz profiles registered before hypothesis applies --hypothesis-profile.
pytest_plugins = ["tests._offline", "tests._order", "tests.fuzzing"]

SCENARIOS = {s.id: s for s in load_all()}
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
