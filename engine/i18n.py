"""The language the engine's texts are written in, for the reader at hand.

The engine writes texts people read (boards, legal lists, scores, errors, help), yet it must stay
pure: it loads no files and knows no mail. So it only marks its texts with ``_`` / ``ngettext`` and
asks the translations that the caller put in place with ``using(...)`` (a context variable: each
thread, each recipient of a mail, its own language). Without a caller's choice the texts stay
English. The catalogs (domain ``engine``) are loaded by the server (``pbem.i18n``), not here.
"""

from __future__ import annotations

import gettext
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_ENGLISH = gettext.NullTranslations()
# The translations with their language code, worked out once in ``using``: boards ask for the
# language in their inner loops (the notation words), and a catalog's header never changes.
_ACTIVE: ContextVar[tuple[gettext.NullTranslations, str]] = ContextVar(
    "engine_translations", default=(_ENGLISH, "en"))


def _active() -> gettext.NullTranslations:
    return _ACTIVE.get()[0]


def _(message: str) -> str:
    return _ACTIVE.get()[0].gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    return _ACTIVE.get()[0].ngettext(singular, plural, n)


def pgettext(context: str, message: str) -> str:
    """For a word whose translation depends on what it names (the seat "black", the colour "black")."""
    return _ACTIVE.get()[0].pgettext(context, message)


def N_(message: str) -> str:
    """Marks a message stored in English (e.g. in score details), translated where it is shown."""
    return message


def active_translations() -> gettext.NullTranslations:
    """The translations texts are taken from now, e.g. to key what was drawn in them."""
    return _ACTIVE.get()[0]


def language() -> str:
    """The active language's code ("en" when none was chosen), e.g. for memo keys."""
    return _ACTIVE.get()[1]


def _code(translations: gettext.NullTranslations) -> str:
    info = translations.info()
    return str(info.get("language", "en")) if info else "en"


@contextmanager
def using(translations: gettext.NullTranslations | None) -> Iterator[None]:
    """Within the block, the engine's texts are in these translations' language."""
    chosen = translations or _ENGLISH
    token = _ACTIVE.set((chosen, _code(chosen)))
    try:
        yield
    finally:
        _ACTIVE.reset(token)


__all__ = ["N_", "_", "active_translations", "language", "ngettext", "pgettext", "using"]
