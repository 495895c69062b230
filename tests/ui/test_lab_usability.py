"""The sidebar and the approvals as a user meets them beyond the happy path, each seen in real
JupyterLab (docs/labextension.md lists what each test shows)."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlparse

import pytest

from tests.server.live_server import TOKEN
from tests.ui.conftest import NEEDS_LABEXTENSION, Lab, open_sidebar
from tests.ui.test_lab_approvals import ask
from tests.ui.test_lab_commands import open_lab

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


@pytest.fixture
def tokyo_page(browser: Any) -> Any:
    context = browser.new_context(
        viewport={"width": 1280, "height": 900}, locale="en-GB", timezone_id="Asia/Tokyo"
    )
    page = context.new_page()
    page.set_default_timeout(60_000)
    yield page
    context.close()


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


def test_the_form_and_edit_schedule_work_in_the_browsers_zone(clean, tokyo_page, screenshot):
    """The server's zone is UTC; the browser is in Tokyo: 09:00 is 09:00 in Tokyo."""
    from playwright.sync_api import expect

    page = tokyo_page
    requests: list[dict[str, Any]] = []
    page.on(
        "request",
        lambda r: (
            requests.append({"url": r.url, "body": r.post_data_json})
            if "/api/recall/" in r.url and r.method in ("POST", "PATCH")
            else None
        ),
    )
    sidebar = open_sidebar(page, clean.url + LAB)
    form = sidebar.get_by_role("form", name="New job")
    expect(form).to_contain_text("times in Asia/Tokyo")
    form.get_by_role("textbox", name="When").fill("every day at 09:00")
    preview = form.get_by_label("Schedule preview")
    # 09:00 in Tokyo, shown in the browser's zone (Tokyo): 09:00.
    expect(preview.get_by_role("listitem").first).to_contain_text("09:00")
    form.get_by_role("textbox", name="Name").fill("tokyo morning")
    form.get_by_role("textbox", name="Code").fill("print('ohayo')")
    form.get_by_role("combobox", name="Runs in").select_option("headless")
    form.get_by_role("button", name="Create").click()
    expect(form).to_contain_text("Created tokyo morning")
    listed = clean.request("GET", "/api/recall/jobs")["jobs"]
    created = [j for j in listed if j["name"] == "tokyo morning"]
    assert len(created) == 1
    assert created[0]["tz"] == "Asia/Tokyo", created[0]
    assert "T00:00" in created[0]["next_fire_at"], created[0]["next_fire_at"]  # 09:00 JST

    # Edit schedule: the new schedule is in the browser's zone too.
    utc = job(clean, "utc job", tz="UTC")
    row = sidebar.locator(f'[data-job-id="{utc["id"]}"]')
    row.click()
    details = sidebar.get_by_role("region", name="Selected job")
    details.get_by_role("button", name="Edit the schedule of utc job").click()
    editor = details.get_by_role("form", name="Edit schedule")
    editor.get_by_role("textbox", name="New schedule").fill("every day at 10:00")
    expect(editor).to_contain_text("times in Asia/Tokyo")
    expect(editor.get_by_label("Schedule preview").get_by_role("listitem").first).to_contain_text(
        "10:00"
    )
    editor.get_by_role("button", name="Save").click()
    expect(editor).to_be_hidden()
    edited = clean.request("GET", f"/api/recall/jobs/{utc['id']}")
    assert edited["tz"] == "Asia/Tokyo", edited
    assert "T01:00" in edited["next_fire_at"], edited["next_fire_at"]
    parses = [r["body"] for r in requests if urlparse(r["url"]).path.endswith("/recall/parse")]
    assert parses, requests
    assert all(p.get("tz") == "Asia/Tokyo" for p in parses), parses
    screenshot(page, "lab_form_browser_zone")


def test_an_approval_toast_goes_once_the_approval_is_decided(page, clean):
    from playwright.sync_api import expect

    open_lab(page, clean)
    expect(page.locator(".jp-RecallStatus")).to_be_visible()
    # Decided over REST: its toast goes.
    first = ask(clean, "make first")
    toast = page.locator(".Toastify__toast", has_text="shell.run(command='make first')")
    expect(toast).to_be_visible()
    clean.request("POST", f"/api/recall/approvals/{first['id']}", {"decision": "deny"})
    expect(toast).to_have_count(0)

    # Decided in the Approvals panel: its toast goes.
    second = ask(clean, "make second")
    toast = page.locator(".Toastify__toast", has_text="shell.run(command='make second')")
    expect(toast).to_be_visible()
    page.locator(".jp-RecallApprovalsStatus").click()
    panel = page.get_by_role("region", name="Recall approvals")
    item = panel.locator(f'[data-approval-id="{second["id"]}"]')
    item.get_by_role("button", name="Approve").click()
    expect(item).to_have_attribute("data-status", "approved")
    expect(toast).to_have_count(0)


def test_a_long_last_error_is_clamped(clean, page, screenshot):
    from playwright.sync_api import expect

    # 1,200 characters without a space, then 200 words: the error of a failed run.
    code = "raise ValueError('E' * 1200 + ' word' * 200)"
    failing = job(
        clean,
        "failing",
        action={"type": "code", "code": code},
        target={"type": "headless", "kernel_name": "python3"},
    )
    sidebar = open_sidebar(page, clean.url + LAB)
    row = sidebar.locator(f'[data-job-id="{failing["id"]}"]')
    expect(row).to_be_visible()
    clean.request("POST", f"/api/recall/jobs/{failing['id']}/trigger")
    error = row.locator(".jp-RecallSidebar-lastError")
    expect(error).to_be_visible(timeout=90_000)
    box = error.bounding_box()
    line = float(error.evaluate("n => parseFloat(getComputedStyle(n).lineHeight) || 16"))
    assert box is not None
    assert box["height"] <= 3.5 * line, (box, line)
    assert row.evaluate("n => n.scrollWidth <= n.clientWidth + 1"), "the row overflows sideways"
    # The whole error is one hover away.
    assert "word word" in (error.get_attribute("title") or "")
    screenshot(page, "lab_last_error_clamped")


def test_relative_times_move_on_without_an_event(clean, page):
    from playwright.sync_api import expect

    page.clock.install()
    soon = job(clean, "soon", when="in 10 min")
    sidebar = open_sidebar(page, clean.url + LAB)
    next_line = sidebar.locator(f'[data-job-id="{soon["id"]}"] .jp-RecallSidebar-next')
    expect(next_line).to_have_text(re.compile(r"^next in (10|9) min"))
    page.clock.fast_forward("05:00")
    expect(next_line).to_have_text(re.compile(r"^next in (5|4) min"))


def test_the_notebook_banners_relative_time_moves_on_without_an_event(clean, page):
    from playwright.sync_api import expect

    page.clock.install()
    url = clean.notebook("ticking.ipynb", "1 + 1")
    clean.pending_recall(
        "ticking.ipynb", "look again", when="in 10 min", instruction="check the build log"
    )
    page.goto(url)
    text = page.locator(".jp-NotebookPanel:visible .jp-RecallBanner-text")
    expect(text).to_have_text(re.compile(r"^Recall pending: look again in (10|9) min"))
    page.clock.fast_forward("05:00")
    expect(text).to_have_text(re.compile(r"^Recall pending: look again in (5|4) min"))


def test_a_paused_job_says_it_is_paused_not_when_it_would_fire(clean, page):
    from playwright.sync_api import expect

    paused = job(clean, "paused daily")
    clean.request("POST", f"/api/recall/jobs/{paused['id']}/pause")
    sidebar = open_sidebar(page, clean.url + LAB)
    row = sidebar.locator(f'[data-job-id="{paused["id"]}"]')
    expect(row.locator(".jp-RecallSidebar-next")).to_have_text("paused: does not fire")
    clean.request("POST", f"/api/recall/jobs/{paused['id']}/resume")
    expect(row.locator(".jp-RecallSidebar-next")).to_have_text(re.compile(r"^next in "))


def test_cancel_asks_first_and_keeps_the_job_by_default(clean, page):
    from playwright.sync_api import expect

    daily = job(clean, "keep me")
    sidebar = open_sidebar(page, clean.url + LAB)
    row = sidebar.locator(f'[data-job-id="{daily["id"]}"]')
    row.get_by_role("button", name="Cancel keep me").click()
    dialog = page.locator(".jp-Dialog")
    expect(dialog).to_contain_text("Cancel keep me?")
    expect(dialog.get_by_role("button", name="Keep job")).to_be_focused()
    page.keyboard.press("Enter")
    expect(dialog).to_have_count(0)
    assert clean.request("GET", f"/api/recall/jobs/{daily['id']}")["status"] == "active"

    row.get_by_role("button", name="Cancel keep me").click()
    dialog.get_by_role("button", name="Cancel job").click()
    expect(row).to_have_count(0)
    assert clean.request("GET", f"/api/recall/jobs/{daily['id']}")["status"] == "cancelled"


def test_the_form_is_reset_after_create(clean, page):
    from playwright.sync_api import expect

    sidebar = open_sidebar(page, clean.url + LAB)
    form = sidebar.get_by_role("form", name="New job")
    when = form.get_by_role("textbox", name="When")
    name = form.get_by_role("textbox", name="Name")
    when.fill("every day at 09:00")
    name.fill("only once")
    form.get_by_role("textbox", name="Code").fill("print(1)")
    form.get_by_role("combobox", name="Runs in").select_option("headless")
    create = form.get_by_role("button", name="Create")
    expect(create).to_be_enabled()
    create.click()
    expect(form).to_contain_text(re.compile(r"Created only once \([0-9a-f]{12}\)"))
    expect(when).to_have_value("")
    expect(name).to_have_value("")
    create.click()  # a second click: nothing to create
    page.wait_for_timeout(1500)
    listed = clean.request("GET", "/api/recall/jobs")["jobs"]
    assert [j["name"] for j in listed] == ["only once"]
    created = re.search(r"\(([0-9a-f]{12})\)", form.inner_text())
    assert created
    assert created.group(1) == listed[0]["id"]


def test_space_selects_a_row_and_dialogs_default_to_the_safe_button(clean, page):
    from playwright.sync_api import expect

    rows = [job(clean, f"row {i}") for i in range(3)]
    done = job(clean, "done", when="in 1s")
    sidebar = open_sidebar(page, clean.url + LAB)
    row = sidebar.locator(f'[data-job-id="{rows[1]["id"]}"]')
    row.focus()
    before = sidebar.evaluate("n => n.scrollTop")
    page.keyboard.press("Space")
    details = sidebar.get_by_role("region", name="Selected job")
    expect(details.locator("h3")).to_have_text("row 1")
    expect(row).to_have_attribute("aria-current", "true")
    assert row.get_attribute("aria-selected") is None
    assert sidebar.evaluate("n => n.scrollTop") == before
    expect(row).to_be_focused()
    page.keyboard.press("Space")
    expect(details).to_be_hidden()
    assert row.get_attribute("aria-current") is None

    clear = sidebar.get_by_role("button", name=re.compile("^Clear 1 finished job"))
    expect(clear).to_be_visible(timeout=60_000)
    clear.click()
    dialog = page.locator(".jp-Dialog")
    expect(dialog.get_by_role("button", name="Keep")).to_be_focused()
    page.keyboard.press("Enter")
    expect(dialog).to_have_count(0)
    assert clean.request("GET", f"/api/recall/jobs/{done['id']}")["status"] == "completed"


def test_the_approvals_panel_takes_a_note_and_clears_a_stale_error(clean, page):
    from playwright.sync_api import expect

    open_lab(page, clean)
    expect(page.locator(".jp-RecallStatus")).to_be_visible()
    first = ask(clean, "make late")
    page.locator(".jp-RecallApprovalsStatus").click()
    panel = page.get_by_role("region", name="Recall approvals")
    item = panel.locator(f'[data-approval-id="{first["id"]}"]')
    expect(item).to_have_attribute("data-status", "pending")
    # The server refuses this decision (as when it was decided elsewhere a moment before).
    refusal = {"message": "approval already denied", "reason": "ConflictError"}
    page.route(
        lambda url: urlparse(url).path.endswith(f"/approvals/{first['id']}"),
        lambda route: (
            route.fulfill(status=409, json=refusal)
            if route.request.method == "POST"
            else route.continue_()
        ),
    )
    item.get_by_role("button", name="Approve").click()
    error = panel.locator(".jp-RecallApprovals-error")
    expect(error).to_have_text("approval already denied")

    second = ask(clean, "make notes")
    other = panel.locator(f'[data-approval-id="{second["id"]}"]')
    note = other.get_by_role("textbox", name="Note for shell.run(command='make notes')")
    note.fill("checked the makefile")
    other.get_by_role("button", name="Approve").click()
    expect(other).to_have_attribute("data-status", "approved")
    expect(error).to_be_empty()
    decided = clean.request("GET", f"/api/recall/approvals/{second['id']}")
    assert decided["note"] == "checked the makefile", decided
