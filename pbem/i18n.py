"""The language of what a player or observer reads: catalogs, and the reader's choice.

Texts are written in English and marked with ``_`` / ``ngettext``; the words are looked up when
the text is made, in the language of the context variable that ``speaking(lang)`` sets. One mail
causes mails to several people, each in their own language, so the language is chosen per
recipient around the code that writes their mail, and it covers the engine's texts too (boards,
legal moves, scores: ``engine.i18n.using``). Without a choice everything stays English, so a
forgotten ``speaking`` costs a reader their language, never a mail.

Catalogs: ``pbem/locale/<lang>/LC_MESSAGES/pbem.mo`` and ``engine/locale/.../engine.mo``, compiled
from the ``.po`` files by Babel at build time (``make i18n`` refreshes them).
"""

from __future__ import annotations

import gettext
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from pathlib import Path
from typing import Any

import engine.i18n

LANGUAGES = ("en", "de", "sk")
DEFAULT_LANGUAGE = "en"
NAMES = {"en": "English", "de": "Deutsch", "sk": "slovenčina"}

_ROOT = Path(__file__).resolve().parent.parent
_LOCALE_DIRS = {"pbem": _ROOT / "pbem" / "locale", "engine": _ROOT / "engine" / "locale"}

_ENGLISH = gettext.NullTranslations()
_ACTIVE: ContextVar[gettext.NullTranslations] = ContextVar("pbem_translations", default=_ENGLISH)


@cache
def translations(lang: str, domain: str = "pbem") -> gettext.NullTranslations:
    """The catalog of ``domain`` in ``lang``; English (the msgids themselves) when there is none, so a
    missing file never stops a mail. Cached: loading a catalog is file I/O, a mail must not pay it."""
    if lang == DEFAULT_LANGUAGE or lang not in LANGUAGES:
        return _ENGLISH
    try:
        return gettext.translation(domain, localedir=str(_LOCALE_DIRS[domain]), languages=[lang])
    except (OSError, KeyError):
        return _ENGLISH


def _(message: str) -> str:
    return _ACTIVE.get().gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    return _ACTIVE.get().ngettext(singular, plural, n)


def pgettext(context: str, message: str) -> str:
    """For one English text that needs two translations ("a draw" as a result, and as what is
    proposed: "remíza" / "remízu")."""
    return _ACTIVE.get().pgettext(context, message)


def N_(message: str) -> str:
    """Marks a text for the catalog where it is defined (a constant); ``_()`` translates it where it
    is read, because at import time nobody's language is known."""
    return message


# A text for several readers: a string (one language for all) or a function that writes it in the
# language active when it is called, once per recipient.
Text = str | Callable[[], str]


def say(text: Text) -> str:
    return text() if callable(text) else text


def language() -> str:
    """The active code, "en" outside any ``speaking``."""
    info = _ACTIVE.get().info()
    return str(info.get("language", DEFAULT_LANGUAGE)) if info else DEFAULT_LANGUAGE


@contextmanager
def speaking(lang: str | None) -> Iterator[str]:
    """Within the block, pbem's and the engine's texts are in ``lang`` (English if unknown)."""
    code = lang if lang in LANGUAGES else DEFAULT_LANGUAGE
    token = _ACTIVE.set(translations(code, "pbem"))
    try:
        with engine.i18n.using(translations(code, "engine")):
            yield code
    finally:
        _ACTIVE.reset(token)


_STATUS = {"invited": N_("invited"), "active": N_("running"), "over": N_("over"), "open": N_("open"),
           "cancelled": N_("cancelled"), "declined": N_("declined"), "expired": N_("expired"),
           "withdrawn": N_("withdrawn"), "rejected": N_("rejected"), "accepted": N_("accepted")}


def status_word(status: str) -> str:
    """A game's status (as stored) as the reader says it ("running" for the stored "active")."""
    return _(_STATUS[status]) if status in _STATUS else status


def language_of(settings: dict[str, Any], default: str = DEFAULT_LANGUAGE) -> str:
    """A player's language: their ``set language`` choice, else the server's default."""
    chosen = settings.get("language")
    return chosen if chosen in LANGUAGES else default


_READER: ContextVar[str | None] = ContextVar("pbem_reader", default=None)


@contextmanager
def speaking_to(tx: Any, email: str | None, default: str = DEFAULT_LANGUAGE) -> Iterator[str]:
    """For the text of a mail to ``email`` (``tx``: a store transaction): in their language. Within
    the block ``reader()`` is ``email``, for a text that depends on who reads it, not only in which
    language (what a player wrote is left out for a reader who has shut that player out)."""
    token = _READER.set(email)
    try:
        with speaking(language_of(tx.get_player(email), default) if email else default) as code:
            yield code
    finally:
        _READER.reset(token)


def reader() -> str | None:
    """The address the text being written is for (inside ``speaking_to``); None elsewhere."""
    return _READER.get()


def parse_language_header(value: str | None) -> str | None:
    """The first of our languages that a ``Content-Language`` or ``Accept-Language`` value names,
    preferring the highest ``q``: "de-AT, en;q=0.5" -> "de"; None when none of ours is named."""
    if not value:
        return None
    ranked = []
    for position, item in enumerate(value.split(",")):
        tag, _sep, params = item.strip().partition(";")
        weight = 1.0
        if params.strip().startswith("q="):
            try:
                weight = float(params.strip()[2:])
            except ValueError:
                weight = 0.0
        code = tag.strip().lower().split("-")[0]
        if code in LANGUAGES and weight > 0:
            ranked.append((-weight, position, code))
    return min(ranked)[2] if ranked else None


def install_jinja(environment: Any) -> None:
    """Templates say ``{{ _("Final scores") }}``; the words come from the active language at render
    time (newstyle: ``%`` formatting is done by gettext, and autoescaping applies)."""
    environment.add_extension("jinja2.ext.i18n")
    environment.install_gettext_callables(
        _, ngettext, newstyle=True)
    environment.globals["language"] = language  # <html lang="...">


__all__ = [
    "LANGUAGES",
    "N_",
    "Text",
    "_",
    "language",
    "language_of",
    "ngettext",
    "parse_language_header",
    "reader",
    "say",
    "speaking",
    "speaking_to",
    "status_word",
    "translations",
]
