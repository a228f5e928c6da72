"""The report's HTML page in a real headless browser: Debian's Chromium driven by Selenium through
its own chromedriver (``make browser`` installs both when missing). The table shows what
``veduta report --json`` says and sorts by any column, with no network."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from veduta import api
from veduta.base.humane import levels_text, size_text
from veduta.base.project import Project

REPO = Path(__file__).resolve().parents[2]
CHROMIUM, DRIVER = shutil.which("chromium"), shutil.which("chromedriver")

if not (CHROMIUM and DRIVER):
    if os.environ.get("CI"):
        pytest.fail("CI must test the report page in Chromium: run make browser", pytrace=False)
    pytest.skip("no chromium and chromedriver (make browser installs them)", allow_module_level=True)
webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.chrome.options import Options  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """The sample game cooked, its report as a page, and a browser that has it open (offline)."""
    root = tmp_path_factory.mktemp("report") / "game"
    shutil.copytree(REPO / "assets", root / "assets", ignore=shutil.ignore_patterns(".cooked", "*.py"))
    (root / "dodo.py").write_text("from veduta.dodo import *\n")
    subprocess.run([sys.executable, "-m", "veduta", "cook"], cwd=root, check=True, capture_output=True, timeout=300)
    here = os.getcwd()
    os.chdir(root)
    try:
        result = api.report(Project.find("."), html=str(root / "report.html"))
    finally:
        os.chdir(here)
    options = Options()
    options.binary_location = CHROMIUM
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--proxy-server=127.0.0.1:9",
        "--proxy-bypass-list=<-loopback>",
    ):  # (no network: nothing loads)
        options.add_argument(arg)
    browser = webdriver.Chrome(service=Service(DRIVER), options=options)
    try:
        browser.get((root / "report.html").as_uri())
        yield browser, result
    finally:
        browser.quit()


def column(browser, heading: str) -> int:
    heads = [th.text.rstrip(" ▲▼") for th in browser.find_elements(By.CSS_SELECTOR, "#assets thead th")]
    return heads.index(heading)


def cells(browser, col: int) -> list[tuple[str, str]]:
    """(shown text, sort value) of one column, top to bottom."""
    return browser.execute_script(
        "return Array.from(document.querySelectorAll('#assets tbody tr'))"
        ".map(r => [r.cells[arguments[0]].textContent, r.cells[arguments[0]].dataset.v]);",
        col,
    )


def test_the_table_shows_the_report(page):
    browser, result = page
    assert browser.title == "veduta report: game"
    rows = browser.find_elements(By.CSS_SELECTOR, "#assets tbody tr")
    assert len(rows) == len(result["assets"])
    first = [td.text for td in rows[0].find_elements(By.TAG_NAME, "td")]
    hero = result["assets"][0]
    assert (hero["kind"], hero["name"]) == ("model", "hero")
    assert first[:5] == ["model", "hero", "fresh", size_text(hero["bytes"]), "compiled"]
    assert first[6] == levels_text(hero["triangles"]) == "704 / 272 / 136"
    names = [n for n, _ in cells(browser, column(browser, "name"))]
    assert names == [a["name"] for a in result["assets"]]  # largest first, as the report
    water = next(a for a in result["assets"] if (a["kind"], a["name"]) == ("texture", "water"))
    row = rows[[a["name"] for a in result["assets"]].index("water")]
    texture_cell = row.find_elements(By.TAG_NAME, "td")[column(browser, "texture memory")]
    assert texture_cell.text == size_text(water["texture_memory"]) and texture_cell.get_attribute("data-v") == str(
        water["texture_memory"]
    )
    totals = browser.find_elements(By.CSS_SELECTOR, "#totals tbody tr")
    assert [r.find_element(By.TAG_NAME, "td").text for r in totals] == [*result["totals"], "all"]
    # nothing from the network: every resource is the page itself
    assert browser.execute_script("return performance.getEntriesByType('resource').length") == 0


def test_sorting(page):
    browser, result = page
    heads = browser.find_elements(By.CSS_SELECTOR, "#assets thead th")
    compile_col = column(browser, "compile")
    heads[compile_col].click()  # numbers: largest first
    got = cells(browser, compile_col)
    values = [float(v) for _, v in got if v != ""]
    assert values == sorted(values, reverse=True) and len(values) == len(result["assets"])
    assert heads[compile_col].get_attribute("aria-sort") == "descending"
    heads[compile_col].click()  # again: turned
    values = [float(v) for _, v in cells(browser, compile_col)]
    assert values == sorted(values)
    tex_col = column(browser, "texture memory")
    heads[tex_col].click()  # empty cells (not a texture) last, whichever way
    got = cells(browser, tex_col)
    filled = [int(v) for _, v in got if v != ""]
    assert filled == sorted(filled, reverse=True) and len(filled) == 5
    assert all(v == "" for _, v in got[5:])
    heads[tex_col].click()
    got = cells(browser, tex_col)
    assert [int(v) for _, v in got[:5]] == sorted(filled) and all(v == "" for _, v in got[5:])
    name_col = column(browser, "name")
    heads[name_col].click()  # text: from a
    names = [n for n, _ in cells(browser, name_col)]
    assert names == sorted(names)
    assert heads[name_col].get_attribute("aria-sort") == "ascending"
    assert heads[compile_col].get_attribute("aria-sort") is None
