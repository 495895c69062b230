"""The polish of the sidebar in real JupyterLab, each item seen in a screenshot: badges that
keep their size beside a wrapping name, the actions of a job from the server's one rule, one
way of showing time, a parse error on one line with the accepted forms behind a disclosure
and no console error, finished jobs hidden and cleared, disabled buttons distinct in the dark
theme."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.server.live_server import TOKEN
from tests.ui.conftest import NEEDS_LABEXTENSION, Lab, open_sidebar, screenshot_of

pytestmark = NEEDS_LABEXTENSION

THEMES_SETTINGS = "/lab/api/settings/@jupyterlab/apputils-extension:themes"
BUTTON_ORDER = ["run_now", "skip", "pause", "resume", "cancel"]
LONG_NAME = "a job with a rather long name that has to wrap over several lines in the sidebar"


def set_theme(lab: Lab, theme: str) -> None:
    lab.request("PUT", THEMES_SETTINGS, {"raw": json.dumps({"theme": theme})})


@pytest.fixture
def dark(clean: Lab) -> Iterator[Lab]:
    set_theme(clean, "JupyterLab Dark")
    yield clean
    set_theme(clean, "JupyterLab Light")


def job(lab: Lab, name: str, when: str = "every day at 09:00", **extra: Any) -> dict[str, Any]:
    body = {
        "when": when,
        "name": name,
        "action": {"type": "notification", "message": f"{name} fired"},
        "target": {"type": "server"},
        **extra,
    }
    return lab.request("POST", "/api/recall/jobs", body)


def box(locator: Any) -> dict[str, float]:
    """The element's box; measured again if the sidebar rebuilt its rows in between (an event
    replaces the row, and the replaced one has no box)."""
    for _ in range(20):
        found = locator.bounding_box()
        if found is not None:
            return dict(found)
    raise AssertionError(f"{locator} has no box")


def assert_badges_keep_their_size(sidebar: Any, long_id: str, short_id: str) -> None:
    long_row = sidebar.locator(f'[data-job-id="{long_id}"]')
    short_row = sidebar.locator(f'[data-job-id="{short_id}"]')
    name = box(long_row.locator(".jp-RecallSidebar-name"))
    badge = box(long_row.locator(".jp-RecallSidebar-badge"))
    reference = box(short_row.locator(".jp-RecallSidebar-badge"))
    assert name["height"] > 2.5 * reference["height"], (name, reference)  # the name wraps
    assert abs(badge["height"] - reference["height"]) <= 1, (badge, reference)
    assert badge["y"] - name["y"] < reference["height"], (badge, name)  # on the first line


def test_badges_keep_one_line_beside_a_wrapping_name(clean, page, screenshot):
    from playwright.sync_api import expect

    long_job = job(clean, LONG_NAME)
    short_job = job(clean, "short")
    sidebar = open_sidebar(page, f"{clean.url}/lab?reset&token={TOKEN}")
    expect(sidebar.locator(".jp-RecallSidebar-job")).to_have_count(2)
    assert_badges_keep_their_size(sidebar, long_job["id"], short_job["id"])
    screenshot(page, "lab_badges_light")
    screenshot_of(sidebar, "lab_sidebar_light")


def test_badges_and_disabled_buttons_in_the_dark_theme(dark, page, screenshot):
    from playwright.sync_api import expect

    long_job = job(dark, LONG_NAME)
    short_job = job(dark, "short")
    sidebar = open_sidebar(page, f"{dark.url}/lab?reset&token={TOKEN}")
    expect(page.locator("body")).to_have_attribute("data-jp-theme-light", "false")
    assert_badges_keep_their_size(sidebar, long_job["id"], short_job["id"])

    form = sidebar.get_by_role("form", name="New job")
    form.get_by_role("textbox", name="When").fill("whenever it suits")
    create = form.get_by_role("button", name="Create")
    expect(create).to_be_disabled()
    enabled = sidebar.get_by_role("button", name="Reload")
    style = """el => {
      const s = getComputedStyle(el);
      return [s.borderTopStyle, s.backgroundColor, s.color];
    }"""
    disabled_look = create.evaluate(style)
    enabled_look = enabled.evaluate(style)
    assert disabled_look[0] == "dashed"
    assert enabled_look[0] == "solid"
    assert disabled_look[1] in ("rgba(0, 0, 0, 0)", "transparent"), disabled_look
    assert enabled_look[1] not in ("rgba(0, 0, 0, 0)", "transparent"), enabled_look
    assert disabled_look[2] != enabled_look[2]
    form.scroll_into_view_if_needed()
    screenshot(page, "lab_dark_badges_and_disabled_button")
    screenshot_of(sidebar, "lab_sidebar_dark")


def shown_actions(row: Any) -> list[str]:
    return [b.get_attribute("data-action") for b in row.locator(".jp-RecallSidebar-action").all()]


def test_the_actions_of_a_job_are_the_servers_rule(clean, page, screenshot):
    from playwright.sync_api import expect

    active = job(clean, "active daily")
    paused = job(clean, "paused daily")
    clean.request("POST", f"/api/recall/jobs/{paused['id']}/pause")
    once = job(clean, "one-shot", when="in 1s")
    sidebar = open_sidebar(page, f"{clean.url}/lab?reset&token={TOKEN}")
    status = sidebar.get_by_role("combobox", name="Filter by status")
    status.select_option("completed")
    expect(sidebar.locator(f'[data-job-id="{once["id"]}"]')).to_be_visible(timeout=60_000)
    status.select_option("")

    for record in (active, paused, once):
        served = clean.request("GET", f"/api/recall/jobs/{record['id']}")
        allowed = served["allowed_actions"]
        status.select_option(served["status"])
        row = sidebar.locator(f'[data-job-id="{record["id"]}"]')
        expected = [action for action in BUTTON_ORDER if action in allowed]
        # A finished job's row also has Delete (not a job action: the job and its runs go).
        if served["status"] in ("completed", "failed", "cancelled"):
            expected.append("delete")
        expect(row.locator(".jp-RecallSidebar-action")).to_have_count(len(expected))
        assert shown_actions(row) == expected, (served["status"], allowed)
        row.click()
        details = sidebar.get_by_role("region", name="Selected job")
        expect(details.locator("h3")).to_have_text(served["name"])
        edit = details.locator(".jp-RecallSidebar-edit")
        if "edit" in allowed:
            expect(edit).to_be_visible()
        else:
            expect(edit).to_be_hidden()
        row.click()
    status.select_option("completed")
    screenshot(page, "lab_actions_completed")


def test_times_show_in_the_browsers_locale_and_zone(clean, gb_page, screenshot):
    from playwright.sync_api import expect

    page = gb_page
    url = clean.notebook("timed.ipynb", "1 + 1")
    # 12:00 UTC is 14:00 in Paris (summer time).
    fixed = job(clean, "fixed date", when="on 2030-06-01 at 12:00")
    clean.pending_recall(
        "timed.ipynb", "timed recall", when="on 2030-06-01 at 12:00", instruction="look"
    )
    page.goto(url)
    banner = page.locator(".jp-NotebookPanel:visible .jp-RecallBanner")
    expect(banner).to_contain_text(
        re.compile(r"Recall pending: timed recall in [\d,]+ days \(1 Jun 2030, 14:00\)")
    )
    page.locator('.jp-SideBar [role="tab"][title="Recall: scheduled jobs"]').click()
    sidebar = page.get_by_role("region", name="Recall jobs")
    row = sidebar.locator(f'[data-job-id="{fixed["id"]}"]')
    expect(row.locator(".jp-RecallSidebar-next")).to_have_text(
        re.compile(r"^next in [\d,]+ days \(1 Jun 2030, 14:00\)$")
    )
    expect(row.locator(".jp-RecallSidebar-next")).to_have_attribute(
        "title", "1 Jun 2030, 14:00:00 CEST"
    )
    form = sidebar.get_by_role("form", name="New job")
    # What the user types is read in the browser's zone (the form sends it as tz): 12:00 in
    # Paris, not the server's 12:00 UTC.
    form.get_by_role("textbox", name="When").fill("on 2030-06-01 at 12:00")
    preview = form.get_by_label("Schedule preview")
    expect(preview.get_by_role("listitem")).to_have_text(
        [re.compile(r"^in [\d,]+ days \(1 Jun 2030, 12:00\)$")]
    )
    text = sidebar.inner_text() + banner.inner_text()
    assert not re.search(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}", text), "an ISO time is shown"
    assert not re.search(r"\b(AM|PM)\b", text), "a US-format time is shown"
    screenshot(page, "lab_times_locale_zone")


def test_a_parse_error_is_one_line_with_the_accepted_forms_behind_a_disclosure(
    clean, page, screenshot
):
    from playwright.sync_api import expect

    console: list[str] = []
    statuses: list[int] = []
    page.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
    page.on("response", lambda r: "/api/recall/parse" in r.url and statuses.append(r.status))
    sidebar = open_sidebar(page, f"{clean.url}/lab?reset&token={TOKEN}")
    form = sidebar.get_by_role("form", name="New job")
    field = form.get_by_role("textbox", name="When")
    field.fill("next blue moon")
    preview = form.get_by_label("Schedule preview")
    reason = preview.locator(".jp-RecallForm-reason")
    expect(reason).to_have_text(
        re.compile(r"^when: cannot parse 'next blue moon': not a recognised time expression")
    )
    assert "\n" not in reason.text_content()
    expect(form.get_by_role("button", name="Create")).to_be_disabled()
    disclosure = preview.locator("details")
    expect(disclosure.locator("summary")).to_have_text("Accepted forms")
    forms = disclosure.get_by_role("listitem")
    expect(forms.first).to_be_hidden()
    screenshot(page, "lab_parse_error_closed")

    disclosure.locator("summary").click()
    accepted = clean.request("POST", "/api/recall/parse", {"when": "x", "check": True})["error"]
    expect(forms).to_have_count(len(accepted["accepted"]))
    expect(forms.first).to_be_visible()
    screenshot(page, "lab_parse_error_open")
    screenshot_of(form, "lab_parse_error_form")

    field.fill("every day at 09:00")
    expect(preview.get_by_role("listitem")).to_have_count(5)
    expect(form.get_by_role("button", name="Create")).to_be_enabled()
    assert statuses, "the preview asked nothing"
    assert set(statuses) == {200}, statuses
    errors = [line for line in console if line.startswith("error")]
    assert errors == [], errors


def test_finished_jobs_are_hidden_and_cleared_after_a_confirmation(clean, page, screenshot):
    from playwright.sync_api import expect

    keep = job(clean, "still daily")
    gone = [job(clean, f"finished {n}") for n in (1, 2)]
    for record in gone:
        clean.request("POST", f"/api/recall/jobs/{record['id']}/cancel")
    sidebar = open_sidebar(page, f"{clean.url}/lab?reset&token={TOKEN}")
    expect(sidebar.locator(".jp-RecallSidebar-job")).to_have_count(1)
    expect(sidebar.locator(".jp-RecallSidebar-finished")).to_contain_text("2 finished jobs hidden")
    sidebar.get_by_role("button", name="Clear 2 finished jobs").click()
    dialog = page.locator(".jp-Dialog")
    expect(dialog).to_contain_text("Delete 2 completed, failed or cancelled jobs")
    screenshot(page, "lab_clear_finished_dialog")
    dialog.get_by_role("button", name="Keep").click()
    assert len(clean.request("GET", "/api/recall/jobs")["jobs"]) == 3

    sidebar.get_by_role("button", name="Clear 2 finished jobs").click()
    page.locator(".jp-Dialog").get_by_role("button", name="Delete").click()
    expect(sidebar.get_by_role("button", name=re.compile("^Clear .* finished"))).to_be_hidden()
    expect(sidebar.locator(".jp-RecallSidebar-finished")).not_to_contain_text("hidden")
    remaining = clean.request("GET", "/api/recall/jobs")["jobs"]
    assert [record["id"] for record in remaining] == [keep["id"]]


def test_the_keyboard_focus_stays_on_its_button_when_the_list_is_rebuilt(clean, page):
    from playwright.sync_api import expect

    first = job(clean, "first")
    sidebar = open_sidebar(page, f"{clean.url}/lab?reset&token={TOKEN}")
    row = sidebar.locator(f'[data-job-id="{first["id"]}"]')
    row.locator('[data-action="pause"]').focus()
    second = job(clean, "second")  # its event rebuilds the list
    expect(sidebar.locator(f'[data-job-id="{second["id"]}"]')).to_have_count(1)
    focused = page.evaluate(
        "() => [document.activeElement.closest('[data-job-id]')?.getAttribute('data-job-id'),"
        " document.activeElement.getAttribute('data-action')]"
    )
    assert focused == [first["id"], "pause"]
    page.keyboard.press("Enter")  # the focused button still acts
    expect(row).to_have_attribute("data-status", "paused")
    expect(row.locator('[data-action="resume"]')).to_be_visible()
    row.focus()
    job(clean, "third")
    expect(sidebar.locator(".jp-RecallSidebar-job")).to_have_count(3)
    assert page.evaluate("() => document.activeElement.getAttribute('data-job-id')") == first["id"]


def test_the_notebook_filters_options_survive_a_rebuild_of_the_list(clean, page):
    from playwright.sync_api import expect

    kernel_job = {"type": "kernel", "path": "a.ipynb"}
    code = {"type": "code", "code": "1"}
    clean.request(
        "POST", "/api/recall/jobs", {"when": "in 1h", "action": code, "target": kernel_job}
    )
    sidebar = open_sidebar(page, f"{clean.url}/lab?reset&token={TOKEN}")
    select = sidebar.locator(".jp-RecallSidebar-notebookFilter")
    expect(select.locator("option")).to_have_count(2)
    select.evaluate("node => { window.recallOption = node.options[1]; }")
    second = job(clean, "another job")  # its event rebuilds the list, same notebooks
    expect(sidebar.locator(f'[data-job-id="{second["id"]}"]')).to_have_count(1)
    # The same option elements: rebuilding them would close the list a user has open.
    assert select.evaluate("node => node.options[1] === window.recallOption")
