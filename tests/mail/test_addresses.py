from __future__ import annotations

import contextlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbem.reading.addresses import normalize, plus_address, same_mailbox, split_plus


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
