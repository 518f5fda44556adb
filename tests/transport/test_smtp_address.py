"""The listener's parse of a plain ``<local@domain>`` in MAIL FROM and RCPT TO must answer exactly
what aiosmtpd's own parse answers, refusals included: the address, the parameters after it, and
(None, None) or the exception for what it cannot read."""

from __future__ import annotations

import asyncio

from aiosmtpd.smtp import SMTP
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pbem.doors.smtp_listener import SmtpSession, plain_angle_address

ATEXT = "abcXYZ019!#$%&'*+/=?^_`{|}~-"
ODD = " \t()<>@,:;.\\\"[]\r\n\x00\x7fé€\u3000\u00a0=?"

atoms = st.text(alphabet=ATEXT, min_size=1, max_size=6)
dot_atoms = st.lists(atoms, min_size=1, max_size=3).map(".".join)
odd_text = st.text(alphabet=ATEXT + ODD, max_size=8)
parts = st.one_of(dot_atoms, dot_atoms, odd_text,
                  st.tuples(dot_atoms, odd_text, dot_atoms).map("".join))
params = st.one_of(st.just(""), st.sampled_from([" SIZE=3000", " BODY=8BITMIME SMTPUTF8", "  SIZE=1",
                                                 " (comment) SIZE=2", "(c)", " \u3000x", "\t x",
                                                 "x", ">", " <a@b>"]), odd_text)
structured = st.builds(lambda lt, local, at, domain, gt, rest: f"{lt}{local}{at}{domain}{gt}{rest}",
                       st.sampled_from(["<", "<", " <", "(c)<", "<@route:", "<<"]), parts,
                       st.sampled_from(["@", "@", "@@", "", " @ "]), parts,
                       st.sampled_from([">", ">", "", ">>", " >"]), params)
arguments = st.one_of(structured, st.text(max_size=30), st.text(alphabet=ATEXT + ODD, max_size=30))


LOOP = asyncio.new_event_loop()
OURS = SmtpSession(object(), too_big="552 too big", loop=LOOP)
THEIRS = SMTP(object(), loop=LOOP)


def outcome(server: SMTP, arg: str, limit: int = 0) -> object:
    server.local_part_limit = limit
    try:
        return server._getaddr(arg)
    except Exception as exc:  # the same failure either way is the same answer
        return type(exc).__name__


@settings(max_examples=1000)
@given(arguments, st.sampled_from([0, 0, 3, 64]))
@example("<pbem+abcdefghij-12@localhost> SIZE=3000", 0)
@example("<w0@example.org>", 0)
@example("<>", 0)
@example("<=?utf-8?q?a?=@example.org>", 0)
@example("<a@=?utf-8?q?b?=>", 0)
@example("<a@b> (note) SIZE=1", 0)
@example("<a@b>\u3000SIZE=1", 0)
@example("<a@b> \u3000SIZE=1", 0)
@example("<", 0)
@example("", 0)
@example("<abcdef@b>", 3)
def test_plain_address_parse_is_aiosmtpds(arg: str, limit: int) -> None:
    assert outcome(OURS, arg, limit) == outcome(THEIRS, arg, limit)


def test_plain_address_is_taken_by_the_shortcut() -> None:
    """The shortcut does take the everyday arguments (else the test above would hold trivially)."""
    assert plain_angle_address("<w0@example.org>") == ("w0@example.org", "")
    assert plain_angle_address("<pbem+tok-1@localhost> SIZE=300") == ("pbem+tok-1@localhost", "SIZE=300")
    assert plain_angle_address("<>") is None
    assert plain_angle_address("<a@b> (comment)") is None
