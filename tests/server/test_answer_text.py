"""server/answer_text.py: answers read back as json would read json.dumps's text, and what orjson
would write otherwise is json's to write (or to refuse)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone

import pytest

from jupyter_recall.server.answer_text import answer_text


def test_a_document_reads_back_as_json_dumps_text_does():
    document = {
        "id": "j1",
        "name": "café ☕ 𝄞",
        "n": -3,
        "big": 2**63 - 1,
        "x": 1.5,
        "tiny": 1e-7,
        "a": [None, True, False, {"nested": []}],
        "tuple": ("a", 1),
    }
    text = answer_text(document)
    assert isinstance(text, bytes)  # orjson's
    assert json.loads(text) == json.loads(json.dumps(document))


@pytest.mark.parametrize(
    "document",
    [
        {"n": 2**64},  # past 64 bits: free-form params hold up to 100 digits
        {"n": -(10**99)},
        {1: "a key json writes as text"},
        {"s": "\ud800"},  # a lone surrogate
    ],
)
def test_what_orjson_would_refuse_is_json_dumps_text(document):
    assert answer_text(document) == json.dumps(document)


@dataclass
class Record:
    value: int


@pytest.mark.parametrize(
    "document", [{"at": datetime(2030, 1, 1, tzinfo=timezone.utc)}, {"r": Record(1)}]
)
def test_what_json_refuses_is_still_refused(document):
    # orjson would write these; an answer must not depend on which library wrote it.
    with pytest.raises(TypeError):
        json.dumps(document)
    with pytest.raises(TypeError):
        answer_text(document)
