"""Plain-text tables (the magics', the CLI's) aligned in a terminal's columns: a CJK character
or an emoji takes two, a combining mark none; ``len()`` had misaligned them."""

from __future__ import annotations

from jupyter_recall.cli import render
from jupyter_recall.client.tables import clip, text_table
from jupyter_recall.core.text import display_width

HEADER = ("name", "target", "n")
ROWS = [
    ("データ処理", "kernel 分析.ipynb", "1"),
    ("🚀 deploy", "headless python3", "2"),
    ("e\u0301te\u0301", "kernel ＡＢ.ipynb", "3"),
    ("plain", "server", "4"),
]


def starts(line: str, cells: tuple[str, ...]) -> list[int]:
    """The column (display width before it) at which each cell begins in ``line``."""
    found, index = [], 0
    for cell in cells:
        index = line.index(cell, index)
        found.append(display_width(line[:index]))
        index += len(cell)
    return found


def test_display_width_counts_columns() -> None:
    assert display_width("abc") == 3
    assert display_width("日本") == 4
    assert display_width("ＡＢ") == 4  # fullwidth
    assert display_width("🚀") == 2
    assert display_width("e\u0301") == 1  # a combining acute accent
    assert display_width("a\u200db") == 2  # a zero-width joiner


def test_a_table_of_wide_characters_lines_up() -> None:
    lines = text_table(HEADER, ROWS).splitlines()
    assert len(lines) == 2 + len(ROWS)
    # The last column is as wide as its header: every line, the rule too, is as wide.
    assert {display_width(line) for line in lines} == {display_width(lines[1])}
    columns = starts(lines[0], HEADER)
    assert columns == [0, 12, 31]
    for line, row in zip(lines[2:], ROWS, strict=True):
        assert starts(line, row) == columns, line


def test_clip_counts_columns() -> None:
    assert clip("日本語のジョブ名", 7) == "日本語…"
    assert clip("日本語", 6) == "日本語"
    assert clip("🚀🚀🚀", 4) == "🚀…"
    assert clip("e\u0301te\u0301 plain", 4) == "e\u0301te\u0301…"
    assert clip("plain text", 6) == "plain…"


def test_the_clis_jobs_table_clips_and_aligns_wide_names() -> None:
    names = ["毎日のデータ処理" * 5, "nightly 🚀 build", "plain"]
    jobs = [
        {"id": f"job{i}", "name": name, "description": "every day at 09:00", "status": "active"}
        for i, name in enumerate(names)
    ]
    lines = render.jobs_table(jobs).splitlines()
    schedule = starts(lines[0], ("schedule",))
    for line in lines[2:]:
        assert starts(line, ("every day",)) == schedule, line
    clipped = lines[2].split("  ")[1]
    assert clipped.endswith("…")
    assert display_width(clipped) <= render.NAME_WIDTH


def test_control_characters_in_a_name_reach_no_terminal() -> None:
    """A name holding an escape sequence would colour the terminal, move its cursor or fake
    output; it is shown with the symbols that picture its control characters."""
    assert clip("\x1b[31mRED\x1b[0m", 40) == "␛[31mRED␛[0m"
    assert clip("bell\x07 del\x7f c1\x9b", 40) == "bell␇ del␡ c1\ufffd"
    jobs = [{"id": "j1", "name": "\x1b[2J\x1b[Hfake", "status": "active"}]
    table = render.jobs_table(jobs)
    assert "\x1b" not in table
    assert "␛[2J␛[Hfake" in table


def test_a_bidi_control_in_a_stored_name_reorders_no_table() -> None:
    """U+202E showed the rest of the line backwards, the next columns of a table included; a
    name can no longer be given one, and one stored before shows as U+FFFD."""
    jobs = [{"id": "j1", "name": "report\u202efdp.exe", "status": "active"}]
    table = render.jobs_table(jobs)
    assert "\u202e" not in table
    assert "report\ufffdfdp.exe" in table
    assert clip("\u2066a\u2069", 10) == "\ufffda\ufffd"


def test_the_clis_rows_say_a_status_once_and_that_a_paused_job_does_not_fire() -> None:
    job = {
        "id": "j1",
        "name": "build",
        "status": "paused",
        "next_fire_at": None,
        "last_status": "timed_out",
        "last_error": "timed_out: still running after its limit of 2 s",
    }
    row = render.job_row(job)
    assert row[4] == "paused: does not fire"
    assert row[5] == "timed_out: still running after its limit of 2 s"
    assert render.job_line(job).endswith("nothing fires until resumed")
    shown = render.job_detail({**job, "name": "\x1b[31mred"}, [])
    assert "\x1b" not in shown
    assert "name       ␛[31mred" in shown
    assert "next fire  paused: does not fire" in shown
