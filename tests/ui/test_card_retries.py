"""A job card in real JupyterLab for a job with retries: its current run says which attempt it
is, and the history holds the failed attempts, without touching the page after the cell."""

from __future__ import annotations

import pytest

from tests.ui.conftest import run_first_cell

pytestmark = [pytest.mark.ui, pytest.mark.slow]

CELL = (
    "%load_ext jupyter_recall\n"
    "tries = []\n"
    "%schedule --retries 2 --retry-backoff 1 in 2s: "
    "tries.append(1); assert len(tries) > 2, 'not yet'; print('works at try', len(tries))"
)


def test_a_card_shows_the_attempts_of_a_retried_occurrence(clean, page, screenshot):
    from playwright.sync_api import expect

    cell = run_first_cell(page, clean.notebook("retries.ipynb", CELL))
    card = cell.locator(".jupyter-recall-job-card")
    expect(card).to_be_visible()
    expect(card.locator(".jupyter-recall-counters")).to_contain_text("retries 2 (backoff 1 s)")
    current = card.locator('.jupyter-recall-run[data-status="succeeded"]')
    expect(current).to_contain_text("attempt 3/3", timeout=60_000)
    expect(card.locator(".jupyter-recall-run-output")).to_contain_text("works at try 3")
    history = card.locator(".jupyter-recall-history, .widget-accordion").first
    expect(history).to_contain_text("attempt 1/3")
    expect(history).to_contain_text("attempt 2/3")
    # The failed attempts were followed by retries: warnings that say so, not failure toasts.
    expect(page.get_by_text("(attempt 1), retrying: AssertionError: not yet")).to_be_visible()
    screenshot(page, "retries_card")
