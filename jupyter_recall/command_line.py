"""traitlets command lines made strict, for ``jupyter recall`` and its ``scheduler``: an unknown
option or a value its trait cannot read is one error naming the option, never a warning and a
run without it (``prune --dryrun=1`` would delete; a scheduler given ``--dburl=...`` would fire
the jobs of another store)."""

from __future__ import annotations

import difflib
import math
import re
import sys
from pathlib import Path
from typing import Any

from traitlets import Float, Int, TraitError, TraitType
from traitlets.config import Config, Configurable
from traitlets.config.application import Application, StrDict
from traitlets.config.loader import KVArgParseConfigLoader

from jupyter_recall.core.errors import UsageError, ValidationError

EXIT_USAGE = 2
"""The exit status of a refused command line, for ``jupyter recall`` and its ``scheduler``
alike (argparse's own)."""
_OPTION = re.compile(r"^--?([A-Za-z][\w.-]*)(=.*)?$", re.S)
"""A word of the command line that argparse takes for an option (``-5`` is a value)."""
_ALWAYS_KNOWN = ("h", "help", "help-all", "V", "version")
"""Handled by traitlets' Application before the options are parsed."""
_DOT = "__DOT__"
"""How traitlets' loader spells the dot of ``Class.trait`` in argparse destinations."""
CONFIG_SUFFIXES = (".py", ".json")
"""The config files jupyter_core reads (``--config``)."""


class StrictLoader(KVArgParseConfigLoader):
    """traitlets' command-line loader, refusing what it would only warn about or let through
    to a "Bad config" message: an unknown option (a typo must not run the command without
    it: ``prune --dryrun=1`` would delete), and a value its trait cannot read (``--limit
    abc``). The errors name the option as typed, with the nearest real one."""

    def _parse_args(self, args: Any) -> Any:
        words = list(args)
        end = words.index("--") if "--" in words else len(words)
        words = [*self._joined_values(words[:end]), *words[end:]]
        for word in words[: words.index("--")] if "--" in words else words:
            match = _OPTION.match(word)
            if match:
                self._check_known(match.group(1), word)
        return super()._parse_args(words)

    def _joined_values(self, words: list[str]) -> list[str]:
        """``--since -5m`` read as ``--since=-5m``: argparse takes a value starting with ``-``
        for an option and refuses the line with its usage. An option that takes a value and is
        followed by none (the end, or a known option) is one error naming it."""
        joined: list[str] = []
        index = 0
        while index < len(words):
            word = words[index]
            if self._takes_value(word):
                following = words[index + 1] if index + 1 < len(words) else None
                if following is None or self._is_known_option(following):
                    raise UsageError(
                        f"{word}: expected a value (one starting with '-' is written {word}=-VALUE)"
                    )
                if following.startswith("-"):
                    joined.append(f"{word}={following}")
                    index += 2
                    continue
            joined.append(word)
            index += 1
        return joined

    def _takes_value(self, word: str) -> bool:
        """A word naming, without ``=VALUE``, an option that takes a value."""
        match = _OPTION.match(word)
        if not match or match.group(2) is not None or not word.startswith("--"):
            return False
        name = match.group(1)
        if "." in name:
            return name in self.argparse_traits
        return name in self.aliases and name not in self.flags

    def _is_known_option(self, word: str) -> bool:
        match = _OPTION.match(word)
        if not match:
            return False
        name = match.group(1)
        return name in self.argparse_traits if "." in name else name in self.option_names()

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
                read = trait.from_string(value)
            except (ValueError, TraitError):
                raise UsageError(f"{option}: expected {_accepted(trait)}, got {value!r}") from None
            if isinstance(trait, Float) and read is not None and not math.isfinite(read):
                # 1e309 reads as infinity: no time limit or wait means that.
                raise UsageError(f"{option}: expected a finite number, got {value!r}")


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


class StrictConfig(StrictCommandLine):
    """A strict command line, and config files as strict (``jupyter recall`` and its
    ``scheduler``): a file that fails (a syntax error), a ``--config`` file that is not there,
    or a misspelt setting of one of our classes (``c.RecallCommand.urll``) stops the command
    with one line naming it, exit status 2, where traitlets and jupyter_core would log it and
    run without the file's settings (a job created on the wrong server, a scheduler on the
    wrong store)."""

    def command_label(self) -> str:
        """How the errors name the command (``jupyter recall list``)."""
        return str(self.name)

    def refuse(self, message: str) -> None:
        """A refusal in the one form of the command's errors: ``NAME: error: ...``, one line
        on stderr."""
        print(f"{self.command_label()}: error: {message}", file=sys.stderr, flush=True)

    def setting_classes(self) -> list[type[Configurable]]:
        """The classes whose config sections are checked: ours (a section of another
        application, in a shared file, is that application's)."""
        return [cls for cls in type(self).__mro__ if _ours(cls)]

    def initialize(self, argv: Any = None) -> None:
        """As the application's; a command line or config file it refuses is one line on
        stderr, exit status 2."""
        try:
            self._initialize_reading_config(argv)
            self.check_command_line()
        except (ValidationError, UsageError) as error:
            self.refuse(str(error))
            raise SystemExit(EXIT_USAGE) from None

    def _initialize_reading_config(self, argv: Any) -> None:
        """The application's initialize; what a config file raises (its own code failing)
        becomes a UsageError naming the failure, its traceback in the debug log."""
        try:
            super().initialize(argv)
        except (ValidationError, UsageError, SystemExit):
            raise
        except Exception as error:
            self.log.debug("config file failed", exc_info=True)
            raise UsageError(f"a config file failed: {type(error).__name__}: {error}") from None

    def _raise_config_file_errors_default(self) -> bool:
        return True

    def check_command_line(self) -> None:
        """What jupyter_core lets through: a ``--config`` file that is not there, or not one
        it reads (``NAME.py``, ``NAME.json``), it would run without."""
        given = str(getattr(self, "config_file", "") or "")
        if given and not Path(given).is_file():
            raise ValidationError("--config", f"no such file: {given!r}")
        if given and Path(given).suffix not in CONFIG_SUFFIXES:
            raise ValidationError(
                "--config", f"not a config file: {given!r}", accepted=CONFIG_SUFFIXES
            )

    def update_config(self, config: Config) -> None:
        """As traitlets'; a setting our classes do not have is a UsageError naming it and the
        nearest real one, and a value an option's own check refuses (``max_sleep=0``) one too,
        not "Bad config"."""
        self._check_settings(config)
        try:
            super().update_config(config)
        except TraitError as error:
            raise UsageError(str(error)) from None

    def _check_settings(self, config: Config) -> None:
        known = {cls.__name__: cls.class_trait_names(config=True) for cls in self.setting_classes()}
        for section, names in known.items():
            given = config.get(section)
            if not isinstance(given, dict):
                continue
            for key in given:
                if key not in names and not key[:1].isupper():
                    raise UsageError(self._unknown_setting(section, key, names))

    def _unknown_setting(self, section: str, key: str, names: list[str]) -> str:
        close = difflib.get_close_matches(key, names, n=1, cutoff=0.6)
        hint = f": did you mean {section}.{close[0]}?" if close else ""
        files = self._loaded_config_files
        where = f" in {files[-1]}" if files else ""
        return f"{section}.{key}{where} is not a setting{hint}"


def _ours(cls: type) -> bool:
    return (
        issubclass(cls, Configurable)
        and cls.__module__.startswith("jupyter_recall.")
        and cls not in (StrictCommandLine, StrictConfig)
    )
