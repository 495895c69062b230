"""traitlets command lines made strict, for ``jupyter recall`` and its ``scheduler``: an unknown
option or a value its trait cannot read is one error naming the option, never a warning and a
run without it (``prune --dryrun=1`` would delete; a scheduler given ``--dburl=...`` would fire
the jobs of another store)."""

from __future__ import annotations

import difflib
import re
from typing import Any

from traitlets import Float, Int, TraitError, TraitType
from traitlets.config.application import Application, StrDict
from traitlets.config.loader import KVArgParseConfigLoader

from jupyter_recall.core.errors import UsageError

_OPTION = re.compile(r"^--?([A-Za-z][\w.-]*)(=.*)?$", re.S)
"""A word of the command line that argparse takes for an option (``-5`` is a value)."""
_ALWAYS_KNOWN = ("h", "help", "help-all", "V", "version")
"""Handled by traitlets' Application before the options are parsed."""
_DOT = "__DOT__"
"""How traitlets' loader spells the dot of ``Class.trait`` in argparse destinations."""


class StrictLoader(KVArgParseConfigLoader):
    """traitlets' command-line loader, refusing what it would only warn about or let through
    to a "Bad config" message: an unknown option (a typo must not run the command without
    it: ``prune --dryrun=1`` would delete), and a value its trait cannot read (``--limit
    abc``). The errors name the option as typed, with the nearest real one."""

    def _parse_args(self, args: Any) -> Any:
        words = list(args)
        for word in words[: words.index("--")] if "--" in words else words:
            match = _OPTION.match(word)
            if match:
                self._check_known(match.group(1), word)
        return super()._parse_args(args)

    def option_names(self) -> list[str]:
        names = [*_ALWAYS_KNOWN]
        for keys in (*self.aliases, *self.flags):
            spelled: Any = keys  # traitlets takes a tuple of names for one option too
            names += [spelled] if isinstance(spelled, str) else list(spelled)
        return names

    def _check_known(self, name: str, word: str) -> None:
        if "." in name:
            self._check_class_trait(name, word)
            return
        names = self.option_names()
        if name not in names:
            raise UsageError(_unknown(word.split("=", 1)[0], name, names))

    def _check_class_trait(self, name: str, word: str) -> None:
        known = [
            f"{cls.__name__}.{trait}"
            for cls in self.classes
            for trait in cls.class_trait_names(config=True)
        ]
        if name not in known:
            raise UsageError(_unknown(word.split("=", 1)[0], name, known))

    def _convert_to_config(self) -> None:
        for destination, value in vars(self.parsed_data).items():
            entry = self.argparse_traits.get(destination.replace(_DOT, "."))
            # One string, or a list of them (an option given more than once).
            values = [value] if isinstance(value, str) else value
            if entry is not None and isinstance(values, list) and not entry[1].get("action"):
                self._check_values(destination.replace(_DOT, "."), entry[0], [*map(str, values)])
        super()._convert_to_config()

    def _check_values(self, trait_name: str, trait: TraitType[Any, Any], values: list[str]) -> None:
        aliases = [key for key, target in self.aliases.items() if target == trait_name]
        option = f"--{aliases[0]}" if aliases else f"--{trait_name}"
        if len(values) > 1:
            raise UsageError(f"{option}: given {len(values)} times; give it once")
        for value in values:
            try:
                trait.from_string(value)
            except (ValueError, TraitError):
                raise UsageError(f"{option}: expected {_accepted(trait)}, got {value!r}") from None


def _unknown(typed: str, name: str, names: list[str]) -> str:
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    hint = f": did you mean {'-' if len(close[0]) == 1 else '--'}{close[0]}?" if close else ""
    return f"unknown option {typed}{hint} (--help lists the options)"


def _accepted(trait: TraitType[Any, Any]) -> str:
    """What a trait read from the command line accepts, in words."""
    if isinstance(trait, Int):
        return "a whole number"
    if isinstance(trait, Float):
        return "a number"
    return "a value of type " + type(trait).__name__


class StrictCommandLine(Application):
    """An application whose command line is read by ``StrictLoader`` (mixed in before
    ``JupyterApp``)."""

    def _create_loader(
        self,
        argv: list[str] | None,
        aliases: StrDict,
        flags: StrDict,
        classes: Any,
    ) -> KVArgParseConfigLoader:
        """traitlets' loader made strict (the signature is traitlets', StrDict included)."""
        return StrictLoader(
            argv, aliases, flags, classes=classes, log=self.log, subcommands=self.subcommands
        )
