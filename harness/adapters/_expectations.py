"""Known failures, per adapter, in the manner of web-platform-tests metadata: a file that
says which scenarios a runtime is expected to fail and why. Against it, a run reports
NEW FAIL (a regression, or a difference nobody has explained yet) and NEW PASS (fixed:
delete the entry), and both fail the run, so the file always says what is true.

    # adapters/node-dsh/expectations.yaml
    scenarios:
      some-scenario-id:
        expected: fail
        reason: why this runtime differs, and whether that is a bug here or there
        held: rule   # optional: the level it still holds, so a run gating on it passes

An entry with `held` is a runtime that keeps the rule in words of its own: at that level
and below the scenario must pass (the entry does not apply), above it it is a known failure.

One file describes a CLI across its releases: a scenario's entry may be a list of entries,
each with `releases`, the releases it applies to (`0.15.10`, `<0.24.4`, `>=0.16.0 <0.24.4`:
every comparison must hold), and a run applies the one that holds for the adapter's
release (`release` of the adapter; none: the scenario is expected to pass).

    scenarios:
      some-scenario-id:
        - releases: "<0.24.4"
          expected: fail
          reason: it hangs here, QwenLM/qwen-code #7126
        - releases: ">=0.24.4"
          expected: fail
          held: rule
          reason: refused in its own words
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.contract import LEVELS

PASS, FAIL, SKIP = "PASS", "FAIL", "SKIP"
KNOWN_FAIL, NEW_FAIL, NEW_PASS = "KNOWN FAIL", "NEW FAIL", "NEW PASS"


class ExpectationsError(Exception):
    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class Expectations:
    path: Path | None
    failing: dict[str, str]  # scenario id -> reason
    held: dict[str, str] = field(default_factory=dict)  # scenario id -> the level it holds

    @classmethod
    def none(cls) -> Expectations:
        return cls(None, {})

    def reason(self, scenario_id: str, level: str = LEVELS[-1]) -> str | None:
        """Why the scenario is expected to fail when gating on `level` (None: it is not)."""
        held = self.held.get(scenario_id)
        if held is not None and LEVELS.index(level) <= LEVELS.index(held):
            return None
        return self.failing.get(scenario_id)

    @classmethod
    def load(
        cls, path: Path, known_ids: Collection[str], release: str | None = None
    ) -> Expectations:
        """The file's entries for the runtime at `release` (None: a runtime with no
        releases, to which an entry's `releases` cannot apply)."""
        from harness.scenario._yaml import YamlError, parse

        try:
            doc = parse(path.read_text(encoding="utf-8-sig")).value
        except OSError as exc:
            raise ExpectationsError([f"{path}: cannot read: {exc.strerror or exc}"]) from None
        except YamlError as exc:
            raise ExpectationsError(
                [f"{path}:{p.line}:{p.column}: {p.message}" for p in exc.problems]
            ) from None
        entries = doc.get("scenarios") if isinstance(doc, dict) else None
        if (
            not isinstance(doc, dict)
            or set(doc) - {"scenarios"}
            or not isinstance(entries, dict | type(None))
        ):
            raise ExpectationsError([f"{path}: /: a mapping with one key, scenarios"])
        failing, held, problems = {}, {}, []
        for sid, given in (entries or {}).items():
            where = f"{path}: /scenarios/{sid}"
            if sid not in known_ids:
                problems.append(f"{where}: no scenario has this id; remove the entry")
                continue
            versioned = isinstance(given, list)
            applying = []
            for index, entry in enumerate(given if versioned else [given]):
                at = f"{where}/{index}" if versioned else where
                problem = _problem(entry, at, versioned)
                if problem is not None:
                    problems.append(problem)
                elif not versioned or _applies(str(entry["releases"]), release):
                    applying.append((at, entry))
            if len(applying) > 1:
                both = " and ".join(at.rsplit("/", 1)[1] for at, _ in applying)
                problems.append(f"{where}: entries {both} both apply to {release}; make their "
                                "releases apart")  # fmt: skip
            elif applying:
                entry = applying[0][1]
                failing[sid] = entry["reason"]
                if "held" in entry:
                    held[sid] = entry["held"]
        if problems:
            raise ExpectationsError(problems)
        return cls(path, failing, held)

    def verdict(self, scenario_id: str, status: str, level: str = LEVELS[-1]) -> tuple[str, bool]:
        """(label, acceptable): how a result judged at `level` reads against these
        expectations."""
        if status == "skip":
            return SKIP, True
        passed = status == "pass"
        if self.path is None:  # no file: plain labels, and only a pass is acceptable
            return (PASS, True) if passed else (status.upper(), False)
        if self.reason(scenario_id, level) is not None:
            return (NEW_PASS, False) if passed else (KNOWN_FAIL, True)
        return (PASS, True) if passed else (NEW_FAIL, False)


_FIELDS = {"expected", "reason", "held"}


def _problem(entry: object, where: str, versioned: bool) -> str | None:
    """What is wrong with one entry (None: nothing)."""
    allowed = _FIELDS | {"releases"} if versioned else _FIELDS
    if not isinstance(entry, dict) or entry.get("expected") != "fail":
        return f"{where}: write {{expected: fail, reason: ...}}"
    if not isinstance(entry.get("reason"), str) or not entry["reason"].strip():
        return f"{where}/reason: say why this runtime fails it"
    if set(entry) - allowed:
        return f"{where}: only {', '.join(sorted(allowed))} are allowed"
    if "held" in entry and entry["held"] not in LEVELS[:-1]:
        return f"{where}/held: the level it still holds: {', '.join(LEVELS[:-1])}"
    if versioned:
        try:
            _comparisons(entry.get("releases"))
        except ValueError as exc:
            return f"{where}/releases: {exc}"
    return None


# A release as npm names one: MAJOR.MINOR.PATCH, a prerelease tag, a build tag. The one
# spelling every place that reads a release checks it against.
RELEASE = r"\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?"
_COMPARE = re.compile(rf"(<=|>=|<|>|=)?({RELEASE})")


def is_release(text: str) -> bool:
    return re.fullmatch(RELEASE, text) is not None


def _comparisons(releases: object) -> list[tuple[str, tuple[Any, ...]]]:
    if not isinstance(releases, str) or not releases.split():
        raise ValueError("the releases it applies to, e.g. \"0.15.10\", \"<0.24.4\" or "
                         "\">=0.16.0 <0.24.4\"")  # fmt: skip
    out = []
    for word in releases.split():
        found = _COMPARE.fullmatch(word)
        if found is None:
            raise ValueError(f"{word!r} is no comparison; write <, <=, >, >= or = and a "
                             "release, e.g. >=0.16.0")  # fmt: skip
        out.append((found[1] or "=", release_key(found[2])))
    return out


def _applies(releases: str, release: str | None) -> bool:
    if release is None:
        return False
    key = release_key(release)
    tests = {"<": key.__lt__, "<=": key.__le__, ">": key.__gt__, ">=": key.__ge__,
             "=": key.__eq__}  # fmt: skip
    return all(tests[op](bound) for op, bound in _comparisons(releases))


def release_key(release: str) -> tuple[Any, ...]:
    """A release's place in release order, as npm sorts: 1.2.3-rc.1 before 1.2.3, and a
    prerelease's numeric parts by number. A local build's version may carry a build tag
    (`+abc`), which does not count."""
    core, _, pre = release.split("+", 1)[0].partition("-")
    numbers = tuple(int(part) if part.isdigit() else 0 for part in core.split("."))
    if not pre:
        return (*numbers, 1, ())
    parts = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre.split("."))
    return (*numbers, 0, parts)
