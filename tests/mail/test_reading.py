from __future__ import annotations

import json
from email.message import EmailMessage

import pytest

from pbem.reading.body import unflow
from pbem.reading.incoming import IncomingMail, read_mail
from pbem.reading.quotes import split_reply

MOVE = "tower red C4 claim C4"
OUR_SUBJECT = "Re: [pbem ac-17] Your move (ply 12)"
BOARD = """Alien City, game ac-17, ply 12. Red to move.

    a b c d
  4 . T . .
  3 . . S .

Legal moves:
red tower: C4 C5 D6
red scout: B2 B3

Write your move above the quoted text."""


def quoted(text: str, prefix: str = "> ") -> str:
    return "\n".join((prefix + line) if line else prefix.rstrip() for line in text.split("\n"))


def make(
    body: str | None = "",
    *,
    subject: str = OUR_SUBJECT,
    sender: str = "Bob <bob@example.com>",
    to: str = "pbem+k7x9@example.org",
    headers: dict[str, str] | None = None,
    subtype: str = "plain",
    charset: str = "utf-8",
    cte: str | None = None,
) -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = to
    msg["Subject"] = subject
    msg["Message-ID"] = "<reply-1@example.com>"
    for name, value in (headers or {}).items():
        msg[name] = value
    if body is not None:
        msg.set_content(body, subtype=subtype, charset=charset, cte=cte)
    return msg


def read(body: str, **kwargs: object) -> IncomingMail:
    return read_mail(make(body, **kwargs).as_bytes())  # type: ignore[arg-type]


def assert_clean(mail: IncomingMail) -> None:
    assert "X-Pbem-Read-Error" not in mail.headers


# --- quotes --------------------------------------------------------------------------------------


def test_top_posted_reply_quoting_the_board() -> None:
    body = f"{MOVE}\n\nOn Tue, Apr 3, 2012 at 4:19 PM, pbem <pbem@example.org> wrote:\n\n{quoted(BOARD)}"
    mail = read(body)
    assert mail.command_lines == [MOVE]
    assert mail.command_text == MOVE
    assert "red tower: C4 C5 D6" in mail.text


def test_quote_without_attribution() -> None:
    mail = read(f"{MOVE}\n{quoted(BOARD, '>')}")
    assert mail.command_lines == [MOVE]


def test_indented_quote_marks() -> None:
    mail = read(f"{MOVE}\n   > red tower: C4 C5 D6\n")
    assert mail.command_lines == [MOVE]


OUTLOOK_HEADERS = {
    "outlook": (
        "________________________________\n"
        "From: pbem <pbem+k7x9@example.org>\nSent: Tuesday, April 3, 2012 4:19 PM\n"
        "To: Bob <bob@example.com>\nSubject: [pbem ac-17] Your move (ply 12)"
    ),
    "outlook-no-rule": (
        "From: pbem [mailto:pbem+k7x9@example.org]\nSent: Tuesday, April 3, 2012 4:19 PM\n"
        "To: Bob\nCc: carol@example.net\nSubject: [pbem ac-17] Your move (ply 12)"
    ),
    "outlook-bold": (
        "*From:* pbem <pbem@example.org>\n*Sent:* Tuesday, April 3, 2012 4:19 PM\n"
        "*To:* Bob\n*Subject:* [pbem ac-17] Your move (ply 12)"
    ),
    "outlook-wrapped-to": (
        "From: pbem <pbem@example.org>\nSent: Tuesday, April 3, 2012 4:19 PM\n"
        "To: Bob <bob@example.com>; Carol <carol@example.net>;\n Dave <dave@example.net>\n"
        "Subject: [pbem ac-17] Your move (ply 12)"
    ),
    "outlook-de": (
        "Von: pbem <pbem@example.org>\nGesendet: Dienstag, 3. April 2012 16:19\n"
        "An: Bob <bob@example.com>\nBetreff: [pbem ac-17] Your move (ply 12)"
    ),
    "outlook-fr": (
        "De : pbem <pbem@example.org>\nEnvoyé : mardi 3 avril 2012 16:19\n"
        "À : Bob <bob@example.com>\nObjet : [pbem ac-17] Your move (ply 12)"
    ),
    "outlook-es": (
        "De: pbem <pbem@example.org>\nEnviado el: martes, 3 de abril de 2012 16:19\n"
        "Para: Bob <bob@example.com>\nAsunto: [pbem ac-17] Your move (ply 12)"
    ),
    "outlook-it": (
        "Da: pbem <pbem@example.org>\nInviato: martedì 3 aprile 2012 16:19\n"
        "A: Bob <bob@example.com>\nOggetto: [pbem ac-17] Your move (ply 12)"
    ),
    "outlook-nl": (
        "Van: pbem <pbem@example.org>\nVerzonden: dinsdag 3 april 2012 16:19\n"
        "Aan: Bob <bob@example.com>\nOnderwerp: [pbem ac-17] Your move (ply 12)"
    ),
    "outlook-pl": (
        "Od: pbem <pbem@example.org>\nWysłano: wtorek, 3 kwietnia 2012 16:19\n"
        "Do: Bob <bob@example.com>\nTemat: [pbem ac-17] Your move (ply 12)"
    ),
    "outlook-ru": (
        "От: pbem <pbem@example.org>\nОтправлено: 3 апреля 2012 г. 16:19\n"
        "Кому: Bob <bob@example.com>\nТема: [pbem ac-17] Your move (ply 12)"
    ),
    "original-message": "-----Original Message-----\nFrom: pbem\nSent: 3 April 2012",
    "original-message-zimbra": "----- Original Message -----\nFrom: pbem@example.org",
    "thunderbird-forward": (
        "-------- Original Message --------\nSubject: [pbem ac-17] Your move (ply 12)\n"
        "Date: Tue, 3 Apr 2012 16:19:00 +0200\nFrom: pbem <pbem@example.org>"
    ),
    "gmail-forward": "---------- Forwarded message ---------\nFrom: pbem <pbem@example.org>",
    "de-original": "-----Ursprüngliche Nachricht-----\nVon: pbem",
    "fr-original": "-----Message d'origine-----\nDe : pbem",
    "gmx-original": "-------- Original-Nachricht --------\nBetreff: Your move",
    "apple-forward": "Begin forwarded message:\n\nFrom: pbem <pbem@example.org>",
}


@pytest.mark.parametrize("name", sorted(OUTLOOK_HEADERS))
def test_header_only_quote_is_never_read(name: str) -> None:
    """Outlook and forwards quote without '>': everything from the header on is the old mail."""
    body = f"{MOVE}\n\n{OUTLOOK_HEADERS[name]}\n\n{BOARD}\n"
    mail = read(body)
    assert mail.command_lines == [MOVE]


@pytest.mark.parametrize("name", sorted(OUTLOOK_HEADERS))
def test_header_only_quote_with_nothing_above_gives_no_commands(name: str) -> None:
    mail = read(f"{OUTLOOK_HEADERS[name]}\n\n{BOARD}\n")
    assert mail.command_lines == []


ATTRIBUTIONS = [
    "On Tue, Apr 3, 2012 at 4:19 PM, pbem <pbem@example.org> wrote:",
    "On 03/04/2012 16:19, pbem wrote:",
    "pbem <pbem@example.org> wrote:",
    "Le mar. 3 avr. 2012 à 16:19, pbem <pbem@example.org> a écrit :",
    "Am Di., 3. Apr. 2012 um 16:19 Uhr schrieb pbem <pbem@example.org>:",
    "Am 03.04.2012 um 16:19 schrieb pbem:",
    "El mar., 3 abr. 2012 a las 16:19, pbem (<pbem@example.org>) escribió:",
    "Il giorno mar 3 apr 2012 alle ore 16:19 pbem <pbem@example.org> ha scritto:",
    "Op di 3 apr. 2012 om 16:19 schreef pbem <pbem@example.org>:",
    "Op 3 apr. 2012 om 16:19 heeft pbem <pbem@example.org> het volgende geschreven:",
    "W dniu 3.04.2012 o 16:19, pbem <pbem@example.org> pisze:",
    "W dniu 3.04.2012 16:19 użytkownik pbem <pbem@example.org> napisał:",
    "Dne 3. 4. 2012 16:19 napsal(a) pbem <pbem@example.org>:",
    "Dne út 3. 4. 2012 16:19 uživatel pbem <pbem@example.org> napsal:",
    "3 апр. 2012 г., в 16:19, pbem <pbem@example.org> написал(а):",
    "02.04.2012 14:20 пользователь \"pbem@example.org\" <pbem@example.org> написал:",
    "Em ter., 3 de abr. de 2012 às 16:19, pbem <pbem@example.org> escreveu:",
    "Den tis 3 apr. 2012 kl 16:19 skrev pbem <pbem@example.org>:",
    "ti 3. huhtik. 2012 klo 16.19 pbem (pbem@example.org) kirjoitti:",
    "2012年4月3日(火) 16:19 pbem <pbem@example.org>:",
    "在 2012年4月3日 16:19，pbem <pbem@example.org> 写道：",
    "2012/4/3 pbem <pbem@example.org>",
]


def wrapped(line: str) -> str:
    """Break an attribution over two lines the way Gmail and Android do."""
    at = line.rfind(" <")
    if at < 0:
        at = line.rfind(" ", 0, len(line) // 2 + 5)
    return line[:at] + "\n" + line[at + 1 :]


@pytest.mark.parametrize("attribution", ATTRIBUTIONS)
def test_localized_attribution(attribution: str) -> None:
    mail = read(f"{MOVE}\n\n{attribution}\n\n{quoted(BOARD)}")
    assert mail.command_lines == [MOVE]


@pytest.mark.parametrize("attribution", [a for a in ATTRIBUTIONS if len(a) > 40])
def test_wrapped_attribution(attribution: str) -> None:
    """Clients wrap only long attributions, and only those that start like one ("On …", a date)."""
    text = wrapped(attribution)
    assert "\n" in text
    mail = read(f"{MOVE}\n\n{text}\n\n{quoted(BOARD)}")
    assert mail.command_lines == [MOVE]


def test_gmail_wrap_before_wrote() -> None:
    body = (
        f"{MOVE}\n\nOn Tue, Apr 3, 2012 at 4:19 PM, pbem <pbem+k7x9@example.org>\nwrote:\n\n"
        f"{quoted(BOARD)}"
    )
    assert read(body).command_lines == [MOVE]


def test_attribution_directly_below_the_move() -> None:
    body = f"{MOVE}\nOn Tue, Apr 3, 2012 at 4:19 PM, pbem <pbem@example.org> wrote:\n{quoted(BOARD)}"
    assert read(body).command_lines == [MOVE]


SIGNATURES = [
    "-- ",
    "--",
    "________________________________",
    "Sent from my iPhone",
    "Sent from my Android phone with GMX Mail.",
    "Sent from Yahoo Mail on Android",
    "Get Outlook for iOS",
    "Envoyé de mon iPhone",
    "Von meinem iPhone gesendet",
    "Enviado desde mi iPhone",
    "Inviato da iPhone",
]


@pytest.mark.parametrize("signature", SIGNATURES)
def test_signature_ends_the_commands(signature: str) -> None:
    mail = read(f"{MOVE}\n\n{signature}\nBob\nred tower: C4 C5 D6\n")
    assert mail.command_lines == [MOVE]
    assert mail.reply_text.startswith(MOVE)
    assert "red tower" in mail.reply_text  # the signature belongs to the reply, not the commands


def test_bottom_posted_reply() -> None:
    body = (
        f"On Tue, Apr 3, 2012 at 4:19 PM, pbem <pbem@example.org> wrote:\n{quoted(BOARD)}\n\n"
        f"{MOVE}\n\n-- \nBob\n"
    )
    mail = read(body)
    assert mail.command_lines == [MOVE]
    assert mail.reply_text == f"{MOVE}\n\n-- \nBob"


def test_interleaved_reply() -> None:
    body = (
        "pbem <pbem@example.org> wrote:\n> Legal moves:\n> red tower: C4 C5 D6\n"
        f"{MOVE}\n> red scout: B2 B3\nscout red B2\n"
    )
    assert read(body).command_lines == [MOVE, "scout red B2"]


def test_bottom_posting_stops_at_a_header_only_quote() -> None:
    body = (
        f"> Your move\n{MOVE}\n\n-----Original Message-----\nFrom: pbem\n\n{BOARD}\n"
    )
    assert read(body).command_lines == [MOVE]


def test_no_quote_at_all() -> None:
    mail = read(f"\n\n  {MOVE}  \n\n  claim D6\n\n")
    assert mail.command_lines == [MOVE, "claim D6"]
    assert mail.command_text == f"{MOVE}  \n\n  claim D6"


def test_split_reply_directly() -> None:
    assert split_reply("") == ("", "")
    assert split_reply("a\n-- \nsig\n> q") == ("a\n-- \nsig", "a")


# --- HTML ----------------------------------------------------------------------------------------

GMAIL_HTML = """<div dir="ltr">tower red C4 claim C4<br></div><br>
<div class="gmail_quote"><div dir="ltr" class="gmail_attr">On Tue, Apr 3, 2012 at 4:19 PM, pbem
&lt;<a href="mailto:pbem@example.org">pbem@example.org</a>&gt; wrote:<br></div>
<blockquote class="gmail_quote" style="margin:0px 0px 0px 0.8ex;border-left:1px solid rgb(204,204,204)">
<div>Alien City, game ac-17, ply 12.<br><br>Legal moves:<br>red tower: C4 C5 D6<br>
red scout: B2 B3</div></blockquote></div>"""

HTML_QUOTES = {
    "gmail": GMAIL_HTML,
    "outlook-web": (
        '<div dir="ltr">tower red C4 claim C4</div><div id="appendonsend"></div><hr>'
        '<div id="divRplyFwdMsg" dir="ltr"><b>From:</b> pbem<br><b>Sent:</b> Tuesday<br>'
        "<b>To:</b> Bob<br><b>Subject:</b> Your move</div>"
        "<div>Legal moves:<br>red tower: C4 C5 D6<br>red scout: B2 B3</div>"
    ),
    "outlook-web-nested": (
        '<p>tower red C4 claim C4</p><div id="x_appendonsend"></div>'
        "<p>Legal moves:</p><p>red tower: C4 C5 D6</p>"
    ),
    "outlook-desktop": (
        '<div class="WordSection1"><p class="MsoNormal">tower red C4 claim C4<o:p></o:p></p>'
        '<div style="border:none;border-top:solid #E1E1E1 1.0pt"><p class="MsoNormal"><b>From:</b>'
        " pbem &lt;pbem@example.org&gt;<br><b>Sent:</b> Tuesday, April 3, 2012 4:19 PM<br>"
        "<b>To:</b> Bob<br><b>Subject:</b> Your move</p></div>"
        '<p class="MsoNormal">red tower: C4 C5 D6<o:p></o:p></p></div>'
    ),
    "outlook-mac": (
        "<div>tower red C4 claim C4</div><span id=\"OLK_SRC_BODY_SECTION\">"
        "<div>Legal moves:</div><div>red tower: C4 C5 D6</div></span>"
    ),
    "yahoo": (
        '<div>tower red C4 claim C4</div><div class="yahoo_quoted" id="yahoo_quoted_123">'
        "<div>On Tuesday, pbem wrote:</div><div>red tower: C4 C5 D6</div></div>"
    ),
    "thunderbird": (
        "<p>tower red C4 claim C4<br></p><div class=\"moz-cite-prefix\">On 03.04.12 16:19, pbem"
        " wrote:<br></div><blockquote type=\"cite\">red tower: C4 C5 D6<br></blockquote>"
    ),
    "apple": (
        "<div>tower red C4 claim C4</div><div><br><blockquote type=\"cite\"><div>On 3 Apr 2012,"
        " at 16:19, pbem wrote:</div><div>red tower: C4 C5 D6</div></blockquote></div>"
    ),
}


@pytest.mark.parametrize("name", sorted(HTML_QUOTES))
def test_html_only_reply(name: str) -> None:
    mail = read(f"<html><head><style>p {{ margin: 0 }}</style></head><body>{HTML_QUOTES[name]}"
                "</body></html>", subtype="html")
    assert mail.command_lines == [MOVE]
    assert "red tower: C4 C5 D6" in mail.text


def test_html_fallback_when_plain_part_is_empty() -> None:
    msg = make(" \n")
    msg.add_alternative(f"<p>{MOVE}</p>", subtype="html")
    assert read_mail(msg.as_bytes()).command_lines == [MOVE]


def test_plain_preferred_over_html() -> None:
    msg = make(f"{MOVE}\n")
    msg.add_alternative("<p>html version</p>", subtype="html")
    mail = read_mail(msg.as_bytes())
    assert mail.text.strip() == MOVE


def test_multipart_related_html() -> None:
    msg = make(None)
    msg.set_content(f"<p>{MOVE}</p><img src='cid:logo'>", subtype="html")
    msg.add_related(b"\x89PNG....", maintype="image", subtype="png", cid="<logo>")
    mail = read_mail(msg.as_bytes())
    assert mail.command_lines == [MOVE]


# --- MIME structure, charsets, transfer encodings ------------------------------------------------


SIGNED = b"""From: Bob <bob@example.com>
To: pbem+k7x9@example.org
Subject: Re: [pbem ac-17] Your move (ply 12)
MIME-Version: 1.0
Content-Type: multipart/signed; micalg=pgp-sha256;
 protocol="application/pgp-signature"; boundary="sig"

--sig
Content-Type: multipart/mixed; boundary="mix"

--mix
Content-Type: multipart/alternative; boundary="alt"

--alt
Content-Type: text/plain; charset=utf-8
Content-Transfer-Encoding: quoted-printable

tower red C4 claim C4

On Tue, Apr 3, 2012 at 4:19 PM, pbem <pbem@example.org> wrote:
> red tower: C4 C5 D6
--alt
Content-Type: text/html; charset=utf-8

<p>html</p>
--alt--

--mix
Content-Type: text/plain; name="notes.txt"
Content-Disposition: attachment; filename="notes.txt"

not a command
--mix--

--sig
Content-Type: application/pgp-signature; name="signature.asc"
Content-Disposition: attachment; filename="signature.asc"

-----BEGIN PGP SIGNATURE-----

iQEzBAEBCAAdFiEE
-----END PGP SIGNATURE-----
--sig--
"""


def test_multipart_signed() -> None:
    mail = read_mail(SIGNED)
    assert_clean(mail)
    assert mail.command_lines == [MOVE]
    assert mail.json_turn is None and mail.json_error is None


def test_inline_pgp_signed_body() -> None:
    body = (
        "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\n"
        f"{MOVE}\n- -- not a signature, dash-escaped\n"
        "-----BEGIN PGP SIGNATURE-----\n\niQEzBAEBCAAdFiEE\n-----END PGP SIGNATURE-----\n\n"
        f"On Tue, pbem wrote:\n{quoted(BOARD)}"
    )
    mail = read(body)
    assert mail.command_lines == [MOVE, "-- not a signature, dash-escaped"]


def test_iso_8859_1_quoted_printable() -> None:
    body = f"tour rouge: déplacer en C4 — à vous\n{MOVE}\n\nLe mar. 3 avr. 2012, pbem a écrit :\n> é"
    msg = make(body.replace("—", "-"), charset="iso-8859-1", cte="quoted-printable")
    raw = msg.as_bytes()
    assert b"=E9" in raw and b"=E0" in raw
    mail = read_mail(raw)
    assert mail.command_lines == ["tour rouge: déplacer en C4 - à vous", MOVE]


def test_base64_utf8() -> None:
    body = f"башня красная C4 ♜ 🚀\n{MOVE}\n"
    raw = make(body, charset="utf-8", cte="base64").as_bytes()
    assert "башня".encode() not in raw
    assert read_mail(raw).command_lines == ["башня красная C4 ♜ 🚀", MOVE]


def raw_text_mail(content_type: str, body: bytes, cte: str = "8bit") -> bytes:
    return (
        b"From: bob@example.com\nTo: pbem@example.org\nSubject: " + OUR_SUBJECT.encode()
        + b"\nMIME-Version: 1.0\nContent-Type: " + content_type.encode()
        + b"\nContent-Transfer-Encoding: " + cte.encode() + b"\n\n" + body
    )


@pytest.mark.parametrize(
    ("content_type", "body", "expected"),
    [
        ("text/plain; charset=x-no-such-charset", "déjà C4".encode("latin-1"), "déjà C4"),
        ("text/plain; charset=x-no-such-charset", "déjà C4".encode(), "déjà C4"),
        ("text/plain; charset=us-ascii", "déjà C4".encode(), "déjà C4"),
        ("text/plain; charset=us-ascii", "déjà C4".encode("latin-1"), "déjà C4"),
        ("text/plain; charset=utf-8", b"d\xe9j\xe0 C4", "déjà C4"),
        ("text/plain; charset=rot13", b"C4", "C4"),
        ("text/plain; charset=zlib_codec", b"C4", "C4"),
        ("text/plain; charset=\"windows-1252\"", b"\x93C4\x94", "\u201cC4\u201d"),
        ("text/plain", b"C4", "C4"),
        ("text/plain; charset=utf-8", b"\xef\xbb\xbfC4", "C4"),
    ],
)
def test_charsets(content_type: str, body: bytes, expected: str) -> None:
    mail = read_mail(raw_text_mail(content_type, body))
    assert_clean(mail)
    assert mail.command_lines == [expected]


def test_bad_base64_does_not_crash() -> None:
    mail = read_mail(raw_text_mail("text/plain; charset=utf-8", b"dG93ZXI=%%%!!\n@@", "base64"))
    assert_clean(mail)


def test_crlf_line_endings() -> None:
    raw = make(f"{MOVE}\n\nOn Tue, pbem wrote:\n> red tower: C4\n").as_bytes()
    mail = read_mail(raw.replace(b"\n", b"\r\n"))
    assert mail.command_lines == [MOVE]
    assert "\r" not in mail.text


# --- format=flowed -------------------------------------------------------------------------------


def test_format_flowed() -> None:
    body = (
        b"tower red C4 \nclaim C4\n\n From me: a space-stuffed line\n\n"
        b"> red tower: C4 \n> C5 D6\n"
    )
    mail = read_mail(raw_text_mail("text/plain; charset=utf-8; format=flowed", body))
    assert mail.command_lines == [MOVE, "From me: a space-stuffed line"]
    assert "> red tower: C4 C5 D6" in mail.text


def test_format_flowed_delsp() -> None:
    body = b"tower red C4 cla \nim C4\n"
    mail = read_mail(raw_text_mail("text/plain; charset=utf-8; format=flowed; delsp=yes", body))
    assert mail.command_lines == [MOVE]


def test_unflow_keeps_signature_separator_and_depths() -> None:
    assert unflow("a \nb\n-- \nsig") == "a b\n-- \nsig"
    assert unflow("> a \n>> b \nc") == "> a \n> > b \nc"
    assert unflow("soft at end ") == "soft at end "


def test_not_flowed_lines_are_not_joined() -> None:
    mail = read_mail(raw_text_mail("text/plain; charset=utf-8", b"tower red C4 \nclaim C4\n"))
    assert mail.command_lines == ["tower red C4", "claim C4"]


# --- JSON turn files -----------------------------------------------------------------------------

TURN = {"game": "ac-17", "ply": 12, "moves": ["tower red C4", "claim C4"]}


def test_json_body() -> None:
    mail = read(json.dumps(TURN, indent=2))
    assert mail.json_turn == TURN
    assert mail.json_error is None
    assert mail.json_source == "the mail body"


def test_json_body_with_signature_and_quote_below() -> None:
    body = f"{json.dumps(TURN)}\n\n-- \nBob\n\nOn Tue, pbem wrote:\n> {BOARD[:20]}"
    mail = read(body)
    assert mail.json_turn == TURN


def test_json_array_body() -> None:
    assert read('\n ["tower red C4"]\n').json_turn == ["tower red C4"]


@pytest.mark.parametrize(
    ("maintype", "subtype", "filename"),
    [
        ("application", "json", "turn.json"),
        ("application", "json", None),
        ("text", "json", None),
        ("application", "octet-stream", "Turn.JSON"),
        ("application", "vnd.pbem+json", None),
    ],
)
def test_json_attachment(maintype: str, subtype: str, filename: str | None) -> None:
    msg = make(f"my turn is attached\n\nOn Tue, pbem wrote:\n{quoted(BOARD)}")
    data = json.dumps(TURN).encode()
    if maintype == "text":
        msg.add_attachment(data.decode(), subtype=subtype, filename=filename)
    else:
        msg.add_attachment(data, maintype=maintype, subtype=subtype, filename=filename)
    mail = read_mail(msg.as_bytes())
    assert mail.json_turn == TURN
    assert mail.json_error is None
    assert mail.json_source == (filename or f"{maintype}/{subtype}")
    assert mail.command_lines == ["my turn is attached"]


def test_json_attachment_with_bom() -> None:
    msg = make("see attachment")
    msg.add_attachment(b"\xef\xbb\xbf" + json.dumps(TURN).encode(), maintype="application",
                       subtype="json", filename="turn.json")
    assert read_mail(msg.as_bytes()).json_turn == TURN


BROKEN = '{\n  "moves": [\n    "tower red C4"\n    "claim C4"\n  ]\n}\n'


def test_malformed_json_attachment() -> None:
    msg = make("see attachment")
    msg.add_attachment(BROKEN.encode(), maintype="application", subtype="json",
                       filename="turn.json")
    mail = read_mail(msg.as_bytes())
    assert mail.json_turn is None
    assert mail.json_error is not None
    assert mail.json_error.startswith("line 4 column 5: Expecting ',' delimiter")
    assert "turn.json" in mail.json_error


def test_malformed_json_body() -> None:
    mail = read(BROKEN)
    assert mail.json_turn is None
    assert mail.json_error is not None
    assert mail.json_error.startswith("line 4 column 5:")
    assert "body" in mail.json_error


def test_malformed_json_body_keeps_line_numbers_despite_signature() -> None:
    mail = read("\n" + BROKEN + "\n-- \nBob\n")
    assert mail.json_error is not None
    assert mail.json_error.startswith("line 5 column 5:")


def test_hostile_json_does_not_crash() -> None:
    for body in ["[" * 100_000, "{" + '"a":' * 50_000, "[" + "9" * 10_000 + "]"]:
        mail = read(body)
        assert_clean(mail)
        assert mail.json_turn is None
        assert mail.json_error is not None


@pytest.mark.parametrize(
    "body", [f"{MOVE}\n", "[EXTERNAL] mail from outside\nclaim C4", "[C4] claim", "{curly} braces"]
)
def test_text_that_is_not_json_is_not_an_error(body: str) -> None:
    mail = read(body)
    assert mail.json_turn is None and mail.json_error is None


# --- automatic mail ------------------------------------------------------------------------------

DSN = b"""Return-Path: <>
Received: from mx.example.net
From: MAILER-DAEMON@mx.example.org (Mail Delivery System)
To: pbem@example.org
Subject: Undelivered Mail Returned to Sender
Auto-Submitted: auto-replied
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status;
 boundary="B1"

--B1
Content-Description: Notification
Content-Type: text/plain; charset=us-ascii

This is the mail system at host mx.example.org.

I'm sorry to have to inform you that your message could not
be delivered to one or more recipients.

<carol@example.net>: host mx.example.net said: 550 5.1.1 User unknown

--B1
Content-Description: Delivery report
Content-Type: message/delivery-status

Reporting-MTA: dns; mx.example.org
X-Postfix-Queue-ID: 3F2A1
Arrival-Date: Tue,  3 Apr 2012 16:19:00 +0200 (CEST)

Final-Recipient: rfc822; carol@example.net
Original-Recipient: rfc822;Carol+2Bgames@Example.net
Action: failed
Status: 5.1.1
Diagnostic-Code: smtp; 550 5.1.1 User unknown

Final-Recipient: rfc822; dave@example.net
Action: delayed
Status: 4.4.1

Final-Recipient: rfc822;
 erin@example.net
Action: failed
Status: 5.2.2

--B1
Content-Description: Undelivered Message
Content-Type: message/rfc822

From: pbem <pbem+k7x9@example.org>
To: carol@example.net
Subject: [pbem ac-17] Your move (ply 12)
X-Pbem-Server: yes

red tower: C4 C5 D6

--B1--
"""


def test_bounce_with_delivery_status() -> None:
    mail = read_mail(DSN, own_addresses=["pbem@example.org"])
    assert_clean(mail)
    assert mail.auto == "bounce"
    assert mail.bounce_for == ["carol+games@example.net", "carol@example.net", "erin@example.net"]


def test_bounce_detected_by_report_alone() -> None:
    raw = DSN.replace(b"Return-Path: <>\n", b"").replace(
        b"MAILER-DAEMON@mx.example.org", b"mail@mx.example.org"
    ).replace(b"Auto-Submitted: auto-replied\n", b"")
    assert read_mail(raw).auto == "bounce"


def test_delay_notice_is_a_bounce_without_failed_recipients() -> None:
    raw = DSN.replace(b"Action: failed", b"Action: delayed")
    mail = read_mail(raw)
    assert mail.auto == "bounce"
    assert mail.bounce_for == []


@pytest.mark.parametrize(
    "headers",
    [
        {"Return-Path": "<>"},
        {"X-Failed-Recipients": "carol@example.net"},
    ],
)
def test_bounce_by_headers(headers: dict[str, str]) -> None:
    sender = "Mail Delivery System <mail@example.org>"
    if "X-Failed-Recipients" in headers:
        sender = "Mail Delivery System <Mailer-Daemon@example.org>"
    mail = read("Delivery failed.", sender=sender, headers=headers)
    assert mail.auto == "bounce"
    if "X-Failed-Recipients" in headers:
        assert mail.bounce_for == ["carol@example.net"]


@pytest.mark.parametrize("sender", ["MAILER-DAEMON@example.net", "postmaster@example.net",
                                    "MAILER-DAEMON (Mail Delivery System)"])
def test_bounce_by_sender(sender: str) -> None:
    assert read("Delivery failed.", sender=sender).auto == "bounce"


@pytest.mark.parametrize(
    "subject",
    [
        "Out of Office: [pbem ac-17] Your move (ply 12)",
        "Auto: Your move",
        "Automatic reply: [pbem ac-17] Your move (ply 12)",
        "AutoReply: Your move",
        "Abwesenheitsnotiz: Your move",
        "Réponse automatique : Your move",
        "Vacation reply",
        "[EXTERNAL] Out of office",
    ],
)
def test_vacation_subjects(subject: str) -> None:
    assert read("I am away.", subject=subject).auto == "auto-reply"


@pytest.mark.parametrize(
    "headers",
    [
        {"Auto-Submitted": "auto-replied"},
        {"Auto-Submitted": "auto-generated; owner-email=x@example.net"},
        {"X-Autoreply": "yes"},
        {"X-Autorespond": "Away"},
        {"Precedence": "auto_reply"},
    ],
)
def test_auto_reply_headers(headers: dict[str, str]) -> None:
    assert read("I am away.", headers=headers).auto == "auto-reply"


def test_auto_submitted_no_is_a_person() -> None:
    assert read(MOVE, headers={"Auto-Submitted": "no"}).auto is None


def test_reply_about_a_vacation_is_not_automatic() -> None:
    assert read(MOVE, subject="Re: Vacation plans").auto is None


def test_read_receipt() -> None:
    raw = (
        b"From: bob@example.com\nTo: pbem@example.org\nSubject: Read: Your move\n"
        b"MIME-Version: 1.0\n"
        b'Content-Type: multipart/report; report-type=disposition-notification; boundary="R"\n\n'
        b"--R\nContent-Type: text/plain\n\nYour message was read.\n"
        b"--R\nContent-Type: message/disposition-notification\n\n"
        b"Final-Recipient: rfc822; bob@example.com\nDisposition: manual-action/MDN-sent-manually;"
        b" displayed\n\n--R--\n"
    )
    mail = read_mail(raw)
    assert mail.auto == "auto-reply"
    assert mail.bounce_for == []


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"Precedence": "bulk"}, "bulk"),
        ({"Precedence": "junk"}, "bulk"),
        ({"Precedence": "list"}, "list"),
        ({"List-Id": "Games <games.example.net>"}, "list"),
        ({"List-Unsubscribe": "<mailto:leave@example.net>"}, "list"),
        ({}, None),
    ],
)
def test_bulk_and_list(headers: dict[str, str], expected: str | None) -> None:
    assert read(MOVE, headers=headers).auto == expected


def test_own_mail_ignores_plus_tags_and_case() -> None:
    mail = read_mail(
        make(MOVE, sender="PBEM <PBEM+k7x9@Example.org>").as_bytes(),
        own_addresses=["pbem@example.org"],
    )
    assert mail.auto == "own-mail"
    other = read_mail(make(MOVE).as_bytes(), own_addresses=["pbem@example.org"])
    assert other.auto is None


def test_own_mail_by_server_header() -> None:
    assert read(MOVE, headers={"X-Pbem-Server": "pbem 0.1"}).auto == "own-mail"


# --- addresses, tokens, ids ----------------------------------------------------------------------


def test_addresses_and_plus_tokens() -> None:
    msg = make(
        MOVE,
        sender='"Smith, Bob" <Bob.Smith@Example.com>',
        to="Game Server <pbem+k7x9@example.org>, alice@example.net",
        headers={
            "Cc": "Carol <carol+news@example.net>",
            "Delivered-To": "PBEM+k7x9@example.org",
            "X-Original-To": "pbem+Zz9@example.org",
        },
    )
    mail = read_mail(msg.as_bytes())
    assert mail.from_addr == "bob.smith@example.com"
    assert mail.from_name == "Smith, Bob"
    assert mail.to_addrs == [
        "pbem+k7x9@example.org", "alice@example.net", "carol+news@example.net",
        "pbem+zz9@example.org",
    ]
    assert mail.plus_tokens == ["k7x9", "news", "Zz9"]


def test_body_token() -> None:
    mail = read(f"Token: AbC123xyz\n{MOVE}\n\nOn Tue, pbem wrote:\n> token zzz999\n")
    assert mail.body_token == "AbC123xyz"
    assert mail.command_lines == ["Token: AbC123xyz", MOVE]
    assert read(f"token k7x9q2\n{MOVE}").body_token == "k7x9q2"


def test_body_token_in_quote_is_ignored() -> None:
    assert read(f"{MOVE}\n\nOn Tue, pbem wrote:\n> token zzz999\n").body_token is None


def test_message_ids() -> None:
    msg = make(MOVE)
    del msg["Message-ID"]
    msg["Message-ID"] = "  <Abc.123@Example.com>  "
    msg["In-Reply-To"] = "<turn-12@example.org> (pbem's message of Tue)"
    msg["References"] = "<a@example.org> <b@example.org> <turn-12@example.org>"
    mail = read_mail(msg.as_bytes())
    assert mail.message_id == "<Abc.123@Example.com>"
    assert mail.in_reply_to == "<turn-12@example.org>"
    assert mail.references == ["<a@example.org>", "<b@example.org>", "<turn-12@example.org>"]


def test_folded_references() -> None:
    raw = b"From: bob@example.com\nReferences: <a@example.org>\n\t<b@example.org>\n\nhi\n"
    assert read_mail(raw).references == ["<a@example.org>", "<b@example.org>"]


def test_message_id_without_brackets() -> None:
    raw = b"Message-ID: abc@example.com\nFrom: bob@example.com\n\nhi\n"
    assert read_mail(raw).message_id == "<abc@example.com>"


def test_logged_headers() -> None:
    mail = read(MOVE, headers={"X-Mailer": "Test 1.0"})
    assert mail.headers["From"] == "Bob <bob@example.com>"
    assert mail.headers["Subject"] == OUR_SUBJECT
    assert mail.headers["X-Mailer"] == "Test 1.0"
    assert "Precedence" not in mail.headers


# --- subjects ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("subject", "clean", "tag", "ply"),
    [
        ("Re: [pbem ac-17] Your move (ply 12)", "Your move (ply 12)", "ac-17", 12),
        ("RE: AW: Fwd: [pbem ac-17] Move confirmed (ply 3)", "Move confirmed (ply 3)", "ac-17", 3),
        ("Antw: SV: VS: Odp: R: TR: Rif: Ref: WG: FW: [pbem st-2] Game over", "Game over", "st-2",
         None),
        ("Re[2]: Re^3: Fwd : RE : [pbem ac-1] Invitation to alien-city", "Invitation to alien-city",
         "ac-1", None),
        ("[EXTERNAL] Re: [pbem ac-1] Your move (Ply 4)", "Your move (Ply 4)", "ac-1", 4),
        ("Re: Your move (ply 7) [pbem ac-9]", "Your move (ply 7)", "ac-9", 7),
        ("Re:   new   alien-city  with bob@example.com", "new alien-city with bob@example.com", None,
         None),
        ("Re: Re: ", "", None, None),
        ("", "", None, None),
    ],
)
def test_subject_parsing(subject: str, clean: str, tag: str | None, ply: int | None) -> None:
    mail = read("", subject=subject)
    assert mail.clean_subject == clean
    assert mail.subject_tag == tag
    assert mail.subject_ply == ply


def test_encoded_subject() -> None:
    raw = (
        b"From: bob@example.com\nSubject: =?utf-8?q?Re=3A_=5Bpbem_ac-17=5D_Your_move_=28ply_12=29?=\n"
        b"\ntower red C4\n"
    )
    mail = read_mail(raw)
    assert mail.subject == OUR_SUBJECT
    assert (mail.subject_tag, mail.subject_ply) == ("ac-17", 12)
    assert mail.command_lines == ["tower red C4"]


def test_raw_utf8_subject() -> None:
    raw = "From: bob@example.com\nSubject: Re: déjà joué\n\nx\n".encode()
    mail = read_mail(raw)
    assert mail.subject == "Re: déjà joué"
    assert mail.command_lines == ["déjà joué", "x"]


def test_subject_command_comes_first() -> None:
    mail = read("hi all\n\n-- \nBob", subject="new alien-city with alice@example.net")
    assert mail.command_lines == ["new alien-city with alice@example.net", "hi all"]


@pytest.mark.parametrize(
    "subject",
    [
        "Re: [pbem ac-17] Your move (ply 12)",
        "Re: [pbem ac-17] Move confirmed",
        "Re: [pbem] Invitation",
        "Re: Your move (ply 12)",
        "Re: ",
        "",
    ],
)
def test_our_subjects_are_not_commands(subject: str) -> None:
    assert read(MOVE, subject=subject).command_lines == [MOVE]


# --- hostile input -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"\n\n\n",
        b"garbage without headers",
        b"\xff\xfe\x00\x01" * 100,
        b"From: <<<@@@>>>\nTo: ,,,;;;\"\nSubject: =?utf-8?b?!!!?=\nMessage-ID: <\n\n",
        b"From: =?x-unknown?q?=FF?= <a@b>\nContent-Type: multipart/mixed\n\nno boundary",
        b"Content-Type: multipart/mixed; boundary=x\n\n--x\nContent-Type: text/html\n\n<![bogus",
        b"Content-Type: text/plain; charset=\x00\nContent-Transfer-Encoding: x-uuencode\n\nbegin",
        b"To: \"unterminated\nCc: group: a@b, c@d;\nFrom: a@b@c\n\nx",
        b"From: " + b"a" * 100_000 + b"\n\n" + b"x" * 100_000,
    ],
)
def test_bad_input_never_raises(raw: bytes) -> None:
    mail = read_mail(raw)
    assert isinstance(mail, IncomingMail)
    assert_clean(mail)


def test_deeply_nested_multiparts() -> None:
    depth = 500
    head = b"".join(
        b'Content-Type: multipart/mixed; boundary="b%d"\n\n--b%d\n' % (i, i) for i in range(depth)
    )
    tail = b"".join(b"\n--b%d--\n" % i for i in reversed(range(depth)))
    raw = b"From: bob@example.com\n" + head + b"Content-Type: text/plain\n\nC4\n" + tail
    mail = read_mail(raw)
    assert isinstance(mail, IncomingMail)


def test_str_input_is_accepted() -> None:
    mail = read_mail(f"From: bob@example.com\nSubject: {OUR_SUBJECT}\n\n{MOVE}\n")  # type: ignore[arg-type]
    assert mail.command_lines == [MOVE]
