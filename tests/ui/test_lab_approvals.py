"""The approvals inbox in real JupyterLab: a tool call asking for approval shows a toast and the
status bar count; "Show approvals" opens the Approvals panel, whose Approve button decides it
on the server (recorded with who and when); a decision made elsewhere shows there too."""

from __future__ import annotations

from typing import Any

from tests.ui.conftest import NEEDS_LABEXTENSION, Lab
from tests.ui.test_lab_commands import open_lab, palette_run

pytestmark = NEEDS_LABEXTENSION


def ask(lab: Lab, command: str) -> dict[str, Any]:
    body = {
        "tool": "shell.run",
        "summary": f"shell.run(command={command!r})",
        "source": "server config RecallApp.tool_policies['shell']",
        "asked_by": "run:ui-test",
    }
    record: dict[str, Any] = lab.request("POST", "/api/recall/approvals", body)
    return record


def test_approve_from_the_approvals_panel(page, clean, screenshot):
    from playwright.sync_api import expect

    open_lab(page, clean)
    # With nothing waiting the approvals item is hidden, while the jobs item shows.
    expect(page.locator(".jp-RecallStatus")).to_be_visible()
    expect(page.locator(".jp-RecallApprovalsStatus")).to_be_hidden()
    record = ask(clean, "make deploy")
    question = "Approval needed: shell.run(command='make deploy')"
    toast = page.locator(".Toastify__toast", has_text=question)
    expect(toast).to_be_visible()
    status = page.locator(".jp-RecallApprovalsStatus")
    expect(status).to_have_attribute("data-pending", "1")
    expect(status).to_have_text("1 approval waiting")

    palette_run(page, "Show approvals")
    panel = page.get_by_role("region", name="Recall approvals")
    expect(panel).to_be_visible()
    item = panel.locator(f'[data-approval-id="{record["id"]}"]')
    expect(item).to_contain_text("shell.run(command='make deploy')")
    expect(item).to_contain_text("asked by run:ui-test")
    screenshot(page, "approvals-panel")
    item.get_by_role("button", name="Approve").click()

    expect(item).to_have_attribute("data-status", "approved")
    expect(item.get_by_role("button", name="Approve")).to_have_count(0)
    expect(status).to_be_hidden()
    decided = clean.request("GET", f"/api/recall/approvals/{record['id']}")
    assert decided["status"] == "approved"
    assert decided["decided_by"]
    assert decided["decided_at"]

    # Decided elsewhere (REST, the CLI, a notebook): the panel follows the event.
    other = ask(clean, "rm -rf build")
    other_item = panel.locator(f'[data-approval-id="{other["id"]}"]')
    expect(other_item).to_have_attribute("data-status", "pending")
    clean.request("POST", f"/api/recall/approvals/{other['id']}", {"decision": "deny"})
    expect(other_item).to_have_attribute("data-status", "denied")


def test_an_approval_asked_while_the_inbox_loads_is_counted(page, clean):
    """The inbox's first listing can answer after an approval's event arrived: it was read
    before the approval existed, and must not wipe the approval out of the count."""
    from urllib.parse import urlparse

    from playwright.sync_api import expect

    held: list[tuple[Any, Any]] = []

    def hold_listing(route: Any) -> None:
        # The server's real answer, read now and handed to the page later.
        held.append((route, route.fetch()))

    page.route(lambda url: urlparse(url).path.endswith("/api/recall/approvals"), hold_listing)
    open_lab(page, clean)
    for _ in range(600):
        if held:
            break
        page.wait_for_timeout(100)
    assert held, "the page never asked for the approvals"
    record = ask(clean, "make release")
    expect(page.locator(".Toastify__toast", has_text="make release")).to_be_visible()
    route, stale = held[0]
    assert all(item["id"] != record["id"] for item in stale.json()["approvals"])
    route.fulfill(response=stale)
    status = page.locator(".jp-RecallApprovalsStatus")
    expect(status).to_have_attribute("data-pending", "1")
    clean.request("POST", f"/api/recall/approvals/{record['id']}", {"decision": "deny"})
    expect(status).to_be_hidden()
