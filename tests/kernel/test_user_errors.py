"""Bad input and an unreachable server in a real notebook kernel: one clear line naming the
field or option at fault (what is accepted), never a traceback, nothing started."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from jupyter_recall.core.errors import PassedWhilePaused
from jupyter_recall.kernel.jobs import api
from jupyter_recall.kernel.magics.jobs import resume_job
from tests.kernel.conftest import Kernel
from tests.server.live_server import free_port

UNREACHABLE = """
from jupyter_recall.kernel.connection import client as _c
_c.set_client(_c.Client(_c.ServerInfo('http://127.0.0.1:{port}/', '', 'test'), timeout=2))
_c.forget_identity()
"""
REACHABLE = """
from jupyter_recall.kernel.connection import client as _c
_c.set_client(None)
_c.forget_identity()
"""


@pytest.fixture
def unreachable(nb: Kernel) -> Iterator[Kernel]:
    """The notebook's kernel talking to a port nothing listens on, restored afterwards."""
    nb.ok(UNREACHABLE.format(port=free_port()))
    try:
        yield nb
    finally:
        nb.ok(REACHABLE)


def one_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, text
    return lines[0]


def test_jobs_without_the_server_says_so_in_one_line(unreachable: Kernel):
    out = unreachable.run("%jobs")
    assert out.error is None, out.error
    assert "Traceback" not in out.text
    assert out.displays == []
    assert "cannot reach the Jupyter server" in one_line(out.stderr)


def test_require_server_kernel_without_the_server_is_a_usage_error(unreachable: Kernel):
    out = unreachable.run("jupyter_recall.require_server_kernel()")
    assert out.error is None, out.error  # IPython shows a UsageError as one line
    assert one_line(out.stderr).startswith("UsageError: jupyter_recall: cannot reach the Jupyter")


MISSING_PATH = (
    "params: filesystem.read: missing a required argument: 'path' (accepted: path, encoding)"
)


def test_a_watcher_whose_params_do_not_fit_its_tool_is_refused(nb: Kernel, server):
    out = nb.run("%watch filesystem.read")
    assert out.error is None, out.error
    assert MISSING_PATH in one_line(out.stderr)
    out = nb.run("%watch filesystem.read badparam=1")
    assert out.error is None, out.error
    assert MISSING_PATH in one_line(out.stderr)
    out = nb.run("%watch filesystem.read path=x.md badparam=1")
    assert out.error is None, out.error
    assert "params: filesystem.read: got an unexpected keyword argument 'badparam'" in out.stderr
    answer = nb.json(
        "print(json.dumps(jupyter_recall.agent.dispatch('watch_start', "
        "{'name': 'filesystem.read', 'params': {'bogus': 1}})))"
    )
    assert answer["ok"] is False
    assert answer["field"] == "params"
    assert answer["error"] == MISSING_PATH
    assert server.jobs() == []


def test_params_that_are_not_a_dict_are_named(nb: Kernel, server):
    answers = nb.json(
        "print(json.dumps([jupyter_recall.run_tool('shell.run', [1]),"
        " jupyter_recall.run_tool('shell.run', 'echo')]))"
    )
    for answer in answers:
        assert answer["success"] is False
        assert answer["error"].startswith("params: must be an object")
    calls = {
        "jupyter_recall.background_run('shell.run', [1])": "params",
        "jupyter_recall.watch_start('filesystem.read', [1])": "params",
        "jupyter_recall.schedule('in 1h', tool='shell.run', params=[1])": "params",
        "jupyter_recall.schedule('in 1h', 'x', options='x')": "options",
    }
    for call, field in calls.items():
        refused = nb.json(
            f"try:\n    {call}\nexcept jupyter_recall.ValidationError as e:\n"
            "    print(json.dumps([e.field, str(e)]))"
        )
        assert refused[0] == field, (call, refused)
        assert refused[1].startswith(f"{field}: must be an object"), refused
    assert server.jobs() == []


ECHO = "[{'name': 'shell.run', 'params': {'command': 'echo hi'}}]"


def test_run_parallel_refuses_bad_limits_before_its_card_shows(nb: Kernel):
    out = nb.run("%parallel --limit http=0 http.get url=https://a.org")
    assert out.error is None, out.error
    assert out.displays == []
    assert one_line(out.stderr) == "%parallel: limits.http: must be an integer >= 1, got 0"
    for limits, message in (("{'shell': 0}", "limits.shell: must be"), ("'x'", "limits: must be")):
        out = nb.run(f"jupyter_recall.run_parallel({ECHO}, limits={limits})")
        assert out.displays == []
        assert out.error is not None
        assert "ValidationError" in out.error
        assert message in out.error


def test_sync_run_parallel_in_an_async_tool_shows_no_card(nb: Kernel):
    nb.ok(
        "@jupyter_recall.tool('audit.nested')\n"
        "async def nested():\n"
        f"    return jupyter_recall.run_parallel({ECHO})\n"
    )
    out = nb.run("print(json.dumps(jupyter_recall.run_tool('audit.nested')))")
    assert out.error is None, out.error
    assert out.displays == []
    assert "use the *_async function" in out.stdout


def test_recall_commands_refuse_a_job_that_is_not_a_recall(nb: Kernel, server):
    job = nb.json("print(json.dumps(jupyter_recall.schedule('in 1h', 'x = 1').id))")
    for name in ("cancel", "skip", "status"):
        out = nb.run(f"%recall {name} {job}")
        assert out.error is None, out.error
        assert one_line(out.stderr) == (
            f"{name}: job {job} is a job, not a recall; use %schedule {name} {job}"
        )
    assert server.job(job)["status"] == "active"


def test_cancelling_a_job_that_ended_says_so(nb: Kernel, server):
    job = nb.json("print(json.dumps(jupyter_recall.schedule('now', 'x = 1').id))")
    server.wait_for(lambda: server.job(job)["status"] == "completed", timeout=30)
    out = nb.ok(f"%schedule cancel {job}")
    assert out.stdout.strip() == f"job {job} already ended (completed): nothing to cancel"


def test_schedule_resume_catch_up_runs_a_one_shot_whose_time_passed_while_paused(
    nb: Kernel, server
):
    notify = {"type": "notification", "message": "late"}
    job = server.request("POST", "/api/recall/jobs", {"when": "in 1s", "action": notify})["id"]
    server.request("POST", f"/api/recall/jobs/{job}/pause")
    time.sleep(1.5)
    refused = nb.ok(f"%schedule resume {job}")
    assert "which passed while it was paused" in one_line(refused.stderr)
    # Each surface says its own way to catch up, not REST's catch_up=true.
    assert f"(%schedule resume --catch-up {job})" in one_line(refused.stderr)
    from_api = nb.json(
        f"try:\n    jupyter_recall.job({job!r}).resume()\n"
        "except Exception as error:\n    print(json.dumps(str(error)))"
    )
    assert f"(jupyter_recall.job({job!r}).resume(catch_up=True))" in from_api
    assert server.job(job)["status"] == "paused"
    resumed = nb.ok(f"%schedule resume --catch-up {job}")
    assert resumed.stderr == ""
    assert resumed.stdout.startswith(f"resumed job {job}: active")
    assert server.finished_runs(job)[0]["status"] == "succeeded"
    elsewhere = nb.ok(f"%schedule pause --catch-up {job}")
    assert one_line(elsewhere.stderr) == (
        "--catch-up: goes with resume: %schedule resume --catch-up <id>"
    )


def test_a_one_shot_passed_while_paused_is_told_the_magics_catch_up():
    class Passed(api.Job):
        def resume(self, *, catch_up: bool = False) -> api.Job:
            raise PassedWhilePaused(self.id, "2030-01-01T00:00:00+00:00", hint="catch_up=true")

    with pytest.raises(PassedWhilePaused) as refused:
        resume_job(Passed({"id": "3f9c2a1b7d0e"}), catch_up=False)
    assert str(refused.value) == (
        "job 3f9c2a1b7d0e was to run once at 2030-01-01T00:00:00+00:00, which passed while it "
        "was paused: resume it with catch-up (%schedule resume --catch-up 3f9c2a1b7d0e) to run "
        "it now, or cancel it"
    )


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            "%schedule frobnicate abc",
            "subcommand: unknown subcommand 'frobnicate' (to schedule, write '<when>: ...')",
        ),
        ("%schedule cancle abc", "subcommand: unknown subcommand 'cancle'; did you mean 'cancel'?"),
        ("%schedule list extra words", "list: takes no arguments, got 'extra words'"),
        ("%schedule list extra", "list: takes no arguments, got 'extra'"),
        ("%schedule info now", "info: takes no arguments, got 'now'"),
        ("%recall list extra", "list: takes no arguments, got 'extra'"),
        ("%watch list extra", "list: takes no arguments, got 'extra'"),
        ("%parallel --bogus http.get url=https://a.org", "--bogus: unknown option"),
        ('%%parallel\n{"name": "http.get"}', "must be a list of {name, params}, not an object"),
    ],
)
def test_mistyped_magics_say_what_is_wrong(nb: Kernel, server, line: str, message: str):
    out = nb.run(line)
    assert out.error is None, out.error
    assert out.displays == []
    assert message in one_line(out.stderr)
    assert server.jobs() == []


def test_agent_errors_name_the_argument_at_fault(nb: Kernel, server):
    answer = nb.json(
        "print(json.dumps(jupyter_recall.agent.dispatch('schedule_recall', {"
        "'call_type': 'recurring', 'interval_seconds': 10**30,"
        " 'additional_context_message': 'x'})))"
    )
    assert answer["ok"] is False
    assert answer["field"] == "interval_seconds", answer
    assert answer["error"].startswith(f"interval_seconds: {10**30}: ")
    assert server.jobs() == []


def test_the_approval_card_text_says_approval_needed_once(nb: Kernel):
    nb.ok(
        "jupyter_recall.set_tool_policy('filesystem.list', 'approve')\n"
        "tid = jupyter_recall.background_run('filesystem.list', {'path': '.'})"
    )
    try:
        texts: list[str] = []
        deadline = time.monotonic() + 30
        while not any("APPROVAL NEEDED" in text for text in texts):
            assert time.monotonic() < deadline, texts
            msg = nb.iopub(timeout=30)
            if msg["msg_type"] == "display_data":
                texts.append(msg["content"]["data"].get("text/plain", ""))
        (asked,) = [text for text in texts if "APPROVAL NEEDED" in text]
        assert asked.startswith("[APPROVAL NEEDED] filesystem.list(path='.')"), asked
        assert asked.count("APPROVAL NEEDED") == 1, asked
    finally:
        nb.ok(
            "for _r in jupyter_recall.approvals.pending():\n"
            "    jupyter_recall.approvals.answer(_r.request_id, False)\n"
            "jupyter_recall.background_wait(tid, 10)\n"
            "jupyter_recall.set_tool_policy('filesystem.list', None)"
        )


MAGICS = """
_m = get_ipython().magics_manager.magics
print(json.dumps({
    kind: {name: type(getattr(_m[kind].get(name), '__self__', _m[kind].get(name))).__name__
           for name in ('schedule', 'recall', 'rep', 'jobs', 'watch', 'parallel', 'heartbeat')}
    for kind in ('line', 'cell')
}))
"""


def test_unload_ext_puts_ipython_recall_back_and_rep_stays_the_history_helper(nb: Kernel):
    loaded = nb.json(MAGICS)
    assert loaded["line"]["recall"] == "RecallMagics"
    assert loaded["line"]["rep"] == "HistoryMagics"  # not our %recall through the alias
    assert loaded["line"]["heartbeat"] == "function"
    nb.ok("%history -l 1")  # the history magics loaded now leave our %recall in place
    assert nb.json(MAGICS) == loaded
    try:
        nb.ok("%unload_ext jupyter_recall")
        unloaded = nb.json(MAGICS)
        assert unloaded["line"]["recall"] == "HistoryMagics"
        assert unloaded["line"]["rep"] == "MagicAlias"
        for name in ("schedule", "jobs", "watch", "parallel", "heartbeat"):
            assert unloaded["line"][name] == "NoneType", name
        assert unloaded["cell"]["schedule"] == "NoneType"
        assert unloaded["cell"]["recall"] == "NoneType"
    finally:
        nb.ok("%load_ext jupyter_recall")
    assert nb.json(MAGICS) == loaded


def test_cancelling_a_cancelled_job_says_it_already_ended(nb: Kernel, server):
    job = nb.json("print(json.dumps(jupyter_recall.schedule('in 1h', 'x = 1').id))")
    first = nb.ok(f"%schedule cancel {job}")
    assert first.stdout.strip() == f"cancelled job {job}: cancelled, no run ahead"
    again = nb.ok(f"%schedule cancel {job}")
    assert again.stdout.strip() == f"job {job} already ended (cancelled): nothing to cancel"
    assert again.stderr == ""
    recall = nb.json("print(json.dumps(jupyter_recall.recall('in 1h', 'check').id))")
    cancelled = nb.ok(f"%recall cancel {recall}").stdout.strip()
    assert cancelled == f"cancelled recall {recall}: cancelled, no run ahead"
    again = nb.ok(f"%recall cancel {recall}")
    assert again.stdout.strip() == f"recall {recall} already ended (cancelled): nothing to cancel"


def test_a_cell_recall_without_a_time_says_to_put_it_on_the_first_line(nb: Kernel, server):
    out = nb.ok("%%recall\nRead the log and summarise it.\n")
    assert one_line(out.stderr) == (
        "when: missing: write the time on the magic's line, e.g. '%%recall in 30m'"
    )
    scheduled = nb.ok("%%schedule --name x\nprint(1)\n")
    assert "e.g. '%%schedule in 30m'" in one_line(scheduled.stderr)
    # The line magic keeps its own hint: the inline form.
    inline = nb.ok("%recall --name x")
    assert "write '<when>: <instruction>'" in one_line(inline.stderr)
    assert server.jobs() == []


def test_an_id_expression_may_hold_spaces_and_quotes(nb: Kernel, server):
    (server.root / "spaced.txt").write_text("s")
    nb.ok(
        "w = jupyter_recall.watch_start('filesystem.read', {'path': 'spaced.txt'}, interval=3600)\n"
        "j = jupyter_recall.schedule('in 1h', 'x = 1')\n"
        "ids = {'my watcher': w.id, \"my job\": j.id}"
    )
    wid, jid = nb.json("print(json.dumps([w.id, j.id]))")
    try:
        shown = nb.ok("%watch status {ids['my watcher']} --last 3")
        assert shown.stderr == ""
        assert shown.stdout.startswith(f"watcher {wid} ")
        shown = nb.ok('%watch history { ids["my watcher"] }')
        assert shown.stdout.startswith(f"watcher {wid} "), shown.text
        status = nb.ok("%schedule status {ids['my job']}")
        assert status.stdout.startswith(f"job {jid} "), status.text
        # More than one id is still refused, saying what the command takes.
        extra = nb.ok(f"%watch status {wid} {wid}")
        assert one_line(extra.stderr) == f"status: takes one watcher id, got '{wid} {wid}'"
        listed = nb.ok("%watch list {ids['my watcher']}")
        assert "list: takes no arguments, got" in one_line(listed.stderr)
    finally:
        nb.ok("jupyter_recall.watch_stop(w.id)")


def test_an_instruction_for_a_fresh_kernel_is_refused(nb: Kernel, server):
    nb.ok(
        "def refused(**given):\n"
        "    try:\n"
        "        jupyter_recall.schedule('in 1h', instruction='x', **given)\n"
        "    except jupyter_recall.ValidationError as error:\n"
        "        return [error.field, str(error)]\n"
    )
    for given in (
        "target='headless'",
        "kernel_name='python3'",
        "target={'type': 'headless', 'kernel_name': 'python3'}",
    ):
        field, message = nb.json(f"print(json.dumps(refused({given})))")
        assert field == "target", given
        assert "@on_recall handler" in message, message
    recall = nb.run(
        "jupyter_recall.recall('in 1h', 'x', target={'type': 'headless', 'kernel_name': 'py'})"
    )
    assert recall.error is not None
    assert "@on_recall handler" in recall.error
    assert server.jobs() == []
