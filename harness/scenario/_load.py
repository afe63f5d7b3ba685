"""YAML file -> validated `Scenario`. Every problem in a file is reported, one line each,
naming the file and the place, and nothing is run until there are none."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from harness._paths import CLAUSES_FILE, clauses_path, scenarios_dir
from harness.runtime.questions import Answer, Intent, Option, Question
from harness.scenario._check import semantic_problems, warnings
from harness.scenario._model import (
    DEFAULT_GUARD,
    AgentSpec,
    AskedExpect,
    DirectAsk,
    DirectExpect,
    Expect,
    Fault,
    Phase,
    Reply,
    Scenario,
    TextMatch,
    ToolErrorExpect,
    World,
)
from harness.scenario._schema import explain, is_valid
from harness.scenario._turn import Call, Turn
from harness.scenario._yaml import Document, YamlError, parse


class ScenarioError(Exception):
    """One or more scenario files are invalid. `problems` holds one line per problem."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


def _pointer(path: Iterable[Any]) -> str:
    parts = [str(p).replace("~", "~0").replace("/", "~1") for p in path]
    return "/" + "/".join(parts)


def _parts(pointer: str) -> list[str]:
    return [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:] if p]


@functools.cache
def clauses() -> dict[str, str]:
    """The design document's clauses: short id -> text, in document order."""
    doc = _read(clauses_path()).value
    if not isinstance(doc, dict) or not all(isinstance(v, str) for v in doc.values()):
        raise ScenarioError([f"{clauses_path()}: /: must map clause ids to their text"])
    return {str(k): v for k, v in doc.items()}


def _bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ScenarioError([f"{path}: cannot read: {exc.strerror or exc}"]) from None


def _read(path: Path, data: bytes | None = None) -> Document:
    data = _bytes(path) if data is None else data
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ScenarioError(
            [f"{path}:{line}: byte 0x{data[exc.start]:02x} is not UTF-8; save the file as UTF-8"]
        ) from None
    try:
        return parse(text)
    except YamlError as exc:
        raise ScenarioError(
            [f"{path}:{p.line}:{p.column}: {_one_line(p.message)}" for p in exc.problems]
        ) from None


def load_scenario(path: Path) -> Scenario:
    """Load one file, or raise ScenarioError with every problem in it, one line each:
    `path:line:col: message` for YAML, `path: /json/pointer: message (line N)` for the
    schema and for the checks a schema cannot express."""
    name = Path(path.name)
    try:
        scenario = _loaded(name, _bytes(path))
    except ScenarioError as exc:
        raise ScenarioError([_placed(line, name, path) for line in exc.problems]) from None
    warned = tuple(_placed(line, name, path) for line in scenario.warnings)
    return replace(scenario, path=path, warnings=warned)


def _placed(line: str, name: Path, path: Path) -> str:
    # Every line the check writes starts with the file it was given: the bare name.
    given = str(name)
    return str(path) + line[len(given) :] if line.startswith(given) else line


# By file name and exact content, not by place: a process that loads the same files again
# (every in-process CLI call of a test session, an installed copy of the corpus) parses
# and validates each once. The name matters (an id must match it); the folder does not.
@functools.lru_cache(maxsize=512)
def _loaded(path: Path, data: bytes) -> Scenario:
    document = _read(path, data)
    doc = document.value
    if doc is None:
        raise ScenarioError(
            [f"{path}: /: the file is empty; a scenario is a mapping with {_REQUIRED}"]
        )
    if not isinstance(doc, dict):
        kind = type(doc).__name__
        raise ScenarioError([f"{path}: /: a scenario is a mapping with {_REQUIRED}, not a {kind}"])
    found: list[tuple[str, str]] = []
    broken: set[str] = set()  # top-level sections the schema refused: not checked further
    for error in () if is_valid(doc) else explain(doc):
        if error.absolute_path:
            broken.add(str(error.absolute_path[0]))
        found += _schema_problems(error)
    found += semantic_problems(doc, path.stem, clauses(), frozenset(broken))
    if found:
        raise ScenarioError(_lines(path, document, found))
    scenario = _build(doc, path)
    noted = [(where, f"warning: {what}") for where, what in warnings(doc)]
    return replace(scenario, warnings=tuple(_lines(path, document, noted))) if noted else scenario


_REQUIRED = "id, title, covers, features, phases and expect"


def _lines(path: Path, document: Document, found: list[tuple[str, str]]) -> list[str]:
    """One line per distinct problem, in document order: `path: /pointer: message (line N)`.
    Root-level problems ("'phases' is a required property") have no useful line."""
    located = sorted(
        ((document.locate(_parts(where)) if where != "/" else None) or (0, 0), where, what)
        for where, what in set(found)
    )
    return [
        f"{path}: {_one_line(where)}: {_one_line(what)}" + (f" (line {line})" if line else "")
        for (line, _), where, what in located
    ]


def _one_line(message: str) -> str:
    """The promise is one line per problem, and messages quote the user's text, which may
    hold line breaks (a template in a block scalar, an unknown key): shown escaped."""
    return message.replace("\r", "\\r").replace("\n", "\\n")


def _schema_problems(error: Any) -> list[tuple[str, str]]:
    where = list(error.absolute_path)
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        # One line per unknown field, at the field, with the likeliest intended one.
        allowed = sorted(error.schema.get("properties", {}))
        return [
            (_pointer([*where, key]), _unknown_field(str(key), allowed))
            for key in error.instance
            if key not in allowed
        ]
    if error.validator == "oneOf" and error.context:
        # A oneOf failure alone says little. The shape the value came closest to (fewest
        # problems, then the deepest) is most likely the one meant: report its problems.
        shapes: dict[Any, list[Any]] = {}
        for sub in error.context:
            shapes.setdefault(sub.relative_schema_path[0], []).append(sub)
        closest = min(
            shapes.values(), key=lambda errs: (len(errs), -max(len(e.absolute_path) for e in errs))
        )
        return [problem for sub in closest for problem in _schema_problems(sub)]
    if error.validator == "required" and isinstance(error.instance, dict):
        missing = [k for k in error.validator_value if k not in error.instance]
        return [(_pointer(where), f"missing {k!r}: {_NEEDS.get(k, 'add it')}") for k in missing]
    return [(_pointer(where), str(error.message))]


# What a missing required field is for, so the message says what to write.
_NEEDS = {
    "id": "the scenario's id, equal to the file name",
    "title": "one line saying what the scenario shows",
    "covers": "the clause ids it covers (scenarios/clauses.yaml), e.g. covers: [D3]",
    "features": "what a runtime needs to run it, e.g. features: [assembled]",
    "phases": "what runs, in order: start: AGENT with a prompt, resume: SESSION with a "
    "prompt, or ask: {...}",
    "expect": "what the run must show; at least outcome (completed, error or hang) and "
    "answerer_calls (a count), e.g. expect: {outcome: completed, answerer_calls: 0}",
    "outcome": "completed, error or hang",
    "answerer_calls": "how many calls reach the answerer (0 for most scenarios)",
    "script": "the fake model's replies to this agent, in order: say: TEXT, call: TOOL",
    "prompt": "the text the phase's agent is started or resumed with",
    "questions": "the questions asked, each with an id and a question",
}


def _unknown_field(key: str, allowed: list[str]) -> str:
    import difflib

    close = difflib.get_close_matches(key, allowed, n=1)
    hint = f"did you mean {close[0]!r}?" if close else f"allowed: {', '.join(allowed) or 'none'}"
    return f"unknown field {key!r}; {hint}"


def scenario_paths(directory: Path | None = None) -> list[Path]:
    found = (directory or scenarios_dir()).glob("*.yaml")
    # By id (the file's stem), as lists and reports show them: a path's ".yaml" would sort
    # service-bad-intent after service-bad-intent-named-question.
    return sorted((p for p in found if p.name != CLAUSES_FILE), key=lambda p: (p.stem, p))


def load_paths(paths: Iterable[Path]) -> list[Scenario]:
    """Load files, collecting every problem across all of them, and refuse an id used by
    two files (possible when they come from different directories)."""
    scenarios: list[Scenario] = []
    problems: list[str] = []
    first: dict[str, Path] = {}
    for path in paths:
        try:
            scenario = load_scenario(path)
        except ScenarioError as exc:
            problems.extend(exc.problems)
            continue
        if scenario.id in first:
            problems.append(
                f"{path}: /id: id {scenario.id!r} is also used by {first[scenario.id]}; "
                "scenario ids are unique"
            )
            continue
        first[scenario.id] = path
        scenarios.append(scenario)
    if problems:
        raise ScenarioError(problems)
    return scenarios


def load_all(directory: Path | None = None) -> list[Scenario]:
    """Load every scenario in `directory`, collecting problems across all files."""
    return load_paths(scenario_paths(directory))


# -- building the model (input is valid by now) ---------------------------------------
def _build(doc: dict[str, Any], path: Path) -> Scenario:
    world = doc.get("world", {})
    expect = doc["expect"]
    return Scenario(
        id=doc["id"],
        title=doc["title"],
        covers=tuple(doc["covers"]),
        features=tuple(doc["features"]),
        guard=doc.get("guard", DEFAULT_GUARD),
        stream_chunk=doc.get("stream_chunk"),
        description=doc.get("description", ""),
        path=path,
        world=World(
            registry=world.get("registry", "present") == "present",
            user_questions=world.get("user_questions", "present") == "present",
            answerer=world.get("answerer", "tripwire"),
            answer_delay_ms=world.get("answer_delay_ms", 0),
            max_depth=world.get("max_depth", 3),
            answers={qid: _reply(qid, a) for qid, a in world.get("answers", {}).items()},
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
                ToolErrorExpect(e["agent"], e["tool"], e["code"], _pinned(e))
                for e in expect.get("tool_errors", [])
            ),
            direct=(
                tuple(_direct_expect(d) for d in expect["direct"]) if "direct" in expect else None
            ),
            asked=(
                tuple(
                    AskedExpect(tuple(a["questions"]), a.get("caller"), "caller" in a)
                    for a in expect["asked"]
                )
                if "asked" in expect
                else None
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
        alongside = tuple(doc.get("alongside", ()))
        return Phase("resume", doc["resume"], doc["prompt"], owner=doc.get("owner"),
                     alongside=alongside)  # fmt: skip
    ask = doc["ask"]
    return Phase(
        "ask",
        ask.get("caller"),
        ask=DirectAsk(
            questions=tuple(_question(q) for q in ask["questions"]),
            live=tuple((e["agent"], e.get("owner")) for e in ask.get("live", [])),
            reenter=tuple(ask.get("reenter", ())),
            detach=tuple(ask.get("detach", ())),
            detach_replaced=tuple(ask.get("detach_replaced", ())),
            caller=ask.get("caller"),
            stale=ask.get("caller_object", "live") == "stale",
            aborted=ask.get("aborted", False),
            provider=tuple(ask.get("provider", ())),
            sessions={
                e["agent"]: dict(e["session"]) for e in ask.get("live", []) if "session" in e
            },
            during=(ask["while"]["agent"], ask["while"]["before_step"]) if "while" in ask else None,
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
        after = step.get("after")
        if "call" in step:
            yield Turn(calls=(_call(step),), after=after)
        elif "calls" in step:
            calls = tuple(_call(c) for c in step["calls"])
            yield Turn(say=step.get("say"), calls=calls, after=after)
        else:
            yield Turn(say=step["say"], after=after)


def _call(step: dict[str, Any]) -> Call:
    return Call(tool=step["call"], args=step.get("args", {}), label=step.get("as"))


def _pinned(doc: dict[str, Any]) -> TextMatch | None:
    """`text: T` (exactly) or `contains: T | [T...]` beside a code, if either is given."""
    if "text" in doc:
        return TextMatch(equals=doc["text"])
    if "contains" in doc:
        return _match({"contains": doc["contains"]})
    return None


def _direct_expect(doc: dict[str, Any]) -> DirectExpect:
    if "answers" in doc:
        answers = tuple(
            Answer(a["id"], tuple(a["selected"]), a.get("custom")) for a in doc["answers"]
        )
        return DirectExpect(answers=answers)
    return DirectExpect(code=doc["code"], text=_pinned(doc))


def _match(doc: dict[str, Any]) -> TextMatch:
    contains = doc.get("contains", ())
    return TextMatch(
        contains=(contains,) if isinstance(contains, str) else tuple(contains),
        equals=doc.get("equals"),
    )


def _reply(qid: str, doc: Any) -> Reply:
    """world.answers' six spellings: one answer, a list of them, `dismiss`, `fail`,
    `abort` or `interrupt`."""
    if doc == "dismiss":
        return Reply(dismissed=True)
    if doc == "fail":
        return Reply(failed=True)
    if doc == "abort":
        return Reply(aborted=True)
    if doc == "interrupt":
        return Reply(interrupted=True)
    items = doc if isinstance(doc, list) else [doc]
    return Reply(tuple(Answer(qid, tuple(a["selected"]), a.get("custom")) for a in items))
