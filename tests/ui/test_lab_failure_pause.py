"""The job form's pause after failures and retention in a real browser: a failing job is
paused by the server after two failed occurrences, and its row in the sidebar says why."""

from __future__ import annotations

import json
import urllib.request

from tests.server.live_server import TOKEN
from tests.ui.conftest import NEEDS_LABEXTENSION, open_sidebar

pytestmark = NEEDS_LABEXTENSION


def test_a_job_from_the_form_pauses_after_its_failures(clean, page, screenshot):
    from playwright.sync_api import expect

    sidebar = open_sidebar(page, f"{clean.url}/lab?reset&token={TOKEN}")
    form = sidebar.get_by_role("form", name="New job")
    form.get_by_role("textbox", name="When").fill("every 3 seconds")
    form.get_by_role("textbox", name="Name").fill("always broken")
    form.get_by_role("spinbutton", name="Pause after failures").fill("2")
    form.get_by_role("spinbutton", name="Keep runs", exact=True).fill("5")
    form.get_by_role("textbox", name="Keep runs for").fill("7d")
    form.get_by_role("textbox", name="Code").fill("raise ValueError('broken on purpose')")
    form.get_by_role("combobox", name="Runs in").select_option("headless")
    form.get_by_role("button", name="Create").click()

    sidebar.get_by_role("combobox", name="Filter by status").select_option("paused")
    row = sidebar.locator(".jp-RecallSidebar-job").filter(has_text="always broken")
    reason = row.locator(".jp-RecallSidebar-pausedReason")
    expect(reason).to_contain_text("paused after 2 consecutive failed occurrences", timeout=120_000)
    expect(reason).to_contain_text("broken on purpose")
    screenshot(page, "lab_paused_after_failures")

    request = urllib.request.Request(
        f"{clean.url}/api/recall/jobs?status=paused", headers={"Authorization": f"token {TOKEN}"}
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        (job,) = [j for j in json.load(answer)["jobs"] if j["name"] == "always broken"]
    policies = job["policies"]
    assert (policies["pause_after_failures"], policies["keep_runs"]) == (2, 5)
    assert policies["keep_runs_for"] == 7 * 86400
