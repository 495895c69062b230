"""notebooks/watchers.ipynb runs top to bottom in a kernel of the live server."""

from __future__ import annotations

from tests.kernel.test_example_notebook import NOTEBOOKS, errors_of, outputs_text, run_notebook


def test_watchers_notebook_runs(server):
    nb = run_notebook(server, NOTEBOOKS / "watchers.ipynb")
    assert errors_of(nb) == []
    text = outputs_text(nb)
    assert "[WATCHER UPDATE] watcher_id=" in text
    assert "changed -> live" in text
    assert "Watcher training: threshold met" in text
    assert "unknown channel 'pager'" in text
    assert "['build finished', 'wake up']" in text
    assert "'notifications': 2" in text
    assert "[]" in text, "every watcher is stopped at the end"
