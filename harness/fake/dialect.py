"""The dialect: how a runtime spells the scenarios' three tools.

Scenarios script `subagent {name, prompt}`, `ask_user_question {questions: [...]}` and
`exit_plan_mode {plan}`, whatever the runtime calls them. A runtime whose tools have other
names or other arguments declares a `Dialect`: for each scenario tool, a `Spelling` (the
runtime's tool name and an arguments template). The fake sends each scripted call in it,
and reads the runtime's names back as the scenario's (`scenario_tool`). Templates that
refer to a call's arguments (`{{ask.args.questions.0.question}}`) still read the scripted
ones. harness/dialects/ ships one for each agent CLI the suite knows (`Dialect.named`).

A template is JSON. In it:
- a string that is exactly `{field}` is that field's value, of any JSON type; a field may
  be a dotted path into the arguments, a list's items by index (`{questions.0.question}`);
  `{a|b}` is the first of a, b that is present; with none present, its key is left out;
- any other string has each `{field}` replaced by that field's string value;
- `{"$each": FIELD, "$as": TEMPLATE}` is a list: TEMPLATE filled once per item of the
  list FIELD, each item's fields in scope (`"$defaults": {...}` fills in what an item lacks);
  with no FIELD at all, its key is left out;
- anything else is sent as written.
A spelling's own `defaults` fill in what the scripted arguments lack, and its `namespace`
(Responses only) is sent on the call as the runtime's namespaced tools need it.

A delegation that takes two calls (Codex: `spawn_agent`, whose result is an agent id, then
`wait_agent` on it, whose result is the child's handoff) says so with `then`: a spelling
filled from the first call's result (its fields when it is a JSON object, and `{result}`,
the whole text). The fake sends it as the agent's next reply, when the request carrying
that result comes, without consuming a scripted step; the delegation's label then names
the second call, so `{{LABEL.result}}` is the handoff.

A runtime whose subagent ends only by calling a tool (Gemini CLI: `complete_task`) says so
with `finish`: a spelling filled from `{text}`, the child's last words. An agent's last
scripted step that only speaks is then sent with that call beside its text, when the
request declares the tool (a child's does; a root's does not), as a model of that runtime
would end; its text stays the agent's final words.

A runtime that keeps its tool calls and their results in its messages' text (smolagents:
`Calling tools:` and `Observation:`) says how those texts begin, with `transcript`; the fake
reads them back as the calls it sent (harness.fake.transcript).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.fake.side import Side, SideError
from harness.fake.transcript import Transcript, TranscriptError

DELEGATION_TOOL = "subagent"  # what scenarios call, whatever the runtime's tool is named
ASK_TOOL = "ask_user_question"
PLAN_TOOL = "exit_plan_mode"
SCENARIO_TOOLS = (DELEGATION_TOOL, ASK_TOOL, PLAN_TOOL)
DIALECTS = Path(__file__).resolve().parents[1] / "dialects"  # harness/dialects/NAME.json

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_PATH = rf"{_NAME}(?:\.(?:{_NAME}|[0-9]+))*"  # a field, or a path into it: questions.0.question
_WHOLE = re.compile(rf"\{{({_PATH}(?:\|{_PATH})*)\}}")
_EACH = frozenset({"$each", "$as", "$defaults"})
_KEYS = frozenset({"name", "tools", "cannot", "about", "side", "finish", "transcript"})


def as_identifier(name: str) -> str:
    """An agent's name as a Python identifier: each character that cannot be in one an
    underscore, and one before a leading digit (`child-a` is `child_a`)."""
    spelled = re.sub(r"\W", "_", name, flags=re.ASCII)
    return f"_{spelled}" if spelled[:1].isdigit() else spelled


class DialectError(ValueError):
    """A declared dialect that cannot be used; the message names where and why."""


class _Unfillable(Exception):
    """A template names a field the arguments lack where a string is needed."""


_ABSENT = object()  # a whole-string placeholder with no value: its key is left out


@dataclass(frozen=True)
class Spelling:
    """How a runtime spells one scenario tool: its name, and an arguments template (None:
    the scripted arguments unchanged)."""

    tool: str
    arguments: Mapping[str, Any] | None = None
    defaults: Mapping[str, Any] = field(default_factory=dict)
    namespace: str | None = None  # the Responses namespace the runtime's tool lives in

    def spell(self, args: Mapping[str, Any]) -> dict[str, Any] | None:
        """The runtime's arguments for scripted `args`, or None when the template needs a
        string the arguments do not give."""
        if self.arguments is None:
            return dict(args)
        try:
            filled = _fill(self.arguments, {**self.defaults, **args})
        except _Unfillable:
            return None
        return filled  # type: ignore[no-any-return]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"tool": self.tool}
        if self.arguments is not None:
            out["arguments"] = self.arguments
        if self.defaults:
            out["defaults"] = dict(self.defaults)
        if self.namespace is not None:
            out["namespace"] = self.namespace
        return out

    @classmethod
    def from_json(
        cls, value: Any, where: str, default_tool: str, extra: frozenset[str] = frozenset()
    ) -> Spelling:
        """Parse a declared spelling; DialectError names `where` and the fix."""
        keys = {"tool", "arguments", "defaults", "namespace"} | extra
        if not isinstance(value, dict) or set(value) - keys:
            raise DialectError(f"{where}: write {{tool: NAME, arguments: {{...}}}}")
        tool = value.get("tool", default_tool)
        if not isinstance(tool, str) or not tool:
            raise DialectError(f"{where}.tool: the runtime's tool name, a string")
        arguments, defaults = value.get("arguments"), value.get("defaults", {})
        if arguments is not None and not isinstance(arguments, dict):
            raise DialectError(f"{where}.arguments: a JSON object template")
        if not isinstance(defaults, dict):
            raise DialectError(f"{where}.defaults: a JSON object of field values")
        if arguments is not None:
            _check(arguments, f"{where}.arguments")
        namespace = value.get("namespace")
        if namespace is not None and (not isinstance(namespace, str) or not namespace):
            raise DialectError(f"{where}.namespace: the namespace tool's name, a string")
        return cls(tool, arguments, defaults, namespace)


@dataclass(frozen=True)
class Delegation(Spelling):
    """How a runtime's delegation tool spells the scenarios' `subagent {name, prompt}`.

    Every string of `arguments` has `{name}` and `{prompt}` replaced by the scripted
    values. None sends the scripted arguments unchanged (the reference runtime's own). A
    `tool` with `{name}` in it is a tool per child, named after it (an agent offered as a
    tool, as openai-agents' `Agent.as_tool` does); with `{identifier}`, named after it as a
    Python identifier (`as_identifier`: Google ADK names agents so). `scenario_tool` cannot
    read such names back, and an adapter that uses one reads them itself, knowing its
    children.
    """

    tool: str = DELEGATION_TOOL
    # The second call of a delegation in two (filled from the first call's result).
    then: Spelling | None = None

    def to_json(self) -> dict[str, Any]:
        out = super().to_json()
        if self.then is not None:
            out["then"] = self.then.to_json()
        return out

    @classmethod
    def from_json(
        cls,
        value: Any,
        where: str,
        default_tool: str = DELEGATION_TOOL,
        extra: frozenset[str] = frozenset(),
    ) -> Delegation:
        parsed = Spelling.from_json(value, where, default_tool, frozenset({"then"}))
        if "{" in parsed.tool.replace("{name}", "").replace("{identifier}", ""):
            raise DialectError(
                f"{where}.tool: a name, or one with {{name}} or {{identifier}} (a tool per child)"
            )
        if parsed.arguments is not None and "{prompt}" not in "".join(_strings(parsed.arguments)):
            raise DialectError(
                f"{where}.arguments: no string carries {{prompt}}; the child's task must "
                "reach it verbatim, since that is how its requests are recognised"
            )
        declared, then = value.get("then"), None
        if declared is not None:
            if not isinstance(declared, dict) or "tool" not in declared:
                raise DialectError(f"{where}.then: write {{tool: NAME, arguments: {{...}}}}")
            then = Spelling.from_json(declared, f"{where}.then", "")
            if then.tool == parsed.tool:
                raise DialectError(f"{where}.then.tool: the second call is another tool")
        return cls(parsed.tool, parsed.arguments, parsed.defaults, parsed.namespace, then)

    def follow(self, result: str) -> dict[str, Any] | None:
        """The `then` call's arguments, filled from the first call's result (its fields
        when it is a JSON object, and `result`, the whole text); None when they cannot be."""
        assert self.then is not None
        try:
            fields = json.loads(result)
        except ValueError:
            fields = None
        scope = {**(fields if isinstance(fields, dict) else {}), "result": result}
        return self.then.spell(scope)

    def spell(self, args: Mapping[str, Any]) -> dict[str, Any] | None:
        """None also when the scripted arguments lack a string name and prompt: a child is
        recognised by its prompt, and named by the scenario's name."""
        if self.arguments is not None and not all(
            isinstance(args.get(key), str) for key in ("name", "prompt")
        ):
            return None
        return super().spell(args)


REFERENCE_DELEGATION = Delegation()


@dataclass(frozen=True)
class Dialect:
    """A runtime's spelling of each scenario tool it renames; the others go as scripted."""

    tools: Mapping[str, Spelling] = field(default_factory=dict)
    name: str = "reference"
    # Scenarios whose scripted calls no spelling can fit to the runtime's tools, each with
    # why (a free-text question for a tool that takes only options, say): an adapter skips
    # them with the reason, rather than letting the runtime refuse the call for its shape.
    cannot: Mapping[str, str] = field(default_factory=dict)
    # Requests beside the agents' turns, each answered without consuming a script.
    side: tuple[Side, ...] = ()
    # The call that ends a subagent, filled from {text} (its last words); None: text ends it.
    finish: Spelling | None = None
    # How a runtime that keeps its calls in its messages' text writes them (transcript.py).
    transcript: Transcript | None = None

    def side_request(self, conversation: Mapping[str, Any]) -> Side | None:
        """The declared side request `conversation` is, if any."""
        return next((s for s in self.side if s.matches(conversation)), None)

    @property
    def delegation(self) -> Delegation:
        spelling = self.tools.get(DELEGATION_TOOL, REFERENCE_DELEGATION)
        assert isinstance(spelling, Delegation)
        return spelling

    def spelling(self, scenario_tool: str) -> Spelling | None:
        return self.tools.get(scenario_tool)

    def scenario_tool(self, runtime_tool: str) -> str:
        """A tool name the runtime reports, read back as the scenario's."""
        for scenario_tool, spelling in self.tools.items():
            if spelling.tool == runtime_tool:
                return scenario_tool
        return runtime_tool

    @classmethod
    def of(cls, delegation: Delegation) -> Dialect:
        return cls({DELEGATION_TOOL: delegation} if delegation != REFERENCE_DELEGATION else {})

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        out["tools"] = {k: s.to_json() for k, s in self.tools.items()}
        if self.cannot:
            out["cannot"] = dict(self.cannot)
        if self.side:
            out["side"] = [
                {k: v for k, v in vars(s).items() if v not in (None, False)} for s in self.side
            ]
        if self.finish is not None:
            out["finish"] = self.finish.to_json()
        if self.transcript is not None:
            out["transcript"] = self.transcript.to_json()
        return out

    @classmethod
    def from_json(cls, value: Any, where: str) -> Dialect:
        """Parse {name?, tools: {scenario tool: spelling}}; DialectError says what to fix."""
        if not isinstance(value, dict) or set(value) - _KEYS:
            raise DialectError(f"{where}: write {{name: RUNTIME, tools: {{subagent: {{...}}}}}}")
        tools = value.get("tools")
        if not isinstance(tools, dict) or set(tools) - set(SCENARIO_TOOLS):
            raise DialectError(
                f"{where}.tools: a mapping from {', '.join(SCENARIO_TOOLS)} to spellings"
            )
        name = value.get("name", "declared")
        if not isinstance(name, str) or not name:
            raise DialectError(f"{where}.name: the runtime's name, a string")
        spellings: dict[str, Spelling] = {}
        for tool in SCENARIO_TOOLS:  # in one order, whatever the file's
            if tool in tools:
                kind = Delegation if tool == DELEGATION_TOOL else Spelling
                spellings[tool] = kind.from_json(tools[tool], f"{where}.tools.{tool}", tool)
        runtime = [s.tool for s in spellings.values()]
        for scenario_tool, spelling in spellings.items():
            if scenario_tool != DELEGATION_TOOL and "{" in spelling.tool:
                raise DialectError(f"{where}.tools.{scenario_tool}.tool: a name, no template")
        delegation = spellings.get(DELEGATION_TOOL)
        if isinstance(delegation, Delegation) and delegation.then is not None:
            runtime.append(delegation.then.tool)  # its second call is no other tool either
        if len(set(runtime)) != len(runtime):
            raise DialectError(f"{where}.tools: two scenario tools spelled as one runtime tool")
        cannot = value.get("cannot", {})
        if not isinstance(cannot, dict) or not all(
            isinstance(why, str) and why.strip() for why in cannot.values()
        ):
            raise DialectError(f"{where}.cannot: a mapping from scenario id to why not")
        side = value.get("side", [])
        if not isinstance(side, list):
            raise DialectError(f"{where}.side: a list of side requests")
        try:
            sides = tuple(Side.from_json(v, f"{where}.side[{i}]") for i, v in enumerate(side))
        except SideError as exc:
            raise DialectError(str(exc)) from None
        finish = None
        if "finish" in value:
            finish = Spelling.from_json(value["finish"], f"{where}.finish", "")
            if "{text}" not in json.dumps(finish.arguments):
                raise DialectError(f"{where}.finish.arguments: no string carries {{text}}")
            if finish.tool in runtime:
                raise DialectError(f"{where}.finish.tool: a tool of its own, not a scenario tool's")
        transcript = None
        if "transcript" in value:
            try:
                transcript = Transcript.from_json(value["transcript"], f"{where}.transcript")
            except TranscriptError as exc:
                raise DialectError(str(exc)) from None
        return cls(spellings, name, dict(sorted(cannot.items())), sides, finish, transcript)

    @classmethod
    def load(cls, spec: str) -> Dialect:
        """A shipped dialect by name (harness/dialects/NAME.json), or a JSON file."""
        path = DIALECTS / f"{spec}.json" if re.fullmatch(r"[a-z0-9-]+", spec) else Path(spec)
        if not path.is_file():
            shipped = ", ".join(sorted(p.stem for p in DIALECTS.glob("*.json")))
            raise DialectError(f"{spec}: no such dialect file; or name a shipped one: {shipped}")
        try:
            value = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise DialectError(f"{path}: not a JSON file ({exc})") from None
        return cls.from_json(value, str(path))


REFERENCE_DIALECT = Dialect()


def _fill(template: Any, scope: Mapping[str, Any]) -> Any:
    if isinstance(template, str):
        whole = _WHOLE.fullmatch(template)
        if whole:
            found = [v for n in whole.group(1).split("|") if (v := _at(scope, n)) is not _ABSENT]
            return found[0] if found else _ABSENT
        # One pass: a value that itself contains "{name}" is not filled again.
        return _WHOLE.sub(lambda m: _text(m.group(1), scope), template)
    if isinstance(template, dict) and "$each" in template:
        if template["$each"] not in scope:
            return _ABSENT  # as a whole-string placeholder with no value: the key is left out
        items = scope[template["$each"]]
        if not isinstance(items, list) or not all(isinstance(i, Mapping) for i in items):
            raise _Unfillable(template["$each"])
        defaults = template.get("$defaults", {})
        return [_fill(template["$as"], {**defaults, **item}) for item in items]
    if isinstance(template, dict):
        filled = {k: _fill(v, scope) for k, v in template.items()}
        return {k: v for k, v in filled.items() if v is not _ABSENT}
    if isinstance(template, list):
        out = [_fill(v, scope) for v in template]
        if any(v is _ABSENT for v in out):
            raise _Unfillable("a list item")
        return out
    return template


def _text(names: str, scope: Mapping[str, Any]) -> str:
    for name in names.split("|"):
        if isinstance(value := _at(scope, name), str):
            return value
    raise _Unfillable(names)


def _at(scope: Mapping[str, Any], path: str) -> Any:
    """The value at a dotted path (a list's items by index), or _ABSENT."""
    value: Any = scope
    for key in path.split("."):
        if isinstance(value, Mapping) and key in value:
            value = value[key]
        elif isinstance(value, list) and key.isdigit() and int(key) < len(value):
            value = value[int(key)]
        else:
            return _ABSENT
    return value


def _check(template: Any, where: str) -> None:
    """Refuse a `$each` block without a field name and a template."""
    if isinstance(template, dict) and "$each" in template:
        if set(template) - _EACH or not isinstance(template["$each"], str) or "$as" not in template:
            raise DialectError(f"{where}: write {{$each: FIELD, $as: TEMPLATE}}")
        if not isinstance(template.get("$defaults", {}), dict):
            raise DialectError(f"{where}.$defaults: a JSON object of field values")
        _check(template["$as"], f"{where}.$as")
    elif isinstance(template, dict):
        for key, value in template.items():
            _check(value, f"{where}.{key}")
    elif isinstance(template, list):
        for i, value in enumerate(template):
            _check(value, f"{where}[{i}]")


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)
