"""What the cards share: ipywidgets (imported here only), the card frame, the countdown widget
and a display bundle that keeps a text and HTML fallback next to the widget."""

from __future__ import annotations

import html
import itertools
from collections.abc import Callable
from typing import Any, Final, NotRequired, TypedDict

import ipywidgets

CARD_CLASS = "jupyter-recall-card"
BORDER = "1px solid #bdbdbd"
_uids = itertools.count(1)


def uid() -> str:
    """A short name unique in this kernel (CSS animation names are global on a page)."""
    return format(next(_uids), "x")


def frame(children: list[Any], css_class: str) -> Any:
    box = ipywidgets.VBox(
        children,
        layout=ipywidgets.Layout(border=BORDER, padding="4px 8px", margin="4px 0", width="auto"),
    )
    box.add_class(CARD_CLASS)
    box.add_class(css_class)
    return box


BUTTON_CLASS = "jupyter-recall-button"
OFF_CLASS = "jupyter-recall-button-off"
STYLE = (
    "<style>"
    f".{CARD_CLASS} .{BUTTON_CLASS}{{border:1px solid var(--jp-brand-color1,#1976d2)}}"
    f".{CARD_CLASS} .{BUTTON_CLASS}.{OFF_CLASS}{{opacity:0.45;background:transparent;"
    "border:1px dashed var(--jp-border-color1,#9e9e9e);color:var(--jp-ui-font-color2,#757575);"
    "box-shadow:none;cursor:not-allowed}"
    "</style>"
)
"""Enabled and disabled buttons told apart in light and dark themes alike: an enabled one has a
solid border in the theme's brand colour, a disabled one is faded with a dashed border (the
ipywidgets default only lowers the opacity of a grey button, lost on a dark background)."""


def button(description: str, tooltip: str, action: Callable[[], None]) -> Any:
    widget = ipywidgets.Button(
        description=description, tooltip=tooltip, layout=ipywidgets.Layout(width="auto")
    )
    widget.add_class(BUTTON_CLASS)
    widget.on_click(lambda _: action())
    return widget


def enable(widget: Any, enabled: bool) -> None:
    """Enable or disable a card button, with its look (``STYLE``)."""
    widget.disabled = not enabled
    if enabled:
        widget.remove_class(OFF_CLASS)
    else:
        widget.add_class(OFF_CLASS)


class StreamOutput(TypedDict):
    """One stream output of an Output widget (nbformat's ``stream``)."""

    output_type: str
    name: str
    text: str


class WidgetView(TypedDict):
    """What a frontend with widgets renders: the model to show."""

    version_major: int
    version_minor: int
    model_id: str


WIDGET_VIEW: Final = "application/vnd.jupyter.widget-view+json"
MimeBundle = TypedDict(
    "MimeBundle",
    {
        "text/plain": str,
        "text/html": str,
        "application/vnd.jupyter.widget-view+json": NotRequired[WidgetView],
    },
)
"""A card's display data: the widget's view, and the text and HTML fallbacks."""


def stream_outputs(text: str, name: str = "stdout") -> tuple[StreamOutput, ...]:
    """An Output widget's ``outputs`` holding ``text`` as one stream: what ``append_stdout``
    builds, merged, so each update sends one stream instead of a growing list of chunks."""
    if not text:
        return ()
    return ({"output_type": "stream", "name": name, "text": text},)


def output_widget(css_class: str) -> Any:
    widget = ipywidgets.Output(layout=ipywidgets.Layout(max_height="20em", overflow="auto"))
    widget.add_class(css_class)
    return widget


def _fresh_state(self: Any, key: Any = None, drop_defaults: bool = False) -> dict[str, Any]:
    state: dict[str, Any] = ipywidgets.HTML.get_state(self, key=key, drop_defaults=drop_defaults)
    render = getattr(self, "render", None)
    if "value" in state and callable(render):
        state["value"] = render()
    return state


Countdown: Any = type("Countdown", (ipywidgets.HTML,), {"get_state": _fresh_state})
"""An HTML widget whose value is rendered again each time its state is sent: a page reloaded
(or a second view opened) starts the CSS countdown from the remaining time, not from the time
left when the card last changed. Its ``render`` attribute is the function that renders it."""


def countdown(render: Callable[[], str]) -> Any:
    widget = Countdown()
    widget.render = render
    widget.value = render()
    return widget


def bundle(widget: Any, text: str, html_text: str | None = None, **kwargs: Any) -> MimeBundle:
    """The widget's view plus text/plain and text/html: a frontend without widgets
    (nbconvert, a terminal, a notebook opened after the kernel died) shows the fallback."""
    shown = html_text if html_text is not None else f"<pre>{html.escape(text)}</pre>"
    data: MimeBundle = {"text/plain": text, "text/html": shown}
    view = (widget._repr_mimebundle_(**kwargs) or {}).get(WIDGET_VIEW)
    if view is not None:
        data[WIDGET_VIEW] = view
    return data
