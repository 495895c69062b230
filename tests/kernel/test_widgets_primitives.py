"""The progress cards of run_parallel and background_run, and the approval card, in a real
kernel of a real server.

Cards are found the way the frontend finds them: by the model id of the widget the cell
displayed. Their state is read from the widgets' traits inside the kernel; buttons are clicked
with the ``comm_msg`` JupyterLab sends.
"""

from __future__ import annotations

import re
from typing import Any

from tests.kernel.conftest import Kernel, wait_until
from tests.kernel.test_widgets import WIDGET, click

STATE = """
import json, re
from ipywidgets.widgets.widget import _instances as _widget_instances

def _progress(model_id):
    header, row, table, output = _widget_instances[model_id].children
    bar, count, cancel = row.children
    return {
        "header": header.value,
        "count": count.value,
        "rows": re.findall(
            r"<tr><td>(.*?)</td><td><span[^>]*>(.*?)</span></td><td>(.*?)</td></tr>", table.value
        ),
        "cancel": [cancel.model_id, cancel.layout.display, cancel.disabled],
        "output": "".join(o.get("text", "") for o in output.outputs),
    }

def _approval_card(request_id):
    for widget in list(_widget_instances.values()):
        if "jupyter-recall-approval-card" in getattr(widget, "_dom_classes", ()):
            text, buttons, status = widget.children
            if request_id in text.value:
                approve, deny = buttons.children
                return {"approve": approve.model_id, "status": status.value,
                        "buttons": buttons.layout.display}
    return None
"""


def progress(nb: Kernel, model_id: str) -> dict[str, Any]:
    return dict(nb.json(STATE + f"print(json.dumps(_progress({model_id!r})))"))


def shown_widget(displays: list[dict[str, Any]]) -> str:
    (widget,) = [data[WIDGET]["model_id"] for data in displays if WIDGET in data]
    return str(widget)


def wait_progress(nb: Kernel, model_id: str, predicate: Any) -> dict[str, Any]:
    found: dict[str, Any] = {}

    def check() -> bool:
        found.update(progress(nb, model_id))
        return bool(predicate(found))

    wait_until(check, timeout=20, interval=0.3)
    return found


def test_run_parallel_card_shows_each_action_and_the_count(nb, server):
    (server.root / "there.txt").write_text("here")
    out = nb.ok(
        "results = jupyter_recall.run_parallel(["
        "{'name': 'filesystem.read', 'params': {'path': 'there.txt'}},"
        "{'name': 'filesystem.read', 'params': {'path': 'missing.txt'}},"
        "{'name': 'filesystem.list', 'params': {'path': '.'}}])\n"
        "print([r['success'] for r in results])"
    )
    assert out.stdout.strip() == "[True, False, True]"
    state = progress(nb, shown_widget(out.displays))
    assert "run_parallel: 3 actions" in state["header"]
    assert "2 of 3 succeeded" in state["header"]
    assert ">failed</span>" in state["header"]  # one failure: the call as a whole failed
    assert state["count"] == "3/3"
    labels = [(label, status) for label, status, _ in state["rows"]]
    assert labels == [
        ("#0 filesystem.read", "succeeded"),
        ("#1 filesystem.read", "failed"),
        ("#2 filesystem.list", "succeeded"),
    ]
    error_detail = state["rows"][1][2]
    assert "missing.txt" in error_detail
    assert len(error_detail) <= 120


def test_background_card_goes_from_running_to_finished(nb):
    out = nb.ok("tid = jupyter_recall.background_run('filesystem.list', {'path': '.'})")
    model_id = shown_widget(out.displays)
    done = wait_progress(nb, model_id, lambda s: ">succeeded</span>" in s["header"])
    assert "background task bg-" in done["header"]
    assert [(label, status) for label, status, _ in done["rows"]] == [
        ("filesystem.list", "succeeded")
    ]
    assert done["cancel"][1] == "none"  # nothing left to cancel
    assert "[BACKGROUND TASK COMPLETED]" in done["output"]
    # The notification is still queued as before.
    queued = nb.json(
        "print(json.dumps([n['task_id'] == tid for n in jupyter_recall.notifications.drain()]))"
    )
    assert queued == [True]


def test_background_cards_cancel_button_cancels_a_long_task(nb):
    out = nb.ok(
        "jupyter_recall.set_tool_policy('shell', 'auto')\n"
        "tid = jupyter_recall.background_run('shell.run', {'command': 'sleep 30'})"
    )
    model_id = shown_widget(out.displays)
    running = progress(nb, model_id)
    assert [(label, status) for label, status, _ in running["rows"]] == [("shell.run", "running")]
    cancel_id, display, disabled = running["cancel"]
    assert display != "none"
    assert disabled is False
    click(nb, cancel_id)
    ended = wait_progress(nb, model_id, lambda s: ">cancelled</span>" in s["header"])
    assert [(label, status) for label, status, _ in ended["rows"]] == [("shell.run", "cancelled")]
    status = nb.json("print(json.dumps(jupyter_recall.background_status(tid)))")
    assert status["status"] == "cancelled"
    assert status["elapsed"] < 20  # stopped, not run to its end


def test_approval_card_button_approves_the_pending_request(nb, server):
    nb.ok(
        "jupyter_recall.set_tool_policy('filesystem.write', 'approve')\n"
        "tid = jupyter_recall.background_run('filesystem.write', "
        "{'path': 'approved_by_card.txt', 'content': 'clicked'})"
    )
    request_id = wait_until(
        lambda: nb.json(
            "print(json.dumps([r.request_id for r in jupyter_recall.approvals.pending()]))"
        )
    )[0]

    def card() -> dict[str, Any] | None:
        found = nb.json(STATE + f"print(json.dumps(_approval_card({request_id!r})))")
        return dict(found) if found else None

    shown = wait_until(card)
    assert "waiting for an answer" in shown["status"]
    click(nb, shown["approve"])
    settled = wait_until(lambda: (c := card()) and re.search(r">approved\b", c["status"]) and c)
    assert settled["buttons"] == "none"
    wait_until((server.root / "approved_by_card.txt").exists)
    assert (server.root / "approved_by_card.txt").read_text() == "clicked"
    status = nb.json(
        "jupyter_recall.set_tool_policy('filesystem.write', None)\n"
        "print(json.dumps(jupyter_recall.background_wait(tid, 10)))"
    )
    assert status["status"] == "succeeded"
