"""The reader's shortcuts around the stdlib's slow paths must not change what it reads.

``parse_message`` skips the feed parser's line-by-line walk of a one-part body; simple MIME
headers are kept as text instead of going through the structured header parser; header text
without encoded words is not run through the RFC 2047 decoder. Whatever the input, the message,
each part's MIME answers and the reading must be those of the slow paths."""

from __future__ import annotations

from email.header import decode_header, make_header
from email.message import EmailMessage, Message
from email.parser import BytesParser

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pbem.reading import incoming
from pbem.reading.headers import decode_raw_header
from pbem.reading.incoming import parse_message, read_mail
from tests.mail.test_reading_corpus import replies_dir
from tests.mail.test_reading_fuzz import FUZZ, SEED, body_line, header

#: The reader's policy with the stdlib's own message class: no answers kept (``_ReadMessage``).
STDLIB_MESSAGES = incoming._POLICY.clone(message_factory=EmailMessage)


def whole(raw: bytes) -> Message:
    return BytesParser(policy=STDLIB_MESSAGES).parsebytes(raw)


def shape(msg: Message) -> list[object]:
    """Everything of a parsed message the reader can look at, part by part."""
    out: list[object] = []
    for part in msg.walk():
        payload = part.get_payload()
        out.append((list(part.raw_items()), part.get_unixfrom(), part.get_default_type(),
                    part.preamble, part.epilogue, [type(d).__name__ for d in part.defects],
                    payload if isinstance(payload, str) else len(payload)))
    return out


def mime_answers(msg: Message) -> list[object]:
    """What the reader asks each part about its MIME headers, twice (the second answer may be a kept
    one)."""
    out: list[object] = []
    for part in [*msg.walk(), *msg.walk()]:
        answers: list[object] = []
        for ask in (part.get_content_type, part.get_content_maintype, part.get_params,
                    part.get_boundary, part.get_content_charset, part.get_filename,
                    part.is_attachment, lambda p=part: p.get_param("format"),  # type: ignore[misc]
                    lambda p=part: p.get_param("delsp"), lambda p=part: p.get_param("report-type"),
                    lambda p=part: p.get_payload(decode=True)):
            try:
                answers.append(ask())
            except Exception as exc:  # the same failure either way is the same answer
                answers.append(type(exc).__name__)
        out.append(answers)
    return out


def same(raw: bytes, monkeypatch: pytest.MonkeyPatch | None = None) -> None:
    incoming._fetch_parse.cache_clear()
    fast = parse_message(raw)
    assert shape(fast) == shape(whole(raw))
    if monkeypatch is None:
        return
    answers, reading = mime_answers(fast), read_mail(raw, own_addresses=["pbem@example.org"])
    with monkeypatch.context() as m:
        m.setattr(incoming, "SIMPLE_MIME_HEADERS", {})
        m.setattr(incoming, "parse_message", whole)
        incoming._fetch_parse.cache_clear()
        assert mime_answers(whole(raw)) == answers
        assert read_mail(raw, own_addresses=["pbem@example.org"]) == reading
    incoming._fetch_parse.cache_clear()


def test_a_one_part_reply_takes_the_shortcut_and_reads_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    raw = (b"From: Ann <ann@example.org>\r\nTo: pbem+t0k3n-12@example.org\r\n"
           b"Subject: Re: [pbem ac-1] ann vs bo\r\nContent-Type: text/plain; charset=utf-8\r\n"
           b"Content-Transfer-Encoding: 8bit\r\n\r\ntower red C4\r\n\r\n"
           b"On Tue, pbem wrote:\r\n> Your move (move 12).\r\n> caf\xc3\xa9\r\n")
    msg = parse_message(raw)
    assert not msg.is_multipart() and msg.get_payload().startswith("tower red C4\r\n")
    same(raw, monkeypatch)
    assert read_mail(raw, own_addresses=["pbem@example.org"]).command_lines == ["tower red C4"]


def test_answers_kept_by_a_parsed_mail_follow_its_changes() -> None:
    msg = parse_message(b"From: a@b\r\nContent-Type: text/plain; charset=utf-8; format=flowed\r\n\r\nx\r\n")
    assert (msg.get_content_type(), msg.get_param("format"), msg.get_content_charset()) == (
        "text/plain", "flowed", "utf-8")
    msg.set_param("format", "fixed")
    msg.replace_header("Content-Type", msg["Content-Type"].replace("text/plain", "text/html"))
    assert (msg.get_content_type(), msg.get_param("format")) == ("text/html", "fixed")
    del msg["Content-Type"]
    msg.set_default_type("message/rfc822")
    assert (msg.get_content_type(), msg.get_param("format", "none")) == ("message/rfc822", "none")


def test_containers_and_odd_header_blocks_get_the_whole_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    same(SEED, monkeypatch)  # multipart/report with a message/delivery-status part
    same(b"From: a@b\nContent-Type: message/rfc822\n\nFrom: c@d\nSubject: inner\n\nbody\n")
    same(b"From a@b Tue Nov 24 10:00:00 2026\nFrom: a@b\n\nbody\n")  # an mbox From_ line
    same(b"From: a@b\nthis is no header\nSubject: x\n\nbody\n")  # a defect: body starts early
    same(b"\n\nbody after an empty header block\n")
    same(b"From: a@b\rSubject: old Mac line ends\r\rbody\n\nmore\n")
    same(b"From: a@b\nSubject: no body at all")


def test_the_corpus_of_real_clients_parses_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    files = sorted(p for p in replies_dir().glob("*.eml"))
    assert len(files) >= 12
    for path in files:
        same(path.read_bytes(), monkeypatch)


TOKEN = st.text(alphabet="abcXYZ019!#$&^_.+-", min_size=1, max_size=8).filter(lambda s: s[0].isalnum())
PARAMETER = st.tuples(
    st.sampled_from(["charset", "format", "delsp", "boundary", "name", "report-type", "X-a"]),
    st.one_of(st.sampled_from(["utf-8", "US-ASCII", "flowed", "yes", "b", "iso-8859-1", "x-bad"]),
              TOKEN, st.text(alphabet="abc XYZ09!#$&^_.+=/:,@?()-", max_size=10).map(lambda s: f'"{s}"')),
    st.sampled_from(["", " ", "  ", "\t"]))
CONTENT_TYPE = st.one_of(
    st.tuples(st.sampled_from(["text", "TEXT", "multipart", "message", "application", "image"]),
              st.sampled_from(["plain", "html", "mixed", "alternative", "report", "rfc822", "json"]),
              st.lists(PARAMETER, max_size=4)),
    st.tuples(TOKEN, TOKEN, st.lists(PARAMETER, max_size=3)),
).map(lambda t: f"Content-Type: {t[0]}/{t[1]}" + "".join(f";{sp}{k}={v}" for k, v, sp in t[2]))
ENCODING = st.sampled_from(["7bit", "8BIT", "Quoted-Printable", "base64", "binary", "x-uuencode"]).map(
    lambda v: f"Content-Transfer-Encoding: {v}")


@FUZZ
@given(st.lists(st.one_of(header, CONTENT_TYPE, ENCODING), max_size=15), st.lists(body_line, max_size=40),
       st.booleans())
def test_mail_shaped_input_parses_and_reads_the_same(headers: list[str], lines: list[str],
                                                     crlf: bool) -> None:
    text = "\n".join(headers) + "\n\n" + "\n".join(lines)
    if crlf:
        text = text.replace("\n", "\r\n")
    with pytest.MonkeyPatch.context() as monkeypatch:
        same(text.encode("utf-8", "surrogatepass"), monkeypatch)


@FUZZ
@given(st.binary(max_size=2000))
def test_random_bytes_parse_the_same(raw: bytes) -> None:
    same(raw)


@FUZZ
@given(st.text(max_size=200))
def test_header_text_without_encoded_words_decodes_as_the_stdlib_does(text: str) -> None:
    try:
        expected = str(make_header(decode_header(text)))
    except Exception:
        expected = text
    assert decode_raw_header(text) == expected
