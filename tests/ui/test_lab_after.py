"""Dependencies in a real browser: the job form's "after another job" choice creates a job
fired by another job's runs, the sidebar shows its upstream by name, and it runs once the
upstream's run succeeds."""

from __future__ import annotations

import json
import re
import urllib.request
from typing import Any

from tests.server.live_server import TOKEN
from tests.ui.conftest import NEEDS_LABEXTENSION, open_sidebar

pytestmark = NEEDS_LABEXTENSION

UPSTREAM = {
    "name": "nightly build",
    "when": "every day at 03:00",
    "action": {"type": "notification", "message": "built"},
}


def rest(url: str, method: str = "GET", body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        url,
        data=data if data is not None or method == "GET" else b"{}",
        method=method,
        headers={"Authorization": f"token {TOKEN}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.load(answer)


def test_the_form_creates_a_job_after_another_and_the_sidebar_shows_it(clean, page, screenshot):
    from playwright.sync_api import expect

    upstream = rest(f"{clean.url}/api/recall/jobs", "POST", UPSTREAM)
    sidebar = open_sidebar(page, f"{clean.url}/lab?reset&token={TOKEN}")
    form = sidebar.get_by_role("form", name="New job")
    expect(sidebar.locator(".jp-RecallSidebar-job").filter(has_text="nightly build")).to_be_visible(
        timeout=30_000
    )
    form.get_by_role("combobox", name="Fires").select_option("after")
    expect(form.get_by_role("textbox", name="When")).to_be_hidden()
    form.locator("select[name=after_job]").select_option(upstream["id"])
    form.locator("select[name=after_on]").select_option("succeeded")
    form.get_by_role("textbox", name="Name").fill("publish")
    form.get_by_role("textbox", name="Code").fill("print('published')")
    form.get_by_role("combobox", name="Runs in").select_option("headless")
    form.get_by_role("button", name="Create").click()

    expect(form.locator(".jp-RecallForm-status")).to_have_text(
        re.compile(r"Created publish \([0-9a-f]{12}\)")
    )
    row = sidebar.locator(".jp-RecallSidebar-job").filter(has_text="publish")
    line = row.locator(".jp-RecallSidebar-upstream")
    expect(line).to_have_text(f"after nightly build ({upstream['id']}) succeeds", timeout=30_000)
    expect(line).to_have_attribute("data-upstream-id", upstream["id"])
    screenshot(page, "lab_sidebar_after")

    (job,) = [j for j in rest(f"{clean.url}/api/recall/jobs")["jobs"] if j["name"] == "publish"]
    assert job["after"] == {"job": upstream["id"], "on": "succeeded"}
    rest(f"{clean.url}/api/recall/jobs/{upstream['id']}/trigger", "POST")
    row.click()
    run = sidebar.locator(".jp-RecallSidebar-run").first
    expect(run).to_have_attribute("data-status", "succeeded", timeout=90_000)
