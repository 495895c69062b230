"""What the magics say about themselves: the usage printed with no arguments lists every option
their parser takes, and ``%magic?`` (the docstring IPython shows) carries that usage."""

from __future__ import annotations

import pytest

from jupyter_recall.kernel.magics import jobs, parallel, watch
from jupyter_recall.kernel.magics.jobs import RecallMagics
from jupyter_recall.kernel.magics.watch import WatchMagics
from jupyter_recall.kernel.magics.writ import (
    COMMAND_OPTIONS,
    RECALL_OPTIONS,
    RESUME_OPTIONS,
    SCHEDULE_OPTIONS,
    SUBCOMMANDS_RECALL,
    SUBCOMMANDS_SCHEDULE,
    Option,
)


@pytest.mark.parametrize(
    ("usage", "options"),
    [
        (jobs.SCHEDULE_USAGE, SCHEDULE_OPTIONS + COMMAND_OPTIONS + RESUME_OPTIONS),
        (jobs.RECALL_USAGE, RECALL_OPTIONS),
        (jobs.JOBS_USAGE, COMMAND_OPTIONS),
        (watch.USAGE, watch.START_OPTIONS + watch.COMMAND_OPTIONS),
    ],
)
def test_the_usage_lists_every_option_the_parser_takes(
    usage: str, options: tuple[Option, ...]
) -> None:
    for option in options:
        assert f"{option.flag} " in usage or f"{option.flag}]" in usage, option.flag
        assert option.help, f"{option.flag} has no help text"


@pytest.mark.parametrize(
    ("usage", "subcommands"),
    [(jobs.SCHEDULE_USAGE, SUBCOMMANDS_SCHEDULE), (jobs.RECALL_USAGE, SUBCOMMANDS_RECALL)],
)
def test_the_usage_lists_every_subcommand(usage: str, subcommands: tuple[str, ...]) -> None:
    for name in subcommands:
        assert name in usage, name


@pytest.mark.parametrize(
    ("magic", "usage"),
    [
        (RecallMagics.schedule, jobs.SCHEDULE_USAGE),
        (RecallMagics.recall, jobs.RECALL_USAGE),
        (RecallMagics.jobs, jobs.JOBS_USAGE),
        (RecallMagics.parallel, parallel.USAGE),
        (WatchMagics.watch, watch.USAGE),
    ],
)
def test_each_magics_docstring_is_a_summary_then_its_usage(magic: object, usage: str) -> None:
    doc = magic.__doc__ or ""
    summary, _, rest = doc.partition("\n\n")
    assert summary.strip(), doc
    assert "\n" not in summary.strip(), doc
    assert usage in rest, doc
