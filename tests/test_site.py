"""The built documentation, opened in headless Chromium (tests/browser.py): the index, an
instruction page, the fragment-layout page and the memory-model page render their code, tables and
pictures; the search finds an instruction by its full form; a command's page shows its help.

Needs a built site: ``PTXSPEC_SITE=docs/_build/html`` (``.ci/run`` builds it and runs this file
with ``PTXSPEC_BROWSER=required``, so that a missing Chromium fails instead of skipping). Without
``PTXSPEC_SITE`` these tests are skipped: the default suite does not build the site.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.browser import Browser, chromium, file_url, ink

PAGES = ["index.html", "reference/generated/add.html", "mma-layouts.html", "memory-model.html", "litmus-silicon.html"]

#: Per element kind: is it visible, and is anything clipped? (JavaScript run in the page)
LAYOUT = r"""
(() => {
  const shown = (e) => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  const main = document.querySelector("article") || document.body;
  const pres = [...main.querySelectorAll("div.highlight pre, pre.literal-block")];
  const clipped = pres.filter((p) => p.scrollWidth > p.clientWidth + 1 && !["auto", "scroll"].includes(getComputedStyle(p).overflowX));
  const tables = [...main.querySelectorAll("table.docutils")];
  const cells = tables.reduce((n, t) => n + t.querySelectorAll("td").length, 0);
  const hex = [...main.querySelectorAll("code.literal")].filter((c) => /^0x[0-9a-fA-F]{4,}$/.test(c.textContent.trim()));
  const broken = hex.filter((c) => c.getClientRects().length > 1).map((c) => c.textContent.trim());
  const pictures = [...main.querySelectorAll("svg, img")].filter((e) => !e.closest("a.headerlink, .sidebar-drawer, header, footer"));
  const boxes = pictures.slice(0, 4).map((e) => { const r = e.getBoundingClientRect();
    return [r.left + scrollX, r.top + scrollY, Math.min(r.width, 1200), Math.min(r.height, 900), e.tagName]; });
  return {title: document.title, pres: pres.length, presShown: pres.filter(shown).length, clipped: clipped.length,
          tables: tables.length, tablesShown: tables.filter(shown).length, cells, hex: hex.length, broken,
          pictures: pictures.length, picturesShown: pictures.filter(shown).length, boxes,
          text: main.innerText.length, overflow: document.documentElement.scrollWidth - innerWidth};
})()
"""


@pytest.fixture(scope="module")
def site() -> Path:
    where = os.environ.get("PTXSPEC_SITE")
    if not where:
        pytest.skip("set PTXSPEC_SITE to a built site (docs/_build/html) to open it in a browser")
    path = Path(where)
    assert (path / "index.html").is_file(), f"PTXSPEC_SITE={where}: no index.html there; build the site first"
    return path


@pytest.fixture(scope="module")
def browser(site):
    executable = chromium()
    if executable is None:
        if os.environ.get("PTXSPEC_BROWSER") == "required":
            pytest.fail("Chromium is not installed (Debian: apt-get install chromium)")
        pytest.skip("Chromium is not installed")
    b = Browser(executable)
    yield b
    b.close()


def layout_of(browser: Browser, site: Path, page: str) -> dict:
    browser.open(file_url(site / page))
    return browser.evaluate(LAYOUT)


@pytest.mark.parametrize("page", PAGES)
def test_page_renders_code_tables_and_pictures(site: Path, browser: Browser, page: str):
    facts = layout_of(browser, site, page)
    assert facts["text"] > 500, facts
    assert facts["clipped"] == 0, f"{page}: a code block is cut off without a scroll bar"
    assert facts["overflow"] <= 1, f"{page}: the page is {facts['overflow']} pixels wider than the window"
    assert facts["presShown"] == facts["pres"], f"{page}: a code block is not drawn"
    assert facts["tablesShown"] == facts["tables"], f"{page}: a table is not drawn"
    assert not facts["broken"], f"{page}: hex values broken across lines: {facts['broken'][:5]}"
    assert facts["picturesShown"] == facts["pictures"], f"{page}: a picture has no size"
    for x, y, width, height, tag in facts["boxes"]:
        share = ink(browser.screenshot(x, y, width, height))
        assert share > 0.01, f"{page}: a {tag} at ({x:.0f}, {y:.0f}) is blank ({share:.4f} of it drawn)"


def test_each_page_has_what_it_is_for(site: Path, browser: Browser):
    """The instruction page shows its code and worked examples; the layout and memory-model pages
    their pictures."""
    assert layout_of(browser, site, "reference/generated/add.html")["pres"] >= 3
    assert layout_of(browser, site, "reference/generated/add.html")["cells"] >= 20
    assert layout_of(browser, site, "mma-layouts.html")["pictures"] >= 10
    assert layout_of(browser, site, "memory-model.html")["pictures"] >= 5
    assert layout_of(browser, site, "index.html")["title"].startswith("ptxspec")


def test_search_finds_an_instruction_by_its_full_form(site: Path, browser: Browser):
    browser.open(file_url(site / "search.html") + "?q=mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32")
    links = browser.evaluate("[...document.querySelectorAll('#ptx-form-results a')].map((a) => a.getAttribute('href'))")
    assert links and all("reference/generated/mma" in link for link in links), links
    assert any(link.endswith("#family-mma-f16") for link in links), links
    browser.open(file_url(site / "search.html") + "?q=add.s32")
    links = browser.evaluate("[...document.querySelectorAll('#ptx-form-results a')].map((a) => a.getAttribute('href'))")
    assert links and all("reference/generated/add" in link for link in links), links


def test_a_command_page_is_its_help(site: Path, browser: Browser):
    browser.open(file_url(site / "cli/generated/eval.html"))
    text = browser.evaluate("document.querySelector('article').innerText")
    assert "Usage: ptxspec eval" in text and "--inputs" in text
