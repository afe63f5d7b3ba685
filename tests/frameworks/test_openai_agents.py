"""The OpenAI Agents SDK under test, in-process: its agents built from a scenario, run on
Chat Completions through the openai SDK's own client against the fake, the harness the
host of the top-level run. A child's question bubbles up to the host as an interruption:
the rule is broken and `live` held."""

from __future__ import annotations

import pytest

from harness.adapters import open_adapter
from harness.contract import AdapterError, RunOptions
from harness.run import LIVE, RULE, UPSTREAM, judge
from tests.conftest import SCENARIOS


@pytest.fixture(scope="module")
def sdk() -> object:
    return open_adapter("openai-agents")


def test_a_childs_question_reaches_the_host_who_declines_it(sdk: object) -> None:
    scenario = SCENARIOS["delegated-question-handoff"]
    observed = sdk.run(scenario, RunOptions())  # type: ignore[attr-defined]
    assert (observed.outcome, observed.answerer_calls, observed.tool_errors) == ("completed", 1, [])
    (asked,) = observed.asked
    assert asked["caller"] == "child"
    assert [q["id"] for q in asked["questions"]] == ["cuda-fallback"]
    (handoff,) = observed.handoffs
    assert handoff["tool_result"] == "UNRESOLVED: Should deployment use the CUDA fallback?"
    assert observed.final["parent"] == "PARENT_COMPLETED"
    assert judge(scenario, observed, LIVE).status == "pass"
    result = judge(scenario, observed, RULE)
    assert (result.status, result.held) == ("fail", LIVE)


def test_a_roots_question_is_answered_through_an_approval(sdk: object) -> None:
    scenario = SCENARIOS["live-root-answered-custom"]
    observed = sdk.run(scenario, RunOptions())  # type: ignore[attr-defined]
    result = judge(scenario, observed, UPSTREAM)
    assert (result.status, result.held) == ("pass", UPSTREAM), result.mismatches


def test_what_it_cannot_express_is_skipped_with_why(sdk: object) -> None:
    plan = sdk.run(SCENARIOS["plan-mode-child-refused"], RunOptions())  # type: ignore[attr-defined]
    assert plan.outcome == "skipped" and "no plan mode" in str(plan.error)
    service = sdk.run(SCENARIOS["exit-plan-mode-no-user-questions"], RunOptions())  # type: ignore[attr-defined]
    assert service.outcome == "skipped"


def test_a_missing_framework_is_one_line_saying_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from harness.adapters.frameworks.openai_agents import OpenAIAgents

    monkeypatch.setattr(OpenAIAgents, "module", "no_such_module_here")
    with pytest.raises(AdapterError) as info:
        open_adapter("openai-agents")
    assert str(info.value) == (
        "adapter openai-agents needs openai-agents: pip install 'keyless-harness[frameworks]'"
    )


@pytest.mark.parametrize("framework", ["openai-agents", "deepagents"])
def test_the_readmes_framework_example_runs_as_written(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, framework: str
) -> None:
    import shutil
    from pathlib import Path

    root = Path(__file__).parents[2]
    for folder in ("scenarios", "snapshots"):
        shutil.copytree(root / folder, pytester.path / "vendor" / folder)
    from tests.helpers import readme_block

    example = readme_block("## Python agent frameworks, in-process", "# tests/test_agents_live.py")
    pytester.makepyfile(test_agents_live=example)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    args = ("-p", "harness.pytest_plugin", "-p", "syrupy", "--harness-adapter", framework,
            "--harness-snapshots", "vendor/snapshots")  # fmt: skip
    result = pytester.runpytest_inprocess(*args, "--harness-level", "live")
    result.assert_outcomes(passed=2)
    # At the rule's level the child's question, put to the host, fails it.
    result = pytester.runpytest_inprocess(*args, "--harness-level", "rule")
    result.assert_outcomes(passed=1, failed=1)


def test_a_framework_that_raises_ends_the_run_as_an_error(
    sdk: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    import agents

    async def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the model client broke")

    monkeypatch.setattr(agents.Runner, "run", broken)
    observed = sdk.run(SCENARIOS["delegated-question-handoff"], RunOptions())  # type: ignore[attr-defined]
    assert (observed.outcome, observed.error) == ("error", "RuntimeError: the model client broke")
