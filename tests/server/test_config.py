"""Options of the extension reach the scheduler, and a bad value stops the server naming it."""

from __future__ import annotations

import gc
import re
import sys
from pathlib import Path

import pytest
from traitlets import TraitError

from jupyter_recall.server.app import RecallApp


@pytest.fixture
def recall_config(recall_config):
    recall_config["fire_ahead"] = 0.05
    recall_config["keep_runs"] = 50
    recall_config["keep_runs_for"] = "30d"
    return recall_config


def test_fire_ahead_reaches_the_scheduler(jp_serverapp):
    scheduler = jp_serverapp.web_app.settings["jupyter_recall_scheduler"]
    assert scheduler.fire_ahead == 0.05


def test_a_negative_fire_ahead_is_refused_naming_the_option():
    with pytest.raises(TraitError, match=r"RecallApp\.fire_ahead must be >= 0 seconds, got -1"):
        RecallApp(fire_ahead=-1)


@pytest.mark.parametrize("value", [0, -1, 10**12])
def test_a_default_timeout_out_of_range_is_refused_naming_the_option(value):
    with pytest.raises(TraitError, match=r"RecallApp\.default_timeout must be above 0"):
        RecallApp(default_timeout=value)


def test_default_timeout_is_none_unless_set():
    assert RecallApp().default_timeout is None
    assert RecallApp(default_timeout=30).default_timeout == 30.0


def test_fire_ahead_defaults_to_a_quarter_second():
    assert RecallApp().fire_ahead == 0.25


def test_the_server_sets_the_switch_interval_and_freezes_the_gc_at_start(jp_serverapp):
    # The extension has started (its scheduler runs): the process settings are applied.
    assert jp_serverapp.web_app.settings["jupyter_recall_scheduler"] is not None
    assert sys.getswitchinterval() == pytest.approx(0.001)
    assert gc.get_freeze_count() > 0


def test_a_switch_interval_out_of_range_is_refused_naming_the_option():
    with pytest.raises(TraitError, match=r"RecallApp\.gil_switch_interval: .*got -1"):
        RecallApp(gil_switch_interval=-1)


def test_every_option_is_documented_with_its_default():
    page = (Path(__file__).parents[2] / "docs" / "server.md").read_text()
    # The options table only: other tables of the page have rows of the same shape.
    table = page.split("## Configuration", 1)[1].split("\n## ", 1)[0]
    rows = dict(re.findall(r"^\| `(\w+)` \| ([^|]+) \|", table, flags=re.MULTILINE))
    own = RecallApp.class_own_traits(config=True)
    assert sorted(rows) == sorted(own)
    for name, trait in own.items():
        default = trait.default_value
        if isinstance(default, (int, float)) and not isinstance(default, bool):
            assert float(rows[name].replace(",", "")) == default, name


def test_retention_defaults_reach_the_scheduler(jp_serverapp):
    scheduler = jp_serverapp.web_app.settings["jupyter_recall_scheduler"]
    assert (scheduler.retention.keep_runs, scheduler.retention.keep_runs_for) == (50, 30 * 86400)


def test_retention_defaults_are_none_unless_set():
    app = RecallApp()
    assert (app.keep_runs, app.keep_runs_for) == (None, None)
    assert RecallApp(keep_runs_for=3600).keep_runs_for == 3600.0
    assert RecallApp(keep_runs_for="12h").keep_runs_for == 12 * 3600.0


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("keep_runs", -1, r"RecallApp\.keep_runs: must be from 0"),
        ("keep_runs_for", "2 months", r"RecallApp\.keep_runs_for: months and years"),
        ("keep_runs_for", 0, r"RecallApp\.keep_runs_for: must be above 0"),
        ("prune_interval", 0, r"RecallApp\.prune_interval must be > 0"),
    ],
)
def test_bad_retention_options_are_refused_naming_them(option, value, message):
    with pytest.raises(TraitError, match=message):
        RecallApp(**{option: value})
