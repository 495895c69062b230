"""The kernel boundary of the magics, in a real kernel under a real server: what was typed is
what is stored (no ``{expr}``/``$name`` expansion), parsing is linear in the line's length, and
bad input gets a message that names what is wrong."""

from __future__ import annotations

import time
from datetime import datetime

import pytest

VERBATIM = "print({y}, f'{y}', $y, '$y')"


@pytest.fixture
def y(nb):
    """A variable IPython would substitute into a magic's line if the magic let it."""
    nb.ok("y = 5")
    return nb


def only_job(server, **query):
    (job,) = server.jobs(**query)
    return job


def test_schedule_stores_the_code_as_typed(y, server):
    y.ok(f"%schedule --name 'n {{y}}' in 1h: {VERBATIM}")
    job = only_job(server)
    assert job["action"]["code"] == VERBATIM
    assert job["name"] == "n {y}"


def test_cell_schedule_keeps_its_line_and_body_as_typed(y, server):
    y.ok(f"%%schedule --name $y in 1h\n{VERBATIM}\n")
    job = only_job(server)
    assert job["action"]["code"] == f"{VERBATIM}\n"
    assert job["name"] == "$y"


def test_recall_stores_the_instruction_as_typed(y, server):
    y.ok("%recall in 1h: check {y} and $y, then {y + 1}")
    assert only_job(server, kind="recall")["action"]["instruction"] == (
        "check {y} and $y, then {y + 1}"
    )


def test_watch_stores_params_and_label_as_typed(y, server):
    (server.root / "w-{y}.txt").write_text("watched")
    out = y.ok("%watch filesystem.read path=w-{y}.txt --label '$y {y}' --every 3600")
    assert "Traceback" not in out.text, out.text
    (watcher,) = server.request("GET", "/api/recall/watchers")["watchers"]
    assert watcher["params"] == {"path": "w-{y}.txt"}
    assert watcher["label"] == "$y {y}"
    server.request("DELETE", f"/api/recall/watchers/{watcher['watcher_id']}")


def test_heartbeat_stores_its_file_as_typed(y, server):
    (server.root / "beat-{y}.md").write_text("- say hello\n")
    out = y.ok("%heartbeat every 1h beat-{y}.md")
    assert "Traceback" not in out.text, out.text
    (job,) = server.jobs()
    assert job["name"].endswith("beat-{y}.md"), job["name"]


def test_parallel_reads_the_line_as_typed(y, server):
    (server.root / "p-{y}.txt").write_text("braces kept")
    result = y.json(
        "r = %parallel filesystem.read path=p-{y}.txt\nprint(json.dumps(r[0]['data']['content']))"
    )
    assert result == "braces kept"


def test_jobs_reads_its_line_as_typed(y):
    assert "unexpected '{y}'" in y.ok("%jobs {y}").stderr


def _schedule_long_line(nb, server, size: int) -> float:
    """Seconds the kernel takes to schedule a line of ``size`` characters of code."""
    server.delete_all_jobs()
    code = "print('" + "a {y} $y " * (size // 9) + "')"
    began = time.monotonic()
    out = nb.ok(f"%schedule in 1h: {code}", timeout=120)
    took = time.monotonic() - began
    assert out.stderr == "", out.stderr[:500]
    assert only_job(server)["action"]["code"] == code
    return took


def test_a_long_line_is_parsed_in_linear_time(y, server):
    # IPython's expansion took 8 s for 40 KB and 150 s for 200 KB (quadratic): 200 KB must take
    # about what 100 KB takes, and a few seconds at most even on a loaded machine.
    half = _schedule_long_line(y, server, 100_000)
    full = _schedule_long_line(y, server, 200_000)
    assert full < 10, f"200 KB took {full:.1f} s"
    assert full < 4 * half + 2, f"100 KB: {half:.2f} s, 200 KB: {full:.2f} s"


def test_an_exclusive_runs_started_at_is_when_its_code_started(nb, server):
    code = "import datetime; print(datetime.datetime.now(datetime.UTC).isoformat())"
    nb.ok(f"%schedule --exclusive in 3s: {code}")
    job = only_job(server)
    nb.ok("import time; time.sleep(6)", timeout=60)  # the run waits for this cell
    (run,) = server.finished_runs(job["id"], timeout=60)
    assert run["status"] == "succeeded", run
    started, scheduled = (
        datetime.fromisoformat(run[key]) for key in ("started_at", "scheduled_for")
    )
    ran_at = datetime.fromisoformat(run["output"].strip())
    # Queued at its fire time, it started once the cell ended, about 3 s later.
    assert (started - scheduled).total_seconds() >= 1.5, run
    assert started <= ran_at


def test_a_fresh_kernel_every_few_seconds_is_warned_about(nb, server):
    headless = nb.ok("%schedule --headless every 10s: x = 1")
    server.delete_all_jobs()  # before its first run starts a kernel
    assert "warning: this schedule starts a fresh kernel every 10 s" in headless.stderr
    live = nb.ok("%schedule every 10s: x = 1")  # this kernel: nothing is started per run
    server.delete_all_jobs()
    assert "warning" not in live.stderr


def test_an_id_argument_may_name_a_variable(nb, server):
    nb.ok("h = jupyter_recall.schedule('in 1h', 'x = 1')")
    job_id = only_job(server)["id"]
    assert f"paused job {job_id}: paused" in nb.ok("%schedule pause {h.id}").stdout
    assert f"resumed job {job_id}: active" in nb.ok("%schedule resume $h.id").stdout
    missing = nb.ok("%schedule status {no_such_variable}")
    assert "id: cannot evaluate '{no_such_variable}': NameError" in missing.stderr
    assert "Traceback" not in missing.text
