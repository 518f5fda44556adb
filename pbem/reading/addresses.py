"""Mail addresses as the server compares them: case-insensitive, with plus tags split off.

The server hands every player a reply address ``pbem+TOKEN@host`` so that a reply can be routed
without trusting the subject. Comparing senders and our own addresses must then ignore that tag
(``pbem+x@host`` and ``pbem@host`` are one mailbox), and must not be fooled by display names or
angle brackets, so everything goes through the stdlib's address parser first (``pbem.plainaddress``).

Tags keep their case: a token is the caller's data. Some MTAs lower-case local parts, so tokens
are best generated in lower case or compared case-insensitively.
"""

from __future__ import annotations

import re

from pbem.plainaddress import DOT_ATOM, parseaddr

__all__ = ["normalize", "plus_address", "same_mailbox", "split_plus"]

# What a tag may contain so that the resulting address is a plain dot-atom that needs no quoting
# anywhere.
_TAG = re.compile(DOT_ATOM)


def _addr_spec(addr: object) -> str:
    text = "" if addr is None else str(addr).strip()
    if not text:
        return text
    try:
        _name, spec = parseaddr(text)
    except Exception:
        spec = ""
    return (spec or text).strip()


def normalize(addr: str) -> str:
    """The bare addr-spec, lower-cased: ``"Bob <Bob@X.org>"`` → ``"bob@x.org"``."""
    return _addr_spec(addr).lower()


def split_plus(addr: str) -> tuple[str, str | None]:
    """``("pbem@host", "TOKEN")`` for ``pbem+TOKEN@host``; the tag is None when there is none.

    The base is lower-cased; the tag keeps its case. Only the first ``+`` splits, so a tag may
    itself contain ``+``.
    """
    spec = _addr_spec(addr)
    local, at, domain = spec.rpartition("@")
    if not at:
        return spec.lower(), None
    base_local, plus, tag = local.partition("+")
    if not plus:
        return spec.lower(), None
    return f"{base_local}@{domain}".lower(), (tag or None)


def plus_address(base: str, tag: str) -> str:
    """``pbem+TOKEN@host`` for base ``pbem@host`` (any tag already on ``base`` is replaced).

    Raises ValueError for a base without a domain or a tag that would need quoting, because such
    an address would not survive the round trip through a player's mail client.
    """
    base_addr, _old = split_plus(base)
    local, at, domain = base_addr.rpartition("@")
    if not at or not local or not domain:
        raise ValueError(f"not a mail address: {base!r}")
    if not isinstance(tag, str) or not _TAG.fullmatch(tag):
        raise ValueError(f"not usable as a plus tag: {tag!r}")
    return f"{local}+{tag}@{domain}"


def same_mailbox(a: str, b: str) -> bool:
    """Whether two addresses reach the same mailbox, ignoring case, display names and plus tags."""
    base_a, _ = split_plus(a)
    base_b, _ = split_plus(b)
    return bool(base_a) and "@" in base_a and base_a == base_b
