"""A session resumed inside a live owner's scope (`resume: S, owner: O`), or beside live roots
(`alongside: [...]`): the loader's rules for them, and the runtime's verdict, which
ownership decides, not the session's lineage."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.run import run_scenario
from harness.scenario import ScenarioError, load_scenario
from tests.conftest import SCENARIOS

BASE = """\
id: case
title: t
covers: [D3]
world: {{registry: {registry}}}
agents:
  worker:
    script: [{{say: one}}, {{say: two}}]
phases:
  - {{start: worker, prompt: go}}
  - {{resume: worker, prompt: again{owner}}}
expect: {{outcome: completed, answerer_calls: 0}}
features: [{features}]
"""


def write(tmp_path: Path, *, owner: str = "", features: str, registry: str = "present") -> Path:
    path = tmp_path / "case.yaml"
    text = BASE.format(owner=owner, features=features, registry=registry)
    path.write_text(text, encoding="utf-8")
    return path


def problems(path: Path) -> list[str]:
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    return info.value.problems


def test_owned_resume_is_required_exactly_when_a_resume_names_an_owner(tmp_path: Path) -> None:
    path = write(tmp_path, owner=", owner: lead", features="assembled, resume")
    assert problems(path) == [
        f"{path}: /features: missing 'owned-resume': /phases/1 resumes worker owned by lead; "
        "add it (line 12)"
    ]
    path = write(tmp_path, owner=", owner: lead", features="assembled, resume, owned-resume")
    scenario = load_scenario(path)
    assert scenario.features == ("assembled", "resume", "owned-resume")
    assert scenario.phases[1].owner == "lead"
    path = write(tmp_path, features="assembled, resume, owned-resume")
    assert problems(path) == [
        f"{path}: /features/2: 'owned-resume' does not apply: no phase resumes a session under "
        "an owner; remove it (line 12)"
    ]
    assert load_scenario(write(tmp_path, features="assembled, resume")).phases[1].owner is None


def test_an_owner_must_be_another_agent_and_needs_a_registry(tmp_path: Path) -> None:
    features = "assembled, resume, owned-resume"
    path = write(tmp_path, owner=", owner: worker", features=features)
    assert problems(path) == [
        f"{path}: /phases/1/owner: worker cannot own itself; name another agent (line 10)"
    ]
    path = write(tmp_path, owner=", owner: lead", features=features + ", no-registry",
                 registry="absent")  # fmt: skip
    assert problems(path) == [
        f"{path}: /phases/1/owner: an owner is entered in the agent registry, and "
        "world.registry is absent; drop owner or the registry setting (line 10)"
    ]


def test_the_resumed_session_is_owned_and_refused_though_its_lineage_is_a_roots() -> None:
    result = run_scenario(SCENARIOS["resumed-under-live-owner"])
    assert result.status == "pass", result.mismatches
    worker = result.observation.sessions["worker"]
    header = worker[0]
    assert header["origin"] == "root" and header["delegation_depth"] == 0
    assert [e["owner"] for e in worker if e["type"] == "session/resumed"] == ["lead"]
    assert [e["code"] for e in result.observation.tool_errors] == ["DELEGATED_CALLER"]
    assert result.observation.answerer_calls == 0


def test_live_lineage_is_required_exactly_when_a_resume_has_agents_alongside(
    tmp_path: Path,
) -> None:
    beside = ", alongside: [lead]"
    path = write(tmp_path, owner=beside, features="assembled, resume")
    assert problems(path) == [
        f"{path}: /features: missing 'live-lineage': /phases/1 resumes worker alongside live "
        "roots; add it (line 12)"
    ]
    scenario = load_scenario(
        write(tmp_path, owner=beside, features="assembled, resume, live-lineage")
    )
    assert (scenario.phases[1].alongside, scenario.phases[1].owner) == (("lead",), None)
    path = write(
        tmp_path, owner=", alongside: [worker]", features="assembled, resume, live-lineage"
    )
    assert problems(path) == [
        f"{path}: /phases/1/alongside/0: worker is the resumed session or its owner, entered "
        "already; name another live agent (line 10)"
    ]
    path = write(tmp_path, owner=beside, features="assembled, resume, live-lineage, no-registry",
                 registry="absent")  # fmt: skip
    assert problems(path) == [
        f"{path}: /phases/1/alongside: each agent alongside is entered in the agent registry, "
        "and world.registry is absent; drop alongside or the registry setting (line 10)"
    ]


def test_a_session_resumed_beside_its_live_parent_is_a_root_that_asks() -> None:
    result = run_scenario(SCENARIOS["resumed-beside-its-live-parent"])
    assert result.status == "pass", result.mismatches
    child = result.observation.sessions["child"]
    assert child[0]["parent_session"] == "parent" and child[0]["delegation_depth"] == 1
    assert [a["caller"] for a in result.observation.asked] == ["child"]
