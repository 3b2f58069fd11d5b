"""The built site in a real browser: headless Chromium driven by Playwright, offline.

Needs the system Chromium (Debian/Ubuntu: `apt-get install chromium`). Under CI a missing
browser fails the test; on a reader's machine it is skipped with the reason printed.
Screenshots of a chapter page go to _build/screenshots/ for people to look at.
"""

import functools
import http.server
import json
import os
import shutil
import threading

import pytest
import yaml

from guide.book import ROOT, notebooks, toc_files

pytestmark = pytest.mark.slow

SCREENSHOTS = ROOT / "_build" / "screenshots"
SCREENSHOT_CHAPTER = "using_a_gpu"
# Flags for a root, headless, offline Chromium: no sandbox, and no background calls to Google.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path():
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        reason = "Chromium is not installed (Debian/Ubuntu: apt-get install chromium)"
        if os.environ.get("CI"):
            pytest.fail(reason + "; CI must install it")
        pytest.skip(reason)
    return path


@pytest.fixture(scope="module")
def base_url(site):
    handler = functools.partial(
        http.server.SimpleHTTPRequestHandler, directory=str(site)
    )
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    executable = chromium_path()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def page(browser, base_url):
    """A fresh page that records console errors and uncaught exceptions; nothing leaves localhost."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.problems, page.external = [], []

    def on_console(msg):
        if msg.type == "error" and msg.location.get("url", "").startswith(base_url):
            page.problems.append(
                f"console error: {msg.text} ({msg.location.get('url')})"
            )

    def route(request_route):
        if request_route.request.url.startswith(base_url):
            request_route.continue_()
        else:  # an offline test: external requests (a CDN, an analytics call) are refused and recorded
            page.external.append(request_route.request.url)
            request_route.abort()

    page.on("console", on_console)
    page.on(
        "pageerror",
        lambda err: page.problems.append(f"uncaught JavaScript error: {err}"),
    )
    page.route("**/*", route)
    yield page
    context.close()


RAW_TEX_JS = """async () => {
  if (window.MathJax && MathJax.startup) await MathJax.startup.promise;
  return Array.from(document.querySelectorAll('.math'))
    .filter(el => !el.querySelector('mjx-container'))
    .map(el => el.textContent.slice(0, 60));
}"""


def test_every_page_loads_offline_with_its_images_and_formulas(page, base_url):
    """Every page loads with no console error and every image; the site asks no other host
    for anything (MathJax included), so offline, behind a firewall or in print every formula
    renders, none left as raw TeX."""
    formulas = 0
    for entry in toc_files():
        page.problems.clear()
        response = page.goto(f"{base_url}/{entry}.html", wait_until="load")
        assert response.status == 200, f"{entry}: HTTP {response.status}"
        broken = page.evaluate(
            "Array.from(document.images).filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src)"
        )
        assert not broken, f"{entry}: images that did not load: {broken}"
        raw = page.evaluate(RAW_TEX_JS)
        assert not raw, f"{entry}: formulas left as raw TeX: {raw[:3]}"
        formulas += page.locator("mjx-container").count()
        assert not page.problems, f"{entry}: " + "; ".join(page.problems)
    assert not page.external, (
        "the site asked other hosts for (refused here, as offline):"
        f" {sorted(set(page.external))[:10]}"
    )
    assert formulas > 50, f"only {formulas} rendered formulas in the whole book"


# Terms readers type, and the chapter whose step explains each: the search must land there,
# on an anchor inside the section that mentions the term.
SEARCH_TERMS = {
    "zero_grad": "training_loop",
    "no_grad": "autograd",
    "pin_memory": "data_loading",
    "num_workers": "data_loading",
    "state_dict": "saving_and_loading",
    "weights_only": "saving_and_loading",
    "DataParallel": "model_parallelism",
    "CUDA out of memory": "out_of_memory",
    "view": "views_and_strides",
    "CrossEntropyLoss": "cross_entropy_and_logits",
    "torch.compile": "torch_compile",
    "PackedSequence": "variable_length_sequences",
}
# Code or output blocks allowed to scroll sideways at 1280 px, each with its reason.
WIDE_BLOCKS_ALLOWED = {}
SCROLLING_BLOCKS_JS = """() => Array.from(document.querySelectorAll(
    'div.cell_input pre, div.cell_output pre, div.highlight pre'))
  .filter(el => el.offsetParent !== null && el.scrollWidth > el.clientWidth + 1)
  .map(el => el.textContent.split('\\n').sort((a, b) => b.length - a.length)[0].slice(0, 100))"""


def test_search_lands_in_the_section_that_explains_the_term(page, base_url):
    for term, chapter in SEARCH_TERMS.items():
        page.goto(f"{base_url}/search.html?q={term}", wait_until="load")
        page.wait_for_selector("#search-results ul.search li a", timeout=20_000)
        hits = page.eval_on_selector_all(
            "#search-results ul.search li a", "links => links.map(a => a.href)"
        )
        landing = [h for h in hits[:3] if f"chapters/{chapter}.html#" in h]
        assert landing, (
            f"search for {term!r}: no anchored hit in {chapter} among {hits[:3]}"
        )
        page.goto(landing[0], wait_until="load")
        anchor = landing[0].split("#", 1)[1]
        section_text = page.evaluate(
            """id => { const el = document.getElementById(id);
                       if (!el) return null;
                       const s = el.closest('section') || el.parentElement;
                       return s.textContent; }""",
            anchor,
        )
        assert section_text is not None, (
            f"{term!r} lands on #{anchor}, which {chapter} lacks"
        )
        assert term.lower() in section_text.lower(), (
            f"{term!r} lands on a section without the term"
        )
    assert not page.problems, page.problems


def test_highlighting_marks_whole_words_only(page, base_url):
    page.goto(f"{base_url}/chapters/using_a_gpu.html?highlight=out", wait_until="load")
    marked = page.eval_on_selector_all(
        ".highlighted",
        """els => els.map(e => {
             const before = e.previousSibling ? e.previousSibling.textContent.slice(-1) : '';
             const after = e.nextSibling ? e.nextSibling.textContent.slice(0, 1) : '';
             return before + '[' + e.textContent + ']' + after; })""",
    )
    assert marked, "nothing is highlighted: the highlighter did not run"
    partial = [m for m in marked if m[0].isalnum() or m[-1].isalnum()]
    assert not partial, f"highlighted inside words: {partial[:5]}"


def test_no_code_or_output_block_scrolls_sideways_on_a_desktop(page, base_url):
    wide = {}
    for entry in toc_files():
        page.goto(f"{base_url}/{entry}.html", wait_until="load")
        blocks = [
            b
            for b in page.evaluate(SCROLLING_BLOCKS_JS)
            if b not in WIDE_BLOCKS_ALLOWED
        ]
        if blocks:
            wide[entry] = blocks
    assert not wide, f"blocks wider than the column at 1280 px: {wide}"


def test_pages_do_not_scroll_sideways_on_a_phone(browser, base_url):
    context = browser.new_context(
        viewport={"width": 390, "height": 844}, device_scale_factor=2
    )
    page = context.new_page()
    try:
        for entry in toc_files():
            page.goto(f"{base_url}/{entry}.html", wait_until="load")
            overflow = page.evaluate(
                "document.documentElement.scrollWidth - document.documentElement.clientWidth"
            )
            assert overflow <= 1, (
                f"{entry} scrolls sideways by {overflow} px on a phone"
            )
            unboxed = page.evaluate(
                """() => Array.from(document.querySelectorAll('article table'))
                  .filter(t => t.scrollWidth > t.parentElement.clientWidth + 1)
                  .filter(t => !['auto', 'scroll'].includes(getComputedStyle(t.parentElement).overflowX))
                  .length"""
            )
            assert unboxed == 0, (
                f"{entry}: a wide table that does not scroll in its own box"
            )
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        for name in (SCREENSHOT_CHAPTER, "cheat_sheet", "drill"):
            page.goto(f"{base_url}/chapters/{name}.html", wait_until="load")
            page.screenshot(path=str(SCREENSHOTS / f"{name}-phone.png"), full_page=True)
    finally:
        context.close()


def test_the_cheat_sheet_prints_on_two_sheets(page, base_url):
    """One entry per question (35 of them) fits four A4 pages, two sheets printed on both
    sides, at 7 pt in two columns."""
    page.goto(f"{base_url}/chapters/cheat_sheet.html", wait_until="load")
    page.emulate_media(media="print")
    pdf = page.pdf(
        format="A4",
        margin={"top": "12mm", "bottom": "12mm", "left": "12mm", "right": "12mm"},
    )
    (SCREENSHOTS).mkdir(parents=True, exist_ok=True)
    (SCREENSHOTS / "cheat_sheet.pdf").write_bytes(pdf)
    pages = pdf.count(b"/Type /Page") - pdf.count(b"/Type /Pages")
    assert 1 <= pages <= 4, f"the cheat sheet prints on {pages} A4 pages"


def test_colab_and_download_buttons_serve_the_plain_notebook(page, base_url):
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    repo = config["repository"]["url"].removeprefix("https://github.com/")
    branch = config["sphinx"]["config"]["book_site_branch"]
    for path in notebooks():
        page.goto(f"{base_url}/chapters/{path.stem}.html", wait_until="load")
        links = page.eval_on_selector_all("a", "links => links.map(a => a.href)")
        colab = f"https://colab.research.google.com/github/{repo}/blob/{branch}/notebooks/{path.stem}.ipynb"
        assert colab in links, f"{path.stem}: no Colab button for {colab}"
        download = f"{base_url}/notebooks/{path.stem}.ipynb"
        assert download in links, (
            f"{path.stem}: the .ipynb button does not serve the plain copy"
        )
        response = page.request.get(download)
        assert response.ok and json.loads(response.body())["cells"], (
            f"{path.stem}: not a notebook"
        )


def test_dark_mode_switches_the_theme_and_screenshots_are_written(page, base_url):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.goto(f"{base_url}/chapters/{SCREENSHOT_CHAPTER}.html", wait_until="load")
    light_bg = page.evaluate("getComputedStyle(document.body).backgroundColor")
    page.screenshot(path=str(SCREENSHOTS / f"{SCREENSHOT_CHAPTER}-light.png"))
    for _ in range(3):  # the switch cycles light -> dark -> auto
        if page.evaluate("document.documentElement.dataset.theme") == "dark":
            break
        page.locator("button.theme-switch-button:visible").first.click()
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    dark_bg = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert dark_bg != light_bg, f"background stayed {light_bg} in dark mode"
    page.screenshot(
        path=str(SCREENSHOTS / f"{SCREENSHOT_CHAPTER}-dark.png"), full_page=True
    )
    assert not page.problems, page.problems
    for name in ("light", "dark"):
        assert (
            SCREENSHOTS / f"{SCREENSHOT_CHAPTER}-{name}.png"
        ).stat().st_size > 10_000


def test_the_menu_buttons_open_the_chapter_list_and_the_page_contents(
    browser, base_url
):
    """On a phone, the header's two buttons open the sidebars as dialogs; on a desktop the
    chapter-list button collapses the sidebar."""
    context = browser.new_context(
        viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True
    )
    page = context.new_page()
    try:
        for toggle, dialog in [
            ("primary-toggle", "pst-primary-sidebar-modal"),
            ("secondary-toggle", "pst-secondary-sidebar-modal"),
        ]:
            page.goto(
                f"{base_url}/chapters/{SCREENSHOT_CHAPTER}.html", wait_until="load"
            )
            button = page.locator(f".bd-header-article .{toggle}:visible").first
            button.tap()
            opened = page.evaluate(f"document.getElementById('{dialog}').open")
            assert opened, (
                f"tapping the visible .{toggle} at 390 px leaves #{dialog} closed"
            )
            links = page.locator(f"#{dialog} a:visible").count()
            assert links > 0, f"#{dialog} opened empty"
    finally:
        context.close()
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    try:
        page.goto(f"{base_url}/chapters/{SCREENSHOT_CHAPTER}.html", wait_until="load")
        sidebar = page.locator("#pst-primary-sidebar")
        assert sidebar.is_visible()
        page.locator(".bd-header-article .primary-toggle:visible").first.click()
        page.wait_for_timeout(300)
        hidden = page.evaluate(
            "document.getElementById('pst-primary-sidebar').classList.contains('pst-sidebar-hidden')"
        )
        assert hidden, "the desktop menu button does not collapse the chapter list"
    finally:
        context.close()


def test_the_drill_shows_all_answers_or_one_topic_and_prints_compactly(page, base_url):
    page.goto(f"{base_url}/chapters/drill.html", wait_until="load")
    folded = "document.querySelectorAll('.drill-item .admonition.toggle-hidden').length"
    items = page.locator(".drill-item").count()
    assert items > 50 and page.evaluate(folded) == items, "answers start folded"
    page.get_by_role("button", name="Show all answers").click()
    assert page.evaluate(folded) == 0, "Show all answers left some folded"
    page.get_by_role("button", name="Hide all answers").click()
    assert page.evaluate(folded) == items
    page.get_by_label("Topic").select_option("Training")
    shown = page.evaluate(
        """() => Array.from(document.querySelectorAll('article section > h2'))
             .filter(h => h.offsetParent !== null).map(h => h.textContent.replace('#', '').trim())"""
    )
    assert shown == ["Training"], f"one topic at a time, not {shown}"
    page.get_by_label("Topic").select_option("All topics")
    page.emulate_media(media="print")
    pdf = page.pdf(
        format="A4",
        margin={"top": "12mm", "bottom": "12mm", "left": "12mm", "right": "12mm"},
    )
    pages = pdf.count(b"/Type /Page") - pdf.count(b"/Type /Pages")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    (SCREENSHOTS / "drill.pdf").write_bytes(pdf)
    print(f"the drill prints on {pages} A4 pages")
    assert pages <= 16, f"the drill prints on {pages} A4 pages, answers shown"
