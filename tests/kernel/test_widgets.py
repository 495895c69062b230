"""Job cards and the jobs panel in a real kernel of a real server.

The widget state is read inside the kernel (the widgets' own traits, through executed code) and
on the wire: the ``comm_msg`` updates the kernel publishes on IOPub, read by a client while the
kernel is left alone (or busy with another cell), as JupyterLab would receive them. Buttons are
clicked the way the frontend clicks them: a ``comm_msg`` to the button's model on the shell
channel.
"""

from __future__ import annotations

import json
import queue
import re
import time
from typing import Any

from tests.kernel.conftest import Kernel, KernelServer, wait_until

WIDGET = "application/vnd.jupyter.widget-view+json"

STATE = """
import json
from jupyter_recall.kernel import widgets as _widgets
from jupyter_recall.kernel.widgets.live import router as _router

def _card_state(job_id):
    (card,) = _widgets.cards_for(job_id)
    return {
        "widget": card.widget.model_id,
        "output_id": card.output.model_id,
        "header": card.header.get_state()["value"],
        "countdown": card.countdown.get_state()["value"],
        "counters": card.counters.value,
        "run": card.run_header.value,
        "output": "".join(o.get("text", "") for o in card.output.get_state()["outputs"]),
        "history": list(card.history.widget.get_state()["titles"]),
        "buttons": {k: [b.description, b.disabled, b.model_id] for k, b in card.buttons.items()},
        "faded": sorted(
            k for k, b in card.buttons.items() if "jupyter-recall-button-off" in b._dom_classes
        ),
        "message": card.message.value,
    }

def _panel():
    (panel,) = [s for s in _router.following("*") if hasattr(s, "select")]
    return panel
"""


def card_state(nb: Kernel, job_id: str) -> dict[str, Any]:
    return dict(nb.json(STATE + f"print(json.dumps(_card_state({job_id!r})))"))


def wait_card(nb: Kernel, job_id: str, predicate: Any, timeout: float = 20.0) -> dict[str, Any]:
    found: dict[str, Any] = {}

    def check() -> bool:
        found.update(card_state(nb, job_id))
        return bool(predicate(found))

    wait_until(check, timeout=timeout, interval=0.3)
    return found


def only_job(server: KernelServer) -> dict[str, Any]:
    (job,) = server.jobs()
    return job


def drain_iopub(nb: Kernel) -> None:
    """Forget every IOPub message so far, those ``run`` set aside included."""
    nb.elsewhere.clear()
    while True:
        try:
            nb.client.get_iopub_msg(timeout=0.2)
        except queue.Empty:
            return


def comm_updates(nb: Kernel, until: Any, timeout: float = 20.0) -> list[dict[str, Any]]:
    """The comm_msg updates published on IOPub, read until ``until(messages)`` holds."""
    seen: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            msg = nb.iopub(timeout=0.5)
        except queue.Empty:
            continue
        if msg["msg_type"] == "comm_msg" and msg["content"]["data"].get("method") == "update":
            seen.append(msg)
            if until(seen):
                return seen
    raise AssertionError(f"not seen in {timeout}s: {[m['content'] for m in seen]}")


def state_text(msg: dict[str, Any]) -> str:
    return json.dumps(msg["content"]["data"]["state"])


def click(nb: Kernel, model_id: str) -> None:
    """What JupyterLab sends when a button is clicked."""
    content = {"comm_id": model_id, "data": {"method": "custom", "content": {"event": "click"}}}
    nb.client.session.send(nb.client.shell_channel.socket, "comm_msg", content)


def set_index(nb: Kernel, model_id: str, index: int) -> None:
    """What JupyterLab sends when an option of a Select or Dropdown is chosen."""
    data = {"method": "update", "state": {"index": index}, "buffer_paths": []}
    nb.client.session.send(
        nb.client.shell_channel.socket, "comm_msg", {"comm_id": model_id, "data": data}
    )


def test_schedule_card_streams_a_run_started_by_the_server(nb, server):
    out = nb.ok('%schedule in 2s: print("hello from the future")')
    assert out.stdout == ""  # the card says it all: no printed line repeating it
    (shown,) = out.displays
    job = only_job(server)
    state = card_state(nb, job["id"])
    assert shown[WIDGET]["model_id"] == state["widget"]
    assert job["id"] in shown["text/plain"]
    assert "hello from the future" in state["header"]
    assert "once at" in state["header"]  # the schedule in words
    assert 'class="jupyter-recall-countdown' in state["countdown"]
    assert "data-seconds=" in state["countdown"]
    buttons = state["buttons"]
    assert buttons["skip"][1] is True  # a one-shot job has nothing to skip
    assert buttons["stop"][1] is True  # no run in flight
    assert buttons["pause"][:2] == ["Pause", False]
    # The rule of the server (allowed_actions) decides; disabled buttons look disabled.
    assert state["faded"] == ["skip", "stop"]

    # Not drained: the run may start while the cells above run, and its updates are then
    # among those the kernel's run set aside. Nothing is executed in the kernel from here on:
    # the updates come by themselves.
    updates = comm_updates(
        nb, lambda seen: any("hello from the future\\n" in state_text(m) for m in seen)
    )
    streamed = [m for m in updates if "hello from the future\\n" in state_text(m)]
    assert streamed[0]["content"]["comm_id"] == state["output_id"]

    done = wait_card(nb, job["id"], lambda s: 'data-status="succeeded"' in s["run"])
    assert done["output"] == "hello from the future\n"
    assert "succeeded in" in done["run"]  # the outcome and its duration
    assert "ended (completed)" in done["countdown"]
    assert "runs <b>1</b>" in done["counters"]
    # A completed job may only be run again by hand (core/actions.py, as the sidebar offers).
    done = wait_card(nb, job["id"], lambda s: not s["buttons"]["run"][1])
    assert [k for k, (_, disabled, _) in done["buttons"].items() if not disabled] == ["run"]
    assert done["faded"] == ["cancel", "pause", "skip", "stop"]


def test_updates_are_sent_from_the_listener_thread_while_a_cell_runs(nb, server, tmp_path):
    # The run is started over REST once the cell is seen running, and the cell ends only when
    # the test releases it after the update came: no timing margin decides the outcome.
    nb.ok('%schedule in 1h: print("while the kernel is busy")')
    job = only_job(server)
    release = tmp_path / "release"
    drain_iopub(nb)
    msg_id = nb.client.execute(BUSY_UNTIL.format(path=str(release)), store_history=False)
    busy_seen = streamed = idle = False
    deadline = time.monotonic() + 60
    while not idle and time.monotonic() < deadline:
        msg = _iopub_or_none(nb)
        if msg is None:
            continue
        mine = msg["parent_header"].get("msg_id") == msg_id
        if mine and msg["msg_type"] == "stream" and "busy" in msg["content"]["text"]:
            busy_seen = True
            server.request("POST", f"/api/recall/jobs/{job['id']}/trigger")
        elif (
            busy_seen
            and msg["msg_type"] == "comm_msg"
            and "while the kernel is busy" in (json.dumps(msg["content"]))
        ):
            streamed = True
            release.touch()
        elif mine and msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            idle = True
    nb.client.get_shell_msg(timeout=10)
    assert busy_seen, "the busy cell never started"
    assert streamed, "the run's update did not come while the cell ran"
    assert idle
    assert "while the kernel is busy" in card_state(nb, job["id"])["output"]


BUSY_UNTIL = """
import os, time
print("busy", flush=True)
_until = time.monotonic() + 45
while not os.path.exists({path!r}) and time.monotonic() < _until:
    time.sleep(0.05)
"""


def _iopub_or_none(nb: Kernel) -> dict[str, Any] | None:
    try:
        return nb.client.get_iopub_msg(timeout=0.5)
    except queue.Empty:
        return None


def test_buttons_call_the_api(nb, server):
    nb.ok('%schedule --name ticker every 1h: print("tick")')
    job = only_job(server)
    buttons = card_state(nb, job["id"])["buttons"]

    click(nb, buttons["pause"][2])
    wait_until(lambda: server.job(job["id"])["status"] == "paused")
    state = wait_card(nb, job["id"], lambda s: s["buttons"]["pause"][0] == "Resume")
    assert "paused" in state["countdown"]

    click(nb, buttons["pause"][2])
    wait_until(lambda: server.job(job["id"])["status"] == "active")
    wait_card(nb, job["id"], lambda s: s["buttons"]["pause"][0] == "Pause")

    click(nb, buttons["run"][2])
    server.finished_runs(job["id"])
    state = wait_card(nb, job["id"], lambda s: 'data-status="succeeded"' in s["run"])
    assert state["output"] == "tick\n"

    before = server.job(job["id"])["next_fire_at"]
    click(nb, buttons["skip"][2])
    wait_until(lambda: server.job(job["id"])["next_fire_at"] != before)
    state = wait_card(nb, job["id"], lambda s: any("skipped" in t for t in s["history"]))
    # A skip is recorded as a run without output: it goes to the history, the last run stays.
    assert 'data-status="succeeded"' in state["run"]
    assert "skipped the next occurrence" in state["message"]

    click(nb, buttons["cancel"][2])
    wait_until(lambda: server.job(job["id"])["status"] == "cancelled")
    state = wait_card(nb, job["id"], lambda s: s["buttons"]["run"][1])
    assert "ended (cancelled)" in state["countdown"]


def test_a_refused_action_is_said_in_the_card(nb, server):
    nb.ok('%schedule in 1h: print("once")')
    job = only_job(server)
    skip = card_state(nb, job["id"])["buttons"]["skip"]
    assert skip[1] is True
    # A disabled button is not clickable in a browser; sent anyway, the server refuses it.
    click(nb, skip[2])
    state = wait_card(nb, job["id"], lambda s: s["message"])
    assert "skip:" in state["message"]
    assert "#c62828" in state["message"]
    assert server.job(job["id"])["status"] == "active"


def test_changes_made_over_rest_are_pushed_to_the_card(nb, server):
    nb.ok('%schedule --name rest-driven every 1h: print("from a trigger")')
    job = only_job(server)
    state = card_state(nb, job["id"])
    drain_iopub(nb)

    server.request("POST", f"/api/recall/jobs/{job['id']}/pause")
    comm_updates(nb, lambda seen: any(">paused<" in state_text(m) for m in seen))
    server.request("POST", f"/api/recall/jobs/{job['id']}/resume")
    server.request("POST", f"/api/recall/jobs/{job['id']}/trigger")
    updates = comm_updates(nb, lambda seen: any("from a trigger" in state_text(m) for m in seen))
    assert any(m["content"]["comm_id"] == state["output_id"] for m in updates)
    server.finished_runs(job["id"])
    state = wait_card(nb, job["id"], lambda s: ">succeeded<" in s["counters"])
    assert ">running<" not in state["counters"]

    server.request("DELETE", f"/api/recall/jobs/{job['id']}")
    comm_updates(nb, lambda seen: any("this job was deleted" in state_text(m) for m in seen))


def test_recall_shows_a_card(nb, server):
    out = nb.ok("%recall in 1h: Read the build log and report.")
    assert any(WIDGET in bundle for bundle in out.displays)
    (recall,) = server.jobs(kind="recall")
    state = card_state(nb, recall["id"])
    assert "recall" in state["header"]
    assert "Read the build log" in state["header"]


def test_jobs_panel_filters_selects_and_updates_live(nb, server):
    nb.ok('%schedule --name first every 1h: print("one")')
    (first,) = server.jobs()
    out = nb.ok("%jobs")
    (shown,) = out.displays
    assert WIDGET in shown
    assert first["id"] in shown["text/plain"]  # the table stays as the fallback
    assert f"<td>{first['id']}</td>" in shown["text/html"]

    panel = """
p = _panel()
print(json.dumps({"ids": [j["id"] for j in p.jobs], "card": p.card and p.card.job_id,
    "labels": [o[0] for o in p.select.options], "timeline": p.timeline.value,
    "select": p.select.model_id, "status": p.status.model_id,
    "options": [o[0] for o in p.status.options], "folded": p.recent.selected_index is None,
    "parts": [type(w).__name__ for w in p.widget.children]}))
"""
    state = nb.json(STATE + panel)
    assert state["ids"] == [first["id"]]
    assert state["card"] == first["id"]
    # One list, the selected job's card under it, the timeline folded: nothing else competes.
    assert state["parts"] == ["HBox", "HTML", "Select", "VBox", "Accordion"]
    assert state["folded"]
    (label,) = state["labels"]
    assert re.fullmatch(rf"first · active · next \S+ \S+( \S+)? · job {first['id']}", label)

    second = server.request(
        "POST",
        "/api/recall/jobs",
        {
            "when": "every 2h",
            "name": "made over REST",
            "action": {"type": "code", "code": "print('two')"},
            "target": {"type": "kernel", "path": nb.path},
            "session": nb.path,
        },
    )
    state = wait_until(lambda: (s := nb.json(STATE + panel)) and len(s["ids"]) == 2 and s)
    assert any(label.startswith("made over REST · active") for label in state["labels"])

    set_index(nb, state["select"], state["ids"].index(second["id"]))
    wait_until(lambda: nb.json(STATE + panel)["card"] == second["id"])

    server.request("POST", f"/api/recall/jobs/{first['id']}/trigger")
    server.finished_runs(first["id"])
    state = wait_until(
        lambda: (s := nb.json(STATE + panel)) and 'data-status="succeeded"' in s["timeline"] and s
    )

    server.request("POST", f"/api/recall/jobs/{second['id']}/pause")
    set_index(nb, state["status"], state["options"].index("paused"))
    state = wait_until(lambda: (s := nb.json(STATE + panel)) and s["ids"] == [second["id"]] and s)
    assert not any(first["id"] in label for label in state["labels"])


def test_jobs_without_ipywidgets_is_the_table(nb, server):
    nb.ok('%schedule in 1h: print("x")')
    job = only_job(server)
    out = nb.ok(
        "import sys\nsaved = sys.modules.get('ipywidgets')\nsys.modules['ipywidgets'] = None\n"
        "try:\n    get_ipython().run_line_magic('jobs', '')\n"
        "finally:\n    sys.modules['ipywidgets'] = saved"
    )
    (bundle,) = out.displays
    assert WIDGET not in bundle
    assert job["id"] in bundle["text/plain"]


def test_a_watcher_card_shows_its_results_and_a_sparkline(nb, server):
    gauge = server.root / "gauge.txt"
    gauge.write_text("level 3\n")
    watcher_id = nb.json(
        STATE + "from jupyter_recall.kernel.watchers.watch import watch_start\n"
        "w = watch_start('filesystem.read', {'path': 'gauge.txt'}, interval=3600,"
        " notify_when='always')\n"
        "_widgets.job_card(w)\n"
        "print(json.dumps(w['watcher_id']))"
    )
    for level in (3, 5, 4):
        gauge.write_text(f"level {level}\n")
        done = len([run for run in server.runs(watcher_id) if run["status"] != "running"])
        server.request("POST", f"/api/recall/jobs/{watcher_id}/trigger")
        server.finished_runs(watcher_id, count=done + 1)
    results = f"print(json.dumps(_widgets.cards_for({watcher_id!r})[0].results.value))"
    shown = wait_until(lambda: (v := nb.json(STATE + results)) and "last 4" in v and v)
    assert "jupyter-recall-sparkline" in shown
    assert "min 3, max 5, last 4" in shown
    assert "level 4" in shown
    assert card_state(nb, watcher_id)["header"].count("watcher") == 1
