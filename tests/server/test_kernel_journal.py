"""The journal of gateway kernels a process started and has not shut down (a real file)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from jupyter_recall.server.executors.kernel_journal import KernelJournal, Leftovers

GATEWAY = "http://gateway:8888"


def test_kernels_written_are_read_back_and_none_removes_the_journal(tmp_path: Path) -> None:
    journal = KernelJournal.for_engine(str(tmp_path / "runtime"), "server@host:8888", GATEWAY)
    assert (
        journal.path
        == tmp_path / "runtime" / "jupyter_recall-gateway-kernels-server_host_8888.json"
    )
    assert journal.read() is None
    journal.write({"b", "a"})
    assert journal.read() == Leftovers(GATEWAY, ("a", "b"))
    assert [path.name for path in journal.path.parent.iterdir()] == [journal.path.name]
    journal.write(set())
    assert not journal.path.exists()
    assert journal.read() is None


@pytest.mark.parametrize(
    "text", ["{", "[1, 2]", '{"gateway": 1, "kernels": []}', '{"gateway": "g", "kernels": [1]}']
)
def test_a_journal_that_is_not_one_is_ignored_saying_so(
    tmp_path: Path, text: str, caplog: pytest.LogCaptureFixture
) -> None:
    journal = KernelJournal(tmp_path / "journal.json", GATEWAY)
    journal.path.write_text(text)
    with caplog.at_level(logging.WARNING):
        assert journal.read() is None
    assert str(journal.path) in caplog.text
    assert "ignored" in caplog.text


def test_a_journal_that_cannot_be_written_is_said_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "file").write_text("")
    journal = KernelJournal(tmp_path / "file" / "journal.json", GATEWAY)
    with caplog.at_level(logging.WARNING):
        journal.write({"a"})
        journal.write({"a", "b"})
    assert caplog.text.count("cannot write") == 1
