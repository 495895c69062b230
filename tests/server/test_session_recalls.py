"""Only a deleted notebook session cancels a pending recall: other kernels' shutdowns do not."""

from __future__ import annotations

import asyncio
import json

from jupyter_recall.server import sessions
from tests.server.rest import call
from tests.server.test_live_jobs import finished, first_run


def recall_body(path: str) -> dict:
    return {
        "when": "in 2h",
        "kind": "recall",
        "action": {"type": "instruction", "instruction": "check the log"},
        "target": {"type": "kernel", "path": path},
    }


async def test_a_headless_jobs_kernel_shutdown_keeps_a_closed_notebooks_recall(jp_fetch):
    recall = await call(
        jp_fetch, "POST", "api/recall/jobs", recall_body("closed.ipynb"), expect=201
    )
    headless = {
        "when": "in 1s",
        "action": {"type": "code", "code": "print('done')"},
        "target": {"type": "headless", "kernel_name": "python3"},
    }
    job = await call(jp_fetch, "POST", "api/recall/jobs", headless, expect=201)
    run = await finished(jp_fetch, (await first_run(jp_fetch, job["id"]))["id"], timeout=60)
    assert run["status"] == "succeeded"
    # The fresh kernel's shutdown event, then the watcher's delay, with a margin.
    await asyncio.sleep(sessions.ROW_DELETION_DELAY + 3)
    kept = await call(jp_fetch, "GET", f"api/recall/jobs/{recall['id']}")
    assert kept["status"] == "active"
    assert kept["pending"] is True


async def test_another_sessions_deletion_keeps_a_closed_notebooks_recall(jp_fetch):
    body = {"path": "open.ipynb", "name": "open", "type": "notebook", "kernel": {"name": "python3"}}
    response = await jp_fetch("api", "sessions", method="POST", body=json.dumps(body))
    session = json.loads(response.body)
    closed = await call(
        jp_fetch, "POST", "api/recall/jobs", recall_body("closed.ipynb"), expect=201
    )
    opened = await call(jp_fetch, "POST", "api/recall/jobs", recall_body("open.ipynb"), expect=201)
    await jp_fetch("api", "sessions", session["id"], method="DELETE")
    for _ in range(150):
        gone = await call(jp_fetch, "GET", f"api/recall/jobs/{opened['id']}")
        if gone["status"] == "cancelled":
            break
        await asyncio.sleep(0.1)
    assert gone["status"] == "cancelled"
    assert gone["last_error"] == (
        "cancelled: the session of open.ipynb was closed (its kernel shut down) before the "
        "recall was due; a recall is delivered to its notebook's kernel"
    )
    kept = await call(jp_fetch, "GET", f"api/recall/jobs/{closed['id']}")
    assert kept["status"] == "active"
    assert kept["pending"] is True


async def test_stopping_the_extension_ends_the_cancellations_still_waiting(jp_fetch, jp_serverapp):
    (app,) = jp_serverapp.extension_manager.extension_apps["jupyter_recall"]
    kernel = json.loads((await jp_fetch("api", "kernels", method="POST", body="{}")).body)
    await jp_fetch("api", "kernels", kernel["id"], method="DELETE")
    waiting = list(app._session_watcher._waiting)
    assert waiting, "the shutdown's cancellation waits for the session rows to go"
    await app.stop_extension()
    # Ended, not left sleeping to be destroyed pending when the server's loop closes.
    assert all(task.done() for task in waiting)
    assert not app._session_watcher._waiting
