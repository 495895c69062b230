"""The Recall sidebar's other views in real JupyterLab: notebooks with a pending recall marked
by a clock and filtered, the schedule editor with its live preview, watchers with their last
result and their alerts as toasts, and a kernel's finished background task as a toast and in
the notifications."""

from __future__ import annotations

import re
from typing import Any

from tests.server.live_server import TOKEN
from tests.ui.conftest import NEEDS_LABEXTENSION, Lab, open_sidebar, run_first_cell

pytestmark = NEEDS_LABEXTENSION


def code_job(lab: Lab, name: str, target: dict[str, Any], when: str = "in 1h") -> dict[str, Any]:
    body = {"when": when, "name": name, "action": {"type": "code", "code": "1"}, "target": target}
    return lab.request("POST", "/api/recall/jobs", body)


def shown_names(sidebar: Any) -> list[str]:
    return sorted(sidebar.locator(".jp-RecallSidebar-job .jp-RecallSidebar-name").all_inner_texts())


def test_notebooks_with_a_pending_recall_are_marked_and_filtered(clean, page, screenshot):
    from playwright.sync_api import expect

    clean.pending_recall("marked.ipynb", "recall of marked.ipynb")
    marked = code_job(clean, "job of marked", {"type": "kernel", "path": "marked.ipynb"})
    plain = code_job(clean, "job of plain", {"type": "kernel", "path": "plain.ipynb"})
    code_job(clean, "headless job", {"type": "headless", "kernel_name": "python3"})
    sidebar = open_sidebar(page, f"{clean.url}/lab?reset&token={TOKEN}")
    expect(sidebar.locator(".jp-RecallSidebar-job")).to_have_count(4)

    clock = sidebar.get_by_role("img", name="marked.ipynb has a pending recall")
    expect(clock).to_have_count(2)  # the recall's row and the other job of that notebook
    line = sidebar.locator(f'[data-job-id="{marked["id"]}"] .jp-RecallSidebar-notebook')
    expect(line).to_have_attribute("data-pending-recall", "true")
    line = sidebar.locator(f'[data-job-id="{plain["id"]}"] .jp-RecallSidebar-notebook')
    expect(line).to_have_attribute("data-pending-recall", "false")
    expect(line.get_by_role("img")).to_have_count(0)

    only = sidebar.get_by_role("checkbox", name="Only notebooks with a pending recall")
    only.check()
    expect(sidebar.locator(".jp-RecallSidebar-job")).to_have_count(2)
    assert shown_names(sidebar) == ["job of marked", "recall of marked.ipynb"]
    screenshot(page, "lab_pending_recall_filter")
    only.uncheck()

    sidebar.get_by_role("combobox", name="Filter by notebook").select_option("plain.ipynb")
    expect(sidebar.locator(".jp-RecallSidebar-job")).to_have_count(1)
    assert shown_names(sidebar) == ["job of plain"]
    sidebar.get_by_role("combobox", name="Filter by notebook").select_option("")
    sidebar.get_by_role("combobox", name="Filter by kind").select_option("recall")
    expect(sidebar.locator(".jp-RecallSidebar-job")).to_have_count(1)
    assert shown_names(sidebar) == ["recall of marked.ipynb"]


def test_the_schedule_editor_previews_and_saves_a_new_schedule(clean, page, screenshot):
    from playwright.sync_api import expect

    job = code_job(clean, "daily report", {"type": "headless", "kernel_name": "python3"})
    job = clean.request("PATCH", f"/api/recall/jobs/{job['id']}", {"when": "every day at 09:00"})
    sidebar = open_sidebar(page, f"{clean.url}/lab?reset&token={TOKEN}")
    row = sidebar.locator(f'[data-job-id="{job["id"]}"]')
    expect(row).to_contain_text(job["description"])
    row.click()
    sidebar.get_by_role("button", name="Edit the schedule of daily report").click()
    editor = sidebar.get_by_role("form", name="Edit schedule")
    field = editor.get_by_role("textbox", name="New schedule")
    expect(field).to_have_value("every day at 09:00")

    field.fill("no such schedule")
    preview = editor.get_by_label("Schedule preview")
    expect(preview).to_have_class(re.compile(r"jp-mod-error"))
    field.fill("every monday at 10:30")
    expected = clean.request("POST", "/api/recall/parse", {"when": "every monday at 10:30"})
    expect(preview).to_contain_text(expected["description"])
    expect(preview.get_by_role("listitem")).to_have_count(len(expected["next_fire_times"]))
    screenshot(page, "lab_schedule_editor")

    editor.get_by_role("button", name="Save").click()
    expect(editor).to_be_hidden()
    # The row shows the server's new description from the job.updated event.
    expect(row.locator(".jp-RecallSidebar-description")).to_have_text(expected["description"])
    saved = clean.request("GET", f"/api/recall/jobs/{job['id']}")
    assert saved["when"] == "every monday at 10:30"
    assert saved["next_fire_at"] == expected["next_fire_times"][0]


def test_a_watcher_shows_its_last_result_and_its_alert_toasts(clean, page, screenshot):
    from playwright.sync_api import expect

    (clean.root / "watched.txt").write_text("watched content v1")
    sidebar = open_sidebar(page, f"{clean.url}/lab?reset&token={TOKEN}")
    watcher = clean.request(
        "POST",
        "/api/recall/watchers",
        {
            "tool": "filesystem.read",
            "params": {"path": "watched.txt"},
            "interval": 5,
            "label": "watched file",
            "notify_when": "on_change",
        },
    )
    try:
        item = sidebar.get_by_role("region", name="Watchers").locator(
            f'[data-watcher-id="{watcher["watcher_id"]}"]'
        )
        expect(item).to_contain_text("watched file")
        expect(item.get_by_label("Last result")).to_contain_text("ok:")
        expect(item.get_by_label("Last result")).to_contain_text("watched content v1")

        # The first check is the baseline, notified by the on_change strategy: no session, so
        # it comes to the UI as a toast and into the notifications.
        toast = page.locator(".Toastify__toast").filter(has_text="watched file")
        expect(toast).to_be_visible()
        notifications = sidebar.get_by_role("region", name="Notifications")
        expect(notifications.locator(".jp-RecallSidebar-notification")).to_contain_text(
            ["watched file"]
        )
        screenshot(page, "lab_watcher_alert")

        # The toast opens the check that notified.
        toast.get_by_role("button", name="Show run").click()
        status = clean.request("GET", f"/api/recall/watchers/{watcher['watcher_id']}?last_n=5")
        first = status["history"][-1]
        expect(sidebar.locator(f'[data-run-id="{first["run_id"]}"]')).to_be_visible()

        (clean.root / "watched.txt").write_text("watched content v2")
        expect(item.get_by_label("Last result")).to_contain_text(
            "watched content v2", timeout=30_000
        )
    finally:
        clean.request("DELETE", f"/api/recall/watchers/{watcher['watcher_id']}")


BACKGROUND_CELL = """import jupyter_recall as jr
jr.background_run("shell.run", {"command": "echo background done"})"""


def test_a_finished_background_task_toasts(clean, page, screenshot):
    from playwright.sync_api import expect

    url = clean.notebook("background.ipynb", BACKGROUND_CELL)
    cell = run_first_cell(page, url)
    expect(cell).to_contain_text("[BACKGROUND TASK COMPLETED]")
    toast = page.locator(".Toastify__toast").filter(
        has_text="Background task shell.run succeeded (background.ipynb)"
    )
    expect(toast).to_be_visible()
    screenshot(page, "lab_background_toast")

    tab = page.locator('.jp-SideBar [role="tab"][title="Recall: scheduled jobs"]')
    tab.click()
    notifications = page.get_by_role("region", name="Notifications")
    item = notifications.locator(".jp-RecallSidebar-notification").first
    expect(item).to_contain_text("Background task shell.run succeeded")
    expect(item).to_contain_text("background done")


# A control's accessible name by the rules the sidebar relies on: aria-label, its <label>, or
# (buttons) its text. The names of those without one.
UNNAMED_JS = """root => Array.from(root.querySelectorAll('button, input, select, textarea'))
  .filter(control => !control.closest('[hidden]'))
  .filter(control => {
    const label = control.getAttribute('aria-label')
      || Array.from(control.labels || []).map(l => l.textContent).join(' ')
      || (control.tagName === 'BUTTON' ? control.textContent : '');
    return !label.trim();
  })
  .map(control => control.outerHTML.slice(0, 120))"""


def test_every_control_of_the_sidebar_and_banner_has_an_accessible_name(clean, page):
    from playwright.sync_api import expect

    url = clean.notebook("named.ipynb", "1 + 1")
    clean.pending_recall("named.ipynb", "recall of named.ipynb")
    job = code_job(clean, "named job", {"type": "kernel", "path": "named.ipynb"})
    clean.request("POST", f"/api/recall/jobs/{job['id']}/trigger")
    page.goto(url)
    banner = page.locator(".jp-NotebookPanel:visible .jp-RecallBanner")
    expect(banner).to_be_visible()
    page.locator('.jp-SideBar [role="tab"][title="Recall: scheduled jobs"]').click()
    sidebar = page.get_by_role("region", name="Recall jobs")
    row = sidebar.locator(f'[data-job-id="{job["id"]}"]')
    row.click()
    expect(sidebar.locator(".jp-RecallSidebar-run")).to_have_count(1)
    sidebar.get_by_role("button", name="Edit the schedule of named job").click()
    expect(sidebar.get_by_role("form", name="Edit schedule")).to_be_visible()

    controls = sidebar.locator("button, input, select, textarea")
    assert controls.count() > 20
    assert sidebar.evaluate(UNNAMED_JS) == []
    assert banner.evaluate(UNNAMED_JS) == []
    expect(banner).to_have_attribute("aria-label", "Pending recall")
    # Each section is a region a screen reader can jump to.
    for name in ("Jobs", "Selected job", "Watchers", "Notifications", "New job"):
        expect(sidebar.get_by_label(name, exact=True)).to_have_count(1)
