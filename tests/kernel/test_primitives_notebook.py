"""notebooks/tools_parallel.ipynb runs top to bottom in a kernel started by the live server."""

from __future__ import annotations

from tests.kernel.test_example_notebook import NOTEBOOKS, errors_of, outputs_text, run_notebook


def test_tools_notebook_runs(server):
    nb = run_notebook(server, NOTEBOOKS / "tools_parallel.ipynb")
    assert errors_of(nb) == []
    text = outputs_text(nb)
    assert "21 calls in 0." in text
    assert "[0, 1, 4, 9, 16" in text
    assert "succeeded built" in text
    # %%parallel --limit shell=2: the four commands' outputs in their table.
    assert all(f'"stdout": "{word}\\n"' in text for word in ("one", "two", "three", "four"))
    # background_cancel, then background_list.
    assert "\ncancelled\n" in text
    assert "('shell.run', 'cancelled')" in text
    assert "[BACKGROUND TASK COMPLETED] task_id=" in text
    assert "is blocked by kernel setting jupyter_recall.set_tool_policy('shell', ...)" in text
    assert "approved filesystem.write(path='demo/approved.txt', content='ok')" in text
    assert "who and when recorded: True" in text
