"""The JupyterLab extension (labextension/) in real JupyterLab: the Recall sidebar lists a job
created over REST, a failing run raises a toast, and the banner of a notebook cancels its
pending recall. Skipped until the extension is built (``jlpm build:prod`` in labextension/)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.server.live_server import TOKEN
from tests.ui.conftest import NEEDS_LABEXTENSION, labextension_env, open_sidebar

pytestmark = NEEDS_LABEXTENSION


def test_labextension_list_shows_it_enabled_and_ok(tmp_path: Path) -> None:
    env = {**os.environ, **labextension_env(tmp_path)}
    listing = subprocess.run(
        [sys.executable, "-m", "jupyter", "labextension", "list"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=60,
    )
    text = re.sub(r"\x1b\[[0-9;]*m", "", listing.stdout + listing.stderr)
    assert re.search(r"jupyter-recall v\S+ enabled\s+OK", text), text


@pytest.mark.parametrize(
    ("lab_without_recall_server", "said"),
    [
        (
            "disabled",
            # Before: "Could not load jobs: Unexpected token '<', "<!DOCTYPE "... is not valid JSON"
            "Could not load jobs: the jupyter_recall server extension does not answer on this "
            "server (HTTP 404): is it installed and enabled?",
        ),
        (
            "refused",
            # Before: the 404 above, and only the server's log said why.
            "Could not load jobs: jupyter_recall is not running: its configuration was refused: "
            "RecallApp.db_url: unknown scheme 'mysql' (accepted: sqlite:///absolute/path",
        ),
    ],
    indirect=["lab_without_recall_server"],
    ids=["disabled", "refused"],
)
def test_a_server_whose_server_extension_does_not_run_is_said_so(
    lab_without_recall_server, said, page, screenshot, request
):
    from playwright.sync_api import expect

    sidebar = open_sidebar(page, f"{lab_without_recall_server.url}/lab?reset&token={TOKEN}")
    expect(sidebar).to_contain_text(said)
    expect(sidebar).not_to_contain_text("JSON")
    screenshot(page, f"lab_without_server_extension_{request.node.callspec.id}")


def test_sidebar_lists_a_job_and_a_failing_run_raises_a_toast(clean, page, screenshot):
    from playwright.sync_api import expect

    sidebar = open_sidebar(page, f"{clean.url}/lab?reset&token={TOKEN}")
    job = clean.request(
        "POST",
        "/api/recall/jobs",
        {
            "when": "in 2s",
            "name": "failing check",
            "action": {"type": "code", "code": "raise ValueError('boom from recall')"},
            "target": {"type": "headless", "kernel_name": "python3"},
        },
    )
    # Listed from the job.created event, without reloading the page.
    row = sidebar.locator(f'[data-job-id="{job["id"]}"]')
    expect(row).to_contain_text("failing check")
    # A one-shot shows when it fires as every time shows (not the server's UTC description).
    expect(row.locator(".jp-RecallSidebar-next")).to_contain_text("next in")
    expect(row.locator(".jp-RecallSidebar-description")).to_have_count(0)
    screenshot(page, "lab_sidebar_job")

    toast = page.locator(".Toastify__toast").filter(has_text='Recall job "failing check" failed')
    expect(toast).to_be_visible(timeout=60_000)
    # A failed one-shot never fires again: hidden by default, shown by its status filter.
    expect(row).to_be_hidden()
    sidebar.get_by_role("combobox", name="Filter by status").select_option("failed")
    expect(row.locator(".jp-RecallSidebar-badge")).to_have_text("failed")
    screenshot(page, "lab_failed_run_toast")

    toast.get_by_role("button", name="Show run").click()
    run = sidebar.locator('.jp-RecallSidebar-run[data-status="failed"]')
    expect(run).to_be_visible()
    expect(run).to_contain_text("boom from recall")
    screenshot(page, "lab_run_history")


def test_the_banner_cancels_the_pending_recall_of_a_notebook(clean, page, screenshot):
    from playwright.sync_api import expect

    url = clean.notebook("banner.ipynb", "1 + 1")
    recall = clean.pending_recall("banner.ipynb", "look again", instruction="check the build log")
    page.goto(url)
    banner = page.locator(".jp-NotebookPanel:visible .jp-RecallBanner")
    expect(banner).to_contain_text("Recall pending: look again")
    screenshot(page, "lab_recall_banner")
    banner.get_by_role("button", name="Cancel look again").click()
    # It asks first, as the sidebar's Cancel does.
    page.locator(".jp-Dialog").get_by_role("button", name="Cancel job").click()
    expect(banner).to_be_hidden()
    assert clean.request("GET", f"/api/recall/jobs/{recall['id']}")["status"] == "cancelled"


STREAM_CODE = """import time
time.sleep(1)  # time for the test to open the run before the first line
for n in (1, 2, 3):
    print(f"stream line {n}", flush=True)
    if n < 3:
        time.sleep(1)
"""


def test_a_job_from_the_form_streams_its_output_into_the_open_run(clean, page, screenshot):
    from playwright.sync_api import expect

    sidebar = open_sidebar(page, f"{clean.url}/lab?reset&token={TOKEN}")
    page.evaluate("window.__recallNoReload = true")
    form = sidebar.get_by_role("form", name="New job")
    form.get_by_role("textbox", name="When").fill("in 2s")
    form.get_by_role("textbox", name="Name").fill("streaming lines")
    form.get_by_role("textbox", name="Code").fill(STREAM_CODE)
    form.get_by_role("combobox", name="Runs in").select_option("headless")
    form.get_by_role("button", name="Create").click()

    row = sidebar.locator(".jp-RecallSidebar-job").filter(has_text="streaming lines")
    expect(row).to_be_visible()
    (job,) = [
        j
        for j in clean.request("GET", "/api/recall/jobs")["jobs"]
        if j["name"] == "streaming lines"
    ]
    assert job["target"] == {"type": "headless"}  # the server's default kernel spec
    row.click()
    running = sidebar.locator('.jp-RecallSidebar-run[data-status="running"]')
    expect(running).to_be_visible(timeout=60_000)
    run = sidebar.locator(f'[data-run-id="{running.get_attribute("data-run-id")}"]')
    run.locator(".jp-RecallSidebar-runTitle").click()
    output = run.locator(".jp-RecallSidebar-output")

    # Each line shows while the later ones are not printed yet: streamed, not loaded at the end.
    seen = []
    for n in (1, 2, 3):
        expect(output).to_contain_text(f"stream line {n}", timeout=30_000)
        seen.append(output.inner_text())
    assert "stream line 2" not in seen[0], seen
    assert "stream line 3" not in seen[1], seen
    expect(run).to_have_attribute("data-status", "succeeded", timeout=30_000)
    expect(run.locator(".jp-RecallSidebar-runTitle")).to_contain_text(re.compile(r"\d\.\d s"))
    lines = [line.strip() for line in output.inner_text().splitlines() if line.strip()]
    assert lines == ["stream line 1", "stream line 2", "stream line 3"]
    # The job's own change (a finished one-shot is completed) arrives live too: it leaves
    # the list (finished jobs are hidden by default) and shows under its status.
    expect(row).to_be_hidden(timeout=30_000)
    sidebar.get_by_role("combobox", name="Filter by status").select_option("completed")
    expect(row).to_have_attribute("data-status", "completed")
    assert page.evaluate("window.__recallNoReload") is True
    screenshot(page, "lab_form_stream")
