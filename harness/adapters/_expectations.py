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
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

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
    def load(cls, path: Path, known_ids: Collection[str]) -> Expectations:
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
        for sid, entry in (entries or {}).items():
            where = f"{path}: /scenarios/{sid}"
            if sid not in known_ids:
                problems.append(f"{where}: no scenario has this id; remove the entry")
            elif not isinstance(entry, dict) or entry.get("expected") != "fail":
                problems.append(f"{where}: write {{expected: fail, reason: ...}}")
            elif not isinstance(entry.get("reason"), str) or not entry["reason"].strip():
                problems.append(f"{where}/reason: say why this runtime fails it")
            elif set(entry) - {"expected", "reason", "held"}:
                problems.append(f"{where}: only expected, reason and held are allowed")
            elif "held" in entry and entry["held"] not in LEVELS[:-1]:
                below = ", ".join(LEVELS[:-1])
                problems.append(f"{where}/held: the level it still holds: {below}")
            else:
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
