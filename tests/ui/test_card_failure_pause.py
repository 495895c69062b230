"""A job card in real JupyterLab as the server pauses its job after two failed occurrences:
the card says why and counts the failures, live, without touching the page after the cell."""

from __future__ import annotations

import pytest

from tests.ui.conftest import run_first_cell

pytestmark = [pytest.mark.ui, pytest.mark.slow]


def test_the_card_shows_why_its_job_was_paused(clean, page, screenshot):
    from playwright.sync_api import expect

    url = clean.notebook(
        "paused.ipynb",
        "%load_ext jupyter_recall\n"
        "%schedule --pause-after-failures 2 every 2 seconds: raise ValueError('disk full')",
    )
    cell = run_first_cell(page, url)
    card = cell.locator(".jupyter-recall-job-card")
    expect(card).to_be_visible()
    reason = card.locator(".jupyter-recall-paused-reason")
    expect(reason).to_contain_text("paused after 2 consecutive failed occurrences", timeout=60_000)
    expect(reason).to_contain_text("ValueError: disk full")
    expect(card.locator(".jupyter-recall-counters")).to_contain_text("failures in a row 2/2")
    screenshot(page, "card_paused_after_failures")
