"""The extension's settings in real JupyterLab: changed in the Settings Editor, their effect
shows at once (no reload); changed through Lab's settings API, they apply at the next load.
And the status bar item with the counts of running and pending jobs."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.server.live_server import TOKEN
from tests.ui.conftest import NEEDS_LABEXTENSION, Lab, open_sidebar, screenshot_of

pytestmark = NEEDS_LABEXTENSION

SETTINGS = "/lab/api/settings/jupyter-recall:plugin"
ABSOLUTE = re.compile(r"^next \d{1,2} \w{3} \d{4}, \d{2}:\d{2}$")
RELATIVE_ABSOLUTE = re.compile(r"^next in \d+ (hr|min)\.? \(\d{1,2} \w{3} \d{4}, \d{2}:\d{2}\)$")


@pytest.fixture
def defaults_again(clean: Lab) -> Iterator[Lab]:
    """The settings are the session Lab's: back to the defaults for the other tests."""
    yield clean
    clean.request("PUT", SETTINGS, {"raw": "{}"})


def code_job(lab: Lab, name: str, when: str, code: str = "1") -> dict[str, Any]:
    body = {
        "when": when,
        "name": name,
        "action": {"type": "code", "code": code},
        "target": {"type": "headless", "kernel_name": "python3"},
    }
    return lab.request("POST", "/api/recall/jobs", body)


def open_recall_settings(page: Any) -> Any:
    """The Settings Editor on the Recall plugin's form."""
    from playwright.sync_api import expect

    page.locator(".lm-MenuBar-item", has_text="Settings").click()
    page.get_by_role("menuitem", name=re.compile("^Settings Editor")).click()
    page.locator(".jp-PluginList").get_by_text("Recall", exact=True).click()
    form = page.locator(".jp-SettingsPanel .jp-SettingsForm").filter(has_text="Hide finished jobs")
    expect(form).to_be_visible()
    return form


def test_settings_editor_changes_apply_live(defaults_again, gb_page, screenshot):
    from playwright.sync_api import expect

    lab, page = defaults_again, gb_page
    soon = code_job(lab, "hourly report", "every hour")
    done = code_job(lab, "old report", "in 1h")
    lab.request("POST", f"/api/recall/jobs/{done['id']}/cancel")
    sidebar = open_sidebar(page, f"{lab.url}/lab?reset&token={TOKEN}")
    row = sidebar.locator(f'[data-job-id="{soon["id"]}"]')
    next_line = row.locator(".jp-RecallSidebar-next")
    expect(next_line).to_have_text(RELATIVE_ABSOLUTE)
    expect(sidebar.locator(f'[data-job-id="{done["id"]}"]')).to_be_hidden()
    expect(sidebar).to_contain_text("1 finished job hidden")

    form = open_recall_settings(page)
    screenshot(page, "lab_settings_editor")
    screenshot_of(form, "lab_settings_form")
    form.get_by_label("Hide finished jobs").uncheck()
    # The form's select of a oneOf has no label of its own: found by its choices.
    time_format = form.get_by_role("combobox").filter(
        has=page.get_by_role("option", name="Date and time only")
    )
    time_format.select_option(label="Date and time only")
    # The sidebar, open beside the Settings Editor, follows (nothing was reloaded).
    expect(sidebar).to_be_visible()
    expect(sidebar.locator(f'[data-job-id="{done["id"]}"]')).to_be_visible()
    expect(next_line).to_have_text(ABSOLUTE)
    saved = json.loads(lab.request("GET", SETTINGS)["raw"])
    assert saved["hideFinished"] is False
    assert saved["timeFormat"] == "absolute"
    screenshot(page, "lab_settings_applied")


def test_settings_api_default_target_and_toasts(defaults_again, page):
    from playwright.sync_api import expect

    lab = defaults_again
    raw = {"defaultTarget": "headless", "toasts": {"failedRuns": False}}
    lab.request("PUT", SETTINGS, {"raw": json.dumps(raw)})
    url = lab.notebook("target.ipynb", "1 + 1")
    page.goto(url)
    page.locator('.jp-SideBar [role="tab"][title="Recall: scheduled jobs"]').click()
    form = page.get_by_role("form", name="New job")
    expect(form).to_contain_text("For target.ipynb")
    # A notebook is open, yet the form starts on the headless kernel, as set.
    expect(form.get_by_role("combobox", name="Runs in")).to_have_value("headless")

    failing = code_job(lab, "quiet failure", "in 1s", "raise ValueError('no toast for me')")
    sidebar = page.get_by_role("region", name="Recall jobs")
    sidebar.get_by_role("combobox", name="Filter by status").select_option("failed")
    row = sidebar.locator(f'[data-job-id="{failing["id"]}"]')
    expect(row).to_be_visible(timeout=60_000)
    page.wait_for_timeout(1500)  # a toast would show with the same event as the row
    assert page.locator(".Toastify__toast").filter(has_text="quiet failure").count() == 0


def test_status_bar_counts_running_and_pending_jobs_and_opens_the_sidebar(clean, page, screenshot):
    from playwright.sync_api import expect

    page.goto(f"{clean.url}/lab?reset&token={TOKEN}")
    item = page.locator(".jp-StatusBar-Widget .jp-RecallStatus")
    expect(item).to_have_text("Recall: 0 running, 0 pending")
    code_job(clean, "later", "in 2 hours")
    slow = code_job(clean, "slow hourly", "every hour", "import time\ntime.sleep(15)")
    expect(item).to_have_text("Recall: 0 running, 2 pending")
    clean.request("POST", f"/api/recall/jobs/{slow['id']}/trigger")
    expect(item).to_have_text("Recall: 1 running, 1 pending", timeout=60_000)
    screenshot(page, "lab_status_bar")
    screenshot_of(page.locator(".jp-StatusBar-Widget"), "lab_status_bar_item")
    expect(item).to_have_text("Recall: 0 running, 2 pending", timeout=90_000)

    sidebar = page.get_by_role("region", name="Recall jobs")
    expect(sidebar).to_be_hidden()
    item.click()
    expect(sidebar).to_be_visible()
