"""Options of the extension reach the scheduler, and a bad value stops the server naming it."""

from __future__ import annotations

import pytest
from traitlets import TraitError

from jupyter_recall.server.app import RecallApp


@pytest.fixture
def recall_config(recall_config):
    recall_config["fire_ahead"] = 0.05
    return recall_config


def test_fire_ahead_reaches_the_scheduler(jp_serverapp):
    scheduler = jp_serverapp.web_app.settings["jupyter_recall_scheduler"]
    assert scheduler.fire_ahead == 0.05


def test_a_negative_fire_ahead_is_refused_naming_the_option():
    with pytest.raises(TraitError, match=r"RecallApp\.fire_ahead must be >= 0 seconds, got -1"):
        RecallApp(fire_ahead=-1)


def test_fire_ahead_defaults_to_a_quarter_second():
    assert RecallApp().fire_ahead == 0.25
