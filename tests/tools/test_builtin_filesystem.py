"""filesystem.read|write|list on real files, and paths that leave the root."""

from __future__ import annotations

import os

import pytest

from jupyter_recall.tools import ToolRunner
from jupyter_recall.tools.builtin.filesystem import INLINE_READ


async def test_write_read_list(runner, root):
    written = await runner.run_tool(
        "filesystem.write", {"path": "notes/today.txt", "content": "first\n"}
    )
    assert written == {
        "success": True,
        "data": {"path": "notes/today.txt", "bytes": 6, "append": False},
    }
    await runner.run_tool(
        "filesystem.write", {"path": "notes/today.txt", "content": "second\n", "append": True}
    )
    assert (root / "notes" / "today.txt").read_text() == "first\nsecond\n"
    read = await runner.run_tool("filesystem.read", {"path": "notes/today.txt"})
    assert read["data"] == {
        "path": "notes/today.txt",
        "content": "first\nsecond\n",
        "size": 13,
        "truncated": False,
    }
    (root / "notes" / "sub").mkdir()
    listed = await runner.run_tool("filesystem.list", {"path": "notes"})
    assert listed["data"]["entries"] == [
        {"name": "sub", "path": "notes/sub", "type": "directory", "size": None},
        {"name": "today.txt", "path": "notes/today.txt", "type": "file", "size": 13},
    ]
    top = await runner.run_tool("filesystem.list")
    assert [entry["name"] for entry in top["data"]["entries"]] == ["notes"]


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/passwd", "a/../../b", "~/x"])
async def test_paths_outside_the_root_are_refused(runner, root, path):
    result = await runner.run_tool("filesystem.read", {"path": path})
    assert result["success"] is False
    assert "is outside the tool root" in result["error"]
    assert result["error"].startswith("filesystem.read: path: ")
    written = await runner.run_tool("filesystem.write", {"path": path, "content": "x"})
    assert "is outside the tool root" in written["error"]
    assert not (root.parent / "outside.txt").exists()


@pytest.mark.parametrize(
    ("path", "words"),
    [
        ("a\x00b", "must not contain a NUL character"),
        ("notes/\ud800.txt", "holds a lone UTF-16 surrogate (U+D800)"),
    ],
)
@pytest.mark.parametrize("tool", ["filesystem.read", "filesystem.write", "filesystem.list"])
async def test_a_path_that_no_file_can_have_is_refused_naming_path(runner, tool, path, words):
    # They failed inside the tool: "ValueError: embedded null byte", "UnicodeEncodeError".
    params = {"path": path, **({"content": "x"} if tool == "filesystem.write" else {})}
    result = await runner.run_tool(tool, params)
    assert result["success"] is False
    assert result["error"].startswith(f"{tool}: path: {words}"), result["error"]


async def test_a_symlink_out_of_the_root_is_refused(runner, root, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("do not read")
    os.symlink(secret, root / "link.txt")
    result = await runner.run_tool("filesystem.read", {"path": "link.txt"})
    assert "is outside the tool root" in result["error"]


async def test_a_symlinked_directory_out_of_the_root_is_refused_at_any_depth(
    runner, root, tmp_path
):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("do not read")
    (root / "sub").mkdir()
    os.symlink(outside, root / "sub" / "data")
    for path in ("sub/data/secret.txt", "sub/./data/secret.txt", "sub//data/secret.txt"):
        result = await runner.run_tool("filesystem.read", {"path": path})
        assert "is outside the tool root" in result["error"], path
    listed = await runner.run_tool("filesystem.list", {"path": "sub/data"})
    assert "is outside the tool root" in listed["error"]


async def test_a_symlink_repointed_out_of_the_root_is_refused_at_the_next_read(
    runner, root, tmp_path
):
    (root / "real.txt").write_text("inside")
    os.symlink(root / "real.txt", root / "link.txt")
    inside = await runner.run_tool("filesystem.read", {"path": "link.txt"})
    assert inside["data"]["content"] == "inside"
    assert inside["data"]["path"] == "real.txt", "the path read is the link's target"
    secret = tmp_path / "secret.txt"
    secret.write_text("do not read")
    os.remove(root / "link.txt")
    os.symlink(secret, root / "link.txt")
    refused = await runner.run_tool("filesystem.read", {"path": "link.txt"})
    assert "is outside the tool root" in refused["error"]


async def test_a_plain_file_replaced_by_a_symlink_out_of_the_root_is_refused(
    runner, root, tmp_path
):
    (root / "status.txt").write_text("fine")
    first = await runner.run_tool("filesystem.read", {"path": "status.txt"})
    assert first["data"] == {"path": "status.txt", "content": "fine", "size": 4, "truncated": False}
    secret = tmp_path / "secret.txt"
    secret.write_text("do not read")
    os.remove(root / "status.txt")
    os.symlink(secret, root / "status.txt")
    refused = await runner.run_tool("filesystem.read", {"path": "status.txt"})
    assert "is outside the tool root" in refused["error"]


async def test_dots_and_doubled_slashes_that_stay_inside_are_fine(runner, root):
    (root / "a").mkdir()
    (root / "a" / "b.txt").write_text("b")
    for path in ("a/b.txt", "./a/b.txt", "a//b.txt", "a/../a/b.txt", "a/./b.txt"):
        result = await runner.run_tool("filesystem.read", {"path": path})
        assert result["data"]["content"] == "b", path
        assert result["data"]["path"] == "a/b.txt", path
    directory = await runner.run_tool("filesystem.read", {"path": "a"})
    assert directory["error"] == "filesystem.read: 'a' is not a file under the root"


async def test_a_root_given_through_a_symlink_is_its_real_directory(registry, root, tmp_path):
    (root / "a.txt").write_text("inside")
    os.symlink(root, tmp_path / "alias")
    runner = ToolRunner(registry, root=str(tmp_path / "alias"))
    try:
        relative = await runner.run_tool("filesystem.read", {"path": "a.txt"})
        assert relative["data"]["content"] == "inside"
        absolute = await runner.run_tool("filesystem.read", {"path": str(tmp_path / "alias/a.txt")})
        assert absolute["data"]["path"] == "a.txt"
        (tmp_path / "b.txt").write_text("outside")
        outside = await runner.run_tool("filesystem.read", {"path": "../b.txt"})
        assert "is outside the tool root" in outside["error"]
    finally:
        runner.close()


async def test_a_file_above_the_inline_limit_is_read_whole(runner, root):
    content = "0123456789abcdef" * (INLINE_READ // 16 + 10)
    (root / "big.txt").write_text(content)
    result = await runner.run_tool("filesystem.read", {"path": "big.txt"})
    assert result["data"]["content"] == content
    assert result["data"]["size"] == len(content) > INLINE_READ


async def test_an_absolute_path_inside_the_root_is_fine(runner, root):
    (root / "a.txt").write_text("inside")
    result = await runner.run_tool("filesystem.read", {"path": str(root / "a.txt")})
    assert result["data"]["content"] == "inside"


async def test_large_files_are_cut_and_errors_are_results(registry, root):
    (root / "big.txt").write_text("z" * 100)
    (root / "binary.bin").write_bytes(b"\xff\xfe\x00")
    small = ToolRunner(registry, root=str(root), output_limit=40)
    big = await small.run_tool("filesystem.read", {"path": "big.txt"})
    assert big["data"]["truncated"] is True
    assert big["data"]["content"] == "z" * 40 + "\n[truncated: 40 of 100 bytes shown]"
    assert big["data"]["size"] == 100
    binary = await small.run_tool("filesystem.read", {"path": "binary.bin"})
    assert binary["success"] is False
    assert "is not utf-8 text" in binary["error"]
    missing = await small.run_tool("filesystem.read", {"path": "nope.txt"})
    assert missing == {
        "success": False,
        "error": "filesystem.read: 'nope.txt' is not a file under the root",
    }
    not_dir = await small.run_tool("filesystem.list", {"path": "big.txt"})
    assert "is not a directory" in not_dir["error"]
    small.close()


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs Linux's /proc")
async def test_a_file_that_reports_no_size_is_read_whole(registry):
    # /proc files say they are empty (st_size 0) and are not.
    runner = ToolRunner(registry, root="/proc/self")
    try:
        result = await runner.run_tool("filesystem.read", {"path": "status"})
    finally:
        runner.close()
    assert result["data"]["size"] == 0
    assert f"Pid:\t{os.getpid()}" in result["data"]["content"]
