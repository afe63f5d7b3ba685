"""`harness repro --mermaid`: a sequence diagram that parses, for every shipped scenario,
and that shows what the run did: refusals with their code, the handoff, a hang's chain."""

from __future__ import annotations

import re

import pytest

from harness.adapters.reference.phases import observe_scenario
from harness.cli import main
from harness.run._sequence import clip, mermaid_text, sequence
from tests.conftest import SCENARIOS

ID = r"[A-Za-z][A-Za-z0-9]*"
# The subset of Mermaid's sequenceDiagram grammar the harness writes, and nothing more.
STATEMENTS = [
    re.compile(rf"participant (?P<declared>{ID}) as [^;#\n]*(#\d+;[^;#\n]*)*"),
    re.compile(rf"(?P<src>{ID})(->>|-->>|--x)(?P<dst>{ID}): \S.*"),
    re.compile(rf"Note (over (?P<a>{ID})(,(?P<b>{ID}))?|right of (?P<r>{ID})): \S.*"),
]


def check_syntax(lines: list[str]) -> None:
    """Our own syntax test (the Mermaid CLI needs a browser download to parse): the header,
    four-space statements of the known forms, text free of raw ';' and '#', and every
    participant declared before use."""
    assert lines[0] == "sequenceDiagram"
    declared: set[str] = set()
    for line in lines[1:]:
        assert line.startswith("    ") and not line.startswith("     "), line
        statement = line[4:]
        found = next((m for p in STATEMENTS if (m := p.fullmatch(statement))), None)
        assert found is not None, f"not a statement the harness writes: {line!r}"
        body = statement.split(": ", 1)[1] if ": " in statement else ""
        assert ";" not in re.sub(r"#\d+;", "", body) and "#" not in re.sub(r"#\d+;", "", body)
        if found.groupdict().get("declared"):
            declared.add(found["declared"])
            continue
        used = {v for k, v in found.groupdict().items() if v and k != "declared"}
        assert used <= declared, f"undeclared participant in {line!r}"


def test_every_scenario_draws_a_diagram_that_parses(scenario_id: str) -> None:
    scenario = SCENARIOS[scenario_id]
    check_syntax(sequence(observe_scenario(scenario, guard=None)))


def test_the_syntax_test_can_fail() -> None:
    with pytest.raises(AssertionError):
        check_syntax(["sequenceDiagram", "    A1->>A9: never declared"])
    with pytest.raises(AssertionError):
        check_syntax(["sequenceDiagram", "    participant A1 as x", "    A1->>A1: a; b"])


def test_a_refusal_shows_its_code_and_the_handoff_goes_back() -> None:
    lines = sequence(observe_scenario(SCENARIOS["zero-depth-live-child"]))
    assert any(re.fullmatch(r"    S--xA2: DELEGATED_CALLER: Error: human interaction.*", x)
               for x in lines)  # fmt: skip
    assert "    A2-->>A1: handoff: UNRESOLVED: Should deployment use the CUDA fallback?" in lines
    assert not any("S->>H" in x for x in lines)  # the refused child never reached the human


def test_the_hang_before_the_fix_ends_in_its_wait_for_chain(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["repro", "hang-before-the-fix", "--mermaid"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "```mermaid" and out[-1] == "```"
    lines = out[1:-1]
    check_syntax(lines)
    assert lines[-3:-1] == ["    S->>H: asks cuda-fallback", "    Note over H: never answers"]
    assert lines[-1].startswith("    Note over A1,H: hang: parent (root) --awaits subagent call")


def test_text_is_one_line_with_entities_for_what_mermaid_would_read() -> None:
    assert mermaid_text(clip("a;b #1\nc")) == "a#59;b #35;1 c"
