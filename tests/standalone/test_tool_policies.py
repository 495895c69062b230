"""RecallScheduler checks tool_policies as the server does: an unknown policy must not fail open."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from traitlets import TraitError

from jupyter_recall.server.app import RecallApp
from jupyter_recall.standalone.app import RecallScheduler
from tests.standalone.scheduler_process import run_scheduler_command


@pytest.mark.parametrize(
    ("policies", "message"),
    [
        (
            {"shell.run": "maybe"},
            r"tool_policies\['shell.run'\]: unknown policy 'maybe' \(accepted",
        ),
        ({"": "auto"}, r"tool_policies: "),
    ],
)
def test_a_bad_tool_policy_is_refused_as_by_the_server(policies, message):
    with pytest.raises(TraitError, match=rf"RecallScheduler\.{message}") as refused:
        RecallScheduler(tool_policies=policies)
    with pytest.raises(TraitError) as by_server:
        RecallApp(tool_policies=policies)
    assert str(refused.value).removeprefix("RecallScheduler") == str(by_server.value).removeprefix(
        "RecallApp"
    )


def test_a_good_tool_policy_is_kept():
    assert RecallScheduler(tool_policies={"shell.run": "approve"}).tool_policies == {
        "shell.run": "approve"
    }


def test_the_command_refuses_an_unknown_policy_in_one_line(tmp_path: Path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"RecallScheduler": {"tool_policies": {"shell.run": "maybe"}}}))
    result = run_scheduler_command(
        tmp_path, f"--db-url=sqlite:///{tmp_path / 'jobs.sqlite'}", f"--config={config}"
    )
    assert result.returncode != 0
    assert "jobs in" not in result.stderr
    assert "RecallScheduler.tool_policies['shell.run']: unknown policy 'maybe'" in result.stderr
    assert "Traceback" not in result.stderr


def test_the_servers_tool_policies_apply_unless_the_schedulers_own_are_set(tmp_path: Path):
    """An admin who blocks a tool for the servers (``c.RecallApp.tool_policies`` in the config
    file both read) blocks it for the scheduled tool jobs the scheduler runs too."""
    config = tmp_path / "jupyter_server_config.json"
    server_only = {"RecallApp": {"tool_policies": {"shell.run": "block"}, "approval_timeout": 60}}
    config.write_text(json.dumps(server_only))
    scheduler = RecallScheduler()
    scheduler.initialize([f"--config={config}", f"--db-url=sqlite:///{tmp_path / 'j.sqlite'}"])
    assert scheduler.tool_policies == {"shell.run": "block"}
    assert scheduler.approval_timeout == 60.0
    both = {**server_only, "RecallScheduler": {"tool_policies": {"shell.run": "auto"}}}
    config.write_text(json.dumps(both))
    own = RecallScheduler()
    own.initialize([f"--config={config}", f"--db-url=sqlite:///{tmp_path / 'j.sqlite'}"])
    assert own.tool_policies == {"shell.run": "auto"}


def test_a_servers_bad_policy_is_refused_saying_where_it_came_from(tmp_path: Path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"RecallApp": {"tool_policies": {"shell.run": "maybe"}}}))
    result = run_scheduler_command(
        tmp_path, f"--db-url=sqlite:///{tmp_path / 'jobs.sqlite'}", f"--config={config}"
    )
    assert result.returncode == 2, result.stderr
    assert "unknown policy 'maybe'" in result.stderr
    assert "set as RecallApp's" in result.stderr
