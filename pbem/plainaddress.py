"""``email.utils.parseaddr`` and ``getaddresses`` for the plain forms nearly every address takes:
``local@domain``, ``<local@domain>`` and ``Display Name <local@domain>`` with dot-atoms and a name
of plain words. For those one regular expression gives the very answer the stdlib's address parser
gives (tests/mail/test_plain_address.py holds them equal on random input); anything else, a
quoted name, a comment, a group, non-ASCII, doubled spaces, goes to the stdlib.

Why: the intake reads the From and To of every message before its SMTP ``250``, the sender quotes
both addresses of every reply for smtplib, and each such parse cost 20-50 us of pure-Python
tokenising, several times per move.
"""

from __future__ import annotations

import email.utils
import re
from collections.abc import Sequence

#: RFC 5322 atext in ASCII: printable characters but the specials ``()<>@,:;.\"[]``.
ATEXT = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
#: Words of atext joined by single dots (not leading, trailing or doubled): a local part or domain
#: that needs no quoting anywhere.
DOT_ATOM = rf"{ATEXT}(?:\.{ATEXT})*"
ADDR_SPEC = rf"{DOT_ATOM}@{DOT_ATOM}"
_PLAIN = re.compile(rf"(?:(?:({ATEXT}(?: {ATEXT})*) )?<({ADDR_SPEC})>|({ADDR_SPEC}))")


def plain_pair(value: str) -> tuple[str, str] | None:
    """(display name, address) of a plain form; None for anything else."""
    match = _PLAIN.fullmatch(value)
    if match is None:
        return None
    bare = match.group(3)
    return ("", bare) if bare is not None else (match.group(1) or "", match.group(2))


def parseaddr(value: str) -> tuple[str, str]:
    """What ``email.utils.parseaddr(value)`` returns."""
    if isinstance(value, str):
        plain = plain_pair(value)
        if plain is not None:
            return plain
    return email.utils.parseaddr(value)


def getaddresses(values: Sequence[str]) -> list[tuple[str, str]]:
    """What ``email.utils.getaddresses(values)`` returns."""
    out = []
    for value in values:
        plain = plain_pair(value) if isinstance(value, str) else None
        if plain is None:
            return email.utils.getaddresses(values)
        out.append(plain)
    return out


def quoteaddr(value: str) -> str:
    """What ``smtplib.quoteaddr(value)`` returns (the MAIL FROM and RCPT TO argument)."""
    plain = plain_pair(value) if isinstance(value, str) else None
    if plain is not None:
        return f"<{plain[1]}>"
    import smtplib  # only here: ``pbem deliver`` imports this module and must start fast

    return smtplib.quoteaddr(value)

