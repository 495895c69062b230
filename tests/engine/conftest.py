"""Fixtures of the engine tests: a manual clock, a scripted executor, a real SQLite file."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_recall.core.clock import ManualClock
from tests.engine.support import T0, Script


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(T0)


@pytest.fixture
def script() -> Script:
    return Script()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "recall.sqlite"
