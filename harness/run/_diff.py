"""JSON values compared as JSON, and where two differ, shown so that a reader sees how.

Equality is JSON's, not Python's: `true` is not `1`, `1.0` is not `1`, and a key one side
lacks is not the other side's `null`. Key order never matters (JSON objects have none).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from harness.contract import json_equal, kind

# A value shown whole on a mismatch's one line up to this many characters; past it, the
# line shows the stretch where the two sides part.
LINE_WIDTH = 160
# Both sides shown whole in the detail up to this many characters each; past it, a unified
# diff of their JSON, bounded to DIFF_LINES lines.
FULL_WIDTH = 2000
DIFF_LINES = 40
# Characters of common text shown before the point where two long strings part.
CONTEXT = 40


class _Absent:
    """A key one side does not have: not the same as a null the other side does have."""

    def __repr__(self) -> str:
        return "(absent)"


ABSENT: Any = _Absent()


@dataclass(frozen=True)
class Difference:
    """One place where an expected JSON value and an observed one differ."""

    path: str  # e.g. snapshot.tool_errors[0].text
    expected: Any  # ABSENT: the key is not there
    observed: Any

    def summary(self) -> str:
        """One line: the path and both sides, each readable where they differ."""
        e, o = self.expected, self.observed
        if isinstance(e, str) and isinstance(o, str) and max(len(e), len(o)) > LINE_WIDTH:
            at = _common_prefix(e, o)
            shown = f"expected {_window(e, at)}, observed {_window(o, at)}"
            return f"{self.path}: {shown} (they part at character {at + 1})"
        shown_e, shown_o = _clip(_show(e)), _clip(_show(o))
        if kind(e) != kind(o) and e is not ABSENT and o is not ABSENT:
            shown_e, shown_o = f"{shown_e} ({kind(e)})", f"{shown_o} ({kind(o)})"
        return f"{self.path}: expected {shown_e}, observed {shown_o}"

    def detail(self) -> list[str]:
        """Both sides in full, or past FULL_WIDTH a bounded unified diff of their JSON."""
        e, o = _pretty(self.expected), _pretty(self.observed)
        if len(e) <= FULL_WIDTH and len(o) <= FULL_WIDTH and "\n" not in e + o:
            return [f"expected: {e}", f"observed: {o}"]
        if isinstance(self.expected, str) and isinstance(self.observed, str):
            # A long or multi-line text: diffed by its own lines, not as one JSON string.
            e, o = self.expected, self.observed
        diff = list(
            difflib.unified_diff(
                e.splitlines(), o.splitlines(), "expected", "observed", n=2, lineterm=""
            )
        )
        if len(diff) > DIFF_LINES:
            diff = [*diff[:DIFF_LINES], f"... and {len(diff) - DIFF_LINES} more diff lines"]
        return diff or [f"expected: {_clip(e)}", f"observed: {_clip(o)}"]

    def to_json(self) -> dict[str, Any]:
        """For --json: the path, each side present in full (a missing key left out), and
        the detail's lines."""
        out: dict[str, Any] = {"path": self.path, "diff": self.detail()}
        if self.expected is not ABSENT:
            out["expected"] = self.expected
        if self.observed is not ABSENT:
            out["observed"] = self.observed
        return out


def json_differences(expected: Any, observed: Any, at: str = "snapshot") -> list[Difference]:
    """Every place where two JSON values differ, in key order, paths rooted at `at`."""
    if _same_text(expected, observed):
        return []
    return list(_walk(expected, observed, at))


_canonical = json.JSONEncoder(sort_keys=True, allow_nan=False, check_circular=False).encode


def _same_text(expected: Any, observed: Any) -> bool:
    """Equal canonical JSON texts are equal JSON values (`true` is "true", `1` is "1",
    `1.0` is "1.0"), so json's C encoder settles the common case, two equal snapshots, at
    once; anything else (a difference, or a value it cannot encode) is left to the walk."""
    try:
        return bool(_canonical(expected) == _canonical(observed))
    except (TypeError, ValueError):
        return False


def differences(expected: Any, observed: Any, at: str = "", limit: int = 5) -> list[str]:
    """Where two JSON values differ, one line each: the first `limit`, then how many more."""
    return summaries(json_differences(expected, observed, f"snapshot{at}"), limit)


def summaries(found: list[Difference], limit: int = 5) -> list[str]:
    lines = [d.summary() for d in found[:limit]]
    if len(found) > limit:
        lines.append(f"... and {len(found) - limit} more difference(s) from the snapshot")
    return lines


def _walk(expected: Any, observed: Any, at: str) -> Iterator[Difference]:
    ke, ko = kind(expected), kind(observed)
    if ke == ko == "object":
        for key in sorted(set(expected) | set(observed)):
            yield from _walk(expected.get(key, ABSENT), observed.get(key, ABSENT), f"{at}.{key}")
    elif ke == ko == "array" and len(expected) == len(observed):
        for i, (e, o) in enumerate(zip(expected, observed, strict=True)):
            yield from _walk(e, o, f"{at}[{i}]")
    elif not json_equal(expected, observed):
        yield Difference(at, expected, observed)


def _show(value: Any) -> str:
    return repr(value) if value is ABSENT else json.dumps(value, ensure_ascii=False)


def _pretty(value: Any) -> str:
    if value is ABSENT:
        return repr(value)
    if isinstance(value, dict | list) and value:
        return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True)
    return json.dumps(value, ensure_ascii=False)


def _clip(text: str, width: int = LINE_WIDTH) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _window(text: str, at: int) -> str:
    """The stretch of `text` around character `at`, as JSON, with "..." where it was cut."""
    start = max(0, at - CONTEXT)
    end = start + LINE_WIDTH // 2
    shown = json.dumps(text[start:end], ensure_ascii=False)
    return ("..." if start else "") + shown + ("..." if end < len(text) else "")
