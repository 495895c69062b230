"""Resource URIs: a URI that names no resource is refused naming ``uri`` and the templates,
repeating at most the start of what was sent."""

from __future__ import annotations

import pytest

from jupyter_recall.core.errors import ValidationError
from jupyter_recall.mcp.resources import RUN_OUTPUT, SHOWN_URI, match


def test_a_run_output_uri_names_its_run():
    assert match("recall://runs/abc123/output") == (RUN_OUTPUT, "abc123")


def test_an_unknown_uri_is_named_clipped_with_the_templates():
    uri = "recall://nothing/" + "x" * 70_000
    with pytest.raises(ValidationError) as caught:
        match(uri)
    error = caught.value
    assert error.field == "uri"
    assert error.message.startswith("not a jupyter_recall resource: 'recall://nothing/xxx")
    assert error.message.endswith("…")
    assert len(error.message) < SHOWN_URI + 40
    assert RUN_OUTPUT.uri_template in error.accepted
