"""Drives the search page of a running `cadclip serve` in headless Chromium
(Debian's /usr/bin/chromium through playwright): types a query, checks that
results arrive with loaded thumbnails, clicks "more like this" on the second
result, checks that the page now shows parts like it (the part itself first),
and saves a screenshot.

usage: browser_check.py URL SCREENSHOT.png
"""
import sys

from playwright.sync_api import sync_playwright


def main():
    url, screenshot = sys.argv[1], sys.argv[2]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                    args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1100, "height": 760})
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(url)
        page.fill("#query", "a plate with holes")
        page.click("#search-button")
        page.wait_for_selector(".card img", timeout=30000)
        cards = page.locator(".card")
        count = cards.count()
        assert count >= 3, f"expected at least 3 results, got {count}"
        page.wait_for_function(
            "() => Array.from(document.querySelectorAll('.card img'))"
            ".every(i => i.complete && i.naturalWidth > 0)", timeout=30000)
        status = page.inner_text("#status")
        assert "results for" in status, status

        target = cards.nth(1).get_attribute("data-id")
        cards.nth(1).locator(".more-like-this").click()
        page.wait_for_function(
            "(id) => document.querySelector('#status').textContent.includes('like') && "
            "document.querySelector('.card') && document.querySelector('.card').dataset.id === id",
            arg=target, timeout=30000)
        assert page.locator(".card").count() >= 3
        page.screenshot(path=screenshot, full_page=False)
        assert not errors, errors
        browser.close()
    print(f"browser check passed: {count} results, more like {target}, screenshot {screenshot}")


if __name__ == "__main__":
    main()
