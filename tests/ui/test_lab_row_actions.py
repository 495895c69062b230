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
