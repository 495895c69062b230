"""`jupyter recall migrate`, `export` and `import` as a user runs them: the real command on real
SQLite files and a real PostgreSQL cluster; after the move, a real engine on PostgreSQL keeps
firing the jobs without firing again an occurrence that ran before the move."""

from __future__ import annotations

import io
import json
import socket
import subprocess
from pathlib import Path

import anyio

from jupyter_recall.cli.progress import ProgressBar
from jupyter_recall.core.clock import ManualClock
from jupyter_recall.engine.executors import CallableExecutor
from jupyter_recall.engine.scheduler import Scheduler
from jupyter_recall.store.transfer import total_rows
from jupyter_recall.store.urls import open_store, sqlite_url
from tests.cli.conftest import JUPYTER, cli_env, jupyter_recall
from tests.engine.support import OWNER, T0, Script, eventually, new, runs_of, wait_runs
from tests.store.test_transfer import contents, populate


def _filled(path: Path, *, jobs: int = 3) -> str:
    url = sqlite_url(path)
    store = open_store(url)
    try:
        populate(store, jobs=jobs)
    finally:
        store.close()
    return url


def _same_contents(first_url: str, second_url: str) -> bool:
    first, second = open_store(first_url), open_store(second_url)
    try:
        return contents(first) == contents(second)
    finally:
        first.close()
        second.close()


def test_migrate_to_postgresql_then_refuse_then_rerun(tmp_path: Path, postgres_db_url: str) -> None:
    source = _filled(tmp_path / "recall.sqlite", jobs=40)
    done = jupyter_recall(
        "migrate", f"--from={source}", f"--to={postgres_db_url}", "--batch=7", runtime=tmp_path
    )
    assert done.code == 0, done.err
    assert "jobs: 44 read, 44 added, 0 already there" in done.out
    # stderr is a pipe here: progress comes as periodic lines, not a redrawn bar
    assert "migrate [" in done.err
    assert "\r" not in done.err
    assert _same_contents(source, postgres_db_url)

    refused = jupyter_recall(
        "migrate", f"--from={source}", f"--to={postgres_db_url}", runtime=tmp_path
    )
    assert refused.code == 2
    assert "--to: the target store is not empty" in refused.err

    again = jupyter_recall(
        "migrate",
        f"--from={source}",
        f"--to={postgres_db_url}",
        "--force",
        "--quiet",
        runtime=tmp_path,
    )
    assert again.code == 0, again.err
    assert "jobs: 44 read, 0 added, 44 already there" in again.out
    assert again.err == ""
    assert _same_contents(source, postgres_db_url)


def test_export_import_round_trip_through_the_command(tmp_path: Path, postgres_db_url: str) -> None:
    source = _filled(tmp_path / "recall.sqlite")
    backup = tmp_path / "backup.jsonl"
    exported = jupyter_recall("export", f"--from={source}", str(backup), runtime=tmp_path)
    assert exported.code == 0, exported.err
    header = json.loads(backup.read_text(encoding="utf-8").splitlines()[0])
    assert header["format"] == "jupyter_recall-export"
    for target in (postgres_db_url, sqlite_url(tmp_path / "restored.sqlite")):
        loaded = jupyter_recall("import", str(backup), f"--to={target}", runtime=tmp_path)
        assert loaded.code == 0, loaded.err
        assert "jobs: 7 added" in loaded.out
        assert _same_contents(source, target)
    refused = jupyter_recall("export", f"--from={source}", str(backup), runtime=tmp_path)
    assert refused.code == 2
    assert "never overwrites" in refused.err


def test_bad_urls_name_their_option(tmp_path: Path) -> None:
    good = _filled(tmp_path / "recall.sqlite", jobs=1)
    from_bad = jupyter_recall("migrate", "--from=mysql://x/db", f"--to={good}", runtime=tmp_path)
    assert from_bad.code == 2
    assert "--from: unknown scheme 'mysql'" in from_bad.err
    to_bad = jupyter_recall("migrate", f"--from={good}", "--to=sqlite://relative", runtime=tmp_path)
    assert to_bad.code == 2
    assert (
        "jupyter recall migrate: error: --to: 'sqlite://relative' is not a SQLite URL" in to_bad.err
    )
    typo = jupyter_recall(
        "export", f"--from={sqlite_url(tmp_path / 'nosuch.sqlite')}", runtime=tmp_path
    )
    assert typo.code == 2
    assert "--from: there is no SQLite file at" in typo.err
    assert not (tmp_path / "nosuch.sqlite").exists()
    missing = jupyter_recall("export", runtime=tmp_path)
    assert missing.code == 2
    assert "--from: give the store's URL" in missing.err


def test_a_bad_export_file_names_the_line_and_field(tmp_path: Path) -> None:
    source = _filled(tmp_path / "recall.sqlite", jobs=1)
    backup = tmp_path / "backup.jsonl"
    assert jupyter_recall("export", f"--from={source}", str(backup), runtime=tmp_path).code == 0
    lines = backup.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[3])
    row["row"]["run_count"] = "many"
    lines[3] = json.dumps(row)
    backup.write_text("\n".join(lines) + "\n", encoding="utf-8")
    target = sqlite_url(tmp_path / "restored.sqlite")
    done = jupyter_recall("import", str(backup), f"--to={target}", runtime=tmp_path)
    assert done.code == 2
    assert 'line 4: jobs.run_count: must be int, got "many"' in done.err


async def test_an_engine_on_postgresql_keeps_firing_after_the_move(
    tmp_path: Path, postgres_db_url: str
) -> None:
    clock = ManualClock(T0)
    script = Script()
    source_url = sqlite_url(tmp_path / "recall.sqlite")
    source = open_store(source_url)
    try:
        async with Scheduler(source, CallableExecutor(script), clock=clock) as engine:
            job = await engine.add_job(new("every 1 minute"), owner=OWNER)
            clock.advance(60)
            before = await wait_runs(engine, job.id, 1)
    finally:
        source.close()

    moved = await anyio.to_thread.run_sync(
        lambda: jupyter_recall(
            "migrate", f"--from={source_url}", f"--to={postgres_db_url}", runtime=tmp_path
        )
    )
    assert moved.code == 0, moved.err

    target = open_store(postgres_db_url)
    try:
        async with Scheduler(target, CallableExecutor(script), clock=clock) as engine:
            assert [run.id for run in await runs_of(engine, job.id)] == [before[0].id]
            clock.advance(60)
            after = await wait_runs(engine, job.id, 2)
            await eventually(lambda: len(script.executed(job.id)) == 2)
    finally:
        target.close()
    assert after[0] == before[0]
    assert after[1].scheduled_for > before[0].scheduled_for
    fired = [run.scheduled_for for run in script.executed(job.id)]
    assert fired == [before[0].scheduled_for, after[1].scheduled_for]


def test_the_progress_bar_redraws_one_line_on_a_terminal() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    screen = Terminal()
    bar = ProgressBar("migrate", 40, screen, quiet=False)
    bar("jobs", 10)
    bar("runs", 30)
    bar.finish()
    assert screen.getvalue() == (
        "\rmigrate [#######.......................] 10/40 rows (jobs)"
        "\rmigrate [##############################] 40/40 rows (runs)\n"
    )
    quiet = Terminal()
    ProgressBar("migrate", 40, quiet, quiet=True)("jobs", 40)
    assert quiet.getvalue() == ""


def test_a_failed_import_creates_no_store(tmp_path: Path) -> None:
    target = tmp_path / "restored.sqlite"
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    not_export = tmp_path / "notes.jsonl"
    not_export.write_text('{"hello": 1}\n', encoding="utf-8")
    latin1 = tmp_path / "latin1.jsonl"
    latin1.write_bytes(b'{"format": "caf\xe9"}\n')
    cases = [
        (tmp_path / "missing.jsonl", "FILE: cannot read"),
        (empty, "line 1: 'FILE_PATH' is empty: not an export"),
        (not_export, "line 1: format: must be"),
        (latin1, "FILE: 'FILE_PATH' is not UTF-8 text (invalid continuation byte)"),
    ]
    for path, expected in cases:
        done = jupyter_recall("import", str(path), f"--to={sqlite_url(target)}", runtime=tmp_path)
        assert done.code == 2, done.err
        assert "Traceback" not in done.err
        assert expected.replace("FILE_PATH", str(path)) in done.err
        assert not target.exists()


def test_an_export_that_cannot_be_written_is_one_error(tmp_path: Path) -> None:
    source = _filled(tmp_path / "recall.sqlite", jobs=3)
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [JUPYTER, "recall", "export", f"--from={source}", "--quiet"],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            env=cli_env(tmp_path),
            timeout=60,
            check=False,
        )
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "jupyter recall export: error: cannot write the export to standard output: "
        "No space left on device"
    ]


def _broken_export(tmp_path: Path, index: int) -> tuple[Path, str]:
    """An export of a filled store whose line ``index + 1`` lacks jobs.owner; its source."""
    source = _filled(tmp_path / "recall.sqlite", jobs=20)
    backup = tmp_path / "backup.jsonl"
    assert jupyter_recall("export", f"--from={source}", str(backup), runtime=tmp_path).code == 0
    lines = backup.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[index])
    assert row["table"] == "jobs"
    del row["row"]["owner"]
    lines[index] = json.dumps(row)
    backup.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return backup, source


def test_an_import_checks_the_whole_file_before_writing(tmp_path: Path) -> None:
    backup, _ = _broken_export(tmp_path, 15)
    target = tmp_path / "restored.sqlite"
    done = jupyter_recall(
        "import", str(backup), f"--to={sqlite_url(target)}", "--batch=5", runtime=tmp_path
    )
    assert done.code == 2
    (line,) = done.err.splitlines()
    assert line == (
        "jupyter recall import: error: line 16: jobs.owner: is missing; nothing was imported"
    )
    assert not target.exists()
    # Into a store that is there: it stays empty, so that the fixed file goes in without --force.
    empty = sqlite_url(tmp_path / "empty.sqlite")
    open_store(empty).close()
    piped = jupyter_recall(
        "import", "-", f"--to={empty}", runtime=tmp_path, stdin=backup.read_text()
    )
    assert piped.code == 2
    assert "line 16: jobs.owner: is missing; nothing was imported" in piped.err
    store = open_store(empty)
    try:
        assert total_rows(store) == 0
    finally:
        store.close()


def test_a_bad_second_line_leaves_no_store_and_stdin_imports(tmp_path: Path) -> None:
    backup, source = _broken_export(tmp_path, 1)
    target = tmp_path / "restored.sqlite"
    done = jupyter_recall("import", str(backup), f"--to={sqlite_url(target)}", runtime=tmp_path)
    assert done.code == 2
    assert "line 2: jobs.owner: is missing" in done.err
    assert sorted(path.name for path in tmp_path.iterdir() if "restored" in path.name) == []
    good = tmp_path / "good.jsonl"
    assert jupyter_recall("export", f"--from={source}", str(good), runtime=tmp_path).code == 0
    piped = jupyter_recall(
        "import", "-", f"--to={sqlite_url(target)}", runtime=tmp_path, stdin=good.read_text()
    )
    assert piped.code == 0, piped.err
    assert _same_contents(source, sqlite_url(target))


def test_migrate_sees_one_store_behind_two_spellings(tmp_path: Path) -> None:
    path = tmp_path / "recall.sqlite"
    _filled(path, jobs=1)
    for target in (f"sqlite:///{path}", f"sqlite://{tmp_path}/./recall.sqlite"):
        done = jupyter_recall(
            "migrate", f"--from=sqlite://{path}", f"--to={target}", "--force", runtime=tmp_path
        )
        assert done.code == 2, done.err
        assert "--to: is the same store as --from" in done.err


def test_migrate_makes_no_directory_and_says_an_unreachable_store_in_one_line(
    tmp_path: Path,
) -> None:
    source = _filled(tmp_path / "recall.sqlite", jobs=1)
    missing = tmp_path / "nodir" / "x.sqlite"
    done = jupyter_recall(
        "migrate", f"--from={source}", f"--to={sqlite_url(missing)}", runtime=tmp_path
    )
    assert done.code == 3, done.err
    (line,) = done.err.splitlines()
    assert line.startswith("jupyter recall migrate: error: --to: cannot open the store: "), line
    assert "does not exist" in line
    assert not missing.parent.exists()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"postgresql://nobody:secret@127.0.0.1:{port}/recall"
    down = jupyter_recall("migrate", f"--from={source}", f"--to={url}", runtime=tmp_path)
    assert down.code == 3, down.err
    (line,) = down.err.splitlines()
    assert line.startswith("jupyter recall migrate: error: --to: cannot open the store: "), line
    assert "secret" not in line


def test_an_export_into_a_missing_directory_says_so(tmp_path: Path) -> None:
    source = _filled(tmp_path / "recall.sqlite", jobs=1)
    target = tmp_path / "nodir" / "x.jsonl"
    done = jupyter_recall("export", f"--from={source}", str(target), runtime=tmp_path)
    assert done.code == 2
    assert done.err.splitlines() == [
        f"jupyter recall export: error: FILE: cannot create (an export never overwrites a file) "
        f"{str(target)!r}: the directory {str(target.parent)!r} does not exist"
    ]
