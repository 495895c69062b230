"""Heartbeats: the beat's reading, skipping and gating in this process, then a heartbeat job
in a real notebook kernel whose handler fires only when the file changes."""

from __future__ import annotations

import pytest

from jupyter_recall.core.errors import ValidationError
from jupyter_recall.kernel.jobs import heartbeat, recall
from tests.kernel.conftest import Kernel, KernelServer, wait_until


@pytest.fixture
def handled(monkeypatch, tmp_path):
    """A handler recording instructions; a private data dir for the kept hashes; ``tmp_path``
    as the cwd, the tool root the beats read under (as filesystem.read does)."""
    from jupyter_recall.kernel.heartbeat import ToolFileAccess

    heartbeat.use_file_access(ToolFileAccess())  # what importing that module did
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    seen: list[str] = []
    recall.on_recall(seen.append)
    heartbeat._state.last.clear()
    yield seen
    recall.clear_handler()
    heartbeat.clear_gate()
    heartbeat._state.last.clear()


def test_beat_delivers_only_changed_content(handled, tmp_path, capsys):
    beating = tmp_path / "HEARTBEAT.md"
    assert heartbeat.beat(beating) == "skipped: HEARTBEAT.md is missing"
    beating.write_text("  \n")
    assert heartbeat.beat(beating) == "skipped: HEARTBEAT.md is empty"
    beating.write_text("check the build")
    assert heartbeat.beat(beating).startswith("delivered")
    assert heartbeat.beat(beating) == "skipped: HEARTBEAT.md unchanged since the last delivery"
    beating.write_text("check the deploy")
    assert heartbeat.beat(beating).startswith("delivered")
    assert handled == ["check the build", "check the deploy"]
    assert "heartbeat: delivered HEARTBEAT.md" in capsys.readouterr().out


def test_stored_heartbeat_code_keeps_its_import_path(handled, tmp_path):
    """The job's code is persisted: what earlier releases stored must still run."""
    beating = tmp_path / "HEARTBEAT.md"
    beating.write_text("check the build")
    stored_by_an_earlier_release = (
        f"from jupyter_recall.kernel.heartbeat import beat\nbeat({str(beating)!r})"
    )
    assert heartbeat.beat_code(beating) == stored_by_an_earlier_release
    exec(stored_by_an_earlier_release, {})
    assert handled == ["check the build"]


def test_the_last_hash_survives_a_kernel_restart(handled, tmp_path):
    beating = tmp_path / "HEARTBEAT.md"
    beating.write_text("once")
    heartbeat.beat(beating)
    heartbeat._state.last.clear()  # what a restarted kernel has
    assert heartbeat.beat(beating).startswith("skipped")
    assert handled == ["once"]


def test_a_registered_gate_decides(handled, tmp_path):
    beating = tmp_path / "HEARTBEAT.md"
    beating.write_text("urgent: page me")
    calls = []

    @heartbeat.heartbeat_gate
    def only_urgent(content, previous):
        calls.append(previous)
        return "run" if content.startswith("urgent") else "skip"

    assert heartbeat.beat(beating).startswith("delivered")
    assert heartbeat.beat(beating).startswith("delivered")  # this gate ignores changes
    beating.write_text("calm")
    assert heartbeat.beat(beating) == "skipped: the heartbeat gate said skip"
    assert calls == [None, "urgent: page me", "urgent: page me"]
    heartbeat.heartbeat_gate(lambda content, previous: "maybe")
    with pytest.raises(ValidationError) as refused:
        heartbeat.beat(beating)
    assert list(refused.value.accepted) == ["run", "skip"]


HANDLER = """
seen = []
beating_jobs = []

@jupyter_recall.on_recall
def handle(instruction, job):
    seen.append(instruction)
    beating_jobs.append([job.id, job.name])
"""


def test_a_heartbeat_in_a_kernel_fires_its_handler_only_on_changes(
    nb: Kernel, server: KernelServer
):
    beating = server.root / "HEARTBEAT.md"
    beating.write_text("first instruction")
    nb.ok(HANDLER)
    out = nb.ok("%heartbeat every 1s").text
    assert "heartbeat" in out
    (job,) = server.jobs()
    assert job["name"] == "heartbeat HEARTBEAT.md"

    def seen() -> list[str]:
        return list(nb.json("print(json.dumps(seen))"))

    wait_until(lambda: len(seen()) >= 1)
    wait_until(lambda: len(server.runs(job["id"])) >= 3)
    assert seen() == ["first instruction"]
    beating.write_text("second instruction")
    wait_until(lambda: len(seen()) >= 2)
    assert seen() == ["first instruction", "second instruction"]
    # The handler is given the heartbeat's own job, as a recall's handler is given its recall.
    expected = [[job["id"], "heartbeat HEARTBEAT.md"]] * 2
    assert nb.json("print(json.dumps(beating_jobs))") == expected
    outputs = [run["output"] for run in server.runs(job["id"])]
    assert any("unchanged since the last delivery" in output for output in outputs)


def test_a_heartbeat_reads_only_what_filesystem_read_may(nb: Kernel, server: KernelServer):
    """Outside the tool root, or with filesystem blocked, a heartbeat is refused at start
    (naming ``path``), as ``run_tool("filesystem.read", ...)`` is; a beat of a heartbeat
    started before the block delivers nothing."""
    outside = nb.json(
        "from jupyter_recall.kernel.agent.tools import dispatch\n"
        "print(json.dumps([dispatch('heartbeat_start', {'every': '1h', 'path': p})"
        " for p in ('/etc/hostname', '../../../etc/hostname')]))"
    )
    for answer in outside:
        assert answer["ok"] is False
        assert answer["field"] == "path"
        assert "outside the tool root" in answer["error"]
    magic = nb.run("%heartbeat every 1h /etc/hostname")
    assert magic.error is None
    assert "heartbeat: path: '/etc/hostname' is outside the tool root" in magic.stderr
    assert server.jobs() == []

    (server.root / "HEARTBEAT.md").write_text("secret")
    nb.ok(HANDLER)
    started = nb.json(
        "from jupyter_recall.kernel.agent.tools import dispatch\n"
        "print(json.dumps(dispatch('heartbeat_start', {'every': '1h'})))"
    )
    assert started["ok"] is True
    try:
        nb.ok('jupyter_recall.set_tool_policy("filesystem", "block")')
        blocked = nb.json(
            "print(json.dumps(dispatch('heartbeat_start', {'every': '1h', 'path': 'x.md'})))"
        )
        assert blocked["ok"] is False
        assert blocked["field"] == "path"
        assert "policy 'block'" in blocked["error"]
        beat = nb.ok(
            "from jupyter_recall.kernel.heartbeat import beat\n"
            f"beat({str(server.root / 'HEARTBEAT.md')!r})"
        ).stdout
        assert "skipped: path: " in beat
        assert "has policy 'block'" in beat
        assert nb.json("print(json.dumps(seen))") == []
    finally:
        nb.ok('jupyter_recall.set_tool_policy("filesystem", None)')


def test_heartbeat_start_names_every_for_a_bad_interval(nb: Kernel, server: KernelServer):
    answer = nb.json(
        "from jupyter_recall.kernel.agent.tools import dispatch\n"
        "print(json.dumps(dispatch('heartbeat_start', {'every': 'in 5m'})))"
    )
    assert answer["ok"] is False
    assert answer["field"] == "every", answer
    assert server.jobs() == []


def test_start_from_the_documented_path_is_confined(nb: Kernel, server: KernelServer):
    refused = nb.json(
        "from jupyter_recall.kernel.heartbeat import start\n"
        "try:\n    start('1h', '/etc/hostname')\n"
        "except jupyter_recall.ValidationError as e:\n    print(json.dumps(e.field))"
    )
    assert refused == "path"
    assert server.jobs() == []


def test_a_path_no_file_can_have_is_refused_naming_path(nb: Kernel, server: KernelServer):
    # As an agent's JSON text: they were "internal error in heartbeat_start: ValueError:
    # embedded null byte" and a UnicodeEncodeError.
    answers = nb.json(
        "from jupyter_recall.kernel.agent.tools import dispatch\n"
        "print(json.dumps([dispatch('heartbeat_start', text) for text in"
        ' (\'{"path": "a\\\\u0000b"}\', \'{"path": "\\\\ud800"}\')]))'
    )
    assert answers == [
        {
            "ok": False,
            "error": "path: must not contain a NUL character: give text without it",
            "field": "path",
        },
        {
            "ok": False,
            "error": "path: holds a lone UTF-16 surrogate (U+D800), which is not text: give "
            "Unicode text",
            "field": "path",
        },
    ]
    refused = nb.json(
        "from jupyter_recall.kernel.heartbeat import start\n"
        "def field_of(path):\n"
        "    try:\n        start('1h', path)\n"
        "    except jupyter_recall.ValidationError as e:\n        return [e.field, e.message]\n"
        "print(json.dumps([field_of('a\\x00b'), field_of(b'x')]))"
    )
    assert refused == [
        ["path", "must not contain a NUL character: give text without it"],
        ["path", "must be a file's path, got bytes"],
    ]
    assert server.jobs() == []
