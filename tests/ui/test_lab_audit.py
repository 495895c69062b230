"""What a user audit of the sidebar, the banner, the form and the approvals found, each seen
fixed in real JupyterLab (docs/labextension.md lists what each test shows)."""

from __future__ import annotations

import re
from typing import Any

from tests.server.live_server import TOKEN
from tests.ui.conftest import NEEDS_LABEXTENSION, Lab, open_sidebar
from tests.ui.test_lab_approvals import ask
from tests.ui.test_lab_commands import palette_run, recall_sidebar

pytestmark = NEEDS_LABEXTENSION

LAB = "/lab?reset&token=" + TOKEN


def job(lab: Lab, name: str, when: str = "every day at 09:00", **extra: Any) -> dict[str, Any]:
    body = {
        "when": when,
        "name": name,
        "action": {"type": "notification", "message": f"{name} fired"},
        "target": {"type": "server"},
        **extra,
    }
    created: dict[str, Any] = lab.request("POST", "/api/recall/jobs", body)
    return created


def cancelled(lab: Lab, name: str) -> dict[str, Any]:
    made = job(lab, name)
    lab.request("POST", f"/api/recall/jobs/{made['id']}/cancel")
    return made


def test_discard_and_escape_close_the_schedule_editor_and_focus_edit(clean, page):
    from playwright.sync_api import expect

    made = job(clean, "editable")
    sidebar = open_sidebar(page, clean.url + LAB)
    sidebar.locator(f'[data-job-id="{made["id"]}"]').click()
    edit = sidebar.get_by_role("button", name="Edit the schedule of editable")
    editor = sidebar.get_by_role("form", name="Edit schedule")
    for close in ("Discard", "Escape"):
        edit.click()
        expect(editor).to_be_visible()
        expect(edit).to_be_hidden()
        field = editor.get_by_role("textbox", name="New schedule")
        expect(field).to_be_focused()
        if close == "Escape":
            field.press("Escape")
        else:
            editor.get_by_role("button", name="Discard").click()
        expect(editor).to_be_hidden()
        expect(edit).to_be_visible()
        expect(edit).to_be_focused()


def test_the_banners_cancel_asks_first_and_its_time_is_not_announced(clean, page):
    from playwright.sync_api import expect

    url = clean.notebook("asks.ipynb", "1 + 1")
    recall = clean.pending_recall("asks.ipynb", "look again", instruction="check the build log")
    page.goto(url)
    banner = page.locator(".jp-NotebookPanel:visible .jp-RecallBanner")
    expect(banner).to_contain_text("Recall pending: look again")
    expect(banner).to_have_attribute("role", "status")
    # The time moves on every 30 s: that part is not live, so it is not read out each time.
    expect(banner.locator(".jp-RecallBanner-when")).to_have_attribute("aria-live", "off")
    expect(banner.locator(".jp-RecallBanner-when")).to_have_text(re.compile(r"^in \d+ min"))
    cancel = banner.get_by_role("button", name="Cancel look again", exact=True)
    expect(cancel).to_be_visible()

    cancel.click()
    dialog = page.locator(".jp-Dialog")
    expect(dialog).to_contain_text("Cancel look again? It never fires again")
    expect(dialog.get_by_role("button", name="Keep job")).to_be_focused()
    page.keyboard.press("Enter")
    expect(dialog).to_be_hidden()
    assert clean.request("GET", f"/api/recall/jobs/{recall['id']}")["status"] == "active"

    cancel.click()
    page.locator(".jp-Dialog").get_by_role("button", name="Cancel job").click()
    expect(banner).to_be_hidden()
    assert clean.request("GET", f"/api/recall/jobs/{recall['id']}")["status"] == "cancelled"


def test_clear_finished_follows_the_search(clean, page):
    from playwright.sync_api import expect

    for name in ("old one", "old two", "old three"):
        cancelled(clean, name)
    special = cancelled(clean, "special report")
    job(clean, "special active")
    sidebar = open_sidebar(page, clean.url + LAB)
    note = sidebar.locator(".jp-RecallSidebar-finishedNote")
    expect(note).to_have_text("4 finished jobs hidden")

    sidebar.get_by_role("searchbox", name="Search jobs").fill("special")
    expect(sidebar.locator(".jp-RecallSidebar-job")).to_have_count(1)
    expect(note).to_have_text("1 finished job hidden")
    clear = sidebar.get_by_role("button", name="Clear 1 finished job", exact=True)
    clear.click()
    dialog = page.locator(".jp-Dialog")
    expect(dialog).to_contain_text("Delete 1 completed, failed or cancelled job")
    dialog.get_by_role("button", name="Delete").click()
    expect(note).to_have_text("")
    left = {j["name"] for j in clean.request("GET", "/api/recall/jobs?limit=100")["jobs"]}
    assert left == {"old one", "old two", "old three", "special active"}
    assert special["id"] not in {j["id"] for j in clean.request("GET", "/api/recall/jobs")["jobs"]}

    # A status chosen that is not a finished one selects no finished job: nothing to clear.
    sidebar.get_by_role("searchbox", name="Search jobs").fill("")
    expect(note).to_have_text("3 finished jobs hidden")
    sidebar.get_by_role("combobox", name="Filter by status").select_option("active")
    expect(note).to_have_text("")
    expect(sidebar.locator(".jp-RecallSidebar-clearFinished")).to_be_hidden()


def test_the_details_go_when_the_selected_job_leaves_the_list(clean, page):
    from playwright.sync_api import expect

    first = job(clean, "leaves by cancel")
    second = job(clean, "leaves by search")
    sidebar = open_sidebar(page, clean.url + LAB)
    details = sidebar.get_by_role("region", name="Selected job")

    row = sidebar.locator(f'[data-job-id="{first["id"]}"]')
    row.click()
    expect(details.locator("h3")).to_have_text("leaves by cancel")
    row.get_by_role("button", name="Cancel leaves by cancel").click()
    page.locator(".jp-Dialog").get_by_role("button", name="Cancel job").click()
    expect(row).to_be_hidden()
    expect(details).to_be_hidden()

    sidebar.locator(f'[data-job-id="{second["id"]}"]').click()
    expect(details.locator("h3")).to_have_text("leaves by search")
    sidebar.get_by_role("searchbox", name="Search jobs").fill("nothing like it")
    expect(sidebar.locator(f'[data-job-id="{second["id"]}"]')).to_be_hidden()
    expect(details).to_be_hidden()
    sidebar.get_by_role("searchbox", name="Search jobs").fill("")
    expect(sidebar.locator(f'[data-job-id="{second["id"]}"]')).to_be_visible()
    expect(details).to_be_hidden()


def test_each_schedule_command_starts_the_form_afresh_with_the_cursor_in_when(clean, page):
    from playwright.sync_api import expect

    url = clean.notebook("audit.ipynb", "print('cell code')")
    page.goto(url)
    panel = page.locator(".jp-NotebookPanel:visible")
    expect(panel.locator(".jp-Cell").first).to_be_visible()
    panel.locator(".jp-Cell").first.click()

    palette_run(page, "Schedule this notebook…")
    form = recall_sidebar(page).get_by_role("form", name="New job")
    expect(form).to_contain_text("Runs audit.ipynb in a fresh kernel")
    name = form.get_by_role("textbox", name="Name")
    expect(name).to_have_value("audit.ipynb")
    when = form.get_by_role("textbox", name="When")
    expect(when).to_be_focused()
    page.wait_for_timeout(500)  # after JupyterLab gave the focus back to the notebook
    expect(when).to_be_focused()

    # Left firing after another job: the next command starts at a time again.
    form.get_by_role("combobox", name="Fires").select_option("after")
    expect(when).to_be_hidden()
    panel.locator(".jp-Cell").first.click()
    palette_run(page, "Schedule this cell…")
    expect(form.get_by_role("textbox", name="Code")).to_have_value("print('cell code')")
    expect(name).to_have_value("")
    expect(form.get_by_role("combobox", name="Fires")).to_have_value("time")
    expect(when).to_be_visible()
    expect(when).to_be_focused()
    page.wait_for_timeout(500)
    expect(when).to_be_focused()


def test_accessible_names_and_errors(clean, page):
    from playwright.sync_api import expect

    made = job(clean, "named run")
    clean.request("POST", f"/api/recall/jobs/{made['id']}/trigger")
    sidebar = open_sidebar(page, clean.url + LAB)
    # No job has a notebook: the notebook filter still offers "All notebooks", with a name.
    notebooks = sidebar.get_by_role("combobox", name="Filter by notebook")
    expect(notebooks.locator("option")).to_have_text(["All notebooks"])

    form = sidebar.get_by_role("form", name="New job")
    form.get_by_role("combobox", name="Fires").select_option("after")
    expect(form.get_by_role("combobox", name="After job", exact=True)).to_be_visible()
    expect(form.get_by_role("combobox", name="When that job", exact=True)).to_be_visible()
    form.get_by_role("combobox", name="Fires").select_option("time")

    when = form.get_by_role("textbox", name="When")
    when.fill("every blursday")
    expect(when).to_have_attribute("aria-invalid", "true")
    described = when.get_attribute("aria-describedby")
    assert described
    expect(page.locator(f"#{described}")).to_have_class(re.compile("jp-mod-error"))
    expect(when).to_have_accessible_description(re.compile(r"\S"))
    when.fill("in 10 min")
    expect(when).not_to_have_attribute("aria-invalid", "true")

    sidebar.locator(f'[data-job-id="{made["id"]}"]').click()
    title = sidebar.locator(".jp-RecallSidebar-runTitle").first
    expect(title).to_have_accessible_name(re.compile(r"^succeeded \S"))


def test_the_approvals_panel_shows_a_decisions_note_and_time(clean, page):
    from playwright.sync_api import expect

    approved = ask(clean, "make deploy")
    denied = ask(clean, "rm -rf /")
    clean.request(
        "POST", f"/api/recall/approvals/{approved['id']}", {"decision": "approve", "note": "ok"}
    )
    clean.request(
        "POST", f"/api/recall/approvals/{denied['id']}", {"decision": "deny", "note": "never"}
    )
    page.goto(clean.url + LAB)
    palette_run(page, "Show approvals")
    panel = page.get_by_role("region", name="Recall approvals")
    yes = panel.locator(f'[data-approval-id="{approved["id"]}"]')
    no = panel.locator(f'[data-approval-id="{denied["id"]}"]')
    expect(yes).to_contain_text("Note: ok")
    expect(no).to_contain_text("Note: never")
    expect(yes.locator(".jp-RecallApprovals-decision")).to_have_text(re.compile(r"^decided "))
    colours = [
        item.locator(".jp-RecallSidebar-badge").evaluate("n => getComputedStyle(n).borderColor")
        for item in (yes, no)
    ]
    assert colours[0] != colours[1], colours
