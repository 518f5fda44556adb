"""Reads game options written as words, shared by ``pbem new`` and the mail command ``new``.

Accepted forms, case-insensitive: ``--edition 1.2``, ``edition 1.2``, ``edition=1.2``, ``--symmetric``,
``symmetric``, ``location-bonus`` / ``location_bonus``, ``handicap black:3:1``.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any

from engine.base import Game, OptionsError, OptionSpec


def _key(word: str) -> str:
    return word.lstrip("-").lower().replace("_", "-")


def parse_option_words(game: Game, words: Sequence[str]) -> dict[str, Any]:
    """Turn words into a raw options dict (not yet normalized) or raise OptionsError with the fix."""
    specs = {_key(s.name): s for s in game.option_specs}
    options: dict[str, Any] = {}
    i = 0
    words = list(words)
    while i < len(words):
        word = words[i]
        name, eq, inline = word.partition("=")
        spec = specs.get(_key(name))
        if spec is None:
            near = difflib.get_close_matches(_key(name), list(specs), n=2, cutoff=0.6)
            known = ", ".join(_describe(s) for s in game.option_specs) or "none"
            hint = f" Did you mean {' or '.join(near)}?" if near else ""
            raise OptionsError(f"unknown option {word!r} for {game.name}.{hint} Options: {known}")
        i += 1
        if spec.kind == "flag":
            if eq:
                options[spec.name] = inline.lower() in ("1", "true", "yes", "on")
            else:
                options[spec.name] = True
            continue
        if eq:
            value = inline
        elif i < len(words):
            value = words[i]
            i += 1
        else:
            raise OptionsError(f"option {spec.name} needs a value: {_describe(spec)}")
        if spec.kind == "choice":
            if value not in spec.choices:
                raise OptionsError(
                    f"option {spec.name} is one of {', '.join(spec.choices)}, not {value!r}")
            options[spec.name] = value
        elif spec.kind == "int":
            try:
                options[spec.name] = int(value)
            except ValueError:
                raise OptionsError(f"option {spec.name} takes a whole number, not {value!r}") from None
        else:
            game.parse_option_value(spec, value, options)
    return options


def _describe(spec: OptionSpec) -> str:
    name = spec.name.replace("_", "-")
    if spec.kind == "flag":
        return name
    if spec.kind == "choice":
        return f"{name} {'|'.join(spec.choices)}"
    if spec.kind == "int":
        return f"{name} N"
    return f"{name} VALUE"


def describe_options(game: Game) -> list[tuple[str, str]]:
    """(usage, help) pairs for help texts."""
    return [(_describe(s), s.help) for s in game.option_specs]
