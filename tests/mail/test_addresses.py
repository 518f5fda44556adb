from __future__ import annotations

import contextlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbem.reading.addresses import normalize, plus_address, same_mailbox, split_plus
from pbem.reading.headers import clean_str


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Bob@Example.ORG", "bob@example.org"),
        ("  bob@example.org \n", "bob@example.org"),
        ("Bob Smith <Bob@Example.org>", "bob@example.org"),
        ('"Smith, Bob" <bob@example.org>', "bob@example.org"),
        ("<pbem+Tok1@Example.org>", "pbem+tok1@example.org"),
        ("", ""),
    ],
)
def test_normalize(raw: str, expected: str) -> None:
    assert normalize(raw) == expected


@pytest.mark.parametrize(
    ("raw", "base", "tag"),
    [
        ("pbem+Tok1@Example.org", "pbem@example.org", "Tok1"),
        ("PBEM@example.org", "pbem@example.org", None),
        ("pbem+@example.org", "pbem@example.org", None),
        ("pbem+a+b@example.org", "pbem@example.org", "a+b"),
        ("Server <pbem+xyz@example.org>", "pbem@example.org", "xyz"),
        ("no-domain+tag", "no-domain+tag", None),
    ],
)
def test_split_plus(raw: str, base: str, tag: str | None) -> None:
    assert split_plus(raw) == (base, tag)


def test_plus_address_round_trip() -> None:
    addr = plus_address("PBEM@Example.org", "k7x9q2")
    assert addr == "pbem+k7x9q2@example.org"
    assert split_plus(addr) == ("pbem@example.org", "k7x9q2")
    # an existing tag on the base is replaced, not nested
    assert plus_address("pbem+old@example.org", "new") == "pbem+new@example.org"


@pytest.mark.parametrize("tag", ["", "two words", "a@b", ".lead", "trail.", "dou..ble", "é"])
def test_plus_address_rejects_tags_that_need_quoting(tag: str) -> None:
    with pytest.raises(ValueError):
        plus_address("pbem@example.org", tag)


def test_plus_address_rejects_base_without_domain() -> None:
    with pytest.raises(ValueError):
        plus_address("pbem", "tok")


def test_same_mailbox() -> None:
    assert same_mailbox("pbem+abc@example.org", "PBEM@example.org")
    assert same_mailbox("Server <pbem+abc@example.org>", "pbem+xyz@EXAMPLE.org")
    assert not same_mailbox("pbem@example.org", "pbem@example.net")
    assert not same_mailbox("", "")
    assert not same_mailbox("pbem", "pbem")


@settings(max_examples=300, deadline=None, database=None)
@given(st.text(max_size=200), st.text(max_size=200))
def test_address_helpers_never_raise(a: str, b: str) -> None:
    normalize(a)
    split_plus(a)
    same_mailbox(a, b)
    with contextlib.suppress(ValueError):
        plus_address(a, b)


_PIECES = st.sampled_from(["ann", "Bo", "x.y", "a+b", "o'k", "=?utf-8?q?J=C3=B6rg?=", "@", "<", ">",
                           " ", "  ", "\t", ".", '"', "(c)", ",", "example.org", "\u00e9", "-"])


_ATOMS = st.sampled_from(["ann", "Bo", "x.y", "a+b", "o'k", "=?utf-8?q?x?=", "\u00e9", "-", "a..b", '"q"'])
_SHAPED = st.builds(lambda ws, name, sep, local, domain, brackets, end: (
    f"{ws}{name}{sep}{'<' if brackets else ''}{local}@{domain}{'>' if brackets else ''}{end}"),
    st.sampled_from(["", " ", "\t"]), st.sampled_from(["", "Ann", "Ann Smith", "Ann  Smith", "A.B", "o'k"]),
    st.sampled_from(["", " ", "  "]), _ATOMS, _ATOMS, st.booleans(), st.sampled_from(["", " ", "\r\n "]))


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.lists(_PIECES, min_size=1, max_size=8).map("".join), _SHAPED))
def test_plain_address_reads_as_the_structured_parser(value: str) -> None:
    """The fast path for plain From/To headers gives the structured parser's pair, or leaves the
    header to it."""
    import email.policy

    from pbem.reading.headers import plain_address

    fast = plain_address(value)
    if fast is None:
        return
    header = email.policy.default.header_factory("From", value)
    assert [(a.display_name, a.addr_spec) for a in header.addresses] == [fast]
    assert not header.defects


@pytest.mark.parametrize("value", ["ann@example.org", "Ann Smith <ann@example.org>", "<a.b+c@x.y>",
                                   " Bo\t<bo@example.org> "])
def test_plain_address_takes_the_common_forms(value: str) -> None:
    from pbem.reading.headers import plain_address

    assert plain_address(value) is not None


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["Re:", " ", "  ", "\t", "move", "[pbem ac-1]", "=?utf-8?q?x?=", "=?", "?=",
                                 "(c)", '"', "\\", "é", ";", "<", ">", "\r\n ", "a=b"]), max_size=8),
       st.sampled_from(["Subject", "Auto-Submitted", "Precedence"]))
def test_plain_header_text_reads_as_the_parser(pieces: list[str], name: str) -> None:
    """Free-text headers read without the parser give what the parser gives."""
    import email
    import email.policy

    from pbem.reading.headers import header_text

    raw = f"{name}: {''.join(pieces)}\r\n\r\n".encode("utf-8", "surrogateescape")
    expected = email.message_from_bytes(raw, policy=email.policy.default).get(name)
    expected = None if expected is None else clean_str(str(expected))
    assert header_text(email.message_from_bytes(raw, policy=email.policy.default), name) == expected


def test_bare_addresses_read_as_parseaddr_reads_them() -> None:
    """The shortcut for bare dot-atom addresses gives what ``email.utils.parseaddr`` gives."""
    import random
    from email.utils import parseaddr

    rng = random.Random(4)
    for _ in range(3000):
        text = "".join(rng.choice("aZ09!#$%&'*+/=?^_`{|}~-.@") for _ in range(rng.randint(3, 25)))
        spec = parseaddr(text)[1] or text
        assert normalize(text) == spec.strip().lower(), text
