"""YAML file -> validated `Scenario`. Every problem in a file is reported, one line each,
naming the file and the place, and nothing is run until there are none."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from harness._paths import CLAUSES_FILE, clauses_path, scenarios_dir, schema_path
from harness._script import Call, Turn
from harness.runtime.questions import Answer, Intent, Option, Question
from harness.scenario._check import semantic_problems
from harness.scenario._model import (
    AgentSpec,
    DirectAsk,
    Expect,
    Fault,
    Phase,
    Scenario,
    TextMatch,
    ToolErrorExpect,
    World,
)


class ScenarioError(Exception):
    """One or more scenario files are invalid. `problems` holds one line per problem."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


@functools.cache
def _validator() -> Any:
    import jsonschema  # heavy; only paid when a scenario is actually loaded

    schema = json.loads(schema_path().read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(schema)


def _pointer(path: Iterable[Any]) -> str:
    parts = [str(p).replace("~", "~0").replace("/", "~1") for p in path]
    return "/" + "/".join(parts)


@functools.cache
def clauses() -> dict[str, str]:
    """The design document's clauses: short id -> text, in document order."""
    doc = _read_yaml(clauses_path())
    if not isinstance(doc, dict) or not all(isinstance(v, str) for v in doc.values()):
        raise ScenarioError([f"{clauses_path()}: /: must map clause ids to their text"])
    return {str(k): v for k, v in doc.items()}


def _read_yaml(path: Path) -> Any:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioError([f"{path}: cannot read: {exc.strerror or exc}"]) from None
    try:
        return yaml.load(text, Loader=loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        raise ScenarioError([f"{where}: {exc.problem or exc}"]) from None
    except yaml.YAMLError as exc:
        raise ScenarioError([f"{path}: {exc}"]) from None


def load_scenario(path: Path) -> Scenario:
    doc = _read_yaml(path)
    if not isinstance(doc, dict):
        raise ScenarioError([f"{path}: /: a scenario is a mapping, got {type(doc).__name__}"])
    errors = sorted(_validator().iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))
    problems = [f"{path}: {_pointer(e.absolute_path)}: {_schema_message(e)}" for e in errors]
    if problems:
        raise ScenarioError(problems)
    problems = [
        f"{path}: {where}: {what}" for where, what in semantic_problems(doc, path.stem, clauses())
    ]
    if problems:
        raise ScenarioError(problems)
    return _build(doc, path)


def _schema_message(error: Any) -> str:
    # A oneOf failure alone says little; the best sub-error says what to fix.
    if error.validator == "oneOf" and error.context:
        best = min(error.context, key=lambda e: (len(e.absolute_path), e.message))
        return f"{best.message} (in one of the allowed shapes)"
    return str(error.message)


def scenario_paths(directory: Path | None = None) -> list[Path]:
    found = (directory or scenarios_dir()).glob("*.yaml")
    return sorted(p for p in found if p.name != CLAUSES_FILE)


def load_all(directory: Path | None = None) -> list[Scenario]:
    """Load every scenario in `directory`, collecting problems across all files."""
    scenarios, problems = [], []
    for path in scenario_paths(directory):
        try:
            scenarios.append(load_scenario(path))
        except ScenarioError as exc:
            problems.extend(exc.problems)
    if problems:
        raise ScenarioError(problems)
    return scenarios


# -- building the model (input is valid by now) ---------------------------------------
def _build(doc: dict[str, Any], path: Path) -> Scenario:
    world = doc.get("world", {})
    expect = doc["expect"]
    return Scenario(
        id=doc["id"],
        title=doc["title"],
        covers=tuple(doc["covers"]),
        guard=doc.get("guard", "runtime-ownership"),
        stream_chunk=doc.get("stream_chunk"),
        description=doc.get("description", ""),
        path=path,
        world=World(
            registry=world.get("registry", "present") == "present",
            answerer=world.get("answerer", "tripwire"),
            answer_delay_ms=world.get("answer_delay_ms", 0),
            answers={
                qid: Answer(qid, tuple(a["selected"]), a.get("custom"))
                for qid, a in world.get("answers", {}).items()
            },
        ),
        agents={
            name: AgentSpec(
                name=name,
                script=tuple(_turns(spec["script"])),
                spawned_by=spec.get("spawned_by"),
                session=dict(spec.get("session", {})),
                plan_mode=spec.get("plan_mode", False),
            )
            for name, spec in doc.get("agents", {}).items()
        },
        phases=tuple(_phase(p) for p in doc["phases"]),
        faults=tuple(Fault(f["kind"], f["agent"], f["tool"]) for f in doc.get("faults", [])),
        expect=Expect(
            outcome=expect["outcome"],
            answerer_calls=expect["answerer_calls"],
            tool_errors=tuple(
                ToolErrorExpect(e["agent"], e["tool"], e["code"])
                for e in expect.get("tool_errors", [])
            ),
            handoffs=(
                tuple(_match(m) for m in expect["handoffs"]) if "handoffs" in expect else None
            ),
            final={name: _match(m) for name, m in expect.get("final", {}).items()},
            plan_mode=dict(expect.get("plan_mode", {})),
        ),
    )


def _phase(doc: dict[str, Any]) -> Phase:
    if "start" in doc:
        return Phase("start", doc["start"], doc["prompt"])
    if "resume" in doc:
        return Phase("resume", doc["resume"], doc["prompt"])
    ask = doc["ask"]
    return Phase(
        "ask",
        ask.get("caller"),
        ask=DirectAsk(
            questions=tuple(_question(q) for q in ask["questions"]),
            live=tuple(ask.get("live", {}).items()),
            reenter=tuple(ask.get("reenter", ())),
            detach=tuple(ask.get("detach", ())),
            caller=ask.get("caller"),
            stale=ask.get("caller_object", "live") == "stale",
            aborted=ask.get("aborted", False),
        ),
    )


def _question(doc: dict[str, Any]) -> Question:
    intent = doc.get("intent")
    return Question(
        id=doc["id"],
        question=doc["question"],
        header=doc.get("header"),
        options=tuple(Option(o["label"], o.get("description")) for o in doc.get("options", ())),
        multi_select=doc.get("multi_select", False),
        detail=doc.get("detail"),
        intent=Intent(intent["kind"], intent["approve"]) if intent else None,
    )


def _turns(steps: list[dict[str, Any]]) -> Iterator[Turn]:
    for step in steps:
        if "call" in step:
            yield Turn(calls=(_call(step),))
        elif "calls" in step:
            yield Turn(say=step.get("say"), calls=tuple(_call(c) for c in step["calls"]))
        else:
            yield Turn(say=step["say"])


def _call(step: dict[str, Any]) -> Call:
    return Call(tool=step["call"], args=step.get("args", {}), label=step.get("as"))


def _match(doc: dict[str, Any]) -> TextMatch:
    contains = doc.get("contains", ())
    return TextMatch(
        contains=(contains,) if isinstance(contains, str) else tuple(contains),
        equals=doc.get("equals"),
    )
