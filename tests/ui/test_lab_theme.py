"""The sidebar and the banner follow JupyterLab's theme: switched to JupyterLab Dark from the
Settings menu, their computed colours change with it and every text keeps a readable contrast
(WCAG AA, 4.5:1) in both themes. Screenshots of both themes go to artifacts/ui/."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.ui.conftest import NEEDS_LABEXTENSION, Lab

pytestmark = NEEDS_LABEXTENSION

THEMES_SETTINGS = "/lab/api/settings/@jupyterlab/apputils-extension:themes"
AA_CONTRAST = 4.5

# Text over its background: the panel, a job's name, description, notebook line and status
# badge, a field, a button, and the notebook banner with its button.
TEXTS = {
    "sidebar": ".jp-RecallSidebar",
    "job name": ".jp-RecallSidebar-job .jp-RecallSidebar-name",
    "job description": ".jp-RecallSidebar-job .jp-RecallSidebar-description",
    "notebook line": ".jp-RecallSidebar-job .jp-RecallSidebar-notebook",
    "badge": ".jp-RecallSidebar-job .jp-RecallSidebar-badge",
    "search field": ".jp-RecallSidebar-search",
    "action button": ".jp-RecallSidebar-action",
    "banner": ".jp-NotebookPanel:visible .jp-RecallBanner-text",
    "banner button": ".jp-NotebookPanel:visible .jp-RecallBanner button",
}

# The text colour and the background of the element and of each ancestor (composited in
# Python, outermost first: an opaque layer hides what lies under it).
COLOURS_JS = """element => {
  const layers = [];
  for (let node = element; node; node = node.parentElement) {
    layers.push(getComputedStyle(node).backgroundColor);
  }
  return {color: getComputedStyle(element).color, layers};
}"""

Rgba = tuple[float, float, float, float]


def parse_colour(text: str) -> Rgba:
    """``rgb()``, ``rgba()`` or ``color(srgb ...)`` (what Chromium gives for color-mix)."""
    if text == "transparent":
        return (0.0, 0.0, 0.0, 0.0)
    srgb = re.fullmatch(r"color\(srgb ([\d.e-]+) ([\d.e-]+) ([\d.e-]+)(?: / ([\d.]+))?\)", text)
    if srgb:
        red, green, blue = (float(srgb.group(i)) * 255 for i in (1, 2, 3))
        return (red, green, blue, float(srgb.group(4) or 1))
    numbers = [float(n) for n in re.findall(r"[\d.]+", text)]
    assert text.startswith("rgb"), text
    assert len(numbers) in (3, 4), text
    return (numbers[0], numbers[1], numbers[2], numbers[3] if len(numbers) == 4 else 1.0)


def over(top: Rgba, bottom: Rgba) -> Rgba:
    alpha = top[3]
    return (
        top[0] * alpha + bottom[0] * (1 - alpha),
        top[1] * alpha + bottom[1] * (1 - alpha),
        top[2] * alpha + bottom[2] * (1 - alpha),
        1.0,
    )


def luminance(colour: Rgba) -> float:
    def channel(value: float) -> float:
        value /= 255
        return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4

    red, green, blue = (channel(c) for c in colour[:3])
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


def contrast(a: Rgba, b: Rgba) -> float:
    light, dark = sorted((luminance(a), luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def measure(page: Any) -> dict[str, tuple[Rgba, Rgba]]:
    """Per text: its colour and its background, both flattened to opaque colours."""
    measured = {}
    for name, selector in TEXTS.items():
        found = page.locator(selector).first.evaluate(COLOURS_JS)
        background: Rgba = (255.0, 255.0, 255.0, 1.0)
        for layer in reversed(found["layers"]):
            background = over(parse_colour(layer), background)
        measured[name] = (over(parse_colour(found["color"]), background), background)
    return measured


def assert_readable(measured: dict[str, tuple[Rgba, Rgba]], theme: str) -> None:
    low = {
        name: round(contrast(text, background), 2)
        for name, (text, background) in measured.items()
        if contrast(text, background) < AA_CONTRAST
    }
    assert not low, f"{theme}: contrast below {AA_CONTRAST}: {low}"


@pytest.fixture
def light_again(clean: Lab) -> Iterator[Lab]:
    """The theme is a user setting of the session's Lab: back to light for the other tests."""
    yield clean
    raw = json.dumps({"theme": "JupyterLab Light"})
    clean.request("PUT", THEMES_SETTINGS, {"raw": raw})
    assert json.loads(clean.request("GET", THEMES_SETTINGS)["raw"])["theme"] == "JupyterLab Light"


def test_the_sidebar_and_banner_follow_the_dark_theme(light_again, page, screenshot):
    from playwright.sync_api import expect

    lab = light_again
    url = lab.notebook("themed.ipynb", "1 + 1")
    lab.pending_recall(
        "themed.ipynb", "themed recall", when="every day at 09:00", instruction="compare the themes"
    )
    page.goto(url)
    expect(page.locator(".jp-NotebookPanel:visible .jp-RecallBanner")).to_be_visible()
    page.locator('.jp-SideBar [role="tab"][title="Recall: scheduled jobs"]').click()
    expect(page.get_by_role("region", name="Recall jobs")).to_be_visible()
    expect(page.locator("body")).to_have_attribute("data-jp-theme-light", "true")
    light = measure(page)
    assert_readable(light, "JupyterLab Light")
    screenshot(page, "lab_theme_light")

    page.locator(".lm-MenuBar-item", has_text="Settings").click()
    page.locator(".lm-Menu-item", has_text="Theme").first.click()
    page.get_by_role("menuitem", name="JupyterLab Dark", exact=True).click()
    expect(page.locator("body")).to_have_attribute("data-jp-theme-name", "JupyterLab Dark")
    expect(page.locator("body")).to_have_attribute("data-jp-theme-light", "false")
    # The theme's stylesheet may land after the attribute: wait for the panel to turn dark.
    page.wait_for_function(
        """() => {
          const [r, g, b] = getComputedStyle(document.querySelector('.jp-RecallSidebar'))
            .backgroundColor.match(/[\\d.]+/g).map(Number);
          return r + g + b < 3 * 100;
        }"""
    )
    dark = measure(page)
    assert_readable(dark, "JupyterLab Dark")
    screenshot(page, "lab_theme_dark")

    for name in ("sidebar", "banner", "search field"):
        light_text, light_background = light[name]
        dark_text, dark_background = dark[name]
        assert luminance(dark_background) < luminance(light_background), name
        # Dark text on light, light text on dark.
        assert luminance(light_text) < luminance(light_background), name
        assert luminance(dark_text) > luminance(dark_background), name
