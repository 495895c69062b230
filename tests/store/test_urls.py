"""``open_store(url)``: the one way the server opens a store, and the errors of a bad URL."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_recall.core.errors import StoreError, ValidationError
from jupyter_recall.store.sqlite import SQLiteStore
from jupyter_recall.store.urls import (
    POSTGRESQL,
    open_store,
    sqlite_path,
    sqlite_url,
    store_kind,
)
from tests.store.factories import make_job

ACCEPTED = ("sqlite:///absolute/path", "sqlite:///:memory:")
ANY_ACCEPTED = (*ACCEPTED, *POSTGRESQL.forms)


def test_a_sqlite_url_opens_that_file_creating_its_directory(tmp_path: Path) -> None:
    path = tmp_path / "new dir" / "recall é.sqlite"
    store = open_store(sqlite_url(path))
    try:
        assert isinstance(store, SQLiteStore)
        assert Path(store.path) == path
        job = make_job()
        store.insert_jobs([job])
    finally:
        store.close()
    reopened = open_store(f"sqlite://{path}")  # written by hand, unquoted
    try:
        assert reopened.get_job(job.id, owner="alice") == job
    finally:
        reopened.close()


def test_a_memory_url_opens_a_throwaway_store() -> None:
    store = open_store("sqlite:///:memory:")
    try:
        job = make_job()
        store.insert_jobs([job])
        assert store.get_job(job.id, owner="alice") == job
    finally:
        store.close()


def test_the_url_of_a_relative_path_is_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert sqlite_path(sqlite_url("recall.sqlite")) == str(tmp_path / "recall.sqlite")
    assert sqlite_path("sqlite:///srv/my%20jobs.sqlite") == "/srv/my jobs.sqlite"


@pytest.mark.parametrize(
    "url",
    [
        "sqlite://host/recall.sqlite",
        "sqlite:relative.sqlite",
        "sqlite:///tmp/recall.sqlite?mode=ro",
        "sqlite:///tmp/recall.sqlite#part",
    ],
)
def test_a_sqlite_url_not_of_an_absolute_path_names_the_field_and_the_forms(url: str) -> None:
    with pytest.raises(ValidationError) as caught:
        open_store(url)
    assert caught.value.field == "db_url"
    assert caught.value.accepted == ACCEPTED
    assert url in str(caught.value)


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("mysql://db/recall", "unknown scheme 'mysql'"),
        ("/srv/recall.sqlite", "not a URL"),
        ("", "not a URL"),
        ("mysql://recall:s3cret@db/recall", "unknown scheme 'mysql'"),
    ],
)
def test_an_unknown_scheme_names_the_field_the_schemes_and_not_the_password(
    url: str, said: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        store_kind(url)
    message = str(caught.value)
    assert message.startswith("db_url: ")
    assert said in message
    assert caught.value.accepted == ANY_ACCEPTED
    assert "s3cret" not in message


@pytest.mark.parametrize(
    "url", ["postgresql://recall:s3cret@db/recall", "postgres://recall:s3cret@db/recall"]
)
def test_both_postgresql_schemes_name_the_postgresql_store(url: str) -> None:
    assert store_kind(url) is POSTGRESQL


def test_an_unreachable_postgresql_is_a_store_error_without_the_password() -> None:
    url = "postgresql://recall:s3cret@127.0.0.1:1/recall?connect_timeout=2"
    with pytest.raises(StoreError) as caught:
        open_store(url)
    message = str(caught.value)
    assert "cannot connect to PostgreSQL" in message
    assert "127.0.0.1" in message
    assert "s3cret" not in message


@pytest.mark.parametrize(
    ("url", "said", "secret"),
    [
        # libpq's own messages quoted these passwords, whole or in part.
        ("postgresql://recall:50%off@127.0.0.1:1/recall", "must start a percent-encoded", "off"),
        ("postgresql://recall:qz/ss@127.0.0.1:1/recall", "its port is no number", "qz"),
        ("postgresql://recall:p@[::1/recall", "not a URL that can be read", "recall:p"),
    ],
)
def test_a_url_libpq_would_misread_is_refused_without_its_password(
    url: str, said: str, secret: str
) -> None:
    with pytest.raises(ValidationError) as refused:
        open_store(url)
    assert refused.value.field == "db_url"
    assert said in str(refused.value)
    assert secret not in str(refused.value).split("(accepted:")[0]


def test_a_drivers_message_quoting_the_password_is_scrubbed() -> None:
    from jupyter_recall.store.postgres_listen import scrubbed

    url = "postgresql://recall:s%2Fcret@db/recall"
    error = Exception('invalid connection option "s/cret" (password=s%2Fcret)')
    assert scrubbed(error, url) == 'invalid connection option "***" (password=***)'
    assert scrubbed(error, "postgresql://recall@db/recall") == str(error)


def test_a_file_that_cannot_be_opened_is_a_store_error(tmp_path: Path) -> None:
    (tmp_path / "a file").write_text("")
    with pytest.raises(StoreError, match="a file"):
        open_store(sqlite_url(tmp_path / "a file" / "recall.sqlite"))


def test_a_sqlite_file_whose_directory_is_missing_is_refused_when_not_to_make_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "typo" / "recall.sqlite"
    with pytest.raises(StoreError) as caught:
        open_store(sqlite_url(path), create_dirs=False)
    assert str(path) in str(caught.value)
    assert "does not exist" in str(caught.value)
    assert not path.parent.exists()
    path.parent.mkdir()
    open_store(sqlite_url(path), create_dirs=False).close()
    assert path.exists()


def test_a_sqlite_url_with_extra_leading_slashes_names_the_path_once(tmp_path: Path) -> None:
    # The docs' ``sqlite:///$HOME/...`` form: $HOME starts with a slash of its own.
    path = tmp_path / "recall.sqlite"
    assert sqlite_path(f"sqlite:///{path}") == str(path)
    assert sqlite_path(f"sqlite://///{path}") == str(path)
    store = open_store(f"sqlite:///{path}")
    try:
        assert store.path == str(path)
        assert repr(store) == f"SQLiteStore({str(path)!r})"
    finally:
        store.close()
