"""The scenario contract checks itself: every shipped scenario is valid against the schema
and the loader, ids are unique and name their files, every `features:` tag is known and
agrees with the content, scenarios/VERSION is one semver line, and the reference runtime
passes every scenario. A downstream runtime trusts exactly these promises."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from harness._paths import schema_path, version_path
from harness.run import run_scenarios
from harness.scenario import (
    FEATURES,
    Scenario,
    ScenarioError,
    load_all,
    scenario_paths,
    scenarios_version,
)
from harness.scenario._features import FEATURE_RULES
from harness.scenario._yaml import parse

PATHS = scenario_paths()
STEMS = [p.stem for p in PATHS]


def schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(schema_path().read_text(encoding="utf-8"))
    return loaded


# libyaml, as the harness uses: PyYAML's pure-Python scanner refuses a plain scalar ending
# in `?` inside a flow mapping (`{question: Why?}`), which YAML and libyaml allow.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def raw(path: Path) -> Any:
    """The file as a runtime in another language would read it: a stock YAML parser, not
    the harness's own loader, so the schema is checked independently of that loader."""
    return yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)


@pytest.fixture(scope="module")
def scenarios() -> dict[str, Scenario]:
    return {s.id: s for s in load_all()}


def test_the_schema_is_a_valid_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(schema())


@pytest.mark.parametrize("path", PATHS, ids=STEMS)
def test_every_scenario_validates_against_the_schema(path: Path) -> None:
    validator = jsonschema.Draft202012Validator(schema())
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(raw(path))]
    assert errors == []


@pytest.mark.parametrize("path", PATHS, ids=STEMS)
def test_a_stock_parser_reads_what_the_harness_reads(path: Path) -> None:
    # JSON-compatible YAML: the schema check above and the harness's loader saw one value.
    assert raw(path) == parse(path.read_text(encoding="utf-8")).value


def test_every_scenario_loads(scenarios: dict[str, Scenario]) -> None:
    # load_all raises on any problem in any file; also none is silently dropped.
    assert sorted(scenarios) == sorted(STEMS)


def test_ids_are_unique_and_equal_the_file_names(scenarios: dict[str, Scenario]) -> None:
    ids = [raw(p)["id"] for p in PATHS]
    assert len(ids) == len(set(ids))
    assert ids == STEMS
    assert all(s.path.stem == sid for sid, s in scenarios.items())


# -- features ---------------------------------------------------------------------------
_KINDS = ("service", "assembled")  # every scenario is exactly one of these


def test_the_python_vocabulary_is_the_schema_enum() -> None:
    # Order too: FEATURES documents the vocabulary in the schema's order.
    assert list(FEATURES) == schema()["$defs"]["feature"]["enum"]


def test_every_known_tag_has_exactly_one_rule() -> None:
    assert list(FEATURE_RULES) == list(FEATURES)


def test_the_schema_describes_every_tag() -> None:
    description = schema()["$defs"]["feature"]["description"]
    missing = [tag for tag in FEATURES if f"{tag}: " not in description]
    assert missing == []


def test_every_tag_is_used_by_some_scenario(scenarios: dict[str, Scenario]) -> None:
    # A tag no scenario carries lets a runtime skip nothing: dead vocabulary.
    used = {tag for s in scenarios.values() for tag in s.features}
    assert [tag for tag in FEATURES if tag not in used] == []


@pytest.mark.parametrize("path", PATHS, ids=STEMS)
def test_feature_tags_are_known_and_agree_with_the_content(path: Path) -> None:
    doc = raw(path)
    declared = doc["features"]
    assert declared, "features must not be empty"
    assert len(declared) == len(set(declared)), f"duplicate tags in {declared}"
    assert set(declared) <= set(FEATURES)
    decided = {tag for tag, (_, rule) in FEATURE_RULES.items() if rule(doc)[0]}
    assert set(declared) == decided
    assert len(decided & set(_KINDS)) == 1, "exactly one of service and assembled"


@pytest.mark.parametrize("path", PATHS, ids=STEMS)
def test_service_means_every_phase_is_a_direct_ask(path: Path) -> None:
    # Stated once more without the rules, so a wrong rule cannot agree with itself.
    doc = raw(path)
    assert ("service" in doc["features"]) == all("ask" in p for p in doc["phases"])


def test_the_scenario_keeps_the_tags_in_file_order(scenarios: dict[str, Scenario]) -> None:
    assert scenarios["hang-before-the-fix"].features == (
        "assembled",
        "header-override",
        "hang",
        "guard-variant",
    )
    for path in PATHS:
        assert scenarios[path.stem].features == tuple(raw(path)["features"])


# -- VERSION ----------------------------------------------------------------------------
# semver.org's regular expression for Semantic Versioning 2.0.0, written out here apart
# from the harness's copy so the two check each other.
SEMVER = (
    r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(-((0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(\+([0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*))?"
)


def test_version_is_one_semver_line() -> None:
    path = version_path()
    assert path.parent == schema_path().parent, "VERSION lives beside the schema it versions"
    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n") and text.count("\n") == 1, repr(text)
    assert re.fullmatch(SEMVER, text[:-1]), repr(text)
    assert scenarios_version() == text[:-1]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("1.0\n", "'1.0' is not a semantic version (MAJOR.MINOR.PATCH, e.g. 1.0.0)"),
        ("v1.0.0\n", "'v1.0.0' is not a semantic version"),
        ("01.0.0\n", "'01.0.0' is not a semantic version"),
        (" 1.0.0\n", "' 1.0.0' is not a semantic version"),
        ("", "'' is not a semantic version"),
        ("# contract\n1.0.0\n", "must be exactly one line"),
        ("1.0.0\n\n", "must be exactly one line"),
    ],
)
def test_a_bad_version_file_is_one_line_naming_the_file(
    tmp_path: Path, text: str, problem: str
) -> None:
    path = tmp_path / "VERSION"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ScenarioError) as info:
        scenarios_version(path)
    (line,) = info.value.problems
    assert line.startswith(f"{path}: ") and problem in line and "\n" not in line


@pytest.mark.parametrize("text", ["1.0.0", "1.0.0\n", "1.0.0\r\n", "2.1.3-rc.1+build.5\n"])
def test_good_version_files(tmp_path: Path, text: str) -> None:
    path = tmp_path / "VERSION"
    path.write_bytes(text.encode())
    assert scenarios_version(path) == text.strip()


def test_a_missing_version_file_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "VERSION"
    with pytest.raises(ScenarioError) as info:
        scenarios_version(path)
    (line,) = info.value.problems
    assert line.startswith(f"{path}: cannot read: ") and "\n" not in line


# -- the reference runtime ----------------------------------------------------------------
def test_the_reference_runtime_passes_every_scenario(scenarios: dict[str, Scenario]) -> None:
    results = {r.scenario.id: r for r in run_scenarios(scenarios.values())}
    assert sorted(results) == sorted(scenarios)
    failed = {sid: [r.status, *r.mismatches] for sid, r in results.items() if r.status != "pass"}
    assert failed == {}
