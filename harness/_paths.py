from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).resolve().parent

# Where a wheel carries the corpus (pyproject.toml's force-include): the scenarios and their
# golden snapshots, side by side inside the package as they are in a checkout, so that
# `snapshots_dir()` finds the goldens beside the scenarios in both.
CORPUS = "_corpus"


def scenarios_dir() -> Path:
    """The scenarios this harness ships: inside the package for a wheel
    (`harness/_corpus/scenarios`), beside it in a checkout (`scenarios/`)."""
    packaged = _HERE / CORPUS / "scenarios"
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


def installed_package() -> Path | None:
    """This package's own directory when it runs installed (a wheel in site-packages, no
    checkout around it), whose files are read-only by contract; None in a checkout."""
    return None if repository_root() is not None else _HERE


def inside_installed_package(path: Path) -> bool:
    """Whether writing to `path` would write into the installed package."""
    package = installed_package()
    return package is not None and path.resolve().is_relative_to(package.resolve())


def version_path() -> Path:
    """The scenario contract's version file, beside the schema it versions."""
    return scenarios_dir() / "VERSION"


def protocol_path() -> Path:
    """The JSON-lines adapter protocol's schema, beside the scenario schema it refers to."""
    return scenarios_dir() / "protocol.json"
