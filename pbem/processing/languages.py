"""Which language a player reads: ``set language``, the server's default, their mail client's hint.

A player's choice is a setting like ``notify`` (stored with the address, no migration). Until they
make one, the first mail whose ``Content-Language`` or ``Accept-Language`` names one of our
languages chooses for them, because a client sends those headers in the language its user reads;
afterwards headers change nothing (a mail from another device must not switch the language back).
"""

from __future__ import annotations

from pbem.config import Config
from pbem.i18n import LANGUAGES, N_, NAMES, _, language_of, parse_language_header
from pbem.processing import hooks
from pbem.processing.context import MailContext
from pbem.processing.games import CommandFailed
from pbem.processing.settings import Setting, register_setting
from pbem.reading.incoming import IncomingMail
from pbem.store.base import Tx


def header_language(mail: IncomingMail) -> str | None:
    return (parse_language_header(mail.headers.get("Content-Language"))
            or parse_language_header(mail.headers.get("Accept-Language")))


def sender_language(tx: Tx, mail: IncomingMail, config: Config) -> str:
    """The language of the answer to this mail: the sender's choice, else their client's hint."""
    settings = tx.get_player(mail.from_addr) if mail.from_addr else {}
    if "language" in settings:
        return language_of(settings, config.language)
    return header_language(mail) or config.language


def _remember_hint(ctx: MailContext) -> None:
    """A person's mail (not junk, not a bounce) whose client named a language, from an address that
    chose none yet: that language is theirs from now on."""
    hinted = header_language(ctx.mail)
    settings = ctx.tx.get_player(ctx.mail.from_addr)
    if hinted and "language" not in settings:
        ctx.tx.set_player(ctx.mail.from_addr, {**settings, "language": hinted})


def _check(ctx: MailContext, value: str) -> str:
    code = value.strip().lower()
    if code not in LANGUAGES:
        raise CommandFailed(_("language takes {choices}, not {value!r}.").format(
            choices=", ".join(LANGUAGES), value=value))
    return code


register_setting(Setting(
    "language", "set language en|de|sk",
    N_("the language of your mails: en English, de Deutsch, sk slovenčina. Commands work in "
       "English and in your language."), _check, show=lambda code: f"{code} ({NAMES.get(code, code)})",
    default=N_("the server's default")))
hooks.MAIL_READ.append(_remember_hint)
