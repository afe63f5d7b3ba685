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
