"""The extension's commands in real JupyterLab, each from where a user finds it: the command
palette, the View, File and Run menus, the notebook toolbar, the file browser's and the cell's
context menus, and the keyboard shortcut of the sidebar."""

from __future__ import annotations

import re
from typing import Any

from tests.server.live_server import TOKEN
from tests.ui.conftest import NEEDS_LABEXTENSION, Lab, open_sidebar, screenshot_of, settle

pytestmark = NEEDS_LABEXTENSION

SIDEBAR_TAB = '.jp-SideBar [role="tab"][title="Recall: scheduled jobs"]'


def recall_sidebar(page: Any) -> Any:
    return page.get_by_role("region", name="Recall jobs")


def open_lab(page: Any, lab: Lab) -> None:
    from playwright.sync_api import expect

    page.goto(f"{lab.url}/lab?reset&token={TOKEN}")
    settle(page)
    expect(page.locator(SIDEBAR_TAB)).to_be_visible()


def open_palette(page: Any) -> Any:
    """The command palette, opened with its shortcut (pressed again if a key press was lost
    while Lab was still starting; never while it is open, since the shortcut toggles it)."""
    from playwright.sync_api import expect

    palette = page.locator(".lm-CommandPalette")
    for _ in range(5):
        if not palette.is_visible():
            page.keyboard.press("Control+Shift+C")
        try:
            expect(palette).to_be_visible(timeout=5_000)
            return palette
        except AssertionError:
            continue
    expect(palette).to_be_visible()
    return palette


def palette_run(page: Any, label: str) -> None:
    """Run a command from the command palette by its label. A press that landed late (Lab
    busy) may close the palette again just after it opened: then it is opened again."""
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import expect

    for attempt in range(3):
        palette = open_palette(page)
        try:
            palette.locator(".lm-CommandPalette-input").fill(label, timeout=10_000)
            break
        except PlaywrightError:
            if attempt == 2:
                raise
    item = palette.locator(".lm-CommandPalette-item", has_text=label).first
    expect(item).to_be_visible()
    item.click()


def menu_item(page: Any, menu: str, label: str) -> Any:
    page.locator(".lm-MenuBar-item", has_text=menu).click()
    return page.get_by_role("menuitem", name=re.compile(re.escape(label)))


def from_context_menu(page: Any, target: Any, label: str, shot: str, screenshot: Any) -> Any:
    """Right-click ``target``, pick ``label`` (screenshots of the page and of the menu); the
    New job form it opens."""
    from playwright.sync_api import expect

    expect(target).to_be_visible()
    target.click(button="right")
    entry = page.get_by_role("menuitem", name=label)
    expect(entry).to_be_visible()
    screenshot(page, f"{shot}_context_menu")
    screenshot_of(page.locator(".lm-Menu").last, f"{shot}_menu")
    entry.click()
    return recall_sidebar(page).get_by_role("form", name="New job")


def created_job(lab: Lab, name: str) -> dict[str, Any]:
    jobs = [job for job in lab.request("GET", "/api/recall/jobs")["jobs"] if job["name"] == name]
    assert len(jobs) == 1, jobs
    return jobs[0]


def test_show_scheduled_jobs_from_palette_menu_and_shortcut(clean, page, screenshot):
    from playwright.sync_api import expect

    open_lab(page, clean)
    sidebar = recall_sidebar(page)
    expect(sidebar).to_be_hidden()

    palette = open_palette(page)
    palette.locator(".lm-CommandPalette-input").fill("Recall")
    # Every command is in the palette, under its category.
    items = palette.locator(".lm-CommandPalette-item")
    expect(items.filter(has_text="Show scheduled jobs")).to_be_visible()
    # The others apply to a selected job or an open notebook: there, but disabled (JupyterLab's
    # palette leaves disabled commands out of sight).
    for label in ("Run job now", "Schedule this notebook…", "Schedule this cell…"):
        item = items.filter(has_text=label)
        expect(item).to_have_count(1)
        expect(item).to_have_class(re.compile("lm-mod-disabled"))
    screenshot(page, "lab_palette_commands")
    page.keyboard.press("Escape")

    palette_run(page, "Show scheduled jobs")
    expect(sidebar).to_be_visible()

    page.locator('.jp-SideBar [role="tab"][title="File Browser (Ctrl+Shift+F)"]').click()
    expect(sidebar).to_be_hidden()
    item = menu_item(page, "View", "Show scheduled jobs")
    expect(item).to_be_visible()
    item.click()
    expect(sidebar).to_be_visible()

    page.locator('.jp-SideBar [role="tab"][title="File Browser (Ctrl+Shift+F)"]').click()
    expect(sidebar).to_be_hidden()
    page.locator("#jp-main-dock-panel").click()
    page.keyboard.press("Control+Alt+R")
    expect(sidebar).to_be_visible()


def test_run_job_now_runs_the_selected_job(clean, page, screenshot):
    from playwright.sync_api import expect

    job = clean.request(
        "POST",
        "/api/recall/jobs",
        {
            "when": "every day at 03:00",
            "name": "nightly digest",
            "action": {"type": "notification", "message": "digest ready"},
            "target": {"type": "server"},
        },
    )
    sidebar = open_sidebar(page, f"{clean.url}/lab?reset&token={TOKEN}")
    # Nothing selected: the command is there but disabled.
    item = menu_item(page, "View", "Run job now")
    expect(item).to_have_attribute("aria-disabled", "true")
    page.keyboard.press("Escape")

    sidebar.locator(f'[data-job-id="{job["id"]}"]').click()
    item = menu_item(page, "View", "Run job now: nightly digest")
    expect(item).not_to_have_attribute("aria-disabled", "true")
    page.keyboard.press("Escape")
    palette_run(page, "Run job now: nightly digest")
    run = sidebar.locator('.jp-RecallSidebar-run[data-status="succeeded"]')
    expect(run).to_have_count(1)
    expect(run).to_contain_text("manual")
    runs = clean.request("GET", f"/api/recall/jobs/{job['id']}/runs")["runs"]
    assert [r["trigger"] for r in runs] == ["manual"]
    screenshot(page, "lab_run_job_now")


def test_schedule_this_notebook_from_the_file_browser(clean, page, screenshot):
    from playwright.sync_api import expect

    clean.notebook("report.ipynb", "print('report')")
    open_lab(page, clean)
    item = page.locator('.jp-DirListing-item[data-file-type="notebook"]', has_text="report.ipynb")
    form = from_context_menu(page, item, "Schedule this notebook…", "lab_filebrowser", screenshot)
    expect(form).to_be_visible()
    expect(form).to_contain_text("Runs report.ipynb in a fresh kernel")
    expect(form.get_by_role("textbox", name="Code")).to_be_hidden()
    form.get_by_role("textbox", name="When").fill("every monday at 07:00")
    expect(form.get_by_role("button", name="Create")).to_be_enabled()
    form.get_by_role("button", name="Create").click()
    expect(form).to_contain_text("Created report.ipynb")
    job = created_job(clean, "report.ipynb")
    assert job["action"]["type"] == "notebook"
    assert job["action"]["path"] == "report.ipynb"
    # No kernel spec named: the notebook runs in its own.
    assert job["target"] == {"type": "headless"}
    screenshot(page, "lab_schedule_notebook_form")


def test_schedule_this_notebook_from_the_notebook_toolbar_and_file_menu(clean, page):
    from playwright.sync_api import expect

    url = clean.notebook("toolbar.ipynb", "1 + 1")
    page.goto(url)
    panel = page.locator(".jp-NotebookPanel:visible")
    button = panel.locator('.jp-Toolbar-item[data-jp-item-name="schedule-notebook"] button')
    expect(button).to_be_visible()
    expect(button).to_have_attribute(
        "aria-label", "Schedule a run of this notebook in a fresh kernel"
    )
    button.click()
    form = recall_sidebar(page).get_by_role("form", name="New job")
    expect(form).to_contain_text("Runs toolbar.ipynb in a fresh kernel")

    form.get_by_role("button", name="Schedule code instead").click()
    expect(form.get_by_role("textbox", name="Code")).to_be_visible()
    panel.locator(".jp-Cell").first.click()
    item = menu_item(page, "File", "Schedule this notebook…")
    expect(item).to_be_visible()
    item.click()
    expect(form).to_contain_text("Runs toolbar.ipynb in a fresh kernel")


CELL_CODE = "total = sum(range(10))\nprint('total', total)"


def test_schedule_this_cell_prefills_its_code_for_the_notebooks_kernel(clean, page, screenshot):
    from playwright.sync_api import expect

    url = clean.notebook("cells.ipynb", "1 + 1", CELL_CODE)
    page.goto(url)
    cell = page.locator(".jp-NotebookPanel:visible .jp-Cell").nth(1)
    expect(cell).to_contain_text("total = sum")
    form = from_context_menu(page, cell, "Schedule this cell…", "lab_cell", screenshot)
    expect(form.get_by_role("textbox", name="Code")).to_have_value(CELL_CODE)
    expect(form.get_by_role("combobox", name="Runs in")).to_have_value("kernel")
    expect(form).to_contain_text("For cells.ipynb")
    form.get_by_role("textbox", name="When").fill("in 2 hours")
    form.get_by_role("textbox", name="Name").fill("cell total")
    form.get_by_role("button", name="Create").click()
    expect(form).to_contain_text("Created cell total")
    job = created_job(clean, "cell total")
    assert job["action"] == {"type": "code", "code": CELL_CODE}
    assert job["target"]["type"] == "kernel"
    assert job["target"]["path"] == "cells.ipynb"
    screenshot(page, "lab_schedule_cell_form")

    # The Run menu has it too, for the active cell.
    page.locator(".jp-NotebookPanel:visible .jp-Cell").first.click()
    item = menu_item(page, "Run", "Schedule this cell…")
    item.click()
    expect(form.get_by_role("textbox", name="Code")).to_have_value("1 + 1")
