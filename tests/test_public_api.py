"""``import jupyter_recall``: its public names, those resolved on first use included."""

from __future__ import annotations

import jupyter_recall


def test_dir_lists_the_lazily_resolved_api() -> None:
    names = dir(jupyter_recall)
    for name in ("schedule", "recall", "jobs", "watch_start", "run_tool", "agent"):
        assert name in names, name
    assert set(jupyter_recall.__all__) <= set(names)
    # What a module's dir() always listed stays.
    assert {"__version__", "__name__", "load_ipython_extension"} <= set(names)
    assert names == sorted(names)


def test_every_lazily_resolved_name_is_public_and_resolves() -> None:
    lazy = {*jupyter_recall._KERNEL_API, *jupyter_recall._KERNEL_MODULES}
    assert lazy <= set(jupyter_recall.__all__), lazy - set(jupyter_recall.__all__)
    for name in jupyter_recall.__all__:
        assert getattr(jupyter_recall, name) is not None, name
