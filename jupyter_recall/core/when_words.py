"""The vocabulary of time expressions (English and French) and the pieces of their patterns.

Texts reach these patterns lower-cased with single spaces. ``core.when`` and
``core.when_calendar`` build their rules from them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import time
from functools import lru_cache


def ascii_digits(text: str) -> str:
    """``text`` with every decimal digit of another script (Arabic-Indic, fullwidth from an
    input method, Devanagari...) written as its ASCII digit: the rules match ``\\d``, which
    takes them, and cron fields and ISO dates, which would not. Superscripts and other
    non-decimal digits stay, and are refused."""
    if text.isascii():
        return text
    return "".join(str(int(char)) if char.isdecimal() else char for char in text)


UNIT_SECONDS: dict[str, int] = {
    name: seconds
    for names, seconds in (
        (("s", "sec", "secs", "second", "seconds", "seconde", "secondes"), 1),
        (("m", "min", "mins", "minute", "minutes"), 60),
        (("h", "hr", "hrs", "hour", "hours", "heure", "heures"), 3600),
        (("d", "day", "days", "j", "jour", "jours"), 86400),
        (("w", "wk", "wks", "week", "weeks", "semaine", "semaines"), 604800),
    )
    for name in names
}

UNIT_MONTHS: dict[str, int] = {
    name: months
    for names, months in (
        (("mo", "month", "months", "mois"), 1),
        (("y", "yr", "yrs", "year", "years", "an", "ans", "année", "années", "annee"), 12),
    )
    for name in names
}
"""Calendar units: ``in 1 month`` is the same wall time a month later, not 30 days of seconds."""

WEEKDAYS: dict[str, int] = {
    name: cron_day
    for names, cron_day in (
        (("monday", "mon", "lundi"), 1),
        (("tuesday", "tue", "tues", "mardi"), 2),
        (("wednesday", "wed", "weds", "mercredi"), 3),
        (("thursday", "thu", "thur", "thurs", "jeudi"), 4),
        (("friday", "fri", "vendredi"), 5),
        (("saturday", "sat", "samedi"), 6),
        (("sunday", "sun", "dimanche"), 0),
    )
    for name in names
}
"""Day names to cron days of week (0 = Sunday)."""

DAY_NAMES = ("sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday")

NTH: dict[str, int] = {
    name: nth
    for names, nth in (
        (("first", "1st", "premier", "première", "premiere", "1er", "1re"), 1),
        (("second", "2nd", "deuxième", "deuxieme", "seconde", "2e"), 2),
        (("third", "3rd", "troisième", "troisieme", "3e"), 3),
        (("fourth", "4th", "quatrième", "quatrieme", "4e"), 4),
        (("fifth", "5th", "cinquième", "cinquieme", "5e"), 5),
        (("last", "dernier", "dernière", "derniere"), -1),
    )
    for name in names
}
"""Which weekday of the month: 1 to 5, or -1 for the last."""

DAY_PARTS: dict[str, time] = {
    name: at
    for names, at in (
        (("morning", "matin"), time(9)),
        (("afternoon", "après-midi", "apres-midi"), time(14)),
        (("evening", "soir"), time(18)),
        (("night", "tonight"), time(21)),
    )
    for name in names
}
"""The hour of each part of the day: ``tomorrow morning`` is tomorrow at 09:00."""

WORD_TIMES = {
    "noon": time(12),
    "midday": time(12),
    "midi": time(12),
    "midnight": time(0),
    "minuit": time(0),
}


def alternation(words: Iterable[str]) -> str:
    """A regex alternation of ``words``, longest first (so that ``mon`` does not eat ``monday``)."""
    return "|".join(sorted((re.escape(w) for w in words), key=len, reverse=True))


_LETTER = r"a-zà-ÿ"
UNIT = rf"(?:{alternation([*UNIT_SECONDS, *UNIT_MONTHS])})(?![{_LETTER}])"
_HALF_HOUR = r"(?:(?:a\s+)?half\s+(?:an\s+)?hour|(?:une\s+)?demi-heure)"
_AND_HALF = r"\s+(?:and\s+a\s+half|et\s+demie?)"
# One part of a duration: "half an hour", "1h30" (hours and minutes), "3 hours", "an hour and a
# half". The "1h30" form must not be followed by a unit ("1h30m" is 1h then 30m).
_PART = (
    rf"(?:{_HALF_HOUR}|\d+h[0-5]?\d(?![0-9{_LETTER}])"
    rf"|(?:[+-]?\d+\s*|(?:an?|une?)\s+){UNIT}(?:{_AND_HALF})?)"
)
_PART_RE = re.compile(
    rf"(?P<half>{_HALF_HOUR})|(?P<hh>\d+)h(?P<hm>[0-5]?\d)(?![0-9{_LETTER}])"
    rf"|(?:(?P<n>[+-]?\d+)\s*|(?P<article>an?|une?)\s+)(?P<unit>{UNIT})(?P<and_half>{_AND_HALF})?"
)
DURATION = rf"{_PART}(?:(?:\s*,\s*|\s+and\s+|\s+et\s+|\s*){_PART})*"
WEEKDAY = rf"(?:{alternation(WEEKDAYS)})"
# Several days: "monday and thursday", "mon, wed, fri", "lundi et jeudi"; a plural "s" allowed.
DAY_LIST = rf"{WEEKDAY}s?(?:(?:\s*,\s*(?:and\s+|et\s+)?|\s+and\s+|\s+et\s+){WEEKDAY}s?)*"
NTH_WORD = rf"(?:{alternation(NTH)})"
DAY_PART = rf"(?:{alternation(name for name in DAY_PARTS if name != 'tonight')})"
AT = r"(?:at|à|a|@)"
# An optional time after a day word: "tomorrow 9am", "tomorrow at 9am", "demain à 9h".
OPT_TIME = rf"(?:\s+(?:{AT}\s+)?(?P<time>.+?))?"
EVERY = r"(?:every|each|chaque)"
# A day of the month: "15", "15th", "1st", "1er" (French), "15e".
ORDINAL_DAY = r"(?P<dom>\d{1,2})(?:st|nd|rd|th|er|e)?"

TIME_RE = re.compile(
    r"(?P<h>\d{1,2})(?::(?P<m>\d{2})(?::(?P<s>\d{2}))?)?\s*(?P<ampm>[ap]\.?m\.?)?"
    r"|(?P<fh>\d{1,2})h(?P<fm>\d{2})?"
    rf"|(?P<word>{alternation(WORD_TIMES)})"
)


@dataclass(frozen=True, slots=True)
class Duration:
    """A relative time: calendar ``months`` (applied to the wall clock) then elapsed ``seconds``."""

    months: int
    seconds: int


@lru_cache(maxsize=256)
def read_duration(text: str) -> Duration:
    """The duration written in ``text``, which matched ``DURATION``; remembered, as programs
    write the same few ("in 5 minutes") again and again."""
    months = seconds = 0
    for part in _PART_RE.finditer(text):
        if part["half"]:
            seconds += 1800
        elif part["hh"]:
            seconds += int(part["hh"]) * 3600 + int(part["hm"]) * 60
        else:
            count = 1 if part["article"] else int(part["n"])
            unit = part["unit"]
            if unit in UNIT_MONTHS:
                months += count * UNIT_MONTHS[unit]
                # "a year and a half" is 18 months; "a month and a half" 1 month and 15 days.
                if part["and_half"]:
                    half = UNIT_MONTHS[unit] // 2
                    months += half
                    seconds += 0 if half else 15 * 86400
            else:
                seconds += count * UNIT_SECONDS[unit]
                seconds += UNIT_SECONDS[unit] // 2 if part["and_half"] else 0
    return Duration(months, seconds)


def describe_days(cron_days: Iterable[int]) -> str:
    """``monday and thursday`` for cron days 1 and 4 (Monday first)."""
    names = [DAY_NAMES[day] for day in sorted(cron_days, key=lambda day: (day - 1) % 7)]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


EXAMPLES: tuple[str, ...] = (
    "in 30 minutes",
    "in 2 hours",
    "in half an hour",
    "in 1h30",
    "in 1 month",
    "at 17:00",
    "at noon",
    "midnight",
    "today at 17:00",
    "tomorrow",
    "tomorrow at 9:00",
    "tomorrow morning",
    "tomorrow evening",
    "this afternoon",
    "this evening",
    "tonight",
    "on 2099-06-01 at 12:00",
    "now",
    "every 30 minutes",
    "every hour",
    "every half hour",
    "hourly",
    "every day at 9:00",
    "daily",
    "every morning",
    "every week on monday at 10:00",
    "weekly",
    "every monday at 9:00",
    "every monday and thursday at 9:00",
    "weekdays at 8:30",
    "every weekday at 8:30",
    "every weekend at 10:00",
    "every 2 weeks on monday at 9:00",
    "every other week on friday",
    "every month on the 1st at 9:00",
    "on the 15th of every month",
    "last day of the month",
    "every first monday of the month",
    "every last friday of the month",
    "monthly",
    "dans 30 minutes",
    "dans une demi-heure",
    "demain",
    "demain à 9h",
    "demain matin",
    "demain soir",
    "ce soir",
    "aujourd'hui à 18h",
    "maintenant",
    "toutes les 15 minutes",
    "toutes les heures",
    "tous les jours à 9h",
    "tous les matins",
    "tous les lundis à 8h30",
    "en semaine à 9h",
    "le week-end à 10h",
    "toutes les 2 semaines le lundi",
    "tous les mois le 1er",
    "le 15 de chaque mois",
    "le dernier jour du mois",
    "le premier lundi du mois",
)
"""Accepted phrases, English and French: the candidates of 'did you mean …' (each is tested)."""

VOCABULARY: frozenset[str] = frozenset(
    {word for example in EXAMPLES for word in re.findall(r"[a-zà-ÿ'’-]+", example)}
    | set(UNIT_SECONDS)
    | set(UNIT_MONTHS)
    | set(WEEKDAYS)
    | set(NTH)
    | set(DAY_PARTS)
    | set(WORD_TIMES)
    | {"every", "each", "chaque", "weekdays", "weekends", "immediately", "other"}
    | {"second", "third", "fourth", "fifth", "of", "the", "and", "from", "right", "tous"}
)
"""Words of the grammar: an unknown word is corrected to the nearest of these."""
