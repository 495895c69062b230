"""Calendar phrases of time expressions: parts of the day, day lists, weekends, monthly days,
the nth weekday of the month and "every N weeks on <day>".

Each rule is a pattern (matched against the lower-cased, space-collapsed text) and a handler;
``core.when`` tries them with its own. Handlers build specs through the parse context, so this
module knows nothing of specs or triggers. The meaning of each form is in
``docs/time-expressions.md``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import time, timedelta
from typing import TYPE_CHECKING

from jupyter_recall.core.when_words import (
    DAY_LIST,
    DAY_PART,
    DAY_PARTS,
    EVERY,
    NTH,
    NTH_WORD,
    OPT_TIME,
    ORDINAL_DAY,
    WEEKDAY,
    WEEKDAYS,
)

if TYPE_CHECKING:
    from jupyter_recall.core.when import ScheduleSpec, _Context

MAX_WEEKS = 520
"""``every N weeks``: N up to 10 years."""

_DAY_NAME = re.compile(WEEKDAY)


def _days(text: str) -> list[int]:
    """Cron days of week named in a ``DAY_LIST`` text."""
    return sorted({WEEKDAYS[name] for name in _DAY_NAME.findall(text)})


def _cron_at(ctx: _Context, text: str | None, days: str, dom: str = "*") -> ScheduleSpec:
    minute, hour = ctx.cron_time(text)
    return ctx.cron(f"{minute} {hour} {dom} * {days}")


# --- parts of the day ------------------------------------------------------------------------


def _day_part(match: re.Match[str], ctx: _Context) -> ScheduleSpec:
    """``tomorrow morning``, ``this evening``, ``tonight``, ``demain soir``, ``ce matin``."""
    at = DAY_PARTS[match["part"]]
    tomorrow = match["day"] in ("tomorrow", "demain")
    day = ctx.local_today() + timedelta(days=1 if tomorrow else 0)
    return ctx.once(ctx.at_wall(day, at))


def _every_day_part(match: re.Match[str], ctx: _Context) -> ScheduleSpec:
    at = DAY_PARTS[match["part"]]
    return ctx.cron(f"{at.minute} {at.hour} * * *")


# --- days of the week ------------------------------------------------------------------------


def _day_list(match: re.Match[str], ctx: _Context) -> ScheduleSpec:
    return _cron_at(ctx, match["time"], ",".join(map(str, _days(match["days"]))))


def _weekdays(match: re.Match[str], ctx: _Context) -> ScheduleSpec:
    return _cron_at(ctx, match["time"], "1-5")


def _weekends(match: re.Match[str], ctx: _Context) -> ScheduleSpec:
    return _cron_at(ctx, match["time"], "0,6")


def _every_n_weeks(match: re.Match[str], ctx: _Context) -> ScheduleSpec:
    count = match.groupdict().get("n")  # absent from "every other …", "un lundi sur deux"
    weeks = int(count) if count else 2
    if weeks < 1:
        raise ctx.fail(f"a number of weeks must be at least 1, got {weeks}")
    if weeks > MAX_WEEKS:
        raise ctx.fail(f"a number of weeks must be at most {MAX_WEEKS}, got {weeks}")
    days = _days(match["days"])
    if weeks == 1:
        return _cron_at(ctx, match["time"], ",".join(map(str, days)))
    minute, hour = ctx.cron_time(match["time"])
    return ctx.weeks(weeks, days, time(hour, minute))


# --- days of the month -----------------------------------------------------------------------


def _monthly(match: re.Match[str], ctx: _Context) -> ScheduleSpec:
    dom = int(match["dom"]) if match["dom"] else 1
    if not 1 <= dom <= 31:
        raise ctx.fail(f"a day of the month must be 1-31, got {dom}")
    return _cron_at(ctx, match["time"], "*", str(dom))


def _last_day(match: re.Match[str], ctx: _Context) -> ScheduleSpec:
    return _cron_at(ctx, match["time"], "*", "L")


def _nth_weekday(match: re.Match[str], ctx: _Context) -> ScheduleSpec:
    nth, day = NTH[match["nth"]], WEEKDAYS[match["day"]]
    return _cron_at(ctx, match["time"], f"{day}L" if nth == -1 else f"{day}#{nth}")


_OF_MONTH = r"of\s+(?:the|every|each)\s+month"
_DU_MOIS = r"(?:du|de\s+chaque)\s+mois"
_MONTHLY = rf"(?:{EVERY}\s+month|monthly|tous\s+les\s+mois|chaque\s+mois)"
_WEEKDAYS_WORDS = (
    rf"{EVERY}\s+(?:weekday|working day|business day)s?"
    r"|(?:on\s+)?(?:weekdays|working days|business days)"
    r"|en\s+semaine|(?:tous\s+)?les\s+jours\s+(?:ouvrés|ouvrables)|du\s+lundi\s+au\s+vendredi"
)
_WEEKENDS_WORDS = (
    rf"{EVERY}\s+weekends?|(?:on\s+)?(?:the\s+)?weekends"
    r"|(?:le|les|tous\s+les|chaque)\s+week-?ends?"
)

_THIS_PART = r"morning|afternoon|evening|matin|après-midi|apres-midi|soir"

Handler = Callable[["re.Match[str]", "_Context"], "ScheduleSpec"]

RULES: tuple[tuple[str, Handler], ...] = (
    (rf"(?P<day>tomorrow|demain)\s+(?P<part>{DAY_PART})", _day_part),
    (rf"(?P<day>this|ce|cet)\s+(?P<part>{_THIS_PART})", _day_part),
    (r"(?P<day>)(?P<part>tonight)", _day_part),
    (rf"(?:{EVERY}|tous\s+les)\s+(?P<part>{DAY_PART})s?", _every_day_part),
    (rf"(?:{EVERY}|tous\s+les|les|le)\s+(?P<days>{DAY_LIST}){OPT_TIME}", _day_list),
    (rf"(?:on\s+)?(?P<days>{WEEKDAY}s(?:(?:\s*,\s*|\s+and\s+){WEEKDAY}s)*){OPT_TIME}", _day_list),
    (rf"(?:{_WEEKDAYS_WORDS}){OPT_TIME}", _weekdays),
    (rf"(?:{_WEEKENDS_WORDS}){OPT_TIME}", _weekends),
    (
        rf"{EVERY}\s+(?:(?P<n>\d+)\s*(?:weeks?|wks?|w)|other\s+(?:week|wk))\s+on\s+"
        rf"(?P<days>{DAY_LIST}){OPT_TIME}",
        _every_n_weeks,
    ),
    (rf"{EVERY}\s+other\s+(?P<days>{DAY_LIST}){OPT_TIME}", _every_n_weeks),
    (
        rf"(?:toutes\s+les\s+(?P<n>\d+)\s+semaines?|une\s+semaine\s+sur\s+deux)"
        rf"\s+le\s+(?P<days>{DAY_LIST}){OPT_TIME}",
        _every_n_weeks,
    ),
    (rf"(?:un|le)\s+(?P<days>{WEEKDAY})\s+sur\s+deux{OPT_TIME}", _every_n_weeks),
    (rf"{_MONTHLY}(?:\s+(?:on\s+the|le)\s+{ORDINAL_DAY})?{OPT_TIME}", _monthly),
    (rf"(?:on\s+)?the\s+{ORDINAL_DAY}\s+{_OF_MONTH}{OPT_TIME}", _monthly),
    (rf"{EVERY}\s+{ORDINAL_DAY}\s+of\s+the\s+month{OPT_TIME}", _monthly),
    (rf"(?:le|tous\s+les|chaque)\s+{ORDINAL_DAY}\s+{_DU_MOIS}{OPT_TIME}", _monthly),
    (rf"(?:(?:on\s+)?the\s+|{EVERY}\s+)?last\s+day\s+{_OF_MONTH}{OPT_TIME}", _last_day),
    (rf"(?:{EVERY}\s+month|monthly)\s+on\s+the\s+last\s+day{OPT_TIME}", _last_day),
    (rf"(?:le\s+|chaque\s+)?dernier\s+jour\s+{_DU_MOIS}{OPT_TIME}", _last_day),
    (rf"(?:tous\s+les\s+mois|chaque\s+mois)\s+le\s+dernier\s+jour{OPT_TIME}", _last_day),
    (
        rf"(?:{EVERY}\s+|(?:on\s+)?the\s+)(?P<nth>{NTH_WORD})\s+(?P<day>{WEEKDAY})\s+{_OF_MONTH}"
        rf"{OPT_TIME}",
        _nth_weekday,
    ),
    (
        rf"(?:le|les|tous\s+les|chaque)\s+(?P<nth>{NTH_WORD})s?\s+(?P<day>{WEEKDAY})s?\s+{_DU_MOIS}"
        rf"{OPT_TIME}",
        _nth_weekday,
    ),
)
