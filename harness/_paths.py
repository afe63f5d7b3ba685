from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).resolve().parent


def scenarios_dir() -> Path:
    """The scenarios this harness ships: inside the package for a wheel, beside it in a
    checkout."""
    packaged = _HERE / "_scenarios"
    return packaged if packaged.is_dir() else _HERE.parent / "scenarios"


def schema_path() -> Path:
    return scenarios_dir() / "schema.json"


CLAUSES_FILE = "clauses.yaml"  # reserved: lives beside the scenarios but is not one


def clauses_path() -> Path:
    return scenarios_dir() / CLAUSES_FILE


def repository_root() -> Path | None:
    """The checkout this package runs from, or None when installed as a wheel (the
    adapters/ folder ships only with a checkout)."""
    root = _HERE.parent
    return root if (root / "pyproject.toml").is_file() and (root / "harness").is_dir() else None


def snapshots_dir(scenarios: Path | None = None) -> Path:
    """Golden snapshots live beside the scenarios (`snapshots/` next to `scenarios/`), as a
    downstream repository vendors them: both folders, side by side."""
    return (scenarios or scenarios_dir()).resolve().parent / "snapshots"


def version_path() -> Path:
    """The scenario contract's version file, beside the schema it versions."""
    return scenarios_dir() / "VERSION"
