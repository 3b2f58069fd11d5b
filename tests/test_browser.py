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

from conftest import ROOT, notebooks, toc_files

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


def test_every_page_loads_without_errors_and_with_its_images(page, base_url):
    for entry in toc_files():
        page.problems.clear()
        response = page.goto(f"{base_url}/{entry}.html", wait_until="load")
        assert response.status == 200, f"{entry}: HTTP {response.status}"
        broken = page.evaluate(
            "Array.from(document.images).filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src)"
        )
        assert not broken, f"{entry}: images that did not load: {broken}"
        assert not page.problems, f"{entry}: " + "; ".join(page.problems)
    if page.external:
        print("external requests refused (offline test):", sorted(set(page.external)))


def test_search_finds_the_data_loading_chapter_for_pin_memory(page, base_url):
    page.goto(f"{base_url}/search.html?q=pin_memory", wait_until="load")
    page.wait_for_selector("#search-results ul.search li a", timeout=20_000)
    hits = page.eval_on_selector_all(
        "#search-results ul.search li a", "links => links.map(a => a.href)"
    )
    assert any("chapters/data_loading.html" in h for h in hits), (
        f"search for pin_memory returned {hits}"
    )
    assert not page.problems, page.problems


def test_colab_and_download_buttons_point_at_the_notebook(page, base_url):
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    repo = config["repository"]["url"].removeprefix("https://github.com/")
    branch = config["repository"]["branch"]
    for path in notebooks():
        page.goto(f"{base_url}/chapters/{path.stem}.html", wait_until="load")
        links = page.eval_on_selector_all("a", "links => links.map(a => a.href)")
        colab = f"https://colab.research.google.com/github/{repo}/blob/{branch}/chapters/{path.stem}.ipynb"
        assert colab in links, f"{path.stem}: no Colab button for {colab}"
        download = f"{base_url}/_sources/chapters/{path.stem}.ipynb"
        assert download in links, f"{path.stem}: no .ipynb download button"
        response = page.request.get(download)
        assert response.ok and json.loads(response.body())["cells"], (
            f"{path.stem}: download is not a notebook"
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
