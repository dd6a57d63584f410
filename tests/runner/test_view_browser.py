"""The transcript viewer in a real browser: headless Chromium from the OS packages (.ci/browser installs them)
driven by Selenium against /usr/bin/chromedriver (nothing downloaded). It opens the page `spec view` wrote for
a study of two models, filters, clicks from a level to its cells, a cell to its rows and a row to its
transcript, and checks what is shown; markup planted in the suite shows as text and never runs.

Without a browser the test skips, except under .ci/test (SPEC_REQUIRE_BROWSER=1), where it fails."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from spec_audits.runner.view_data import write_view
from tests.runner.view_fixtures import HOSTILE, study

DRIVER = Path("/usr/bin/chromedriver")


def _missing(what: str) -> None:
    if os.environ.get("SPEC_REQUIRE_BROWSER") == "1":
        pytest.fail(f"{what} is missing: bash .ci/browser installs it")
    pytest.skip(f"{what} is missing (bash .ci/browser installs it)")


@pytest.fixture
def browser() -> Iterator[Any]:
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _missing("selenium (the dev extras)")
    binary = shutil.which("chromium")
    if binary is None or not DRIVER.is_file():
        _missing("chromium or chromium-driver")
    os.environ["SE_OFFLINE"] = "true"  # Selenium Manager may never download a browser or a driver
    options = webdriver.ChromeOptions()
    options.binary_location = str(binary)
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(executable_path=str(DRIVER)))
    try:
        yield driver
    finally:
        driver.quit()


def _choose(driver: Any, select_id: str, value: str) -> None:
    from selenium.webdriver.support.ui import Select

    Select(driver.find_element("id", select_id)).select_by_value(value)


def _table(driver: Any, table: str) -> list[dict[str, str]]:
    """The rows of a table, each as header -> text."""
    header = [th.text for th in driver.find_elements("css selector", f"#{table} thead th")]
    rows = driver.find_elements("css selector", f"#{table} tbody tr")
    return [dict(zip(header, (td.text for td in row.find_elements("tag name", "td")), strict=True)) for row in rows]


def test_filter_then_click_through_to_a_transcript(browser: Any, tmp_path: Path) -> None:
    page = write_view(study(tmp_path))
    browser.get(page.resolve().as_uri())
    assert browser.find_element("id", "title").text.startswith("Transcripts: ")
    assert browser.find_element("id", "count").text == "18 of 18 answers"
    assert not browser.find_element("id", "caveat").is_displayed()  # stub models, not the embedded one

    _choose(browser, "filter-model", "openai/stub-b")
    assert browser.find_element("id", "count").text == "9 of 18 answers"
    _choose(browser, "by", "influence")
    levels = _table(browser, "levels")  # none, survey and the planted level
    assert sorted(row["influence"] for row in levels) == sorted(["none", "survey", HOSTILE])
    assert sum(int(row["n"]) for row in levels) == 9

    survey = next(tr for tr in browser.find_elements("css selector", "#levels tbody tr")
                  if tr.find_elements("tag name", "td")[1].text == "survey")
    survey.click()  # a level filters the cells to it
    cells = _table(browser, "cells")
    assert cells and all(row["model"] == "openai/stub-b" and row["influence"] == "survey" for row in cells)
    assert browser.find_element("id", "cells-note").text == f"{len(cells)} cells"
    browser.find_element("css selector", "#cells tbody tr").click()  # a cell lists its rows
    rows = _table(browser, "rows")
    assert len(rows) == int(cells[0]["n"]) and all(row["order"] == cells[0]["order"] for row in rows)

    browser.find_element("css selector", "#rows tbody tr").click()  # a row opens its transcript
    facts = {tr.find_element("tag name", "th").text: tr.find_element("tag name", "td").text
             for tr in browser.find_elements("css selector", "#facts tr")}
    assert facts["model"] == "openai/stub-b" and facts["from cache"] == "fresh"
    assert facts["valid answers"] in ("A = tea, B = coffee", "A = coffee, B = tea")
    turns = [t.text for t in browser.find_elements("css selector", "#transcript .turn")]
    assert turns[0] == "system\nAnswer with a single letter." and turns[1].startswith("user\nPrompt ")
    answer = rows[0]["answer"]
    assert turns[-1] == f"assistant (the answer)\n{'I cannot choose.' if answer == '(unparsed)' else answer}"


def test_planted_markup_shows_as_text_and_never_runs(browser: Any, tmp_path: Path) -> None:
    browser.get(write_view(study(tmp_path)).resolve().as_uri())
    _choose(browser, "filter-parsed", "unparsed")
    unparsed = int(browser.find_element("id", "count").text.split()[0])
    _choose(browser, "filter-parsed", "parsed")
    assert int(browser.find_element("id", "count").text.split()[0]) == 18 - unparsed and 0 < unparsed < 18
    _choose(browser, "filter-parsed", "*")
    factor = browser.find_element("css selector", "select.factor[data-factor='influence']")
    from selenium.webdriver.support.ui import Select

    Select(factor).select_by_value(HOSTILE)
    assert browser.find_element("id", "count").text == "2 of 18 answers"
    browser.find_element("css selector", "#rows tbody tr").click()
    text = browser.find_element("id", "transcript").text
    assert f"Which? {HOSTILE} A: tea" in text and f"A = {HOSTILE}" in text
    assert browser.execute_script("return window.pwned === undefined && document.images.length === 0")
