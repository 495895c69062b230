"""The server's route words that stand where an id would (``/api/recall/jobs/counts``,
``/api/recall/runs/prune``) are never ids it gave: a client says they are not found without
sending a request, which would reach the route (the counts, or a 405)."""

from __future__ import annotations

import re

import pytest

from jupyter_recall.client.ids import RECORDS, RESERVED, check_job_id
from jupyter_recall.client.remote import api_path
from jupyter_recall.core.errors import NotFoundError, ValidationError
from jupyter_recall.core.model import new_id
from jupyter_recall.server.handlers import route_table

LITERAL = re.compile(r"^/api/recall/(?P<collection>\w+)/(?P<word>\w+)$")


def test_the_reserved_words_are_the_servers_routes_beside_an_id():
    routes = [pattern for pattern, _ in route_table()]
    with_ids = {pattern.split("/")[3] for pattern in routes if pattern.count("(?P<") == 1}
    words: dict[str, set[str]] = {}
    for pattern in routes:
        found = LITERAL.match(pattern)
        if found and found["collection"] in with_ids:
            words.setdefault(found["collection"], set()).add(found["word"])
    assert {name: set(found) for name, found in RESERVED.items()} == words
    assert set(RECORDS) == set(RESERVED)


def test_no_id_the_server_makes_is_a_reserved_word():
    shape = re.compile(r"[0-9a-f]{12}")
    assert all(shape.fullmatch(new_id()) for _ in range(1_000))
    assert not any(shape.fullmatch(word) for words in RESERVED.values() for word in words)


@pytest.mark.parametrize(
    ("segments", "message"),
    [
        (("jobs", "counts"), "job 'counts' not found"),
        (("jobs", "counts", "runs"), "job 'counts' not found"),
        (("jobs", "counts", "pause"), "job 'counts' not found"),
        (("runs", "prune"), "run 'prune' not found"),
        (("runs", "prune", "stop"), "run 'prune' not found"),
    ],
)
def test_a_reserved_word_as_an_id_is_not_found(segments, message):
    with pytest.raises(NotFoundError) as caught:
        api_path(*segments)
    assert str(caught.value) == message


def test_a_reserved_word_of_another_collection_is_an_id():
    assert api_path("runs", "counts") == "/api/recall/runs/counts"
    assert api_path("jobs", "prune", "runs") == "/api/recall/jobs/prune/runs"
    assert api_path("approvals", "counts") == "/api/recall/approvals/counts"


def test_a_job_id_that_is_a_reserved_word_is_not_found():
    with pytest.raises(NotFoundError) as caught:
        check_job_id("counts")
    assert (caught.value.what, caught.value.ident) == ("job", "counts")
    assert check_job_id("prune") == "prune"


def test_a_long_text_that_is_no_job_id_is_shown_clipped():
    # A magic's argument may be a whole cell's worth: the refusal is one readable line.
    with pytest.raises(ValidationError) as caught:
        check_job_id("a" * 100_000 + "!")
    message = str(caught.value)
    assert message.startswith("job_id: not a job id: 'aaaa")
    assert message.endswith("… (ids look like '3f9c2a1b7d0e')")
    assert len(message) < 200
