"""Intake's split of a plain header block must give the fields the stdlib's compat32 parser gives,
so the Message-ID, sender and route stored before the SMTP 250 are those the parser would find;
any block it does not take goes to the parser itself."""

from __future__ import annotations

import email.parser
import email.policy
import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from pbem.headerblock import plain_header_fields
from pbem.store.common import intake_keys
from pbem.tokens import token_hash

BLANK_LINE = re.compile(rb"\r?\n\r?\n")  # where intake ends the header block
NAMES = ["From", "To", "Cc", "Message-ID", "message-id", "Delivered-To", "X-Original-To",
         "Subject", "References", "X-A", "From ", "Bad Name", "", ":x", "Ü", "X\x00"]
TEXT = "abcz <>@.+-_=?\"(),;:[]\\019 "
ODD = "\t\r\n\x0b\x0c\x1c\x00\x7fé€"

values = st.one_of(st.text(alphabet=TEXT, max_size=20), st.text(alphabet=TEXT + ODD, max_size=12),
                   st.sampled_from(["w0@example.org", " pbem <pbem+abcdefghijklmnopqrstuvwxyz-1@x>",
                                    "<1.2@example.org>", "", " ", "\t x"]))
lines = st.one_of(st.tuples(st.sampled_from(NAMES), st.sampled_from([":", ": ", ":\t", ":  "]),
                            values).map("".join),
                  st.tuples(st.sampled_from([" ", "\t", "  "]), values).map("".join))
ends = st.sampled_from(["\r\n"] * 8 + ["\n", "\r", "\r\r\n"])
blocks = st.builds(lambda ls, es, last, body: "".join(map(str.__add__, ls, es)) + last + body,
                   st.lists(lines, max_size=8), st.lists(ends, min_size=8, max_size=8),
                   st.sampled_from(["\r\n", "\r\n", "\n", "", "\r\n \r\n"]),
                   st.sampled_from(["body\r\n", "", "X: y\r\n\r\n"]))


def parsed(head: bytes) -> email.message.Message:
    return email.parser.BytesHeaderParser(policy=email.policy.compat32).parsebytes(head)


@settings(max_examples=1000)
@given(blocks)
@example("From: w0@example.org\r\nTo: pbem <pbem+tok-1@localhost>\r\nReferences: <a@b>\r\n <c@d>\r\n"
         "\r\nbody\r\n")
@example("X:\r\n\tcontinued\r\n\r\n")
@example(" leading continuation\r\nX: y\r\n\r\n")
@example("From x: y\r\n\r\n")
def test_plain_fields_are_the_parsers(text: str) -> None:
    raw = text.encode("utf-8", "surrogateescape")
    match = BLANK_LINE.search(raw)
    head = raw[: match.end()] if match else raw
    fields = plain_header_fields(head)
    if fields is not None:
        msg = parsed(head)
        assert fields == list(msg.raw_items()) and not msg.defects and not msg.get_payload()
        for name in ("Message-ID", "From", "To"):
            assert next((v for n, v in fields if n.lower() == name.lower()), None) == msg.get(name)


def test_plain_fields_take_an_mtas_header_block() -> None:
    raw = (b"From: Ann <ann@example.org>\r\nTo: pbem <pbem+abcdefghijklmnopqrstuvwxyz-3@localhost>\r\n"
           b"Message-ID: <1.2@example.org>\r\nReferences: <a@b>\r\n <c@d>\r\n\r\nbody\r\n")
    assert plain_header_fields(raw[: raw.index(b"\r\n\r\n") + 4]) == [
        ("From", "Ann <ann@example.org>"),
        ("To", "pbem <pbem+abcdefghijklmnopqrstuvwxyz-3@localhost>"),
        ("Message-ID", "<1.2@example.org>"), ("References", "<a@b>\r\n <c@d>")]
    assert intake_keys(raw) == ("<1.2@example.org>", "ann@example.org",
                                token_hash("abcdefghijklmnopqrstuvwxyz"))
    assert plain_header_fields(b"From: \xc3\xa9@x\r\n\r\n") is None  # 8-bit: the parser reads it
    assert plain_header_fields(b"From: a@x\n\n") is None  # bare LF: the parser reads it
