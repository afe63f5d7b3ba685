"""SVG drawn by the harness itself, for `harness report`: a run's sequence diagram and a
hang's wait-for chains. No library, no fonts fetched: plain elements a browser or a
printer renders as they are."""

from __future__ import annotations

import re
from html import escape

from harness.run._sequence import Diagram

COLUMN, ROW, TOP, MARGIN = 190, 30, 56, 20
CHAR = 6.6  # px per character at the 11 px monospace the text uses
COLOURS = {"call": "#1f4e79", "reply": "#1f4e79", "refusal": "#b00020", "note": "#6b5800"}


def _text(x: float, y: float, said: str, width: float, anchor: str = "middle") -> str:
    room = max(int(width / CHAR), 4)
    shown = said if len(said) <= room else said[: room - 1] + "…"
    return (f'<text x="{x:.0f}" y="{y:.0f}" text-anchor="{anchor}">'
            f"<title>{escape(said)}</title>{escape(shown)}</text>")  # fmt: skip


def sequence_svg(drawn: Diagram) -> str:
    """Lifelines left to right, one row per step, top to bottom."""
    xs = {pid: MARGIN + COLUMN * i + COLUMN / 2 for i, (pid, _) in enumerate(drawn.participants)}
    width = MARGIN * 2 + COLUMN * len(drawn.participants)
    height = TOP + ROW * (len(drawn.steps) + 1)
    out = [f'<svg class="sequence" xmlns="http://www.w3.org/2000/svg" width="{width}" '
           f'height="{height}" viewBox="0 0 {width} {height}" role="img">',
           '<defs><marker id="head" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
           'markerHeight="7" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" '
           'fill="context-stroke"/></marker></defs>']  # fmt: skip
    for pid, label in drawn.participants:
        x = xs[pid]
        out.append(f'<line class="life" x1="{x:.0f}" y1="{TOP - 8}" x2="{x:.0f}" '
                   f'y2="{height - 6}" stroke="#bbb" stroke-dasharray="4 3"/>')  # fmt: skip
        out.append(f'<rect x="{x - COLUMN / 2 + 8:.0f}" y="8" width="{COLUMN - 16}" height="32" '
                   'rx="4" fill="#eef3f8" stroke="#1f4e79"/>')  # fmt: skip
        out.append(_text(x, 28, label, COLUMN - 24))
    for row, step in enumerate(drawn.steps):
        y = TOP + ROW * row + ROW / 2
        colour = COLOURS[step.kind]
        a, b = xs[step.src], xs[step.dst]
        if step.kind == "note":
            # A note on one lifeline runs on to the right, over the next column's gap, so
            # a model turn reads; one spanning lifelines covers them.
            reach = COLUMN * 1.5 if a == b else COLUMN / 2
            left = min(a, b) - COLUMN / 2 + 14
            right = min(max(a, b) + reach - 14, width - 6)
            out.append(f'<rect class="note" x="{left:.0f}" y="{y - 11:.0f}" '
                       f'width="{right - left:.0f}" height="20" fill="#fff8d6" '
                       f'stroke="{colour}"/>')  # fmt: skip
            out.append(_text((left + right) / 2, y + 4, step.text, right - left - 8))
            continue
        dash = ' stroke-dasharray="5 3"' if step.kind != "call" else ""
        out.append(f'<line class="{step.kind}" x1="{a:.0f}" y1="{y + 6:.0f}" x2="{b:.0f}" '
                   f'y2="{y + 6:.0f}" stroke="{colour}" stroke-width="1.5"{dash} '
                   'marker-end="url(#head)"/>')  # fmt: skip
        if step.kind == "refusal":  # a cross where the answer would have landed
            cx = b + (10 if a > b else -10)
            out.append(f'<path d="M{cx - 5:.0f},{y + 1:.0f}l10,10m0,-10l-10,10" '
                       f'stroke="{colour}" stroke-width="2"/>')  # fmt: skip
        span = max(abs(b - a), COLUMN) - 10
        out.append(
            _text((a + b) / 2, y, step.text, span).replace("<text ", f'<text fill="{colour}" ', 1)
        )
    out.append("</svg>")
    return "\n".join(out)


_EDGE = re.compile(r"\s+--(.*?)-->\s+")


def wait_for_svg(chains: list[str]) -> str:
    """Each wait-for chain ("a --awaits x--> b --awaits y--> c") as boxes and labelled
    arrows, one chain per row."""
    rows = [_EDGE.split(chain) for chain in chains]
    widest = max((len(parts) // 2 + 1 for parts in rows), default=1)
    box, gap = 200, 150
    width = MARGIN * 2 + widest * box + (widest - 1) * gap
    height = MARGIN * 2 + len(rows) * 70
    out = [f'<svg class="wait-for" xmlns="http://www.w3.org/2000/svg" width="{width}" '
           f'height="{height}" viewBox="0 0 {width} {height}" role="img">']  # fmt: skip
    for r, parts in enumerate(rows):
        y = MARGIN + r * 70
        nodes, labels = parts[0::2], parts[1::2]
        for i, node in enumerate(nodes):
            x = MARGIN + i * (box + gap)
            out.append(f'<rect x="{x}" y="{y}" width="{box}" height="36" rx="6" fill="#fdecea" '
                       'stroke="#b00020"/>')  # fmt: skip
            out.append(_text(x + box / 2, y + 22, node.strip(), box - 12))
            if i < len(labels):
                x1, x2 = x + box, x + box + gap
                out.append(f'<line x1="{x1}" y1="{y + 18}" x2="{x2}" y2="{y + 18}" '
                           'stroke="#b00020" stroke-width="1.5"/>')  # fmt: skip
                out.append(f'<path d="M{x2 - 8},{y + 13}L{x2},{y + 18}L{x2 - 8},{y + 23}" '
                           'fill="none" stroke="#b00020" stroke-width="1.5"/>')  # fmt: skip
                out.append(_text((x1 + x2) / 2, y + 12, labels[i].strip(), gap - 6))
    out.append("</svg>")
    return "\n".join(out)
