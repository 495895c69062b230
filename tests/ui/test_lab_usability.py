"""The sidebar and the approvals as a user meets them beyond the happy path, each seen in real
JupyterLab (docs/labextension.md lists what each test shows)."""

from __future__ import annotations

import re
from typing import Any

from tests.server.live_server import TOKEN
from tests.ui.conftest import NEEDS_LABEXTENSION, Lab, open_sidebar

pytestmark = NEEDS_LABEXTENSION

LAB = "/lab?reset&token=" + TOKEN


def body(name: str, when: str = "every day at 09:00", **extra: Any) -> dict[str, Any]:
    return {
        "when": when,
        "name": name,
        "action": {"type": "notification", "message": f"{name} fired"},
        "target": {"type": "server"},
        **extra,
    }


def job(lab: Lab, name: str, when: str = "every day at 09:00", **extra: Any) -> dict[str, Any]:
    created: dict[str, Any] = lab.request("POST", "/api/recall/jobs", body(name, when, **extra))
    return created


def test_the_selected_jobs_details_come_into_view_among_300_jobs(clean, page, screenshot):
    from playwright.sync_api import expect

    jobs = [body(f"bulk {i:03}") for i in range(300)]
    clean.request("POST", "/api/recall/jobs", {"jobs": jobs})
    sidebar = open_sidebar(page, clean.url + LAB)
    rows = sidebar.locator(".jp-RecallSidebar-job")
    expect(rows).to_have_count(100)
    details = sidebar.get_by_role("region", name="Selected job")

    rows.nth(1).click()
    name = rows.nth(1).locator(".jp-RecallSidebar-name").inner_text()
    expect(details.locator("h3")).to_have_text(name)
    expect(details.locator("h3")).to_be_in_viewport()
    expect(details.get_by_text("Runs", exact=True)).to_be_in_viewport()
    screenshot(page, "lab_details_in_view")

    # Run now on another row selects it: its details (and the run) come into view too.
    sidebar.locator(".jp-RecallSidebar-jobs").evaluate("n => n.scrollIntoView()")
    other = rows.nth(5)
    other_name = other.locator(".jp-RecallSidebar-name").inner_text()
    other.get_by_role("button", name=re.compile("^Run now")).click()
    expect(details.locator("h3")).to_have_text(other_name)
    expect(details.locator("h3")).to_be_in_viewport()
    expect(details.locator(".jp-RecallSidebar-run").first).to_be_in_viewport()
