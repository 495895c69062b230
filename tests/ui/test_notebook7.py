"""The lab extension in Jupyter Notebook 7 (the same server run as the ``notebook`` app): the
Recall panel opens from View > Left Sidebar on ``/tree`` and in a notebook, and the banner of
``/notebooks/<file>`` cancels the notebook's pending recall."""

from __future__ import annotations

from typing import Any

from tests.server.live_server import TOKEN
from tests.ui.conftest import NEEDS_LABEXTENSION, Lab

pytestmark = NEEDS_LABEXTENSION


def show_recall_panel(page: Any) -> Any:
    """Notebook 7 lists each left-area widget under View > Left Sidebar by its caption."""
    from playwright.sync_api import expect

    page.locator(".lm-MenuBar-item", has_text="View").click()
    page.locator(".lm-Menu-item", has_text="Left Sidebar").click()
    page.locator(".lm-Menu-item", has_text="Show Recall: scheduled jobs").click()
    sidebar = page.get_by_role("region", name="Recall jobs")
    expect(sidebar).to_be_visible()
    return sidebar


def create_recall(lab: Lab, path: str) -> dict[str, Any]:
    return lab.pending_recall(path, "notebook seven recall", instruction="look at the results")


def test_the_recall_panel_opens_from_the_tree_page(clean_notebook7, page, screenshot):
    from playwright.sync_api import expect

    clean_notebook7.notebook("tree7.ipynb", "1 + 1")
    recall = create_recall(clean_notebook7, "tree7.ipynb")
    page.goto(f"{clean_notebook7.url}/tree?token={TOKEN}")
    expect(page.locator(".jp-DirListing-item", has_text="tree7.ipynb")).to_be_visible()
    sidebar = show_recall_panel(page)
    row = sidebar.locator(f'[data-job-id="{recall["id"]}"]')
    expect(row).to_contain_text("notebook seven recall")
    expect(row.locator(".jp-RecallSidebar-badge")).to_have_text("active")
    screenshot(page, "notebook7_tree_recall_panel")


def test_the_banner_of_a_notebook_cancels_its_pending_recall(clean_notebook7, page, screenshot):
    from playwright.sync_api import expect

    url = clean_notebook7.notebook("banner7.ipynb", "1 + 1")
    assert "/notebooks/banner7.ipynb" in url
    recall = create_recall(clean_notebook7, "banner7.ipynb")
    page.goto(url)
    # Notebook 7's notebook page, not JupyterLab's.
    expect(page.locator("#main-panel .jp-NotebookPanel")).to_be_visible()
    assert page.locator("#jp-main-dock-panel").count() == 0

    banner = page.locator(".jp-NotebookPanel .jp-RecallBanner")
    expect(banner).to_contain_text("Recall pending: notebook seven recall")
    sidebar = show_recall_panel(page)
    row = sidebar.locator(f'[data-job-id="{recall["id"]}"]')
    expect(row).to_contain_text("notebook seven recall")
    expect(sidebar.get_by_role("form", name="New job")).to_contain_text("For banner7.ipynb")
    screenshot(page, "notebook7_banner_and_panel")

    banner.get_by_role("button", name="Cancel notebook seven recall").click()
    page.locator(".jp-Dialog").get_by_role("button", name="Cancel job").click()
    expect(banner).to_be_hidden()
    # The panel follows the change event too: a cancelled recall leaves the list (finished
    # jobs are hidden by default) and shows under its status.
    expect(row).to_be_hidden()
    sidebar.get_by_role("combobox", name="Filter by status").select_option("cancelled")
    expect(row.locator(".jp-RecallSidebar-badge")).to_have_text("cancelled")
    assert clean_notebook7.request("GET", f"/api/recall/jobs/{recall['id']}")["status"] == (
        "cancelled"
    )
