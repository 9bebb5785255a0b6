"""Drives the search page of a running `cadclip serve` in headless Chromium
(Debian's /usr/bin/chromium through playwright): types a query and sees
results with loaded thumbnails; sets a size limit and a file type and sees
only parts that meet them, with the filters listed; the query and filters are
in the page's URL, and opening that URL again gives the same search;
"more like this" and Back; the duplicate clusters; and saves a screenshot of
the filtered results.

usage: browser_check.py URL SCREENSHOT.png DUPLICATE_ID
"""
import json
import sys
from urllib.parse import parse_qs, urlparse

from playwright.sync_api import sync_playwright


def card_ids(page):
    return page.eval_on_selector_all(".card", "cs => cs.map(c => c.dataset.id)")


def card_sizes(page):
    return page.eval_on_selector_all(".card", "cs => cs.map(c => JSON.parse(c.dataset.size))")


# Generous: CI runs this beside other tests on two cores, where the page,
# the server and Chromium share what is left.
WAIT_MS = 90000


def wait_for_results(page, words):
    try:
        page.wait_for_function(
            "(w) => document.querySelector('#status').textContent.includes(w) && "
            "!document.querySelector('#status').classList.contains('error')", arg=words,
            timeout=WAIT_MS)
    except Exception:
        # Say what the page showed instead: an error message names its cause.
        status = page.inner_text("#status")
        print(f"waiting for '{words}', the page's status read: {status!r}", file=sys.stderr)
        raise


def main():
    url, screenshot, duplicate = sys.argv[1], sys.argv[2], sys.argv[3]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                    args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1100, "height": 900})
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(url)
        page.fill("#query", "a plate with holes")
        page.click("#search-button")
        wait_for_results(page, "results for")
        page.wait_for_selector(".card img", timeout=WAIT_MS)
        page.wait_for_function(
            "() => Array.from(document.querySelectorAll('.card img'))"
            ".every(i => i.complete && i.naturalWidth > 0)", timeout=WAIT_MS)
        everything = card_ids(page)
        assert len(everything) >= 6, f"expected at least 6 results, got {len(everything)}"

        # A size limit that only some parts meet, and a file type.
        largest = sorted(max(s) for s in card_sizes(page))
        limit = round(largest[len(largest) // 2] + 0.05, 1)
        page.fill("#f-size-max", f"{limit:g}")
        page.select_option("#f-type", "step")
        page.click("#search-button")
        page.wait_for_function("() => document.querySelector('#applied').textContent"
                               ".includes('size<=')", timeout=WAIT_MS)
        wait_for_results(page, "results for")
        filtered = card_ids(page)
        assert 0 < len(filtered) < len(everything), (len(filtered), len(everything))
        for size in card_sizes(page):
            assert max(size) <= limit, (size, limit)
        applied = page.inner_text("#applied")
        assert f"size<={limit:g}" in applied and "type=step" in applied, applied
        why = page.inner_text(".card .why")
        assert "size<=" in why, why
        page.wait_for_function(
            "() => Array.from(document.querySelectorAll('.card img'))"
            ".every(i => i.complete && i.naturalWidth > 0)", timeout=WAIT_MS)
        page.screenshot(path=screenshot, full_page=False)

        # The URL holds the search: opened afresh it gives the same answer.
        params = parse_qs(urlparse(page.url).query)
        assert params["q"] == ["a plate with holes"], params
        assert f"size<={limit:g}" in params["filter"][0], params
        shared = page.url
        page.goto(shared)
        wait_for_results(page, "results for")
        assert card_ids(page) == filtered, (card_ids(page), filtered)
        assert page.input_value("#f-size-max") == f"{limit:g}", page.input_value("#f-size-max")
        assert page.input_value("#f-type") == "step"

        # More like this, then Back to the filtered search.
        target = filtered[0]
        page.locator(".card").nth(0).locator(".more-like-this").click()
        page.wait_for_function(
            "(id) => document.querySelector('#status').textContent.includes('like') && "
            "document.querySelector('.card') && document.querySelector('.card').dataset.id === id",
            arg=target, timeout=WAIT_MS)
        assert parse_qs(urlparse(page.url).query)["like"] == [target]
        page.go_back()
        wait_for_results(page, "results for")
        assert card_ids(page) == filtered

        # Duplicate clusters: the library holds one part twice.
        page.fill("#f-size-max", "")
        page.select_option("#f-type", "")
        page.click("#duplicates-button")
        page.wait_for_selector(".cluster", timeout=60000)
        clusters = page.eval_on_selector_all(
            ".cluster", "cs => cs.map(c => ({kind: c.dataset.kind, "
            "ids: Array.from(c.querySelectorAll('.card')).map(x => x.dataset.id)}))")
        exact = [c for c in clusters if c["kind"] == "exact"]
        assert any(duplicate in c["ids"] and len(c["ids"]) >= 2 for c in exact), json.dumps(clusters)
        assert parse_qs(urlparse(page.url).query)["view"] == ["duplicates"]
        assert not errors, errors
        browser.close()
    print(f"browser check passed: {len(everything)} results, {len(filtered)} with size<={limit:g} "
          f"type=step, more like {target}, {len(clusters)} duplicate clusters, "
          f"screenshot {screenshot}")


if __name__ == "__main__":
    main()
