"""`harness report`: one self-contained page, opened in a real browser (headless Chromium)
whose DOM must hold every scenario, the failing one marked, each with its sequence diagram;
its screenshot is kept for people to look at (under $HARNESS_ARTIFACTS when set)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from html.parser import HTMLParser
from pathlib import Path

import pytest

from harness.cli import main
from tests.test_results import BREAKS, FAILS, PASSES, SKIPS

HANGS = "hang-before-the-fix"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class Sections(HTMLParser):
    """Each scenario section's id and classes, and the SVG figures inside it."""

    def __init__(self) -> None:
        super().__init__()
        self.sections: dict[str, dict[str, Sequence[str | None]]] = {}
        self.current: str | None = None
        self.external: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        classes = (found.get("class") or "").split()
        if tag == "section" and "scenario" in classes:
            self.current = found["id"]
            self.sections[self.current or ""] = {"classes": classes, "figures": []}
        elif tag == "svg" and self.current is not None:
            figures = self.sections[self.current]["figures"]
            assert isinstance(figures, list)
            figures.append(found.get("class"))
        if tag in ("script", "link", "img", "iframe") or "src" in found:
            self.external.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag == "section":
            self.current = None


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report")
    ids = [PASSES, FAILS, SKIPS, BREAKS]
    assert main(["report", "--adapter", "tests.test_results:make", "--out", str(out), *ids]) == 1
    hang = tmp_path_factory.mktemp("hang")
    assert main(["report", "--out", str(hang), "--mutants", HANGS]) == 0
    (out / "hang.html").write_bytes((hang / "report.html").read_bytes())
    return out


def test_the_page_stands_alone(written: Path) -> None:
    html = (written / "report.html").read_text("utf-8")
    parsed = Sections()
    parsed.feed(html)
    assert parsed.external == []  # no script, stylesheet, image or frame to fetch
    urls = set(re.findall(r"https?://[^\s\"'<>]+", html))
    assert urls <= {"http://www.w3.org/2000/svg"}  # a namespace name, never fetched


def test_a_hang_draws_its_wait_for_graph_and_the_mutants_matrix(written: Path) -> None:
    html = (written / "hang.html").read_text("utf-8")
    parsed = Sections()
    parsed.feed(html)
    assert parsed.sections[HANGS]["figures"] == ["sequence", "wait-for"]
    assert '<table class="mutants">' in html and "Guards no scenario kills: none" in html


@pytest.mark.skipif(CHROMIUM is None, reason="LOUD SKIP: no chromium on PATH; .ci/run "
                    "installs Debian's chromium package, so CI never skips this")  # fmt: skip
def test_headless_chromium_renders_every_scenario_with_its_diagram(
    written: Path, tmp_path: Path
) -> None:
    assert CHROMIUM is not None
    page = (written / "report.html").as_uri()
    browser = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
               f"--user-data-dir={tmp_path / 'profile'}"]  # fmt: skip
    dom = subprocess.run([*browser, "--dump-dom", page], capture_output=True, text=True,
                         timeout=60, check=True).stdout  # fmt: skip
    parsed = Sections()
    parsed.feed(dom)
    assert set(parsed.sections) == {PASSES, FAILS, SKIPS, BREAKS}
    assert "fail" in parsed.sections[FAILS]["classes"]
    assert "pass" in parsed.sections[PASSES]["classes"]
    for scenario in (PASSES, FAILS, BREAKS):
        assert "sequence" in parsed.sections[scenario]["figures"], scenario
    assert "golden-diff" in dom.split(f'id="{FAILS}"', 1)[1].split("</section>", 1)[0]
    shot = Path(os.environ.get("HARNESS_ARTIFACTS") or tmp_path) / "report.png"
    shot.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([*browser, "--window-size=1280,2000", f"--screenshot={shot}", page],
                   capture_output=True, timeout=60, check=True)  # fmt: skip
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert int.from_bytes(png[16:20], "big") == 1280  # the width the page is laid out for
