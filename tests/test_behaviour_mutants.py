"""Behaviours of the reference runtime that no scenario pinned until one was written for
each (issue 49): each test changes the runtime's own code by one realistic bug, as a review
did by hand, and shows the scenario written for it turn `harness run` red, through the
runtime's own path. `mutated` rewrites one function's source, so the rest of the runtime
(its classes, its errors) stays the one the harness imports."""

from __future__ import annotations

import importlib
import inspect
import sys
import textwrap
from typing import Any

import pytest

from harness.adapters.reference.batch import batch
from harness.run import run_scenario
from tests.conftest import SCENARIOS


def mutated(monkeypatch: pytest.MonkeyPatch, where: str, old: str, new: str) -> None:
    """Replace `old` by `new` (each once) in the function or method `where` names
    (`module:function` or `module:Class.method`), and put the result wherever the harness's
    modules hold it."""
    module_name, qualname = where.split(":")
    module = importlib.import_module(module_name)
    *owners, name = qualname.split(".")
    holder: Any = module
    for owner in owners:
        holder = getattr(holder, owner)
    original = getattr(holder, name)
    source = textwrap.dedent(inspect.getsource(original))
    assert source.count(old) == 1, f"{where}: the code to change is not there once: {old!r}"
    scope: dict[str, Any] = dict(vars(module))
    exec(compile(source.replace(old, new), inspect.getfile(original), "exec"), scope)
    if owners:  # a method: its class is the one place that holds it
        monkeypatch.setattr(holder, name, scope[name])
        return
    for held in list(sys.modules.values()):
        if getattr(held, "__name__", "").startswith("harness.") and (
            getattr(held, name, None) is original
        ):
            monkeypatch.setattr(held, name, scope[name])


def failing(*ids: str) -> list[str]:
    """Which of `ids` `harness run` fails on the runtime as it is now."""
    with batch():  # one event loop for the scenarios, as `harness run` runs them
        return [i for i in ids if run_scenario(SCENARIOS[i]).status != "pass"]


def test_the_handoff_from_the_childs_first_words_instead_of_its_last_is_red(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    scenario = "child-speaks-before-its-last-message"
    assert failing(scenario) == []
    mutated(monkeypatch, "harness.runtime.loop:run_agent",
            "if reply.content or reply.tool_calls:",
            "if (reply.content or reply.tool_calls) and not output:")  # fmt: skip
    assert failing(scenario) == [scenario]


def test_a_depth_read_from_the_header_alone_is_red(monkeypatch: pytest.MonkeyPatch) -> None:
    scenario = "depth-counted-past-an-overridden-header"
    assert failing(scenario) == []
    mutated(monkeypatch, "harness.runtime.registry:delegation_depth",
            "return max(header or 0, agent.depth or 0)", "return header or 0")  # fmt: skip
    assert failing(scenario, "delegation-depth-limit") == [scenario]


def test_a_resume_owned_by_the_live_agent_its_header_names_is_red(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    scenario = "resumed-beside-its-live-parent"
    assert failing(scenario) == []
    # Lineage taken for ownership: the header's parent, when live, owns the resumed session.
    mutated(monkeypatch, "harness.runtime.core:Runtime.resume",
            "(Agent(session_id, session), owner, prompt)",
            "(Agent(session_id, session), owner or (self.agents and "
            "self.agents.get(session.header.parent_session or '')), prompt)")  # fmt: skip
    others = ("resumed-root-question-header", "resumed-depth-one-root", "resumed-under-live-owner")
    assert failing(scenario, *others) == [scenario]


def test_sibling_results_in_completion_order_are_red(monkeypatch: pytest.MonkeyPatch) -> None:
    scenario = "siblings-finish-out-of-start-order"
    assert failing(scenario) == []
    # Each result logged as its child finishes, not in the reply's order.
    mutated(monkeypatch, "harness.runtime.loop:run_agent",
            "results = await asyncio.gather(*(execute(rt, agent, c) for c in group))",
            "tasks = {asyncio.ensure_future(execute(rt, agent, c)): c for c in group}\n"
            "                done = [await f for f in asyncio.as_completed(tasks)]\n"
            "                order = {id(t.result()): c for t, c in tasks.items()}\n"
            "                group = [order[id(r)] for r in done]\n"
            "                results = done")  # fmt: skip
    # Siblings that finish in their start order cannot tell.
    assert failing(scenario, "parallel-children-refused") == [scenario]


@pytest.mark.parametrize(
    ("where", "old", "new"),
    [
        # The provider handed no signal at all.
        ("harness.runtime.tools._base:ask_user", "signal=ctx.signal", "signal=None"),
        # A fresh signal per tool call: the run's abort never reaches it.
        ("harness.runtime.loop:execute", "signal=agent.signal", "signal=type(agent.signal)()"),
        # The model asked again after the run was aborted during its calls.
        (
            "harness.runtime.loop:run_agent",
            "        if agent.signal.aborted:\n            # Fired",
            "        if False:\n            # Fired",
        ),
    ],
    ids=["no-signal", "fresh-signal", "asks-again"],
)
def test_an_abort_that_does_not_reach_the_provider_or_end_the_run_is_red(
    monkeypatch: pytest.MonkeyPatch, where: str, old: str, new: str
) -> None:
    scenario = "root-question-interrupted"
    assert failing(scenario) == []
    mutated(monkeypatch, where, old, new)
    assert failing(scenario, "plan-review-provider-aborted", "child-aborted-call") == [scenario]


@pytest.mark.parametrize(
    ("where", "old", "new"),
    [
        # The depth from the run alone: a resume has none, so it counts from 0.
        ("harness.runtime.registry:delegation_depth",
         "return max(header or 0, agent.depth or 0)", "return agent.depth or 0"),
        # The header's depth dropped when a stored session is read back.
        ("harness.runtime.sessions:SessionHeader.from_event",
         'delegation_depth=event.get("delegation_depth")', "delegation_depth=None"),
    ],
    ids=["run-depth-alone", "header-depth-not-read-back"],
)  # fmt: skip
def test_a_resumed_sessions_depth_forgotten_is_red(
    monkeypatch: pytest.MonkeyPatch, where: str, old: str, new: str
) -> None:
    scenario = "resumed-at-the-depth-cap"
    assert failing(scenario) == []
    mutated(monkeypatch, where, old, new)
    others = ("delegation-depth-limit", "depth-counted-past-an-overridden-header",
              "resumed-depth-one-root")  # fmt: skip
    assert failing(scenario, *others) == [scenario]
