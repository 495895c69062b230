"""Recalls firing in a real kernel: the on_recall handler, chaining, failures, no browser,
and the notification queue fed while the kernel is idle."""

from __future__ import annotations

import time

from tests.kernel.conftest import Kernel, wait_until

HANDLER = """
seen = []

@jupyter_recall.on_recall
def handle(instruction, job):
    seen.append((instruction, job.id, job.kind, job.session, job.run_id))
    print('handling:', instruction)
    return 'done with ' + job.id
"""


def test_without_handler_the_instruction_is_a_notification(nb, server):
    nb.ok("%recall now: Read /tmp/build.log and report errors")
    (recall,) = server.jobs(kind="recall")
    (run,) = server.finished_runs(recall["id"])
    assert run["status"] == "succeeded"
    assert run["output"] == "[RECALL] Read /tmp/build.log and report errors\n"
    queued = nb.json(
        "print(json.dumps(jupyter_recall.notifications.wait(timeout=15, count=2)))", timeout=20
    )
    by_type = {item["type"]: item for item in queued}
    assert by_type["recall"]["instruction"] == "Read /tmp/build.log and report errors"
    assert by_type["recall"]["job_id"] == recall["id"]
    assert by_type["recall"]["run_id"] == run["id"]
    assert by_type["run.finished"]["run_id"] == run["id"]
    assert by_type["run.finished"]["output"] == run["output"]


def test_handler_gets_instruction_and_job_and_its_prints_stream_into_the_run(nb, server):
    nb.ok(HANDLER)
    nb.ok("%recall now: summarise the logs")
    (recall,) = server.jobs(kind="recall")
    (run,) = server.finished_runs(recall["id"])
    assert run["status"] == "succeeded"
    assert run["output"] == f"handling: summarise the logs\ndone with {recall['id']}\n"
    seen = nb.json("print(json.dumps(seen))")
    assert seen == [["summarise the logs", recall["id"], "recall", nb.path, run["id"]]]
    # Nothing was shown as a notification: the handler took it.
    queued = nb.json("print(json.dumps(jupyter_recall.notifications.wait(timeout=10)))")
    assert [item["type"] for item in queued] == ["run.finished"]


def test_a_handler_of_the_instruction_only(nb, server):
    nb.ok("jupyter_recall.on_recall(lambda text: print(text.upper()))")
    nb.ok("%recall now: shout")
    (recall,) = server.jobs(kind="recall")
    assert server.finished_runs(recall["id"])[0]["output"] == "SHOUT\n"


CHAIN = """
phases = []

@jupyter_recall.on_recall
def agent(instruction, job):
    phases.append(instruction)
    print('phase', len(phases), instruction)
    if instruction == 'phase 1: download':
        # This one-shot recall is running, so no longer pending: the next may be scheduled.
        nxt = jupyter_recall.recall('now', 'phase 2: analyse', comment='chained')
        print('scheduled', nxt.id)
"""


def test_a_recall_whose_handler_schedules_the_next_phase(nb, server):
    nb.ok(CHAIN)
    nb.ok("%recall now: phase 1: download")
    wait_until(lambda: len(server.jobs(kind="recall")) == 2)
    by_text = {job["action"]["instruction"]: job for job in server.jobs(kind="recall")}
    first, second = by_text["phase 1: download"], by_text["phase 2: analyse"]
    (run1,) = server.finished_runs(first["id"])
    (run2,) = server.finished_runs(second["id"])
    assert run1["status"] == run2["status"] == "succeeded"
    assert run1["output"] == f"phase 1 phase 1: download\nscheduled {second['id']}\n"
    assert run2["output"] == "phase 2 phase 2: analyse\n"
    assert second["action"] == {
        "type": "instruction",
        "instruction": "phase 2: analyse",
        "comment": "chained",
    }
    assert nb.json("print(json.dumps(phases))") == ["phase 1: download", "phase 2: analyse"]


def test_failing_handler_fails_a_one_shot_and_keeps_a_recurring_schedule(nb, server):
    nb.ok("@jupyter_recall.on_recall\ndef broken(instruction, job):\n    raise RuntimeError('no')")
    nb.ok("%recall now: once")
    (once,) = server.jobs(kind="recall")
    (run,) = server.finished_runs(once["id"])
    assert run["status"] == "failed"
    assert run["error"] == "RuntimeError: no"
    assert wait_until(lambda: server.job(once["id"])["status"] == "failed")

    nb.ok("%recall every 1s: again")
    recurring = next(job for job in server.jobs(kind="recall") if job["id"] != once["id"])
    runs = server.finished_runs(recurring["id"], count=2)
    assert {r["status"] for r in runs} == {"failed"}
    job = server.job(recurring["id"])
    assert job["status"] == "active"
    assert job["pending"] is True
    assert job["next_fire_at"] is not None
    assert job["failure_count"] >= 2


def test_a_recurring_recall_may_cancel_itself_from_its_handler(nb, server):
    nb.ok(
        "@jupyter_recall.on_recall\n"
        "def last_time(instruction, job):\n"
        "    print('checking')\n"
        "    result = jupyter_recall.agent.dispatch('manage_recall', {'action': 'cancel'})\n"
        "    print(json.dumps(result))\n"
        "    print('still here')\n"
    )
    nb.ok("%recall every 1s: poll until done")
    (recall,) = server.jobs(kind="recall")
    (run,) = server.finished_runs(recall["id"])
    # Cancelling lets the run in flight finish (deleting would have stopped it).
    assert run["status"] == "succeeded"
    assert run["output"].startswith('checking\n{"ok": true')
    assert run["output"].endswith("still here\n")
    assert wait_until(lambda: server.job(recall["id"])["status"] == "cancelled")
    time.sleep(1.5)
    assert len(server.runs(recall["id"])) == 1


def test_handled_headlessly_with_no_frontend_connected(server, tmp_path):
    kernel = Kernel(server, "unattended.ipynb")
    marker = tmp_path / "handled.txt"
    try:
        kernel.ok("%load_ext jupyter_recall\nimport jupyter_recall")
        kernel.ok(
            "@jupyter_recall.on_recall\n"
            "def handle(instruction, job):\n"
            f"    open({str(marker)!r}, 'w').write(instruction)\n"
            "    print('did:', instruction)\n"
        )
        kernel.ok("%recall in 2s: rotate the logs")
        (recall,) = server.jobs(path="unattended.ipynb")
        # Nobody is attached any more: no websocket (no browser), and our client is gone too.
        kernel.client.stop_channels()
        assert server.request("GET", f"/api/kernels/{kernel.kernel_id}")["connections"] == 0
        (run,) = server.finished_runs(recall["id"])
        assert run["status"] == "succeeded"
        assert run["output"] == "did: rotate the logs\n"
        assert marker.read_text() == "rotate the logs"
    finally:
        server.request("DELETE", f"/api/sessions/{kernel.session_id}")
        server.delete_all_jobs()


def test_notifications_while_idle_and_callbacks(nb, server):
    nb.ok(
        "received = []\n"
        "jupyter_recall.notifications.on_notification(received.append)\n"
        "%schedule in 1s: print('background result')"
    )
    (job,) = server.jobs()
    server.finished_runs(job["id"])
    # The kernel was idle the whole time; the listener thread queued it.
    got = nb.json(
        "import time\n"
        "deadline = time.time() + 15\n"
        f"while not [n for n in received if n['job_id'] == {job['id']!r}]:\n"
        "    assert time.time() < deadline\n"
        "    time.sleep(0.1)\n"
        "print(json.dumps(received))"
    )
    (mine,) = [item for item in got if item["job_id"] == job["id"]]
    assert mine["status"] == "succeeded"
    assert mine["output"] == "background result\n"
    assert mine in nb.json("print(json.dumps(jupyter_recall.notifications.drain()))")
    nb.ok("jupyter_recall.notifications.remove_callback(received.append)")


def test_unload_stops_the_listener(nb):
    alive = "l = jupyter_recall.notifications.listener(); print(json.dumps(bool(l and l.alive)))"
    assert nb.json(alive) is True
    nb.ok("%unload_ext jupyter_recall")
    assert nb.json(alive) is False
    assert (
        nb.json(
            "import threading; print(json.dumps([t.name for t in threading.enumerate() "
            "if t.name == 'jupyter_recall-notifications']))"
        )
        == []
    )
    nb.ok("%load_ext jupyter_recall")
    assert nb.json(alive) is True
