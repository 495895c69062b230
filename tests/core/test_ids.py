"""Ids: short lowercase hex, never repeated within a process, its threads or a forked child."""

from __future__ import annotations

import os
import re
import sys
import threading
import warnings

import pytest

from jupyter_recall.core.model import new_id


def test_ids_are_twelve_hex_digits_and_unique() -> None:
    ids = [new_id() for _ in range(20_000)]
    assert all(re.fullmatch(r"[0-9a-f]{12}", ident) for ident in ids)
    assert len(set(ids)) == len(ids)


def test_threads_draw_distinct_ids() -> None:
    drawn: list[list[str]] = [[] for _ in range(4)]

    def draw(into: list[str]) -> None:
        into.extend(new_id() for _ in range(2_000))

    threads = [threading.Thread(target=draw, args=(into,)) for into in drawn]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    every = [ident for into in drawn for ident in into]
    assert len(set(every)) == len(every) == 8_000


@pytest.mark.skipif(sys.platform == "win32", reason="fork is POSIX")
def test_a_forked_child_does_not_reuse_the_parents_pending_ids() -> None:
    new_id()  # the parent now holds drawn ids not yet handed out
    read_end, write_end = os.pipe()
    with warnings.catch_warnings():
        # Python 3.12+ warns when a multi-threaded process forks; the child only draws ids.
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # the child: report its next ids, then leave without running pytest's exit
        os.close(read_end)
        os.write(write_end, " ".join(new_id() for _ in range(50)).encode())
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as reader:
        child = set(reader.read().split())
    os.waitpid(pid, 0)
    parent = {new_id() for _ in range(50)}
    assert len(child) == 50
    assert not child & parent
