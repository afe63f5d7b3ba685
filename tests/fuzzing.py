"""What the fuzz tests feed the harness: hypothesis profiles and strategies for random and
mutated scenario documents. The contract they are checked against is in test_fuzz.py.

Imported by test_fuzz.py, and by conftest.py at start-up when `--hypothesis-profile` is
given, so that the profiles exist before hypothesis applies it (which it does before test
modules are imported).
"""

from __future__ import annotations

import copy
import datetime as dt
import re
from collections.abc import Iterator
from typing import Any

import yaml
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from harness.scenario import scenario_paths

# -- profiles -------------------------------------------------------------------------
# too_slow and data_too_large: a single example writes files and may run a whole world
# (up to the backstop), and the YAML-ish texts are large by design; neither says anything
# about the code under test.
_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large]
settings.register_profile(
    "ci",
    derandomize=True,  # the same examples on every run: a red CI is always reproducible
    database=None,  # nothing carried over between runs or machines
    max_examples=50,
    deadline=None,  # the runner's backstop and our watchdog bound each example instead
    suppress_health_check=_QUIET,
    print_blob=True,
)
settings.register_profile(
    "explore",
    max_examples=4000,
    deadline=None,
    suppress_health_check=_QUIET,
    print_blob=True,
)

# The schema's patterns as JSON Schema means them: in ECMA-262 `$` is the end of the
# string, while Python's re (which jsonschema uses) also matches `$` before a final "\n".
SCHEMA_ID = re.compile(r"[a-z0-9][a-z0-9-]*")
SCHEMA_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
SCHEMA_LABEL = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


# -- shipped scenarios ----------------------------------------------------------------
# Read once: they are the seeds of every mutation. scenario_paths() already leaves out
# clauses.yaml, and schema.json is not a *.yaml file.
SHIPPED_TEXT: dict[str, str] = {p.stem: p.read_text(encoding="utf-8") for p in scenario_paths()}
# libyaml, as the harness reads them: PyYAML's pure-Python parser rejects three shipped
# files (a flow mapping ending in "...fallback?}]"), so yaml.safe_load without libyaml
# would not even give the seeds.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
SHIPPED: dict[str, dict[str, Any]] = {
    stem: yaml.load(text, Loader=_LOADER) for stem, text in SHIPPED_TEXT.items()
}
STEMS = sorted(SHIPPED)


def _file_name(doc: Any, fallback: str) -> str:
    """The mutated id when it is still a usable file name, so `id equals the file name`
    holds and the semantic checks behind it are reached; otherwise the original id."""
    ident = doc.get("id") if isinstance(doc, dict) else None
    if isinstance(ident, str) and SCHEMA_ID.fullmatch(ident) and len(ident) <= 120:
        return ident
    return fallback


def dump(doc: Any) -> str:
    try:
        return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
    except yaml.YAMLError:
        return repr(doc)  # un-dumpable: the loader still has to reject it cleanly


# -- strategy 1: bytes and text -------------------------------------------------------
KEYS = [
    "id", "title", "covers", "guard", "stream_chunk", "description", "world", "registry",
    "answerer", "answers", "answer_delay_ms", "agents", "parent", "child", "spawned_by",
    "session", "delegation_depth", "script", "plan_mode", "say", "call", "calls", "args",
    "as", "name", "prompt", "features", "owner", "phases", "start", "resume", "ask", "live",
    "reenter", "detach",
    "caller", "caller_object", "aborted", "questions", "question", "intent", "faults",
    "kind", "agent", "tool", "expect", "outcome", "answerer_calls", "tool_errors", "code",
    "handoffs", "final", "contains", "equals", "<<", "? [a, b]",
]  # fmt: skip
SCALARS = [
    "~", "null", "true", "no", "on", "Yes", "0", "-1", "007", "0x1F", "0o17", "1_000",
    "1e3", "1.0", "2.0", "99999999999999999999999999999999999999", "-9" * 40,
    ".nan", ".NaN", ".inf", "-.inf", "1.0e+400", "2024-01-01", "2024-01-01T00:00:00Z",
    "2024-13-45", "12:30:00", "'quoted'", '"\\u0000"', '"\\t\\n"', '"\\ud800"', "|", ">-",
    "!!python/object:os.system", "!!python/object/apply:os.system ['true']",
    "!!python/name:builtins.exit", "!!binary aGVsbG8=", "!!set {a, b}", "!!omap [a: 1]",
    "!!str 1", "!!int x", "!!float nope", "!!timestamp 2024-01-01", "!custom x",
    "&a [x, y]", "*a", "*undefined", "&r [*r]", "{a: *a}", "[", "{", "]", "}", "'", '"',
    "- ", "? ", ": ", "#", "%YAML 1.1", "---", "...", "\t", "\ufeff", "\x00", "\x85",
    "\u2028", "{{a.result}}", "{{", "}}", "zero-depth-live-child", "parent", "child",
    "subagent", "ask_user_question", "exit_plan_mode", "DELEGATED_CALLER", "D1", "[D1]",
    "[]", "{}", "[[[[[[[[]]]]]]]]", "[" * 1100 + "]" * 1100, "{say: hi}",
    "[{say: hi}]", "{start: parent, prompt: go}", "{outcome: completed, answerer_calls: 0}",
]  # fmt: skip

_line = st.builds(
    lambda indent, key, sep, value: f"{indent}{key}{sep}{value}",
    st.sampled_from(["", "", "  ", "    ", "- ", "  - ", "\t"]),
    st.sampled_from(KEYS),
    st.sampled_from([": ", ": ", ":", " : ", ":\t"]),
    st.sampled_from(SCALARS) | st.text(max_size=12),
)
yamlish = st.lists(_line | st.sampled_from(SCALARS), min_size=1, max_size=14).map("\n".join)
# Deep nesting, as flow and as block sequences, around libyaml's own depth limit (1000).
nested = st.builds(
    lambda n, flow: ("[" * n + "]" * n) if flow else "".join(f"{' ' * i}-\n" for i in range(n)),
    st.integers(1, 1200),
    st.booleans(),
).map(lambda body: f"id: case\ntitle: t\ncovers: [D1]\nx: {body}\n")


@st.composite
def spliced(draw: st.DrawFn) -> tuple[str, str]:
    """A shipped scenario's text with 1-4 lines inserted, deleted, duplicated or
    overwritten by fragments: close enough to valid to reach past the YAML parser."""
    stem = draw(st.sampled_from(STEMS))
    lines = SHIPPED_TEXT[stem].splitlines()
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(lines)))
        op = draw(st.sampled_from(["insert", "delete", "duplicate", "value", "indent"]))
        fragment = draw(_line | st.sampled_from(SCALARS))
        if op == "insert" or i == len(lines):
            lines.insert(i, fragment)
        elif op == "delete":
            del lines[i]
        elif op == "duplicate":  # duplicate keys: YAML keeps the last, silently
            lines.insert(i, lines[i])
        elif op == "value" and ":" in lines[i]:
            head = lines[i].split(":", 1)[0]
            lines[i] = f"{head}: {draw(st.sampled_from(SCALARS))}"
        else:
            lines[i] = draw(st.sampled_from(["\t", " ", "   "])) + lines[i]
    bom = draw(st.sampled_from(["", "", "\ufeff"]))
    return stem, bom + "\n".join(lines) + "\n"


# -- strategy 2: structural mutations -------------------------------------------------
NAME = r"[A-Za-z0-9][A-Za-z0-9._-]{0,10}"
ODD_NAMES = ["", " ", "..", ".hidden", "a/b", "x" * 65, "-lead", "Parent", "parent ", "✓",
             "child\n", "lead\r", "~0", "a.b"]  # fmt: skip
FIELDS = ["result", "id", "args", "args.questions.0.question", "args.name", "args.nope",
          "args.questions.9", "result.x", "bogus", ""]  # fmt: skip

json_leaf = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.sampled_from([0, 1, -1, 2**63, 10**40, -(10**40)])
    | st.floats()  # NaN and both infinities included
    | st.sampled_from([1.0, 2.0, 0.5, 1e300])  # 1.0 counts as an integer to JSON Schema
    | st.text(max_size=20)
    | st.dates()
    | st.datetimes(max_value=dt.datetime(9999, 1, 1))
    | st.sampled_from(["", "{{", "{{a.result}}", "# Plan", "Approve", "a\u2028b", *ODD_NAMES])
)
# Empty containers are built fresh each time: one shared `{}` would alias across documents.
json_value: st.SearchStrategy[Any] = (
    st.recursive(
        json_leaf,
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
        ),
        max_leaves=6,
    )
    | st.builds(list)
    | st.builds(dict)
)


def _slots(value: Any) -> Iterator[tuple[Any, Any]]:
    """Every (container, key) in a document, depth first."""
    if isinstance(value, dict):
        for key in list(value):
            yield value, key
            yield from _slots(value[key])
    elif isinstance(value, list):
        for i in range(len(value)):
            yield value, i
            yield from _slots(value[i])


def _strings(doc: Any) -> list[tuple[Any, Any]]:
    return [(c, k) for c, k in _slots(doc) if isinstance(c[k], str)]


REF_KEYS = {"spawned_by", "start", "resume", "name", "agent", "owner", "caller", "as"}
NAME_MAPS = {"agents", "final", "plan_mode", "answers"}


def _names(doc: Any) -> list[str]:
    """Every agent name and label the document uses: the likeliest wrong references."""
    out = set()
    for c, k in _slots(doc):
        if isinstance(c, dict) and k in NAME_MAPS and isinstance(c[k], dict):
            out |= {n for n in c[k] if isinstance(n, str)}
        if isinstance(c, dict) and k in REF_KEYS and isinstance(c[k], str):
            out.add(c[k])
    return sorted(out)


@st.composite
def _new_name(draw: st.DrawFn, doc: Any) -> str:
    used = _names(doc)
    pool = st.sampled_from(used) if used else st.from_regex(NAME, fullmatch=True)
    return draw(pool | st.from_regex(NAME, fullmatch=True) | st.sampled_from(ODD_NAMES))


OPTIONAL: dict[str, st.SearchStrategy[Any]] = {
    # 2.0 is an integer to JSON Schema but not to Python's slicing.
    "stream_chunk": st.sampled_from([1, 3, 10**30, 2.0, 1.0, 7.0, 1e300]),
    "guard": st.sampled_from(["runtime-ownership", "none", "tool-only", "after-intent"]),
    "description": st.text(max_size=10),
    "faults": st.lists(
        st.fixed_dictionaries(
            {
                "kind": st.sampled_from(["stale-caller", "aborted"]),
                "agent": st.sampled_from(["parent", "child", "lead", "grandchild"]),
                "tool": st.sampled_from(["ask_user_question", "exit_plan_mode"]),
            }
        ),
        max_size=2,
    ),
}

# Simplest first: hypothesis shrinks a failure towards the start of the list.
MUTATIONS = ["delete", "replace", "insert", "reference", "rename", "template", "swap", "list"]
MUTATIONS += ["whole"]  # the document itself replaced: a list, a string, null...


def _mutate(draw: st.DrawFn, doc: Any) -> Any:
    """One random mutation; returns the (possibly new) document."""
    kind = draw(st.sampled_from(MUTATIONS))
    slots = list(_slots(doc))
    if not slots or kind == "whole":
        return draw(json_value)
    if kind == "delete":
        container, key = draw(st.sampled_from(slots))
        del container[key]
    elif kind == "replace":
        container, key = draw(st.sampled_from(slots))
        container[key] = draw(json_value)
    elif kind == "insert":
        # Any key anywhere, or (as often) a top-level field the shipped files rarely set,
        # with a value of roughly the right kind, so it gets past the schema.
        dicts = [doc] if isinstance(doc, dict) else []
        dicts += [c[k] for c, k in slots if isinstance(c[k], dict)]
        if isinstance(doc, dict) and draw(st.booleans()):
            key = draw(st.sampled_from(sorted(OPTIONAL)))
            doc[key] = draw(OPTIONAL[key])
        elif dicts:
            draw(st.sampled_from(dicts))[draw(st.sampled_from(KEYS))] = draw(json_value)
    elif kind == "swap":
        (c1, k1), (c2, k2) = draw(st.sampled_from(slots)), draw(st.sampled_from(slots))
        # Copies: swapping a value with one inside it must not build a cycle.
        v1, v2 = copy.deepcopy(c1[k1]), copy.deepcopy(c2[k2])
        c1[k1] = v2
        c2[k2] = v1
    elif kind == "list":
        lists = [c[k] for c, k in slots if isinstance(c[k], list) and c[k]]
        if lists:
            items = draw(st.sampled_from(lists))
            i = draw(st.integers(0, len(items) - 1))
            if draw(st.booleans()):
                items.insert(draw(st.integers(0, len(items))), copy.deepcopy(items[i]))
            else:
                del items[i]
    elif kind == "reference":
        refs = [
            (c, k)
            for c, k in _slots(doc)
            if (isinstance(c, dict) and k in REF_KEYS and isinstance(c[k], str))
            or (isinstance(c, list) and isinstance(c[k], str) and c[k] in _names(doc))
            # live: [{agent: child, owner: parent}]: the names in an entry
            or (isinstance(c, dict) and k in _names(doc) and isinstance(c[k], str | None))
        ]
        if refs:
            container, key = draw(st.sampled_from(refs))
            container[key] = draw(_new_name(doc))
    elif kind == "rename":
        maps = [c[k] for c, k in slots if k in NAME_MAPS and isinstance(c[k], dict) and c[k]]
        if maps:
            mapping = draw(st.sampled_from(maps))
            old = draw(st.sampled_from(list(mapping)))
            new = draw(_new_name(doc))
            # Rebuilt in order, so only the one key changes (or merges into an existing one).
            items = [(new if k == old else k, v) for k, v in mapping.items()]
            mapping.clear()
            mapping.update(items)
    elif kind == "template":
        # Mostly the script's strings (say, args), where templates are parsed and resolved.
        agents = doc.get("agents") if isinstance(doc, dict) else None
        scripted = _strings(agents) if isinstance(agents, dict) else []
        mostly = draw(st.integers(0, 3)) > 0
        strings = scripted if scripted and mostly else _strings(doc)
        if strings:
            container, key = draw(st.sampled_from(strings))
            label = draw(_new_name(doc))
            field = draw(st.sampled_from(FIELDS))
            ref = draw(
                st.sampled_from(
                    [f"{{{{{label}.{field}}}}}", f"{{{{ {label}.{field} }}}}", "{{", "{{}}",
                     f"{{{{{label}\n.{field}}}}}", f"{{{{{label}.{field}}}}}{{{{"]
                )
            )  # fmt: skip
            old = container[key]
            container[key] = draw(
                st.sampled_from([ref, f"{old} {ref}", re.sub(r"\{\{.*?\}\}", lambda _: ref, old)])
            )
    return doc


@st.composite
def mutants(draw: st.DrawFn) -> tuple[str, Any]:
    """(file name, document): a shipped scenario after 1-3 mutations."""
    stem = draw(st.sampled_from(STEMS))
    doc: Any = copy.deepcopy(SHIPPED[stem])
    for _ in range(draw(st.integers(1, 3))):
        doc = _mutate(draw, doc)
    return _file_name(doc, stem), doc
