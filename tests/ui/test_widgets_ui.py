"""The kernel's widgets in real JupyterLab, in the dark theme: a card's enabled and disabled
buttons are told apart (the server's allowed_actions decide which), and the %jobs panel is one
list with the selected job's card under it and its timeline folded. Screenshots go to
artifacts/ui/."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.ui.conftest import Lab, run_first_cell

pytestmark = [pytest.mark.ui, pytest.mark.slow]

THEMES_SETTINGS = "/lab/api/settings/@jupyterlab/apputils-extension:themes"

LOOK_JS = """button => {
  const style = getComputedStyle(button);
  return {disabled: button.disabled, opacity: Number(style.opacity),
          border: style.borderTopStyle, text: button.textContent.trim()};
}"""


def _theme(lab: Lab, name: str) -> None:
    lab.request("PUT", THEMES_SETTINGS, {"raw": json.dumps({"theme": name})})
    assert json.loads(lab.request("GET", THEMES_SETTINGS)["raw"])["theme"] == name


@pytest.fixture
def dark(clean: Lab) -> Iterator[Lab]:
    """JupyterLab Dark for this test; the theme is a user setting: back to light after it."""
    _theme(clean, "JupyterLab Dark")
    yield clean
    _theme(clean, "JupyterLab Light")


def _looks(card: Any) -> dict[str, dict[str, Any]]:
    buttons = card.locator("button.jupyter-recall-button")
    return {look["text"]: look for look in buttons.evaluate_all(f"all => all.map({LOOK_JS})")}


def test_card_buttons_are_told_apart_in_the_dark_theme(dark, page, screenshot):
    from playwright.sync_api import expect

    url = dark.notebook("dark_card.ipynb", "%load_ext jupyter_recall\n%schedule in 1h: pass")
    cell = run_first_cell(page, url)
    expect(page.locator("body")).to_have_attribute("data-jp-theme-light", "false")
    card = cell.locator(".jupyter-recall-job-card")
    expect(card.locator("button.jupyter-recall-button")).to_have_count(5)
    expect(card.locator(".jupyter-recall-next time")).to_have_text(re.compile(r"\S+ \S+"))
    # No line printed beside the card: the cell's only output is the card.
    expect(cell.locator(".jp-OutputArea-output")).to_have_count(1)

    looks = _looks(card)
    # A one-shot with nothing running: Skip and Stop run do not apply (allowed_actions).
    assert {name for name, look in looks.items() if look["disabled"]} == {"Skip", "Stop run"}
    for name, look in looks.items():
        if look["disabled"]:
            assert (look["opacity"], look["border"]) == (0.45, "dashed"), (name, look)
        else:
            assert (look["opacity"], look["border"]) == (1.0, "solid"), (name, look)
    # Secondary text takes the theme's muted colour, not a grey lost on the dark background.
    muted = card.locator(".jupyter-recall-card-header span").nth(1)
    assert muted.evaluate("el => getComputedStyle(el).color") != "rgb(97, 97, 97)"
    screenshot(page, "widgets_card_dark")


def test_the_jobs_panel_is_a_list_and_a_card(clean, page, screenshot):
    from playwright.sync_api import expect

    url = clean.notebook(
        "panel.ipynb",
        "%load_ext jupyter_recall\n"
        "%schedule --name 'hourly report' every 1h: print('report')\n"
        "%schedule --name 'nightly backup' every day at 02:00: print('backup')\n"
        "%jobs",
    )
    cell = run_first_cell(page, url)
    panel = cell.locator(".jupyter-recall-jobs-panel")
    expect(panel).to_be_visible()
    options = panel.locator(".jupyter-recall-jobs-list option")
    expect(options).to_have_count(2)
    # (the browser shows the label's spaces as non-breaking ones)
    expect(options.first).to_contain_text(re.compile(r"\s·\sactive\s·\snext\s\S+"))
    # The selected job's card is the only card in the panel; the timeline is folded.
    expect(panel.locator(".jupyter-recall-job-card")).to_have_count(1)
    expect(panel.locator(".jupyter-recall-timeline")).to_be_hidden()
    assert panel.locator("table").count() == 0
    screenshot(page, "widgets_jobs_panel")
