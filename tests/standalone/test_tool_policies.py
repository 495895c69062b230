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
