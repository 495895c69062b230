"""Each agent tool through `jupyter_recall.agent.dispatch` in a real kernel under a real server."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.kernel.conftest import Kernel, wait_until


def call(nb: Kernel, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """Call a tool as an agent loop does, with the arguments as the JSON text an LLM returns."""
    code = f"print(json.dumps(jupyter_recall.agent.dispatch({name!r}, {json.dumps(arguments)!r})))"
    return dict(nb.json(code))


def ok(nb: Kernel, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = call(nb, name, arguments)
    assert result["ok"] is True, result
    assert result["tool"] == name
    # Every answer starts with its head, whatever the tool adds after it.
    assert list(result)[:2] == ["ok", "tool"], result
    return result


def test_schedule_recall_once_and_manage_it(nb, server):
    result = ok(
        nb,
        "schedule_recall",
        {
            "call_type": "once",
            "when": "in 30m",
            "internal_comment": "build check",
            "additional_context_message": "Read /tmp/build.log; if it failed, report the errors.",
        },
    )
    rid = result["recall_id"]
    assert result["status"] == "pending"
    assert result["call_type"] == "once"
    assert result["session"] == nb.path
    job = server.job(rid)
    assert job["kind"] == "recall"
    assert job["name"] == "build check"
    assert job["action"]["comment"] == "build check"
    assert result["trigger_at"] == job["next_fire_at"]

    refused = call(
        nb, "schedule_recall", {"call_type": "immediate", "additional_context_message": "other"}
    )
    assert refused["ok"] is False
    assert f"already has a pending recall {rid}" in refused["error"]
    assert "manage_recall action=cancel" in refused["error"]
    assert "%recall" not in refused["error"]  # the magic, not a tool of the agent's

    listed = ok(nb, "manage_recall", {"action": "list"})
    assert listed["pending"]["recall_id"] == rid
    assert [r["recall_id"] for r in listed["recalls"]] == [rid]

    assert ok(nb, "manage_recall", {"action": "cancel"})["cancelled"] == rid
    assert server.job(rid)["status"] == "cancelled"
    after = ok(nb, "manage_recall", {"action": "list"})
    assert after["pending"] is None
    assert [(r["recall_id"], r["status"]) for r in after["recalls"]] == [(rid, "cancelled")]
    nothing = call(nb, "manage_recall", {"action": "cancel"})
    assert nothing["ok"] is False
    assert nothing["field"] == "action"
    assert "no pending recall" in nothing["error"]


def test_schedule_recall_recurring_and_skip(nb, server):
    result = ok(
        nb,
        "schedule_recall",
        {
            "call_type": "recurring",
            "interval_seconds": 900,
            "additional_context_message": "Read /var/log/app/errors.log; summarise new ERRORs.",
        },
    )
    job = server.job(result["recall_id"])
    assert job["when"] == "every 900s"
    assert job["canonical"] == "every 15m"
    assert result["interval_seconds"] == 900
    skipped = ok(nb, "manage_recall", {"action": "skip"})
    assert skipped["skipped"] == job["id"]
    assert skipped["trigger_at"] > job["next_fire_at"]
    ok(nb, "manage_recall", {"action": "cancel"})

    daily = ok(
        nb,
        "schedule_recall",
        {
            "call_type": "recurring",
            "when": "every day at 09:00",
            "timezone_offset": "+02:00",
            "additional_context_message": "Post the daily summary.",
        },
    )
    job = server.job(daily["recall_id"])
    assert (job["canonical"], job["tz"]) == ("0 9 * * *", "+02:00")
    assert job["next_fire_at"].endswith("07:00:00+00:00")


def test_schedule_recall_immediate_goes_to_the_handler(nb, server):
    nb.ok("jupyter_recall.on_recall(lambda text, job: print('agent got:', text, job.kind))")
    result = ok(
        nb, "schedule_recall", {"call_type": "immediate", "additional_context_message": "go on"}
    )
    (run,) = server.finished_runs(result["recall_id"])
    assert run["output"] == "agent got: go on recall\n"
    # It fired: not pending any more, listed as fired.
    listed = ok(nb, "manage_recall", {"action": "list"})
    assert listed["pending"] is None
    assert listed["recalls"][0]["status"] == "fired"


def test_schedule_once_notification_comes_back_as_a_notification(nb, server):
    result = ok(
        nb,
        "schedule_once",
        {"when": "in 1s", "prompt": "stretch your legs", "label": "break"},
    )
    job = server.job(result["job_id"])
    assert job["action"] == {
        "type": "notification",
        "message": "stretch your legs",
        "title": "break",
    }
    assert job["target"] == {"type": "server"}
    assert job["session"] == nb.path
    assert result["schedule_type"] == "once"
    assert result["run_at"] == job["next_fire_at"]
    notes = nb.json("print(json.dumps(jupyter_recall.notifications.wait(timeout=15)))", timeout=20)
    (note,) = [n for n in notes if n["job_id"] == job["id"]]
    assert "stretch your legs" in note["output"]


def test_schedule_once_llm_prompt_and_tool_call(nb, server):
    nb.ok("jupyter_recall.on_recall(lambda text, job: print('prompted:', text, job.kind))")
    prompt = ok(
        nb, "schedule_once", {"when": "now", "action_type": "llm_prompt", "prompt": "check inbox"}
    )
    (run,) = server.finished_runs(prompt["job_id"])
    assert run["output"] == "prompted: check inbox job\n"

    tool = ok(
        nb,
        "schedule_once",
        {
            "when": "in 1h",
            "action_type": "tool_call",
            "tool_name": "http.get",
            "tool_params": {"url": "https://example.org/health"},
            "output_channel": "ops",
            "output_config": {"level": "info"},
        },
    )
    job = server.job(tool["job_id"])
    assert job["action"] == {
        "type": "tool",
        "name": "http.get",
        "params": {"url": "https://example.org/health"},
    }
    assert job["options"] == {"output_channel": "ops", "output_config": {"level": "info"}}
    assert tool["output_channel"] == "ops"


def test_schedule_cron_list_status_cancel(nb, server):
    cron = ok(
        nb,
        "schedule_cron",
        {"cron": "*/5 * * * *", "prompt": "API health?", "label": "health", "max_runs": 3},
    )
    job = server.job(cron["job_id"])
    assert (job["canonical"], job["policies"]["max_runs"], job["name"]) == (
        "*/5 * * * *",
        3,
        "health",
    )
    unlimited = ok(nb, "schedule_cron", {"cron": "every 2h", "prompt": "x", "max_runs": 0})
    assert server.job(unlimited["job_id"])["policies"]["max_runs"] is None
    assert server.job(unlimited["job_id"])["policies"]["timeout"] is None
    limited = ok(nb, "schedule_once", {"when": "in 1h", "prompt": "x", "timeout_seconds": 45})
    assert server.job(limited["job_id"])["policies"]["timeout"] == 45
    guarded = ok(
        nb,
        "schedule_cron",
        {
            "cron": "every 2h",
            "prompt": "x",
            "pause_after_failures": 2,
            "keep_runs": 5,
            "keep_runs_for_seconds": 86400,
        },
    )
    kept = server.job(guarded["job_id"])["policies"]
    assert (kept["pause_after_failures"], kept["keep_runs"], kept["keep_runs_for"]) == (
        2,
        5,
        86400,
    )
    server.request("DELETE", f"/api/recall/jobs/{guarded['job_id']}")
    server.request("DELETE", f"/api/recall/jobs/{limited['job_id']}")

    listed = ok(nb, "schedule_list", {})
    assert {j["job_id"] for j in listed["jobs"]} == {cron["job_id"], unlimited["job_id"]}
    assert listed["total"] == 2
    assert listed["active"] == 2
    ok(nb, "schedule_cancel", {"job_id": unlimited["job_id"]})
    assert ok(nb, "schedule_list", {"status": "cancelled"})["total"] == 1
    nb.ok(f"%schedule pause {cron['job_id']}")
    assert ok(nb, "schedule_list", {"status": "active"})["total"] == 0
    assert ok(nb, "schedule_list", {"status": "paused"})["jobs"][0]["job_id"] == cron["job_id"]

    nb.ok(f"%schedule run {cron['job_id']}")
    wait_until(
        lambda: (
            server.runs(cron["job_id"]) and server.runs(cron["job_id"])[0]["status"] != "running"
        )
    )
    status = ok(nb, "schedule_status", {"job_id": cron["job_id"]})
    assert status["job"]["job_id"] == cron["job_id"]
    assert status["job"]["status"] == "paused"
    assert status["job"]["action"]["message"] == "API health?"
    assert status["recent_runs"][0]["status"] == "succeeded"
    assert "API health?" in status["recent_runs"][0]["output"]

    cancelled = ok(nb, "schedule_cancel", {"job_id": cron["job_id"]})
    assert (cancelled["cancelled"], cancelled["status"]) == (cron["job_id"], "cancelled")
    assert server.job(cron["job_id"])["status"] == "cancelled"
    gone = call(nb, "schedule_cancel", {"job_id": "000000000000"})
    assert gone == {"ok": False, "error": "job '000000000000' not found", "field": "job_id"}


def test_remember(nb, server):
    soon = ok(nb, "remember", {"what": "check the deployment", "when": "in 1s"})
    job = server.job(soon["job_id"])
    assert job["action"]["type"] == "notification"
    assert soon["what"] == "check the deployment"
    notes = nb.json("print(json.dumps(jupyter_recall.notifications.wait(timeout=15)))", timeout=20)
    assert any("check the deployment" in n.get("output", "") for n in notes)

    daily = ok(
        nb,
        "remember",
        {"what": "Summarise today's runs", "when": "every day at 18:00", "action": "llm_prompt"},
    )
    job = server.job(daily["job_id"])
    assert job["action"] == {"type": "instruction", "instruction": "Summarise today's runs"}
    assert job["target"] == {"type": "kernel", "path": nb.path}
    assert daily["schedule_type"] == "cron"


@pytest.mark.parametrize(
    "case",
    [
        (
            "schedule_recall",
            {"call_type": "once", "when": "in a fortnightish", "additional_context_message": "x"},
            "when",
            "Accepted forms:",
        ),
        (
            "schedule_recall",
            {"call_type": "once", "when": "every 5m", "additional_context_message": "x"},
            "when",
            "'every 5m' is a schedule of kind 'interval': call_type 'once' needs a one-time 'when'",
        ),
        (
            "schedule_recall",
            {"call_type": "recurring", "when": "in 5m", "additional_context_message": "x"},
            "when",
            "is a schedule of kind 'once'",
        ),
        (
            "schedule_recall",
            {
                "call_type": "once",
                "when": "tomorrow at 09:00",
                "timezone_offset": "+25:00",
                "additional_context_message": "x",
            },
            "timezone_offset",
            "timezone_offset: ",
        ),
        ("schedule_once", {"when": "yesterday-ish", "prompt": "x"}, "when", "cannot parse"),
        ("schedule_once", {"when": "every 5m", "prompt": "x"}, "when", "use schedule_cron"),
        (
            "schedule_once",
            {"when": "in 5m", "action_type": "tool_call", "tool_name": "nodot"},
            "tool_name",
            "tool_name: must look like 'module.action'",
        ),
        ("schedule_cron", {"cron": "in 5m", "prompt": "x"}, "cron", "use schedule_once"),
        ("schedule_cron", {"cron": "61 * * * *", "prompt": "x"}, "cron", "cron: "),
        ("schedule_status", {"job_id": "000000000000"}, "job_id", "not found"),
        ("schedule_status", {"job_id": "counts"}, "job_id", "job 'counts' not found"),
        ("schedule_cancel", {"job_id": "counts"}, "job_id", "job 'counts' not found"),
        ("remember", {"what": "x", "when": "whenever"}, "when", "Accepted forms:"),
    ],
)
def test_bad_input_checked_by_the_server_names_the_argument(nb, server, case):
    tool, arguments, field, words = case
    result = call(nb, tool, arguments)
    assert result["ok"] is False, result
    assert result["field"] == field, result
    assert words in result["error"], result
    assert server.jobs() == []


def test_schedule_tools_take_retries(nb, server):
    retried = ok(nb, "schedule_once", {"when": "in 1h", "prompt": "x", "retries": 2})
    assert server.job(retried["job_id"])["policies"]["retries"]["max"] == 2
    plain = ok(nb, "schedule_cron", {"cron": "every 2h", "prompt": "x", "retries": 0})
    assert server.job(plain["job_id"])["policies"]["retries"] is None
    too_many = call(nb, "schedule_once", {"when": "in 1h", "prompt": "x", "retries": 1000})
    assert too_many["ok"] is False, too_many
    assert too_many["field"] == "retries", too_many
    assert "from 0 to 100" in too_many["error"], too_many


def test_a_session_id_no_url_can_hold_is_refused_naming_it(nb, server):
    # An agent's JSON text: a lone surrogate was a UnicodeEncodeError in the URL's query.
    for text, words in (
        ('{"action": "list", "session_id": "\\ud800"}', "holds a lone UTF-16 surrogate"),
        ('{"action": "list", "session_id": "a\\u0000b"}', "must not contain a NUL character"),
    ):
        answer = nb.json(
            f"print(json.dumps(jupyter_recall.agent.dispatch('manage_recall', {text!r})))"
        )
        assert answer["ok"] is False, answer
        assert answer["field"] == "session_id", answer
        assert answer["error"].startswith(f"session_id: {words}"), answer


@pytest.mark.parametrize(
    ("tool", "arguments", "field"),
    [
        ("run_parallel", "{'actions': VALUE}", "actions"),
        ("background_wait", "{'task_id': 'x', 'timeout': VALUE}", "timeout"),
        ("send_notification", "{'channel': 'log', 'message': 'hi', 'tags': VALUE}", "tags"),
    ],
)
def test_python_values_that_are_no_json_are_named_not_internal_errors(nb, tool, arguments, field):
    # From Python, arguments may hold what JSON cannot: they were "internal error ...:
    # TypeError: Object of type bytes is not JSON serializable".
    answers = nb.json(
        "print(json.dumps([jupyter_recall.agent.dispatch("
        f"{tool!r}, {arguments.replace('VALUE', 'value')}) for value in (b'x', object())]))"
    )
    for answer in answers:
        assert answer["ok"] is False, answer
        assert answer["field"] == field, answer
        assert "internal error" not in answer["error"], answer
