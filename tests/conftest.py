from __future__ import annotations

import pytest

from harness.scenario import Scenario, load_all

SCENARIOS = {s.id: s for s in load_all()}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "scenario_id" in metafunc.fixturenames:
        metafunc.parametrize("scenario_id", sorted(SCENARIOS))


@pytest.fixture
def scenario(scenario_id: str) -> Scenario:
    return SCENARIOS[scenario_id]
