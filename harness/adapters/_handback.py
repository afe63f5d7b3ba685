"""A subagent's report as Claude Code hands it back to its parent, read back as the report.

Recent Claude Code (2.1.332 does; 2.1.197 did not) frames each subagent's final text before
its parent reads it: notes of its own (the tools used, what its injection check matched), a
`[Subagent hand-back] ... The report follows:` line, then the report with every line
indented by two spaces and its control tags neutralised (`<` -> `<\\`), then the trailer
(agentId, usage) at column zero. A child's report that quotes its own child's is framed
again, one indent deeper. The rule asks that the child's final text reach the parent, so
the adapter reads the frame off, as it reads the trailer's varying numbers off: what is
left is the report as the child wrote it, with the trailer after it.
"""

from __future__ import annotations

import re

# The notes, the frame's line, and where the indented report starts.
_FRAME = re.compile(
    r"(?:  <tools-used-before-summary>[^\n]*</tools-used-before-summary>\n  \n)?"
    r"(?:  \[harness: subagent output matched [^\n]*\]\n  \n)?"
    r"\[Subagent hand-back\] [^\n]*The report follows:\n"
)
_INDENT = "  "


def unframed(text: str) -> str:
    """`text` with each hand-back frame read off (nested ones too), else as it was."""
    found = _FRAME.search(text)
    if found is None:
        return text
    lines = text[found.end() :].split("\n")
    report: list[str] = []
    while lines and lines[0].startswith(_INDENT):
        report.append(lines.pop(0)[len(_INDENT) :])
    # One level of neutralising undone: a nested frame's own tags come back to be read off.
    body = "\n".join(report).replace("<\\", "<").replace("[\\", "[")
    rest = "\n".join(lines)
    return text[: found.start()] + unframed(body) + ("\n" + rest if lines else "")
