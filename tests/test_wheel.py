"""The installed package passes: a wheel built from this checkout, installed in a fresh venv
and run from `/` (no checkout in sight), as a CI gate gets it from `pip install git+...`.
It carries the scenarios and their goldens side by side (`harness/_corpus/`), nothing else
beside the code, and `harness snapshot` never writes into it.

Offline and fast: the wheel is built by hatchling's PEP 517 hook with no build isolation,
the venv has no pip of its own (the outer pip installs into it with --no-index --no-deps),
and it borrows the outer environment's dependencies through a .pth line. The .pth files in a
directory added that way are not processed, so the outer editable install of this project
stays out of sight; test_the_installed_package_is_the_one_imported checks that.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SCENARIOS

# `package`: seconds of building and installing, left out of the default run; CI runs it
# with the `cli` tests, and `pytest -m package` by hand.
pytestmark = pytest.mark.package

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 60  # per process; each takes about a second
WHEEL_LIMIT = 1_000_000  # bytes, packed; it is about 0.3 MB
# The sdist is the tracked tree, about 1.03 MB packed at 5f16ea4 (the CLI recordings, the
# lockfiles, the matrix and history tables); one adapter's install would add tens of MB.
SDIST_LIMIT = 2_000_000
INSTALLS = {"node_modules", ".npm-cache", ".pnpm-store", ".install-home", ".releases"}
# Bytes, unpacked, per file. The largest is METADATA, the README with the package's headers
# (about 99.4 KB as of the README's trim after 5c5d1a3): issue 50 makes the README a landing
# page; until then, what is added to it must make room.
FILE_LIMIT = 100_000


@dataclass(frozen=True)
class Installed:
    wheel: Path
    venv: Path
    site: Path  # the venv's site-packages
    # What the checkout held as the wheel was built from it: the corpus, and the code.
    corpus: dict[str, bytes]
    code: frozenset[str]

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    @property
    def harness(self) -> Path:
        return self.venv / "bin" / "harness"


def _environment() -> dict[str, str]:
    """The caller's environment without what would put this checkout (or another Python) in
    reach of the installed one, and without CI, whose refusal would hide the package's."""
    drop = {"PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE", "VIRTUAL_ENV", "CI"}
    return {k: v for k, v in os.environ.items() if k not in drop}


def _run(command: list[str | Path], cwd: Path = Path("/")) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(c) for c in command],
        cwd=cwd,
        env=_environment(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def _checked(command: list[str | Path], cwd: Path = Path("/")) -> str:
    done = _run(command, cwd)
    assert done.returncode == 0, f"{command} exited {done.returncode}:\n{done.stdout}{done.stderr}"
    return done.stdout


_HOOK = "import sys, hatchling.build as b; print(b.{}(sys.argv[1]))"


def _build(kind: str, source: Path, directory: Path) -> Path:
    """Build a wheel or an sdist of `source` into `directory` as a PEP 517 frontend does
    (hatchling's hook, in `source`), with no isolation: nothing is downloaded."""
    name = _checked([sys.executable, "-c", _HOOK.format(f"build_{kind}"), directory], source)
    return directory / name.strip().splitlines()[-1]


def _corpus() -> dict[str, bytes]:
    """The checkout's scenarios and goldens, named as in the wheel."""
    return {
        f"harness/_corpus/{folder}/{p.name}": p.read_bytes()
        for folder in ("scenarios", "snapshots")
        for p in sorted((ROOT / folder).iterdir())
    }


def _code() -> frozenset[str]:
    """The checkout's package: its Python files and its shipped dialects, named as in the
    wheel."""
    found = [*(ROOT / "harness").rglob("*.py"), *(ROOT / "harness" / "dialects").glob("*.json")]
    return frozenset(p.relative_to(ROOT).as_posix() for p in found if "__pycache__" not in p.parts)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    if importlib.util.find_spec("hatchling") is None:
        pytest.fail("hatchling is not installed; run `pip install -e '.[test]'`")
    work = tmp_path_factory.mktemp("wheel")
    corpus, code = _corpus(), _code()
    wheel = _build("wheel", ROOT, work / "dist")
    venv = work / "venv"
    _checked([sys.executable, "-m", "venv", "--without-pip", venv])
    _checked([sys.executable, "-m", "pip", "--python", venv / "bin" / "python",
              "install", "--no-deps", "--no-index", "--no-input", "--quiet",
              "--disable-pip-version-check", wheel])  # fmt: skip
    site = Path(
        _checked(
            [venv / "bin" / "python", "-c", "import site; print(site.getsitepackages()[0])"]
        ).strip()
    )
    # Only now, so that pip saw no keyless-harness (the outer editable one) to replace.
    outer = dict.fromkeys(sysconfig.get_path(k) for k in ("purelib", "platlib"))
    (site / "outer-dependencies.pth").write_text("".join(f"{p}\n" for p in outer), "utf-8")
    return Installed(wheel, venv, site, corpus, code)


def test_the_installed_package_is_the_one_imported(installed: Installed) -> None:
    probe = (
        "import json, sys, harness, harness._paths as p; print(json.dumps({'file': "
        "harness.__file__, 'path': sys.path, 'root': str(p.repository_root()), "
        "'scenarios': str(p.scenarios_dir()), 'snapshots': str(p.snapshots_dir())}))"
    )
    found = json.loads(_checked([installed.python, "-c", probe]))
    package = installed.site / "harness"
    assert found["file"] == str(package / "__init__.py")
    assert found["root"] == "None"  # no checkout around it
    assert found["scenarios"] == str(package / "_corpus" / "scenarios")
    assert found["snapshots"] == str(package / "_corpus" / "snapshots")
    # The outer editable install's .pth (this checkout on sys.path) was not processed.
    assert not [p for p in found["path"] if p and Path(p).resolve() == ROOT], found["path"]
    # The console script runs this venv's Python, hence that package (the path is on its
    # first line, or in an `exec` on the next ones when it is too long for a shebang).
    head = "\n".join(installed.harness.read_text("utf-8").splitlines()[:3])
    assert str(installed.python) in head, head


def test_harness_run_from_slash_passes_every_scenario_against_its_golden(
    installed: Installed,
) -> None:
    report = json.loads(_checked([installed.harness, "run", "--json"]))
    assert report["adapter"] == "reference"
    scenarios = report["scenarios"]
    assert sorted(s["id"] for s in scenarios) == sorted(SCENARIOS)
    assert [s for s in scenarios if (s["status"], s["golden"]) != ("pass", "compared")] == []
    out = _checked([installed.harness, "run"])
    assert out.splitlines()[-1] == f"{len(SCENARIOS)} passed, 0 failed"


def test_list_validate_and_coverage_work_from_slash(installed: Installed) -> None:
    listed = _checked([installed.harness, "list"]).splitlines()
    assert sorted(line.split()[0] for line in listed) == sorted(SCENARIOS)
    validated = _checked([installed.harness, "validate"]).splitlines()
    assert validated[-1] == f"{len(SCENARIOS)} scenario file(s) valid"
    covered = _checked([installed.harness, "coverage"]).splitlines()
    assert re.fullmatch(r"(\d+) of \1 clauses covered", covered[-1]), covered[-1]


def _files(directory: Path) -> dict[str, bytes]:
    """Every file under `directory` but Python's bytecode caches, which running it writes."""
    found = (p for p in sorted(directory.rglob("*")) if p.is_file())
    return {
        str(p.relative_to(directory)): p.read_bytes() for p in found if "__pycache__" not in p.parts
    }


def test_installed_harness_snapshot_refuses_to_write_into_the_package(
    installed: Installed, tmp_path: Path
) -> None:
    package = installed.site / "harness"
    before = _files(package)
    done = _run([installed.harness, "snapshot"])
    assert done.returncode == 2 and done.stdout == "", done
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert "inside the installed keyless-harness package" in done.stderr
    assert "`harness --scenarios DIR snapshot`" in done.stderr
    assert _files(package) == before
    # What the refusal says to do works: scenarios of one's own, goldens beside them.
    mine = tmp_path / "scenarios"
    mine.mkdir()
    scenario = "live-root-answered"
    source = package / "_corpus" / "scenarios" / f"{scenario}.yaml"
    (mine / source.name).write_bytes(source.read_bytes())
    _checked([installed.harness, "--scenarios", mine, "snapshot"])
    golden = tmp_path / "snapshots" / f"{scenario}.json"
    assert golden.read_bytes() == (package / "_corpus" / "snapshots" / golden.name).read_bytes()


def test_the_wheel_holds_the_code_and_the_corpus_and_nothing_else(installed: Installed) -> None:
    assert installed.wheel.stat().st_size < WHEEL_LIMIT
    with zipfile.ZipFile(installed.wheel) as wheel:
        entries = {i.filename: i for i in wheel.infolist()}
        packed = {name: wheel.read(name) for name in entries if name.startswith("harness/_corpus/")}
    assert packed == installed.corpus  # every scenario and golden, byte for byte, and no stray
    code = {n for n in entries if n.startswith("harness/") and not n.startswith("harness/_corpus/")}
    assert code == installed.code  # the package's Python files and dialects, no other file
    info = {n for n in entries if re.match(r"keyless_harness-[^/]+\.dist-info/", n)}
    assert set(entries) == code | set(packed) | info, "files outside harness/ and dist-info"
    big = {n: i.file_size for n, i in entries.items() if i.file_size > FILE_LIMIT}
    assert big == {}


def test_a_wheel_built_from_the_sdist_is_the_same_wheel(tmp_path: Path) -> None:
    # Its own direct build, next to the sdist's, so both see the same working tree.
    corpus = _corpus()
    direct = _build("wheel", ROOT, tmp_path / "direct")
    sdist = _build("sdist", ROOT, tmp_path)
    assert sdist.stat().st_size < SDIST_LIMIT
    with tarfile.open(sdist) as archive:
        names = archive.getnames()
        # tarfile's `data` filter, where it has one (3.11.4+)
        safe: dict[str, Any] = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        archive.extractall(tmp_path, **safe)
    assert [n for n in names if INSTALLS & set(Path(n).parts)] == []  # no adapter installs
    # What git tracks (and this working tree still has) is what an sdist must carry.
    tracked = [n for n in _checked(["git", "ls-files"], ROOT).splitlines() if (ROOT / n).is_file()]
    prefix = sdist.name.removesuffix(".tar.gz")
    missing = sorted(set(tracked) - {n.removeprefix(f"{prefix}/") for n in names})
    assert missing == [], "tracked files missing from the sdist"
    rebuilt = _build("wheel", tmp_path / prefix, tmp_path / "dist")
    with zipfile.ZipFile(rebuilt) as again, zipfile.ZipFile(direct) as first:
        assert sorted(again.namelist()) == sorted(first.namelist())
        assert {n: again.read(n) for n in corpus} == corpus
