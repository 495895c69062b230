"""The Recall sidebar with thousands of jobs in real JupyterLab: it reads one page (and the
counts), not every job, and "Load more" reads the next."""

from __future__ import annotations

from tests.server.live_server import TOKEN
from tests.ui.conftest import NEEDS_LABEXTENSION, open_sidebar

pytestmark = NEEDS_LABEXTENSION

MANY = 2_500


def test_the_sidebar_reads_one_page_and_loads_more(clean, page):
    from playwright.sync_api import expect

    for first in range(0, MANY, 500):
        body = {
            "jobs": [
                {
                    "when": f"in {n + 1} minutes",
                    "name": f"many {n:05d}",
                    "action": {"type": "notification", "message": "x"},
                }
                for n in range(first, first + 500)
            ]
        }
        clean.request("POST", "/api/recall/jobs", body)
    listings: list[str] = []
    page.on(
        "request",
        lambda request: (
            listings.append(request.url) if "/api/recall/jobs?" in request.url else None
        ),
    )
    sidebar = open_sidebar(page, f"{clean.url}/lab?reset&token={TOKEN}")
    rows = sidebar.locator(".jp-RecallSidebar-job")
    expect(rows).to_have_count(100)
    # Soonest fire first, as the server sorted them.
    expect(rows.first.locator(".jp-RecallSidebar-name")).to_have_text("many 00000")
    assert listings
    assert all("limit=100" in url and "sort=next_fire_at" in url for url in listings)
    # The status bar counts every job, from the counts route, not the 100 loaded.
    status = page.locator(".jp-RecallStatus")
    expect(status).to_have_attribute("data-pending", str(MANY))

    more = sidebar.get_by_role("button", name="Load more")
    more.click()
    expect(rows).to_have_count(200)
    expect(rows.nth(199).locator(".jp-RecallSidebar-name")).to_have_text("many 00199")
    assert any("cursor=" in url for url in listings)

    search = sidebar.get_by_role("searchbox")
    search.fill("many 0249")
    expect(rows).to_have_count(10)
    expect(more).to_be_hidden()
