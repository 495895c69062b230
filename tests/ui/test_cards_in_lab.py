"""Job cards in real JupyterLab: what a person sees, without touching the page after running
the cell."""

from __future__ import annotations

import pytest

from tests.ui.conftest import run_first_cell

pytestmark = [pytest.mark.ui, pytest.mark.slow]


def test_a_scheduled_run_streams_into_its_card(clean, page, screenshot):
    from playwright.sync_api import expect

    url = clean.notebook(
        "card.ipynb", '%load_ext jupyter_recall\n%schedule in 3s: print("hello from the future")'
    )
    cell = run_first_cell(page, url)
    card = cell.locator(".jupyter-recall-job-card")
    expect(card).to_be_visible()
    expect(card.locator(".jupyter-recall-countdown")).to_have_count(1)
    output = card.locator(".jupyter-recall-run-output")
    expect(output).not_to_contain_text("hello from the future")

    # From here on the page is only looked at: the run fires on the server's schedule and its
    # output arrives as widget state.
    expect(output).to_contain_text("hello from the future", timeout=30_000)
    expect(card.locator('.jupyter-recall-run[data-status="succeeded"]')).to_be_visible()
    expect(card.locator(".jupyter-recall-next")).to_contain_text("ended (completed)")
    path = screenshot(page, "schedule_card")
    assert path.stat().st_size > 0


def test_the_countdown_ticks_in_the_browser(clean, page, screenshot):
    from playwright.sync_api import expect

    url = clean.notebook("countdown.ipynb", "%load_ext jupyter_recall\n%schedule in 1h: pass")
    cell = run_first_cell(page, url)
    countdown = cell.locator(".jupyter-recall-countdown")
    expect(countdown).to_be_visible()

    def parts() -> list[int]:
        values = countdown.evaluate(
            "el => ['--jr-left', '--jr-h', '--jr-m', '--jr-s']"
            ".map(name => getComputedStyle(el).getPropertyValue(name).trim())"
        )
        return [int(value) for value in values]

    left, hours, minutes, seconds = parts()
    assert 3500 < left <= 3600
    assert hours * 3600 + minutes * 60 + seconds == left
    assert 0 <= minutes < 60
    assert 0 <= seconds < 60
    page.wait_for_timeout(2200)
    later = parts()[0]
    assert left - 3 <= later <= left - 2
    screenshot(page, "countdown_card")
