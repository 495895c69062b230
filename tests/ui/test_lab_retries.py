"""The job form's retries in a real browser: a job failing twice then succeeding shows its
three attempts of one occurrence in the run history ('attempt 1/3' ... 'attempt 3/3')."""

from __future__ import annotations

import json
import urllib.request

from tests.server.live_server import TOKEN
from tests.ui.conftest import NEEDS_LABEXTENSION, open_sidebar

pytestmark = NEEDS_LABEXTENSION


def flaky_code(counter: str) -> str:
    """Code failing in its first two runs (fresh kernels: the count is kept in a file)."""
    return (
        "import pathlib\n"
        f"counter = pathlib.Path({counter!r})\n"
        "n = int(counter.read_text()) + 1 if counter.exists() else 1\n"
        "counter.write_text(str(n))\n"
        "assert n > 2, f'attempt {n} fails'\n"
        "print('attempt', n, 'works')"
    )


def test_a_job_from_the_form_with_retries_shows_its_attempts(clean, page, screenshot, tmp_path):
    from playwright.sync_api import expect

    sidebar = open_sidebar(page, f"{clean.url}/lab?reset&token={TOKEN}")
    form = sidebar.get_by_role("form", name="New job")
    form.get_by_role("textbox", name="When").fill("in 1s")
    form.get_by_role("textbox", name="Name").fill("flaky twice")
    form.get_by_role("spinbutton", name="Retries").fill("2")
    form.get_by_role("spinbutton", name="Retry backoff (s)").fill("0.5")
    form.get_by_role("textbox", name="Code").fill(flaky_code(str(tmp_path / "count")))
    form.get_by_role("combobox", name="Runs in").select_option("headless")
    form.get_by_role("button", name="Create").click()

    sidebar.get_by_role("combobox", name="Filter by status").select_option("completed")
    row = sidebar.locator(".jp-RecallSidebar-job").filter(has_text="flaky twice")
    expect(row).to_have_attribute("data-status", "completed", timeout=120_000)
    row.click()
    runs = sidebar.locator(".jp-RecallSidebar-run")
    expect(runs).to_have_count(3, timeout=30_000)
    for attempt, status in ((1, "failed"), (2, "failed"), (3, "succeeded")):
        run = runs.filter(has_text=f"attempt {attempt}/3")
        expect(run).to_have_attribute("data-status", status)
    screenshot(page, "lab_form_retries")

    request = urllib.request.Request(
        f"{clean.url}/api/recall/jobs?status=completed",
        headers={"Authorization": f"token {TOKEN}"},
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        (job,) = [j for j in json.load(answer)["jobs"] if j["name"] == "flaky twice"]
    assert job["policies"]["retries"]["max"] == 2
    assert job["policies"]["retries"]["backoff"] == 0.5
