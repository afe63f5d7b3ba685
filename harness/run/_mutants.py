"""The guard matrix (`harness mutants`): every scenario under every test-only guard. A
guard that no scenario kills is a rejected alternative the suite could not tell from the
decision."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.adapters.reference import ReferenceAdapter
from harness.adapters.reference.guards import GUARDS, RUNTIME_OWNERSHIP
from harness.contract import DEFAULT_BACKSTOP
from harness.run._judge import Result
from harness.run._runner import run_scenario
from harness.scenario import Scenario

KILLED, SURVIVED, HANG = "killed", "survived", "hang"


def verdict(result: Result) -> str:
    if result.status == "pass":
        return SURVIVED
    observation = result.observation
    backstop = (observation.error or "").startswith("backstop")
    return HANG if observation.outcome == "hang" or backstop else KILLED


@dataclass
class Matrix:
    guards: list[str]
    scenarios: list[str]
    cells: dict[tuple[str, str], str] = field(default_factory=dict)

    def survivors(self) -> list[str]:
        """Guards that survived every scenario."""
        return [v for v in self.guards if all(self.cells[v, s] == SURVIVED for s in self.scenarios)]

    def to_json(self) -> dict[str, Any]:
        return {
            # The key predates the one name, and output is a contract: it stays.
            "variants": {
                v: {
                    kind: [s for s in self.scenarios if self.cells[v, s] == kind]
                    for kind in (KILLED, HANG, SURVIVED)
                }
                for v in self.guards
            },
            "survivors": self.survivors(),
        }


def mutant_matrix(
    scenarios: Sequence[Scenario],
    *,
    backstop: float = DEFAULT_BACKSTOP,
    progress: Callable[[int, int, str, str, str], None] | None = None,
) -> Matrix:
    # Only the guards that break the rule are mutants; the decision and its rewordings are not.
    guards = [n for n, g in GUARDS.items() if n != RUNTIME_OWNERSHIP.name and not g.keeps_rule]
    # A scenario with a guard of its own (hang-before-the-fix) reproduces that guard and
    # always runs under it (effective_guard): it can tell no guard from the decision.
    scenarios = [s for s in scenarios if s.guard == RUNTIME_OWNERSHIP.name]
    matrix = Matrix(guards, [s.id for s in scenarios])
    total, done = len(guards) * len(scenarios), 0
    with ReferenceAdapter() as reference:
        for guard in guards:
            for scenario in scenarios:
                result = run_scenario(scenario, adapter=reference, backstop=backstop, guard=guard)
                cell = verdict(result)
                matrix.cells[guard, scenario.id] = cell
                done += 1
                if progress is not None:
                    progress(done, total, guard, scenario.id, cell)
    return matrix


def render(matrix: Matrix) -> list[str]:
    """Scenarios down, guards across, one mark per cell: K killed, . survived, H hang."""
    marks = {KILLED: "K", SURVIVED: ".", HANG: "H"}
    width = max(len(s) for s in matrix.scenarios)
    header = " " * width + "  " + "  ".join(f"{i + 1:>2}" for i in range(len(matrix.guards)))
    lines = [header]
    for s in matrix.scenarios:
        row = "  ".join(f"{marks[matrix.cells[v, s]]:>2}" for v in matrix.guards)
        lines.append(f"{s:<{width}}  {row}")
    lines.append("")
    for i, v in enumerate(matrix.guards):
        killers = [s for s in matrix.scenarios if matrix.cells[v, s] != SURVIVED]
        verdict_text = f"killed by {len(killers)}" if killers else "SURVIVED every scenario"
        lines.append(f"{i + 1:>2} {v:<17} {GUARDS[v].description}: {verdict_text}")
    lines.append("K killed  H hang  . survived")
    return lines
