"""Process settings: the switch interval is set, the GC frozen once, bad values named."""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator

import pytest

from jupyter_recall.core.errors import ValidationError
from jupyter_recall.engine import process


@pytest.fixture
def switch_interval() -> Iterator[None]:
    before = sys.getswitchinterval()
    yield
    sys.setswitchinterval(before)


@pytest.mark.usefixtures("switch_interval")
def test_the_switch_interval_is_set():
    process.apply(process.ProcessSettings(switch_interval=0.002, freeze_gc=False))
    assert sys.getswitchinterval() == pytest.approx(0.002)


@pytest.mark.usefixtures("switch_interval")
def test_zero_keeps_the_interpreters_switch_interval():
    sys.setswitchinterval(0.003)
    process.apply(process.ProcessSettings(switch_interval=0, freeze_gc=False))
    assert sys.getswitchinterval() == pytest.approx(0.003)


@pytest.mark.usefixtures("switch_interval")
def test_the_gc_is_frozen_once_per_process():
    process.apply(process.ProcessSettings())
    frozen = gc.get_freeze_count()
    assert frozen > 0
    later = [[index] for index in range(1000)]  # tracked objects a second freeze would take
    process.apply(process.ProcessSettings())
    assert gc.get_freeze_count() == frozen
    assert len(later) == 1000


@pytest.mark.parametrize("value", [-0.001, 1.5])
def test_a_switch_interval_out_of_range_is_refused_naming_the_field(value):
    with pytest.raises(ValidationError, match=r"switch_interval.*between 0 and 1") as caught:
        process.ProcessSettings(switch_interval=value)
    assert caught.value.field == "switch_interval"
    assert repr(value) in str(caught.value)
