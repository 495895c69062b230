"""`--notebook` and `list --path` take the notebook as the server names it (its path under the
server's root) however it is typed: `./sub/nb.ipynb`, `sub//nb.ipynb`, or a filesystem path
under the server's root dir; an empty one, one leaving the root, or a filesystem path outside it
is refused naming the option, and no job is made that would fail at every fire."""

from __future__ import annotations

import pytest

from jupyter_recall.cli.commands import notebook_path
from jupyter_recall.core.errors import ValidationError
from tests.cli.conftest import CliServer, jupyter_recall
from tests.cli.test_bad_input import job_ids, one_error_line
from tests.server.live_server import TOKEN


def kernel_path(result) -> str:
    assert result.code == 0, result.err
    return str(result.json()["target"]["path"])


@pytest.mark.parametrize(
    "typed", ["./sub/nb.ipynb", "sub//nb.ipynb", "other/../sub/nb.ipynb", "sub/./nb.ipynb"]
)
def test_a_relative_path_is_normalised(app, typed):
    done = app("add", "in 2h", "print(1)", "--notebook", typed, "--json")
    assert kernel_path(done) == "sub/nb.ipynb"


def test_a_filesystem_path_under_the_root_is_the_servers_path(app, server: CliServer):
    typed = str(server.root / "sub" / "fs.ipynb")
    assert (
        kernel_path(app("add", "in 2h", "x = 1", "--notebook", typed, "--json")) == "sub/fs.ipynb"
    )
    listed = app("list", "--path", typed, "--json")
    assert [job["target"]["path"] for job in listed.json()["jobs"]] == ["sub/fs.ipynb"]
    dotted = app("list", "--path", "./sub//fs.ipynb", "--json")
    assert len(dotted.json()["jobs"]) == 1


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("", "--notebook: is empty: give the notebook's path"),
        ("  ", "--notebook: is empty"),
        ("../up.ipynb", "--notebook: '../up.ipynb' is not a notebook under the server's root"),
        ("/nowhere/else.ipynb", "--notebook: '/nowhere/else.ipynb' is not under the server's root"),
    ],
)
def test_a_notebook_that_cannot_be_one_is_refused(app, server, typed, expected):
    before = job_ids(server)
    done = app("add", "in 2h", "print(1)", "--notebook", typed)
    assert done.code == 2
    assert expected in one_error_line(done.err)
    assert job_ids(server) == before
    listed = app("list", "--path", typed)
    assert listed.code == 2
    assert expected.replace("--notebook", "--path") in one_error_line(listed.err)


def test_an_explicit_url_takes_the_root_from_the_servers_runtime_file(server, tmp_path):
    typed = str(server.root / "explicit.ipynb")
    args = ("add", "in 2h", "x = 1", "--notebook", typed, "--json", "--url", server.url)
    found = jupyter_recall(*args, "--token", TOKEN, runtime=server.runtime)
    assert kernel_path(found) == "explicit.ipynb"
    # No runtime file names this server's root: the server says it (/api/recall/info).
    told = jupyter_recall(*args, "--token", TOKEN, runtime=tmp_path)
    assert kernel_path(told) == "explicit.ipynb"
    outside = str(tmp_path / "elsewhere.ipynb")
    refused = jupyter_recall(
        "add",
        "in 2h",
        "x = 1",
        "--notebook",
        outside,
        "--url",
        server.url,
        "--token",
        TOKEN,
        runtime=tmp_path,
    )
    assert refused.code == 2
    assert "is not under the server's root directory" in one_error_line(refused.err)


def test_a_filesystem_path_without_a_known_root_is_refused_naming_the_option():
    # A server of a release before /api/recall/info gave its root, and no runtime file.
    with pytest.raises(ValidationError, match="root directory is not known here") as caught:
        notebook_path("/srv/nb.ipynb", lambda: None, "--notebook")
    assert caught.value.field == "--notebook"
    assert notebook_path("sub/nb.ipynb", _never_asked, "--notebook") == "sub/nb.ipynb"


def _never_asked() -> str:
    raise AssertionError("a path relative to the root needs no root directory")


def test_a_notebook_named_none_is_that_notebook_not_a_fresh_kernel(app):
    # traitlets reads the word None typed for a text that may be None as "not given".
    done = app("add", "in 2h", "print(1)", "--notebook", "None", "--json")
    assert done.json()["target"] == {"type": "kernel", "path": "None"}
    listed = app("list", "--path", "None", "--json")
    assert [job["id"] for job in listed.json()["jobs"]] == [done.json()["id"]]
