"""'Did you mean …': the accepted text nearest to a rejected one.

First each unknown word is replaced by the nearest known word (``tomorow`` -> ``tomorrow``), and
the result is offered if it is accepted; otherwise the example nearest to the whole text.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Collection, Sequence

_WORD = re.compile(r"[a-zà-ÿ'’-]+")
# How alike a word must be to a known one to replace it (difflib ratio): "tomorow" is 0.93 of
# "tomorrow", "banana" is below 0.75 of every word of the grammar.
_WORD_CUTOFF = 0.75


def did_you_mean(
    text: str,
    vocabulary: Collection[str],
    examples: Sequence[str],
    accepts: Callable[[str], bool],
) -> str | None:
    """An accepted text close to ``text`` (lower-case, single spaces), or None if none is."""
    corrected = _correct_words(text, vocabulary)
    if corrected != text and accepts(corrected):
        return corrected
    if not examples:
        return None
    return max(examples, key=lambda example: _likeness(text, example))


def _correct_words(text: str, vocabulary: Collection[str]) -> str:
    known = list(vocabulary)

    def replace(match: re.Match[str]) -> str:
        word = match[0]
        if word in vocabulary:
            return word
        close = difflib.get_close_matches(word, known, n=1, cutoff=_WORD_CUTOFF)
        return close[0] if close else word

    return _WORD.sub(replace, text)


def _likeness(text: str, example: str) -> float:
    """Half letters in order (difflib), half words in common: "on the last day" is nearer
    "last day of the month" than "monthly"."""
    letters = difflib.SequenceMatcher(None, text, example, autojunk=False).ratio()
    words, example_words = set(text.split()), set(example.split())
    shared = len(words & example_words) / len(words | example_words)
    return (letters + shared) / 2
