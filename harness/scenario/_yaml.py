"""Scenario files are JSON-compatible YAML: whatever a YAML 1.2 parser in another language
reads from them, Python must read the same.

PyYAML speaks YAML 1.1, where `yes` is true, `2024-01-01` is a date, `007` is octal and a
repeated key silently replaces the first. Downstream runtimes vendor these files and parse
them with their own (1.2) parsers, so those differences would turn into scenarios that mean
one thing here and another there. This loader resolves plain scalars as the 1.2 JSON schema
does (null, true/false, decimal numbers; everything else is a string) and refuses what JSON
cannot express: duplicate or non-string keys, foreign tags, recursive aliases, non-finite
numbers, and documents whose aliases expand beyond any reasonable scenario.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

_TAG = "tag:yaml.org,2002:"
NULL, BOOL, INT, FLOAT, STR = (_TAG + t for t in ("null", "bool", "int", "float", "str"))
SEQ, MAP = _TAG + "seq", _TAG + "map"

_SCALARS = {
    NULL: re.compile(r"^(?:~|null|Null|NULL|)$"),
    BOOL: re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
    INT: re.compile(r"^[-+]?(?:0|[1-9][0-9]*)$"),
    FLOAT: re.compile(r"^[-+]?(?:\.[0-9]+|(?:0|[1-9][0-9]*)(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$"),
}
_FIRST = {
    NULL: ["~", "n", "N", ""],
    BOOL: list("tTfF"),
    INT: list("-+0123456789"),
    FLOAT: list("-+.0123456789"),
}

# Plain scalars this loader reads as strings but other common parsers read otherwise
# (YAML 1.1: PyYAML's default, Go's yaml.v2, Ruby; the 1.2 core schema: JavaScript's yaml).
# Refused rather than guessed, so a vendored scenario means the same in every language.
_AMBIGUOUS = [
    ("boolean", re.compile(r"^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF)$")),
    (
        "number",
        re.compile(
            r"^[-+]?(?:0[0-9_]+(?:\.[0-9_]*)?|0[box][0-9a-fA-F_]+|\.(?:inf|Inf|INF)"
            r"|[0-9][0-9_]*_[0-9_.]*(?:[eE][-+]?[0-9]+)?|[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?)$"
            r"|^\.(?:nan|NaN|NAN)$"
        ),
    ),
    (
        "timestamp",
        re.compile(
            r"^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}"
            r"(?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?)?$"
        ),
    ),
]
# JSON cannot tell 2.0 from 2, and a parser in another language gives 2: so does this one,
# within the range where a double holds every integer exactly.
_EXACT = 2**53

# Far above any real scenario (the largest ships a few hundred values), far below what makes
# schema validation slow: an alias "billion laughs" document is refused, not walked.
MAX_VALUES = 100_000
MAX_DEPTH = 64


class _JsonResolver(yaml.resolver.BaseResolver):
    pass


for _tag in (NULL, BOOL, INT, FLOAT):  # order matters: an int also matches the float pattern
    _JsonResolver.add_implicit_resolver(_tag, _SCALARS[_tag], _FIRST[_tag])


def _c_parser() -> Any:
    try:
        from yaml import cyaml  # libyaml: several times faster
    except ImportError:  # pragma: no cover - libyaml ships in every PyYAML wheel we install
        return None
    return getattr(cyaml, "CParser", None)


_Parser: Any = _c_parser()


if _Parser is not None:

    class _Loader(_Parser, yaml.constructor.SafeConstructor, _JsonResolver):  # type: ignore[misc]
        def __init__(self, stream: str) -> None:
            _Parser.__init__(self, stream)
            yaml.constructor.SafeConstructor.__init__(self)
            _JsonResolver.__init__(self)

else:  # pragma: no cover - libyaml is in every wheel we install; the pure parser is slower

    class _Loader(  # type: ignore[no-redef]
        yaml.reader.Reader,
        yaml.scanner.Scanner,
        yaml.parser.Parser,
        yaml.composer.Composer,
        yaml.constructor.SafeConstructor,
        _JsonResolver,
    ):
        def __init__(self, stream: str) -> None:
            yaml.reader.Reader.__init__(self, stream)
            yaml.scanner.Scanner.__init__(self)
            yaml.parser.Parser.__init__(self)
            yaml.composer.Composer.__init__(self)
            yaml.constructor.SafeConstructor.__init__(self)
            _JsonResolver.__init__(self)


@dataclass(frozen=True)
class YamlProblem:
    line: int  # 1-based
    column: int  # 1-based
    message: str


class YamlError(Exception):
    def __init__(self, problems: list[YamlProblem]) -> None:
        super().__init__(problems[0].message)
        self.problems = problems


@dataclass(frozen=True)
class Document:
    value: Any
    root: Node | None

    def locate(self, path: list[str]) -> tuple[int, int] | None:
        """(line, column) of what a JSON pointer's parts name, or of its nearest existing
        ancestor; None for an empty document. A mapping member is located at its key: an
        unknown or misspelt field is on the key's line, where its value may start later."""
        node = self.root
        if node is None:
            return None
        mark = node.start_mark
        for part in path:
            found = _child(node, part)
            if found is None:
                break
            key, node = found
            mark = (key or node).start_mark
        return mark.line + 1, mark.column + 1


def _child(node: Node, part: str) -> tuple[Node | None, Node] | None:
    """(the key node, if a mapping's, and the value node) for one pointer part."""
    if isinstance(node, MappingNode):
        for key, value in node.value:
            if isinstance(key, ScalarNode) and key.value == part:
                return key, value
    elif isinstance(node, SequenceNode) and part.isdigit() and int(part) < len(node.value):
        return None, node.value[int(part)]
    return None


def parse(text: str) -> Document:
    """Parse one JSON-compatible YAML document. Raises YamlError with every problem found
    at once (syntax errors stop the parser, so those come one at a time)."""
    try:
        # The pure-Python reader checks characters as it is built, so construction is
        # inside the try too.
        loader = _Loader(text)
        root = loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        raise YamlError([_marked(exc, text)]) from None
    except yaml.reader.ReaderError as exc:
        raise YamlError([_reader(exc, text)]) from None
    try:
        if root is None:
            return Document(None, None)
        problems = _node_problems(root)
        if problems:  # the walk is depth-first from the end; a reader wants them in order
            raise YamlError(sorted(problems, key=lambda p: (p.line, p.column)))
        try:
            return Document(loader.construct_document(root), root)
        except yaml.MarkedYAMLError as exc:
            raise YamlError([_marked(exc, text)]) from None
    finally:
        loader.dispose()


def _marked(exc: yaml.MarkedYAMLError, text: str) -> YamlProblem:
    mark = exc.problem_mark or exc.context_mark
    line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
    message = " ".join(str(exc.problem or exc).split())
    if exc.context:
        message = f"{message} ({' '.join(exc.context.split())})"
    # libyaml's words for a tab ("found character that cannot start any token") do not say
    # it is one, and an editor shows it as spaces.
    lines = text.splitlines()
    at = lines[line - 1][column - 1 : column] if 0 < line <= len(lines) else ""
    if at == "\t":
        message += "; that character is a tab: YAML indents with spaces only; use spaces"
    return YamlProblem(line, column, message)


def _reader(exc: yaml.reader.ReaderError, text: str) -> YamlProblem:
    before = text[: max(exc.position, 0)]
    line = before.count("\n") + 1
    column = len(before) - (before.rfind("\n") + 1) + 1
    char = exc.character if isinstance(exc.character, str) else chr(exc.character)
    return YamlProblem(
        line, column, f"unacceptable character {char!r} ({exc.reason}); remove it or escape it"
    )


def _at(node: Node, message: str) -> YamlProblem:
    return YamlProblem(node.start_mark.line + 1, node.start_mark.column + 1, message)


def _node_problems(root: Node) -> list[YamlProblem]:
    """Walk the node graph once, iteratively (a hostile document must not exhaust the
    stack), checking each node and the size and depth of the document as JSON would see
    it, aliases expanded. Most nodes are scalars, leaves checked where they are met rather
    than pushed and popped (an aliased one is met, and checked, once per use: the
    duplicates are dropped at the end)."""
    problems: list[YamlProblem] = []
    size: dict[int, int] = {}
    depth: dict[int, int] = {}
    visiting: set[int] = set()
    stack: list[tuple[Node, list[Node] | None]] = [(root, None)]
    while stack:
        node, kids = stack.pop()
        key = id(node)
        if kids is not None:  # leaving: every collection below is measured
            visiting.discard(key)
            total, deepest = 1, 0
            for kid in kids:
                if isinstance(kid, ScalarNode):
                    total, deepest = total + 1, max(deepest, 1)
                else:
                    total, deepest = total + size[id(kid)], max(deepest, depth[id(kid)])
            size[key], depth[key] = min(total, MAX_VALUES + 1), 1 + deepest
            continue
        if key in size:
            continue  # an alias of a node already checked
        problems += _check(node)
        if isinstance(node, ScalarNode):  # the document is one scalar
            size[key] = depth[key] = 1
            continue
        kids = _children(node)
        visiting.add(key)
        stack.append((node, kids))
        for kid in kids:
            if isinstance(kid, ScalarNode):
                problems += _check(kid)
            elif id(kid) in visiting:
                return [
                    *problems,
                    _at(kid, "an alias refers to its own anchor; JSON has no cycles"),
                ]
            else:
                stack.append((kid, None))
    if size[id(root)] > MAX_VALUES:
        problems.append(
            _at(root, f"the document expands to more than {MAX_VALUES} values; check its aliases")
        )
    if depth[id(root)] > MAX_DEPTH:
        problems.append(_at(root, f"the document nests deeper than {MAX_DEPTH} levels"))
    return list(dict.fromkeys(problems))


# What can start a plain scalar that _AMBIGUOUS matches: every other one is a string to
# every parser without trying the patterns.
_AMBIGUOUS_FIRST = frozenset("yYnNoO+-.0123456789")


def _ambiguous(node: ScalarNode) -> list[YamlProblem]:
    # Quoted, a block scalar, or a first character no pattern allows: a string to every parser.
    if node.style or node.value[:1] not in _AMBIGUOUS_FIRST:
        return []
    for kind, pattern in _AMBIGUOUS:
        if pattern.match(node.value):
            return [
                _at(
                    node,
                    f"{node.value!r} is a {kind} to some YAML parsers and a string to others; "
                    "quote it",
                )
            ]
    return []


def _flow_plain(node: MappingNode | SequenceNode) -> list[YamlProblem]:
    """Inside a flow collection, YAML 1.1 scanners (PyYAML's pure-Python one among them) end
    a plain scalar at '?', where 1.2 parsers read on: quoted, every parser agrees."""
    if not node.flow_style:
        return []
    return [
        _at(kid, f"{kid.value!r} has a '?', which ends a plain scalar inside [...] or {{...}} "
            "for some YAML parsers; quote it")
        for kid in _children(node)
        if isinstance(kid, ScalarNode) and not kid.style and "?" in kid.value
    ]  # fmt: skip


def _float(loader: Any, node: ScalarNode) -> float | int:
    value = float(node.value)  # _check made sure it is a finite JSON number
    return int(value) if value.is_integer() and abs(value) < _EXACT else value


_Loader.add_constructor(FLOAT, _float)


def _children(node: Node) -> list[Node]:
    if isinstance(node, MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, SequenceNode):
        return list(node.value)
    return []


def _check(node: Node) -> list[YamlProblem]:
    if isinstance(node, ScalarNode):
        if node.tag == STR:
            return _ambiguous(node)
        pattern = _SCALARS.get(node.tag)
        if pattern is None:
            return [_at(node, f"tag {node.tag} is not JSON; remove it or quote the value")]
        if not pattern.match(node.value):
            kind = node.tag.removeprefix(_TAG)
            return [_at(node, f"{node.value!r} is not a JSON {kind}; quote it to make a string")]
        if node.tag == FLOAT and not math.isfinite(float(node.value)):
            return [_at(node, f"{node.value} is too large for a JSON number")]
        return []
    if isinstance(node, SequenceNode):
        if node.tag != SEQ:
            return [_at(node, f"tag {node.tag} is not a JSON array")]
        return _flow_plain(node)
    if not isinstance(node, MappingNode) or node.tag != MAP:
        return [_at(node, f"tag {node.tag} is not a JSON object")]
    problems = _flow_plain(node)
    seen: dict[str, int] = {}
    for key, _ in node.value:
        if not isinstance(key, ScalarNode) or key.tag != STR:
            shown = key.value if isinstance(key, ScalarNode) else "a collection"
            problems.append(_at(key, f"key {shown!r} is not a string; quote it"))
            continue
        if key.value == "<<" and not key.style:
            problems.append(_at(key, "'<<' merges mappings in YAML 1.1 only; quote it"))
        if key.value in seen:
            problems.append(
                _at(
                    key,
                    f"duplicate key {key.value!r} (first at line {seen[key.value]}); a key "
                    "may appear once in a mapping",
                )
            )
        seen.setdefault(key.value, key.start_mark.line + 1)
    return problems
