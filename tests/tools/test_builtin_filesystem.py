"""filesystem.read|write|list on real files, and paths that leave the root."""

from __future__ import annotations

import os

import pytest

from jupyter_recall.tools import ToolRunner


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


async def test_a_symlink_out_of_the_root_is_refused(runner, root, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("do not read")
    os.symlink(secret, root / "link.txt")
    result = await runner.run_tool("filesystem.read", {"path": "link.txt"})
    assert "is outside the tool root" in result["error"]


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
