"""The job form's time limit in a real browser: the run is stopped and shows timed_out."""

from __future__ import annotations

import json
import urllib.request

from tests.server.live_server import TOKEN
from tests.ui.conftest import NEEDS_LABEXTENSION, open_sidebar

pytestmark = NEEDS_LABEXTENSION

ENDLESS = "import time\nwhile True:\n    time.sleep(0.1)"


def test_a_job_from_the_form_with_a_time_limit_ends_timed_out(clean, page, screenshot):
    from playwright.sync_api import expect

    sidebar = open_sidebar(page, f"{clean.url}/lab?reset&token={TOKEN}")
    form = sidebar.get_by_role("form", name="New job")
    form.get_by_role("textbox", name="When").fill("in 1s")
    form.get_by_role("textbox", name="Name").fill("limited loop")
    form.get_by_role("spinbutton", name="Time limit (s)").fill("2")
    form.get_by_role("textbox", name="Code").fill(ENDLESS)
    form.get_by_role("combobox", name="Runs in").select_option("headless")
    form.get_by_role("button", name="Create").click()

    sidebar.get_by_role("combobox", name="Filter by status").select_option("failed")
    row = sidebar.locator(".jp-RecallSidebar-job").filter(has_text="limited loop")
    expect(row).to_have_attribute("data-status", "failed", timeout=90_000)
    row.click()
    run = sidebar.locator(".jp-RecallSidebar-run").first
    expect(run).to_have_attribute("data-status", "timed_out", timeout=30_000)
    expect(sidebar.locator(".jp-RecallSidebar-badge.jp-mod-timed_out").first).to_be_visible()
    screenshot(page, "lab_form_time_limit")

    request = urllib.request.Request(
        f"{clean.url}/api/recall/jobs?status=failed", headers={"Authorization": f"token {TOKEN}"}
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        (job,) = [j for j in json.load(answer)["jobs"] if j["name"] == "limited loop"]
    assert job["policies"]["timeout"] == 2
