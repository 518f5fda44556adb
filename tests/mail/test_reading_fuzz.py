"""Mail comes from strangers: no input may make the reader raise (or need its safety net)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbem.reading.body import unflow
from pbem.reading.html_text import html_to_text
from pbem.reading.incoming import IncomingMail, read_mail
from pbem.reading.quotes import split_reply

#: PBEM_FUZZ_EXAMPLES=5000 for a longer run than the default, which keeps the suite quick.
FUZZ = settings(
    max_examples=int(os.environ.get("PBEM_FUZZ_EXAMPLES", "250")),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
AUTO = {None, "bounce", "auto-reply", "bulk", "list", "own-mail"}


def check(mail: IncomingMail) -> None:
    assert "X-Pbem-Read-Error" not in mail.headers, mail.headers
    assert mail.auto in AUTO
    assert all(line and line == line.strip() for line in mail.command_lines)
    assert all(addr == addr.lower() and "@" in addr for addr in mail.to_addrs)
    assert mail.from_addr == mail.from_addr.lower()
    assert mail.message_id is None or (mail.message_id[0], mail.message_id[-1]) == ("<", ">")
    assert (mail.json_turn is None) or (mail.json_error is None)
    assert isinstance(mail.text, str) and isinstance(mail.command_text, str)


@FUZZ
@given(st.binary(max_size=3000))
def test_random_bytes(raw: bytes) -> None:
    check(read_mail(raw, own_addresses=["pbem@example.org"]))


HEADER_NAMES = [
    "From", "To", "Cc", "Subject", "Message-ID", "In-Reply-To", "References", "Return-Path",
    "Delivered-To", "X-Original-To", "Auto-Submitted", "Precedence", "List-Id", "Content-Type",
    "Content-Transfer-Encoding", "Content-Disposition", "MIME-Version", "X-Failed-Recipients",
    "Date", "Reply-To", "Sender",
]
TRICKY_VALUES = [
    "", " ", "<>", "<<>>", "@", "a@b", "\"unterminated", "=?utf-8?q?=FF=FE?=", "=?x-bad?b?!!?=",
    "=?utf-8?b?w6k=?=", "group: a@b, c@d;", "a@b, , ,c@d", "(comment) <a@b> (more)",
    "multipart/mixed; boundary=\"b\"", "multipart/report; report-type=delivery-status; boundary=b",
    "text/plain; charset=\"utf-8\"; format=flowed; delsp=yes", "text/html; charset=x-unknown",
    "message/delivery-status", "message/rfc822", "application/json; name=turn.json",
    "text/plain; charset=utf-16", "base64", "quoted-printable", "x-uuencode", "8bit",
    "attachment; filename=\"a.json\"", "attachment; filename*=utf-8''%FF.json",
    "[pbem ac-1] Your move (ply 99999999999999999999)", "Re: Re: Re:", "auto-replied",
]
header_value = st.one_of(
    st.sampled_from(TRICKY_VALUES),
    st.text(max_size=80).map(lambda s: s.replace("\r", " ").replace("\n", " ")),
)
header = st.tuples(st.sampled_from(HEADER_NAMES), header_value).map(lambda kv: f"{kv[0]}: {kv[1]}")
body_line = st.one_of(
    st.sampled_from([
        "--b", "--b--", "", "> quoted", "-- ", "On Tue, pbem wrote:", "From: x", "Sent: y",
        "To: z", "Subject: w", "-----Original Message-----", "Final-Recipient: rfc822; a@b",
        "Action: failed", "Content-Type: text/plain", "Content-Type: multipart/mixed; boundary=b",
        "Content-Transfer-Encoding: base64", "Content-Type: message/delivery-status",
        "Content-Type: application/json", "{\"a\": [1, 2", "[[[[", "dG93ZXI=", "=E9=\n",
        "<blockquote>x", "<div class=gmail_quote>", "token abc123",
        "-----BEGIN PGP SIGNED MESSAGE-----", "-----BEGIN PGP SIGNATURE-----",
    ]),
    st.text(max_size=60).map(lambda s: s.replace("\r", "")),
)


@FUZZ
@given(st.lists(header, max_size=15), st.lists(body_line, max_size=40), st.booleans())
def test_random_mail_shaped_input(headers: list[str], lines: list[str], crlf: bool) -> None:
    text = "\n".join(headers) + "\n\n" + "\n".join(lines)
    if crlf:
        text = text.replace("\n", "\r\n")
    check(read_mail(text.encode("utf-8", "surrogatepass"), own_addresses=["a@b"]))


SEED = b"""From: Bob <bob+x@example.com>
To: pbem+k7x9@example.org
Subject: Re: [pbem ac-17] Your move (ply 12)
Message-ID: <m@example.com>
Return-Path: <>
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status; boundary="B"

--B
Content-Type: multipart/alternative; boundary="A"

--A
Content-Type: text/plain; charset=iso-8859-1; format=flowed; delsp=yes
Content-Transfer-Encoding: quoted-printable

tower red C4 =E9 =
claim C4
On Tue, pbem wrote:
> red tower: C4
--A
Content-Type: text/html; charset=utf-8
Content-Transfer-Encoding: base64

PHA+dG93ZXI8L3A+PGRpdiBjbGFzcz0iZ21haWxfcXVvdGUiPng8L2Rpdj4=
--A--
--B
Content-Type: message/delivery-status

Reporting-MTA: dns; mx

Final-Recipient: rfc822; carol@example.net
Action: failed

--B
Content-Type: application/json; name="turn.json"
Content-Disposition: attachment; filename="turn.json"
Content-Transfer-Encoding: base64

eyJtb3ZlcyI6IFsiQzQiXX0=
--B--
"""


@FUZZ
@given(st.data())
def test_mutated_mail(data: st.DataObject) -> None:
    raw = bytearray(SEED)
    for _ in range(data.draw(st.integers(1, 8))):
        at = data.draw(st.integers(0, len(raw)))
        action = data.draw(st.sampled_from(["delete", "insert", "replace", "truncate"]))
        chunk = data.draw(st.binary(min_size=1, max_size=8))
        if action == "delete":
            del raw[at : at + len(chunk)]
        elif action == "insert":
            raw[at:at] = chunk
        elif action == "replace":
            raw[at : at + len(chunk)] = chunk
        else:
            del raw[at:]
    check(read_mail(bytes(raw), own_addresses=["pbem@example.org"]))


def test_seed_is_meaningful() -> None:
    mail = read_mail(SEED)
    assert mail.auto == "bounce"
    assert mail.bounce_for == ["carol@example.net"]
    assert mail.json_turn == {"moves": ["C4"]}
    assert mail.command_lines == ["tower red C4 é claim C4"]


@FUZZ
@given(st.text(max_size=500))
def test_text_helpers(text: str) -> None:
    assert isinstance(html_to_text(text), str)
    reply, command = split_reply(text)
    assert command in reply or not command.strip()
    assert isinstance(unflow(text, delsp=True), str)


html_piece = st.one_of(
    st.sampled_from([
        "<p>", "</p>", "<br>", "<blockquote>", "</blockquote>", "<div class='gmail_quote'>",
        "</div>", "<style>", "</style>", "<head>", "<body>", "<pre>", "</pre>", "&nbsp;", "&amp",
        "<!--", "-->", "<![if x]>", "<![endif]>", "<![bogus", "<td>", "<script>", "<", ">",
    ]),
    st.text(max_size=20),
)


@FUZZ
@given(st.lists(html_piece, max_size=60))
def test_html_soup(pieces: list[str]) -> None:
    assert isinstance(html_to_text("".join(pieces)), str)
