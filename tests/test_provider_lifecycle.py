"""The host's provider lifecycle calls before a direct ask (`provider: [register, dispose]`):
the loader's rules for them, and that the scenario pinning upstream's lifecycle catches a
service that gets it wrong."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from harness.run import run_scenario
from harness.runtime.questions import Answerer, UserQuestionService
from harness.scenario import ScenarioError, load_scenario
from tests.conftest import SCENARIOS

ROOT = Path(__file__).parents[1]
SCENARIO = "service-provider-lifecycle"


def edited(tmp_path: Path, scenario: str, *edits: tuple[str, str]) -> Path:
    text = (ROOT / "scenarios" / f"{scenario}.yaml").read_text("utf-8")
    for old, new in edits:
        assert old in text
        text = text.replace(old, new, 1)
    path = tmp_path / f"{scenario}.yaml"
    path.write_text(text, "utf-8")
    return path


def problems(path: Path) -> list[str]:
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    return info.value.problems


def test_the_lifecycle_scenario_holds_on_the_reference() -> None:
    result = run_scenario(SCENARIOS[SCENARIO])
    assert result.status == "pass", result.mismatches


def _replacing(self: UserQuestionService, provider: Answerer) -> Callable[[], None]:
    self.provider = provider  # a second registration replaces the first

    def dispose() -> None:
        self.provider = None

    return dispose


def _careless(self: UserQuestionService, provider: Answerer) -> Callable[[], None]:
    if self.provider is not None:
        return UserQuestionService.register(self, provider)  # refused as upstream's is
    self.provider = provider

    def dispose() -> None:
        self.provider = None  # whoever is registered now

    return dispose


@pytest.mark.parametrize("register", [_replacing, _careless])
def test_a_service_that_gets_the_lifecycle_wrong_fails_it(
    monkeypatch: pytest.MonkeyPatch, register: Callable[..., Callable[[], None]]
) -> None:
    monkeypatch.setattr(UserQuestionService, "register", register)
    result = run_scenario(SCENARIOS[SCENARIO])
    assert result.status == "fail"


def test_dispose_needs_the_worlds_provider(tmp_path: Path) -> None:
    path = edited(
        tmp_path, SCENARIO, ("  answerer: scripted\n  answers:\n", "  answerer: none\n  answers:\n")
    )
    assert any(
        p.startswith(f"{path}: /phases/1/ask/provider: dispose calls the world provider's "
                     "disposer, and answerer: none registers none; give the world an answerer")
        for p in problems(path)
    )  # fmt: skip


def test_a_while_ask_makes_no_provider_calls(tmp_path: Path) -> None:
    path = edited(
        tmp_path, "agentless-ask-while-child-live",
        ("      while: {agent: child, before_step: 2}\n      questions:",
         "      while: {agent: child, before_step: 2}\n      provider: [register]\n"
         "      questions:"),
    )  # fmt: skip
    assert any(
        p.startswith(f"{path}: /phases/1/ask/provider: a while ask uses the running runtime's "
                     "service as it is; remove provider")
        for p in problems(path)
    )  # fmt: skip
