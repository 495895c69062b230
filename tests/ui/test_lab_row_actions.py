"""A finished job's Delete, translated vocabularies, one-shot times and where the focus goes
after an action, each seen in real JupyterLab (docs/labextension.md lists what each shows)."""

from __future__ import annotations

from tests.ui.conftest import NEEDS_LABEXTENSION, open_sidebar
from tests.ui.test_lab_audit import LAB, cancelled, job

pytestmark = NEEDS_LABEXTENSION


def test_a_finished_job_is_deleted_from_its_row_after_asking(clean, page):
    from playwright.sync_api import expect

    gone = cancelled(clean, "old report")
    kept = cancelled(clean, "older report")
    active = job(clean, "still going")
    sidebar = open_sidebar(page, clean.url + LAB)
    # An active job offers no Delete: only finished ones do.
    active_row = sidebar.locator(f'[data-job-id="{active["id"]}"]')
    expect(active_row).to_be_visible()
    expect(active_row.locator('[data-action="delete"]')).to_have_count(0)
    sidebar.get_by_role("combobox", name="Filter by status").select_option("cancelled")
    row = sidebar.locator(f'[data-job-id="{gone["id"]}"]')
    delete = row.get_by_role("button", name="Delete old report", exact=True)
    delete.click()
    dialog = page.locator(".jp-Dialog")
    expect(dialog).to_contain_text("Delete old report and its run history?")
    expect(dialog.get_by_role("button", name="Keep job")).to_be_focused()
    page.keyboard.press("Enter")
    expect(dialog).to_have_count(0)
    expect(delete).to_be_focused()
    assert clean.request("GET", f"/api/recall/jobs/{gone['id']}")["status"] == "cancelled"

    delete.click()
    dialog.get_by_role("button", name="Delete job").click()
    expect(row).to_have_count(0)
    # The focus stays in the list, on the job left, not on the page.
    expect(sidebar.locator(f'[data-job-id="{kept["id"]}"]')).to_be_focused()
    left = {j["id"] for j in clean.request("GET", "/api/recall/jobs?limit=100")["jobs"]}
    assert left == {kept["id"], active["id"]}


def test_statuses_kinds_and_triggers_show_words_and_keep_their_values(clean, page):
    from playwright.sync_api import expect

    made = job(clean, "worded")
    clean.request("POST", f"/api/recall/jobs/{made['id']}/trigger")
    recall = job(
        clean,
        "look again",
        when="in 1h",
        kind="recall",
        action={"type": "instruction", "instruction": "check the build log"},
        target={"type": "kernel", "path": "worded.ipynb"},
    )
    sidebar = open_sidebar(page, clean.url + LAB)
    row = sidebar.locator(f'[data-job-id="{made["id"]}"]')
    expect(row).to_have_attribute("aria-label", "job worded, active")
    expect(row.locator(".jp-RecallSidebar-kindTag")).to_have_count(0)
    recall_row = sidebar.locator(f'[data-job-id="{recall["id"]}"]')
    expect(recall_row).to_have_attribute("aria-label", "recall look again, active")
    tag = recall_row.locator(".jp-RecallSidebar-kindTag")
    expect(tag).to_have_attribute("data-kind", "recall")
    expect(tag).to_have_text("recall")
    badge = row.locator(".jp-RecallSidebar-badge")
    expect(badge).to_have_attribute("data-status", "active")
    expect(badge).to_have_text("active")
    status = sidebar.get_by_role("combobox", name="Filter by status")
    assert status.locator("option").all_inner_texts()[1:] == [
        "active",
        "paused",
        "completed",
        "failed",
        "cancelled",
    ]
    row.click()
    meta = sidebar.locator(".jp-RecallSidebar-run .jp-RecallSidebar-runMeta").first
    expect(meta).to_have_attribute("data-trigger", "manual")
    expect(meta).to_contain_text("manual")
    run_badge = sidebar.locator(".jp-RecallSidebar-run .jp-RecallSidebar-badge").first
    expect(run_badge).to_have_attribute("data-status", "succeeded", timeout=30_000)
    expect(run_badge).to_have_text("succeeded")


def test_a_finished_one_shot_shows_its_instant_in_the_browsers_zone(clean, gb_page):
    import re

    from playwright.sync_api import expect

    page = gb_page
    # 12:00 UTC on the server is 14:00 in Paris (summer time).
    made = job(clean, "one shot", when="on 2030-06-01 at 12:00")
    clean.request("POST", f"/api/recall/jobs/{made['id']}/cancel")
    sidebar = open_sidebar(page, clean.url + LAB)
    sidebar.get_by_role("combobox", name="Filter by status").select_option("cancelled")
    row = sidebar.locator(f'[data-job-id="{made["id"]}"]')
    line = row.locator(".jp-RecallSidebar-description")
    expect(line).to_have_text(re.compile(r"^once: in [\d,]+ days \(1 Jun 2030, 14:00\)$"))
    expect(line).to_have_attribute("title", "1 Jun 2030, 14:00:00 CEST")
    assert "UTC" not in row.inner_text()


def test_the_focus_stays_in_the_sidebar_after_cancel_create_and_clear_finished(clean, page):
    import re

    from playwright.sync_api import expect

    first = job(clean, "first daily", when="every day at 09:00")
    second = job(clean, "second daily", when="every day at 10:00")
    sidebar = open_sidebar(page, clean.url + LAB)
    row = sidebar.locator(f'[data-job-id="{first["id"]}"]')
    row.get_by_role("button", name="Cancel first daily").click()
    page.locator(".jp-Dialog").get_by_role("button", name="Cancel job").click()
    expect(row).to_have_count(0)
    # The cancelled job's row went with the finished ones: the focus is on the row after it.
    expect(sidebar.locator(f'[data-job-id="{second["id"]}"]')).to_be_focused()

    form = sidebar.get_by_role("form", name="New job")
    form.get_by_role("textbox", name="When").fill("every day at 11:00")
    form.get_by_role("textbox", name="Name").fill("made here")
    form.get_by_role("textbox", name="Code").fill("print(1)")
    form.get_by_role("combobox", name="Runs in").select_option("headless")
    form.get_by_role("button", name="Create").click()
    expect(form).to_contain_text(re.compile(r"Created made here \(([0-9a-f]{12})\)"))
    made = re.search(r"\(([0-9a-f]{12})\)", form.inner_text())
    assert made
    expect(sidebar.locator(f'[data-job-id="{made.group(1)}"]')).to_be_focused()

    clear = sidebar.get_by_role("button", name="Clear 1 finished job", exact=True)
    clear.click()
    page.locator(".jp-Dialog").get_by_role("button", name="Delete").click()
    expect(clear).to_be_hidden()
    focused = sidebar.locator(":focus")
    expect(focused).to_have_count(1)
    expect(focused).to_have_attribute("data-job-id", re.compile(r"^[0-9a-f]{12}$"))


def test_the_focus_goes_to_the_next_approval_then_the_heading(clean, page):
    from playwright.sync_api import expect

    from tests.ui.test_lab_approvals import ask
    from tests.ui.test_lab_commands import open_lab

    open_lab(page, clean)
    expect(page.locator(".jp-RecallStatus")).to_be_visible()
    older = ask(clean, "make first")
    newer = ask(clean, "make second")
    page.locator(".jp-RecallApprovalsStatus").click()
    panel = page.get_by_role("region", name="Recall approvals")
    top = panel.locator(f'[data-approval-id="{newer["id"]}"]')
    below = panel.locator(f'[data-approval-id="{older["id"]}"]')
    top.get_by_role("button", name="Approve").click()
    expect(top).to_have_attribute("data-status", "approved")
    expect(below.get_by_role("button", name="Approve")).to_be_focused()
    below.get_by_role("button", name="Deny").click()
    expect(below).to_have_attribute("data-status", "denied")
    expect(panel.get_by_role("heading", name="Approvals")).to_be_focused()


def test_the_focus_after_save_schedule_and_the_banners_skip_and_cancel(clean, page):
    from playwright.sync_api import expect

    made = job(clean, "rescheduled")
    sidebar = open_sidebar(page, clean.url + LAB)
    sidebar.locator(f'[data-job-id="{made["id"]}"]').click()
    edit = sidebar.get_by_role("button", name="Edit the schedule of rescheduled")
    edit.click()
    editor = sidebar.get_by_role("form", name="Edit schedule")
    editor.get_by_role("textbox", name="New schedule").fill("every monday at 10:30")
    save = editor.get_by_role("button", name="Save")
    expect(save).to_be_enabled()
    save.click()
    expect(editor).to_be_hidden()
    expect(edit).to_be_focused()

    url = clean.notebook("skipped.ipynb", "1 + 1")
    clean.pending_recall(
        "skipped.ipynb", "daily look", when="every day at 09:00", instruction="look"
    )
    page.goto(url)
    banner = page.locator(".jp-NotebookPanel:visible .jp-RecallBanner")
    skip = banner.get_by_role("button", name="Skip daily look", exact=True)
    skip.click()
    page.wait_for_timeout(500)
    expect(skip).to_be_focused()
    banner.get_by_role("button", name="Cancel daily look", exact=True).click()
    page.locator(".jp-Dialog").get_by_role("button", name="Cancel job").click()
    expect(banner).to_be_hidden()
    # The banner went: the notebook has the focus, not the page.
    page.wait_for_function(
        "() => !!document.activeElement?.closest('.jp-NotebookPanel')", timeout=10_000
    )
