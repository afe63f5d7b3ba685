"""`harness report`'s page, and `harness run --html`'s: one self-contained HTML file (no
network, no script, inline CSS and SVG) that reads at 1280 px and prints.

A summary table, then per scenario: its title and the clauses it covers, expected against
observed, the run as a sequence diagram, the golden diff of a failure, the wait-for graph
of a hang; and the mutants matrix when asked for.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.cli._exits import usage
from harness.cli._svg import sequence_svg, wait_for_svg
from harness.run._sequence import diagram

if TYPE_CHECKING:
    from harness.cli._options import Plan
    from harness.run import Ran
    from harness.run._mutants import Matrix

CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px auto; max-width: 1240px;
       color: #1b1b1b; padding: 0 16px; }
h1 { font-size: 22px; } h2 { font-size: 17px; margin: 0; }
table { border-collapse: collapse; margin: 8px 0 16px; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f0f2f5; }
.verdict { font-weight: 600; } .pass .verdict { color: #1a7f37; }
.fail .verdict, .error .verdict { color: #b00020; } .skip .verdict { color: #6b6b6b; }
section.scenario { border: 1px solid #ccc; border-left: 6px solid #1a7f37; margin: 18px 0;
                   padding: 10px 14px; break-inside: avoid-page; }
section.fail, section.error { border-left-color: #b00020; }
section.skip { border-left-color: #999; }
.figure { overflow-x: auto; } svg text { font: 11px ui-monospace, monospace; }
pre { background: #f6f8fa; padding: 8px; overflow-x: auto; font-size: 12px; }
.add { color: #1a7f37; } .del { color: #b00020; }
@media print { body { max-width: none; } .figure { overflow: visible; } }
"""


def made(flag: str, directory: Path) -> bool:
    """Create an output directory, or say in one line why it cannot be."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        usage(f"{flag} {directory}: cannot create it ({exc.strerror or exc})")
        return False
    return True


def write_page(directory: Path, ran: list[Ran], planned: Plan, mutants: Matrix | None) -> Path:
    """DIR/report.html for these results: `harness report`'s page, and `run --html`'s."""
    from harness.contract import is_reference, runtime_of
    from harness.scenario import clauses

    adapter = planned.adapter
    html = page(ran, adapter=adapter.name, runtime=runtime_of(adapter), clauses=clauses(),
                golden=planned.golden, reference=is_reference(adapter),
                mutants=mutants)  # fmt: skip
    out = directory / "report.html"
    out.write_text(html, encoding="utf-8")
    return out


def page(
    ran: Sequence[Ran],
    *,
    adapter: str,
    runtime: str | None,
    clauses: dict[str, str],
    golden: Path | None,
    reference: bool,
    mutants: Matrix | None = None,
) -> str:
    counts = {s: sum(r.result.status == s for r in ran) for s in ("pass", "fail", "error", "skip")}
    skipped = f", {counts['skip']} skipped" if counts["skip"] else ""
    head = [
        "<!doctype html>", '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>keyless-harness report</title>", f"<style>{CSS}</style></head><body>",
        "<h1>keyless-harness report</h1>",
        f"<p>Adapter <b>{escape(adapter)}</b>: {escape(runtime or '(the adapter does not say)')}."
        f" {counts['pass']} passed, {counts['fail'] + counts['error']} failed"
        f"{skipped}.</p>",
    ]  # fmt: skip
    body = [_summary(ran), *(_scenario(r, clauses, golden, reference) for r in ran)]
    if mutants is not None:
        body.append(_mutants(mutants))
    return "\n".join([*head, *body, "</body></html>", ""])


def _status(item: Ran) -> str:
    return item.result.status


def _summary(ran: Sequence[Ran]) -> str:
    rows = ['<table id="summary"><tr><th>scenario</th><th>verdict</th><th>level</th>'
            "<th>title</th><th>first mismatch</th></tr>"]  # fmt: skip
    for item in ran:
        s = item.result.scenario
        first = item.result.mismatches[0] if item.result.mismatches else ""
        rows.append(f'<tr class="{_status(item)}"><td><a href="#{s.id}">{escape(s.id)}</a></td>'
                    f'<td class="verdict">{escape(item.label)}</td>'
                    f'<td class="level">{escape(item.result.held or "-")}</td>'
                    f"<td>{escape(s.title)}</td><td>{escape(first[:160])}</td></tr>")  # fmt: skip
    return "\n".join([*rows, "</table>"])


def _scenario(item: Ran, clauses: dict[str, str], golden: Path | None, reference: bool) -> str:
    from harness.run import summary

    result, s = item.result, item.result.scenario
    covered = "".join(f'<li><b>{escape(c)}</b> {escape(clauses.get(c, ""))}</li>'
                      for c in s.covers)  # fmt: skip
    parts = [
        f'<section id="{escape(s.id)}" class="scenario {_status(item)}">',
        f'<h2>{escape(s.id)} <span class="verdict">{escape(item.label)}</span></h2>',
        f"<p>{escape(s.title)}</p>",
        f"<details><summary>Clauses covered ({len(s.covers)})</summary><ul>{covered}</ul>"
        "</details>",
    ]  # fmt: skip
    if result.status == "skip":
        parts.append(f"<p>Skipped: {escape(result.mismatches[0])}</p></section>")
        return "\n".join(parts)
    parts.append("<table><tr><th>expected</th><td>"
                 f"{escape(summary(result, expected=True))}</td></tr><tr><th>observed</th><td>"
                 f"{escape(summary(result, expected=False))}</td></tr></table>")  # fmt: skip
    if result.mismatches:
        items = "".join(f"<li>{escape(m)}</li>" for m in result.mismatches)
        parts.append(f'<ul class="mismatches">{items}</ul>')
    if result.above:  # missed above the gated level: shown, not failing
        items = "".join(f"<li>{escape(f'{lv}: {m}')}</li>" for lv, m in result.above)
        parts.append(f"<p>Holds {escape(result.held or '-')}; differs from upstream:</p>"
                     f'<ul class="above">{items}</ul>')  # fmt: skip
    parts.append(f'<div class="figure">{sequence_svg(diagram(result.observation))}</div>')
    if result.status != "pass" and result.golden == "compared" and golden is not None:
        parts.append(_golden_diff(item, golden / f"{s.id}.json", reference))
    hang = result.observation.hang
    if hang is not None:
        chains = [*hang.get("graph", []), *hang.get("cycles", [])]
        parts.append(f'<h3>Wait-for graph</h3><div class="figure">{wait_for_svg(chains)}</div>')
    parts.append("</section>")
    return "\n".join(parts)


def _golden_diff(item: Ran, path: Path, reference: bool) -> str:
    from harness.contract import portable, snapshot_text

    expected: Any = json.loads(path.read_text("utf-8"))
    observed: Any = item.result.observation.snapshot()
    if not reference:
        expected, observed = portable(expected), portable(observed)
    lines = difflib.unified_diff(snapshot_text(expected).splitlines(),
                                 snapshot_text(observed).splitlines(),
                                 f"golden {path.name}", "observed", lineterm="", n=2)  # fmt: skip
    shown = []
    for line in lines:
        kind = "add" if line.startswith("+") else "del" if line.startswith("-") else ""
        shown.append(f'<span class="{kind}">{escape(line)}</span>' if kind else escape(line))
    return '<h3>Golden diff</h3><pre class="golden-diff">' + "\n".join(shown) + "</pre>"


def _mutants(matrix: Matrix) -> str:
    rows = ['<h2 id="mutants">Mutants</h2>', '<table class="mutants"><tr><th>scenario</th>'
            + "".join(f"<th>{escape(v)}</th>" for v in matrix.guards) + "</tr>"]  # fmt: skip
    for scenario in matrix.scenarios:
        cells = "".join(f"<td>{escape(matrix.cells[v, scenario])}</td>" for v in matrix.guards)
        rows.append(f"<tr><td>{escape(scenario)}</td>{cells}</tr>")
    survivors = ", ".join(matrix.survivors()) or "none"
    return "\n".join([*rows, "</table>", f"<p>Guards no scenario kills: {escape(survivors)}</p>"])
