"""The plain-address shortcut (pbem/plainaddress.py) gives what the stdlib gives, on any input."""

from __future__ import annotations

import email.utils
import smtplib

from hypothesis import given, settings
from hypothesis import strategies as st

from pbem import plainaddress

ATEXT = "abcXYZ019!#$%&'*+/=?^_`{|}~-"
atoms = st.text(ATEXT, min_size=1, max_size=6)
dot_atoms = st.lists(atoms, min_size=1, max_size=3).map(".".join)
specs = st.builds(lambda a, b: f"{a}@{b}", dot_atoms, dot_atoms)
names = st.lists(atoms, min_size=1, max_size=3).map(" ".join)
plain = st.one_of(specs, specs.map(lambda s: f"<{s}>"),
                  st.builds(lambda n, s: f"{n} <{s}>", names, specs))
# Near misses: the plain forms with a character from the places where the grammar gets subtle
noise = st.sampled_from([*' ."(),:;<>@[]\\\t\r\n', "é", "  ", "=?utf-8?q?x?=", ""])
mangled = st.builds(lambda s, at, c: s[:at] + c + s[at:], plain, st.integers(0, 40), noise)
anything = st.one_of(plain, mangled, st.text(max_size=30))


@settings(max_examples=1500)
@given(anything)
def test_parseaddr_is_the_stdlibs(value: str) -> None:
    assert plainaddress.parseaddr(value) == email.utils.parseaddr(value)


@settings(max_examples=1500)
@given(anything)
def test_quoteaddr_is_smtplibs(value: str) -> None:
    assert plainaddress.quoteaddr(value) == smtplib.quoteaddr(value)


@settings(max_examples=800)
@given(st.lists(anything, max_size=4))
def test_getaddresses_is_the_stdlibs(values: list[str]) -> None:
    assert plainaddress.getaddresses(values) == email.utils.getaddresses(values)


def test_the_plain_forms_take_the_shortcut() -> None:
    # Not through the stdlib: a form the shortcut does not know would still pass the tests above
    assert plainaddress.plain_pair("Ann Lee <ann.lee@example.org>") == ("Ann Lee", "ann.lee@example.org")
    assert plainaddress.plain_pair("<pbem+tok-2@x.example>") == ("", "pbem+tok-2@x.example")
    assert plainaddress.plain_pair("bob@example.org") == ("", "bob@example.org")
    assert plainaddress.plain_pair('"Lee, Ann" <ann@example.org>') is None
