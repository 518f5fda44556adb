"""How a computer seat is recognised and called, apart from the rest of ``computer``: the mail
texts (``gamemail``) need the name in each reader's language, and the module that creates computer
seats imports the game handling that imports those texts."""

from __future__ import annotations

import re

from pbem.i18n import _

DOMAIN = "computer.invalid"
ADDRESS = re.compile(rf"^ai-(\d+)-[0-9a-f]+@{re.escape(DOMAIN)}$")


def is_computer(email: str | None) -> bool:
    return bool(email) and ADDRESS.match(email or "") is not None


def level_of(email: str) -> int:
    match = ADDRESS.match(email)
    if match is None:
        raise ValueError(f"{email} is not a computer seat")
    return int(match.group(1))


def computer_name(level: int, letter: str = "") -> str:
    """"computer level 3", or with several computers in one game "computer A level 3", in the
    reader's language (the record keeps the English name)."""
    if letter:
        return _("computer {letter} level {level}").format(letter=letter, level=level)
    return _("computer level {level}").format(level=level)


def display_name(email: str, stored: str) -> str:
    """The name the record keeps ("computer B level 1"), said in the reader's language."""
    parts = stored.split()
    letter = parts[1] if len(parts) == 4 and len(parts[1]) == 1 else ""
    return computer_name(level_of(email), letter)
