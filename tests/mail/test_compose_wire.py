"""``MailDraft.to_bytes`` writes the common mails without a MIME tree; whatever the mail, the bytes
are those the stdlib writes for the tree (``Message.as_bytes``), but for the random boundaries."""

from __future__ import annotations

import email
import email.policy
import re
from datetime import UTC, datetime
from email.errors import HeaderParseError

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbem.outbox.compose import ActionGroup, Attachment, MailDraft, Section, build_message, mailto_links

STDLIB = email.policy.compat32.clone(linesep="\r\n")
_BOUNDARY = re.compile(rb"=_pbem_[0-9a-f]{24}")


def _numbered_boundaries(raw: bytes) -> bytes:
    """Each random boundary replaced by its number of appearance (B0, B1), so two writings of one
    mail compare byte for byte."""
    seen: dict[bytes, bytes] = {}
    return _BOUNDARY.sub(lambda m: seen.setdefault(m.group(), b"B%d" % len(seen)), raw)


def _same_as_stdlib(draft: MailDraft) -> bytes:
    """The draft's bytes, checked against the stdlib's; where the stdlib refuses a header (a line
    separator in the server's name before a colon would make it two), the draft refuses it too."""
    try:
        stdlib = draft.message().as_bytes(policy=STDLIB)
    except HeaderParseError:
        with pytest.raises(HeaderParseError):
            draft.to_bytes()
        return b""
    wire = draft.to_bytes()
    assert _numbered_boundaries(wire) == _numbered_boundaries(stdlib)
    return wire


# What mails hold (ASCII words, board rows, markup, header-like text) and, in some mails, what must
# take the general path: symbols and accents, lines past 900 columns, every kind of line end,
# tabs and other controls.
_ascii_piece = st.one_of(
    st.sampled_from(["tower red C4", "Your move (move 12).", "  +--+--+", "<b>&amp;</b>", ".", "",
                     "From here", "=3D", "x" * 120, "--=_pbem_", "word " * 30, "a; b, c", "<m@x>"]),
    st.text(st.characters(codec="ascii", min_codepoint=32), max_size=40),
)
_any_piece = st.one_of(
    _ascii_piece,
    st.sampled_from(["é ★ ▲ ╔═╗", "a\rb", "c\r\nd", "e\nf", "\t", "\x0b", "\x0c", "y" * 950, "ÄÖÜ ßé"]),
    st.text(st.characters(codec="ascii"), max_size=40),
    st.text(max_size=20),
)
# Words of every length up to a line and past it, some ending where compat32 prefers to break
_word = st.builds(lambda head, end: head + end, st.integers(1, 80).flatmap(
    lambda n: st.text(st.characters(codec="ascii", min_codepoint=33), min_size=n, max_size=n)),
    st.sampled_from(["", "", "", ";", ",", "a"]))
_words = st.lists(_word, min_size=1, max_size=12).map(" ".join)
_ascii_value = st.one_of(
    st.sampled_from(["[pbem ac-12] Ann vs Bo", "pbem", "Pbem Server", "a, b; c <d@e>", "\"quoted\" name",
                     "x" * 90, "word " * 20]),
    st.text(st.characters(codec="ascii", min_codepoint=32), max_size=100),
    _words, _words,
)
_any_value = st.one_of(_ascii_value, st.sampled_from(["[pbem ac-2] é vs ★", "a\x0cb"]),
                       st.text(st.characters(codec="ascii"), max_size=100), st.text(max_size=60))
_message_id = st.builds(lambda s: f"<{s}@example.org>", st.text(
    st.characters(codec="ascii", categories=["L", "N", "P"]), min_size=1, max_size=70))


@st.composite
def _drafts(draw: st.DrawFn) -> MailDraft:
    common = draw(st.integers(0, 3)) > 0  # three mails in four as most are: ASCII, no attachment
    piece, value = (_ascii_piece, _ascii_value) if common else (_any_piece, _any_value)
    lines = st.lists(piece, max_size=12)
    block = draw(st.one_of(st.none(), st.builds("\n".join, lines)))
    actions = [ActionGroup(draw(piece), [(draw(piece), draw(piece)) for _ in range(draw(st.integers(0, 3)))],
                           moves=draw(st.booleans()))]
    reply_to = draw(st.sampled_from([None, "pbem+tok-3@example.org"]))
    subject = draw(value)
    return build_message(
        from_addr="pbem@example.org", from_name=draw(value), to=draw(st.sampled_from(
            ["ann@example.org", "Ann Example <ann@example.org>", "a" * 70 + "@example.org"])),
        subject=subject, message_id=draw(_message_id),
        date=datetime(2026, 11, 24, 9, 30, tzinfo=UTC), headline=draw(piece), reply_to=reply_to,
        in_reply_to=draw(st.one_of(st.none(), _message_id)),
        references=draw(st.lists(_message_id, max_size=6)),
        auto_submitted=draw(st.sampled_from(["auto-generated", "auto-replied"])),
        sections=[Section(title=draw(st.one_of(st.none(), piece)), lines=draw(lines), pre=block,
                          board_text=block, board_html=draw(st.one_of(st.none(), st.builds("".join, lines))),
                          scores=draw(st.one_of(st.none(), piece)), legal=block, actions=actions)],
        footer=draw(lines),
        attachments=None if common else draw(st.sampled_from([None, [Attachment("ac-1.json", b"{}\n")]])),
        mailto=mailto_links(reply_to, subject) if reply_to else None,
        html=draw(st.integers(0, 3)) > 0, taps=draw(st.booleans()),
        extra_headers=draw(st.dictionaries(st.sampled_from(["Content-Language", "X-Pbem-Game", "X-Pbem-Ply"]),
                                           value, max_size=3)))


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_drafts())
def test_every_mail_is_written_as_the_stdlib_writes_its_tree(draft: MailDraft) -> None:
    _same_as_stdlib(draft)


def test_a_move_mail_reads_as_it_was_rendered() -> None:
    """The common mail (ASCII text and HTML, no attachment), which is written without a tree: a mail
    reader finds in it the headers and both parts as they were rendered."""
    draft = build_message(
        from_addr="pbem@example.org", from_name="pbem", to="bo@example.org",
        subject="[pbem ac-7] Ann vs Bo", message_id="<pbem.ac-7.p1.white.0a1b2c@example.org>",
        date=datetime(2026, 11, 24, tzinfo=UTC), headline="Your move (move 2). Ann played tower red C4.",
        reply_to="pbem+tok-2@example.org", in_reply_to="<pbem.ac-7.p0.white.1@example.org>",
        references=["<pbem.ac-7.p0.white.0@example.org>", "<pbem.ac-7.p0.white.1@example.org>"],
        sections=[Section(lines=["Scores: black (Ann) 0, white (you) 0"], board_text="  A B\n1 . .",
                          board_html="<table><tr><td>.</td></tr></table>")],
        footer=["Commands: board ac-7, history ac-7, message ac-7 TEXT, games, help, resign ac-7."])
    assert draft.html is not None and not draft.attachments and draft.text.isascii()
    mail = email.message_from_bytes(_same_as_stdlib(draft))
    assert mail["Subject"] == "[pbem ac-7] Ann vs Bo"
    assert mail["References"].split() == ["<pbem.ac-7.p0.white.0@example.org>",
                                          "<pbem.ac-7.p0.white.1@example.org>"]
    plain, html = mail.get_payload()
    assert plain.get_content_type() == "text/plain" and html.get_content_type() == "text/html"
    text = plain.get_payload()
    assert text.splitlines()[0] == "Your move (move 2). Ann played tower red C4."
    assert "Commands: board ac-7, history ac-7, message ac-7 TEXT, games, help,\r\nresign ac-7." in text
    assert "<table><tr><td>.</td></tr></table>" in html.get_payload()
