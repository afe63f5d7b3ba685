"""What a JSON-lines adapter sent: every line checked against scenarios/protocol.json (the
protocol's normative schema), and its observation rendered as the reference runtime's would
be, so every runtime meets the same golden snapshots.

The schema decides what a line may hold; this module only turns a refusal into one line
(which message, which field, what is wrong) and does what a schema cannot: read runtime ids
back as the scenario's names and render the model-visible texts.
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness._paths import protocol_path, schema_path

if TYPE_CHECKING:
    from harness.contract import Observation
    from harness.fake import ScriptedLLM
    from harness.scenario import Scenario


class ProtocolError(Exception):
    """The adapter said something the protocol does not allow; the message says what."""


# -- the schema ---------------------------------------------------------------------------
def check(line: Any, label: str) -> dict[str, Any]:
    """`line` (parsed JSON from an adapter) if the protocol allows it; otherwise a
    ProtocolError naming `label` (which line it is), the field and the problem."""
    errors = list(validator("from_adapter").iter_errors(line))
    if errors:
        raise ProtocolError(f"{label}: {_problem(errors)} ({_shown(protocol_path())})")
    return dict(line)


@functools.cache
def validator(definition: str) -> Any:
    """A compiled validator for one of the schema's $defs (`from_adapter`, `to_adapter`...),
    built once per process: jsonschema is imported only by the process adapters."""
    import jsonschema
    import referencing
    from referencing.jsonschema import DRAFT202012

    schema = json.loads(protocol_path().read_text(encoding="utf-8"))

    def retrieve(uri: str) -> referencing.Resource[Any]:
        # `run.scenario` refers to schema.json beside it; only a check of sent lines reads it.
        if not uri.endswith("/schema.json"):
            raise LookupError(f"{uri}: protocol.json refers to no other document")
        return DRAFT202012.create_resource(json.loads(schema_path().read_text("utf-8")))

    root = {k: schema[k] for k in ("$schema", "$id", "$defs")}
    registry: Any = referencing.Registry(retrieve=retrieve)  # type: ignore[call-arg]
    # JSON Schema's `integer` admits 1.0; the harness compares JSON as JSON (1.0 is not 1),
    # so an adapter writes its counts as integers.
    base = jsonschema.Draft202012Validator
    exact = jsonschema.validators.extend(  # type: ignore[no-untyped-call]
        base, type_checker=base.TYPE_CHECKER.redefine("integer", _integer)
    )
    return exact({**root, "$ref": f"#/$defs/{definition}"}, registry=registry)


def _integer(checker: Any, instance: Any) -> bool:
    return isinstance(instance, int) and not isinstance(instance, bool)


_TYPES = {
    "string": "a string", "integer": "an integer", "number": "a number", "boolean": "a boolean",
    "array": "a list", "object": "an object", "null": "null",
}  # fmt: skip


def _problem(errors: list[Any]) -> str:
    """The shallowest problem, with every field missing at the same place, and how many
    more there are. jsonschema yields them in the schema's order, so this is stable."""
    # One problem once: a line that is no object fails every branch's `type` alike.
    unique = {(tuple(e.absolute_path), e.message): e for e in errors}
    errors = sorted(unique.values(), key=lambda e: len(e.absolute_path))
    first = errors[0]
    where = _path(first.absolute_path)
    if first.validator == "required":
        at = first.absolute_path
        same = [e for e in errors if e.validator == "required" and e.absolute_path == at]
        missing = _unique(p for e in same for p in e.validator_value if p not in e.instance)
        why = next((e.schema["$comment"] for e in same if "$comment" in e.schema), None)
        what = f"missing {_names(missing)}" + (f" ({why})" if why else "")
        rest = len(errors) - len(same)
    else:
        what, rest = _what(first), len(errors) - 1
    shown = f"{where}: {what}" if where else what
    return shown + (f"; and {rest} more problem{'s' if rest > 1 else ''}" if rest else "")


def _what(error: Any) -> str:
    keyword, value, schema = error.validator, error.validator_value, error.schema
    if keyword == "additionalProperties":
        known = schema.get("properties", {})
        extra = [k for k in error.instance if k not in known]
        return f"unknown field{'s' if len(extra) > 1 else ''} {_names(extra)}"
    if "$comment" in schema:
        expected = schema["$comment"]
    elif keyword == "type":
        expected = " or ".join(_TYPES[t] for t in ([value] if isinstance(value, str) else value))
    elif keyword == "enum":
        expected = "one of " + ", ".join(v if isinstance(v, str) else json.dumps(v) for v in value)
    elif keyword == "const":
        expected = json.dumps(value)
    elif keyword == "minLength" and value == 1:
        expected = "a non-empty string"
    elif keyword in ("minimum", "exclusiveMinimum"):
        expected = f"{'at least' if keyword == 'minimum' else 'more than'} {value}"
    elif keyword == "pattern":
        expected = f"a string matching {value}"
    elif keyword == "uniqueItems":
        expected = "no item twice"
    else:  # a keyword this schema does not use yet: jsonschema's own words
        return str(error.message)
    return f"expected {expected}, got {_clip(json.dumps(error.instance, ensure_ascii=False))}"


def _path(parts: Iterable[Any]) -> str:
    """A JSON path as the protocol's text writes it: observation.direct[0].error.code."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z_][\w-]*", part):
            out += f".{part}" if out else part
        else:
            out += f"[{json.dumps(part, ensure_ascii=False)}]"
    return out


def _names(keys: Iterable[str]) -> str:
    return ", ".join(f"'{k}'" for k in keys)


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _clip(text: str, width: int = 80) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _shown(path: Path) -> str:
    """Relative to the working directory when inside it (scenarios/protocol.json in a
    checkout), else whole: relative to / it would read as relative to anywhere."""
    cwd = Path.cwd()
    with contextlib.suppress(ValueError):
        return str(path.relative_to(cwd)) if cwd != Path(cwd.anchor) else str(path)
    return str(path)


# -- the observation ----------------------------------------------------------------------
def observation(scenario: Scenario, data: dict[str, Any], llm: ScriptedLLM | None) -> Observation:
    """An observation the schema has accepted (check), rendered as the reference's would be."""
    from harness.contract import Observation
    from harness.fake.script import script_error_text

    outcome = data["outcome"]
    # A runtime names agents by its own ids (a session UUID, say), and the scenario's tools
    # by its own names (its dialect); the fake knows both, so reports use the scenario's.
    names = llm.conversations() if llm else {}
    tool = llm.dialect.scenario_tool if llm else str
    direct, tool_errors = _direct(data["direct"])
    tool_errors += [
        {"agent": names.get(e["agent"], e["agent"]), "tool": tool(e["tool"]),
         "code": e["code"], "name": e["name"], "is_error": True, "text": e["text"]}
        for e in data["tool_errors"]
    ]  # fmt: skip
    handoffs = [
        {"parent": names.get(h["parent"], h["parent"]), "child": names.get(h["child"], h["child"]),
         "child_final": h["child_final"], "tool_result": h["tool_result"]}
        for h in data["handoffs"]
    ]  # fmt: skip
    script_errors = [script_error_text(e, scenario) for e in llm.errors] if llm else []
    if llm is not None and outcome == "completed":
        script_errors += [script_error_text(e, scenario) for e in llm.unconsumed()]
    return Observation(
        scenario_id=scenario.id,
        outcome=outcome,
        error=None if outcome == "completed" else _named(data["error"], names),
        answerer_calls=data["answerer_calls"],
        tool_errors=tool_errors,
        handoffs=handoffs,
        final=_renamed(data["final"], names),
        sessions={},
        plan_mode=_renamed(data["plan_mode"], names),
        asked=[_asked(a, names) for a in data["asked"]],
        direct=direct,
        requests=list(llm.requests) if llm else [],
        served=llm.served if llm else 0,
        model_prefix=llm.prefixes.summary() if llm else {},
        script_errors=script_errors,
        side_requests=list(llm.side) if llm else [],
    )


def _named(text: str, names: dict[str, str]) -> str:
    """Prose with the runtime's ids (whole words only) replaced by the scenario's names."""
    for key, name in sorted(names.items(), key=lambda item: -len(item[0])):
        text = re.sub(rf"(?<![\w-]){re.escape(key)}(?![\w-])", name, text)
    return text


def _asked(entry: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    from harness.contract import json_equal
    from harness.runtime.questions import QUESTION_DEFAULTS

    caller = entry["caller"]
    # Left-out fields and fields at their defaults mean the same: compare them the same
    # (as JSON: an open field holding 0 is not multi_select's false).
    questions = [
        {k: v for k, v in q.items()
         if k not in QUESTION_DEFAULTS or not json_equal(v, QUESTION_DEFAULTS[k])}
        for q in entry["questions"]
    ]  # fmt: skip
    return {"caller": names.get(caller, caller) if caller else caller, "questions": questions}


def _renamed(by_agent: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    # In the adapter's order: of two ids for one agent (a session resumed under a new id),
    # the later report stands.
    return {names.get(agent, agent): value for agent, value in by_agent.items()}


def _direct(entries: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Each direct ask as the reference records it, and its errors as tool errors: of `ask`,
    and of `register_provider` for a registration it refused before."""
    from harness.runtime.questions import Answer, answers_text

    direct, errors = [], []
    for seq, entry in enumerate(entries, start=1):
        caller, error = entry["caller"], entry["error"]
        # A refused provider registration came before the ask, and no agent made it.
        errors += [
            {"agent": None, "tool": "register_provider", "code": e["code"], "name": e["name"],
             "is_error": True, "text": f"Error: {e['message']}"}
            for e in entry.get("registrations", ()) if e is not None
        ]  # fmt: skip
        if error is not None:
            name, code, text = error["name"], error["code"], f"Error: {error['message']}"
            errors.append({"agent": caller, "tool": "ask", "code": code, "name": name,
                           "is_error": True, "text": text})  # fmt: skip
            direct.append({"seq": seq, "caller": caller, "text": text,
                           "error": {"name": name, "code": code}})  # fmt: skip
            continue
        answers = [Answer(a["id"], tuple(a["selected"]), a.get("custom")) for a in entry["answers"]]
        direct.append({"seq": seq, "caller": caller, "text": answers_text(answers), "error": None})
    return direct, errors
