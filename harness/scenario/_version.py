"""scenarios/VERSION: the scenario contract's version, one semver line."""

from __future__ import annotations

import re
from pathlib import Path

from harness._paths import version_path

# -- scenarios/VERSION ----------------------------------------------------------------
# Semantic Versioning 2.0.0's own regular expression (semver.org), anchored by fullmatch.
_SEMVER = re.compile(
    r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?"
)


def version_problem(text: str) -> str | None:
    """None when `text` is one semver line (a final newline allowed); otherwise why not.
    One line and nothing else, so any language reads the version with a plain read and
    strip, and no comment or second line can disagree with it."""
    # A final CRLF is still one line: what a Windows checkout (core.autocrlf) writes.
    body = text.removesuffix("\n").removesuffix("\r") if text.endswith("\n") else text
    if "\n" in body or "\r" in body:
        return "must be exactly one line; put the bumping rules in scenarios/INTERPRETING.md"
    if not _SEMVER.fullmatch(body):
        return f"{body!r} is not a semantic version (MAJOR.MINOR.PATCH, e.g. 1.0.0)"
    return None


def scenarios_version(path: Path | None = None) -> str:
    """The scenario contract's version: scenarios/VERSION, beside the schema. A runtime
    that pins scenarios pins this; a malformed file raises ScenarioError, one line."""
    # Imported here: the loader imports this module, and ScenarioError lives there.
    from harness.scenario._load import ScenarioError

    path = path or version_path()
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError([f"{path}: cannot read: {exc}"]) from None
    problem = version_problem(text)
    if problem is not None:
        raise ScenarioError([f"{path}: {problem}"])
    return text.strip()
