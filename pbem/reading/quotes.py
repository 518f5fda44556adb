"""Where the player's own words end: ``>`` quotes, localized "On … wrote:" lines, Outlook's
header-only quotes, forwarded-message banners and signatures. The quote holds our board and legal
list, which must never be read back as commands."""

from __future__ import annotations

import re

_WROTE = re.compile(
    r"(?i)(?:(?<!\w)(?:wrote|writes|a [ée]crit|schrieb|geschrieben|escribi[óo]|ha scritto|"
    r"scrisse|schreef|geschreven|pisze|napisa[łl](?:\(a\)|a)?|napsal(?:\(a\)|a)?|"
    r"написал(?:\(а\)|а)?|пишет|escreveu|skrev|kirjoitti|yazd[ıi]|írta|a scris|έγραψε)(?!\w)"
    r"|写道|寫道|のメッセージ|님이 작성)[^\n]{0,120}?[:：]\s*$"
)
#: How wrapped attributions begin: the word for "On" in many languages, a weekday (Finnish
#: starts with it), or a date. A wrapped attribution must also contain a time or an address.
_ATTRIBUTION_START = re.compile(
    r"(?i)^(?:(?:on|le|am|el|il|op|w dniu|dne|den|em|no dia|às|på|kello|dana|dňa|στις|в|在"
    r"|ma|ti|ke|to|pe|la|su)(?!\w)|\d)"
)
_TIME_OR_ADDRESS = re.compile(r"\d{1,2}[:.]\d{2}|@")
#: Date-first attributions without a verb (older Gmail, CJK locales): "2012/4/2 Bob <b@x>:".
_DATE_ATTRIBUTION = re.compile(
    r"^\d{1,4}\s*[/.\-年]\s*\d{1,2}\s*[/.\-月]\s*\d{1,4}.{0,200}@[^\s>]+>?\s*[:：]?\s*$"
)
_BANNER_WORD = re.compile(
    r"(?i)original|forward|message|nachricht|weitergeleitet|origine|transf[ée]r|mensaje|reenviad"
    r"|messaggio|inoltrat|bericht|doorgestuurd|wiadomo|zpr[áa]va|сообщение|пересыла|melding"
    r"|meddelande|viesti|mensagem|encaminhad|videresend|vidarebefordra"
)
_FORWARD_INTRO = re.compile(
    r"(?i)^(?:begin forwarded message|anfang der weitergeleiteten nachricht|début du message "
    r"réexpédié|inicio del mensaje reenviado|inizio messaggio inoltrato|begin doorgestuurd "
    r"bericht)\s*:?\s*$"
)
_LABELS: dict[str, str] = {
    "from": "from|von|de|da|van|od|från|fra|от|lähettäjä|feladó|kimden|差出人|发件人|寄件者|보낸 사람",
    "date": "sent|date|gesendet|datum|envoyé|envoyé le|inviato|data|verzonden|verstuurd|wysłano"
    "|wysłane|odesláno|enviado|enviado el|enviada em|enviado em|fecha|skickat|sendt|отправлено"
    "|дата|lähetetty|päivämäärä|elküldve|gönderildi|tarih|送信日時|发送时间|日期|보낸 날짜",
    "to": "to|an|à|a|aan|do|komu|para|till|til|кому|vastaanottaja|címzett|kime|宛先|收件人|받는 사람",
    "cc": "cc|kopie|kopia|копия|kopio|másolat|bilgi",
    "subject": "subject|betreff|objet|oggetto|onderwerp|temat|předmět|asunto|assunto|ämne|emne"
    "|тема|aihe|tárgy|konu|件名|主题|主旨|제목",
}
_LABEL_RES = {
    kind: re.compile(rf"(?i)^\*?\s*(?:{alts})\s*\*?\s*[:：]") for kind, alts in _LABELS.items()
}
_SIGNATURE = re.compile(
    r"(?i)^(?:--|_{5,}|sent from my\b.*|sent from (?:yahoo mail|outlook|mail for windows|aol)\b.*"
    r"|sent with\b.*|get outlook for\b.*|envoyé de mon\b.*|envoyé depuis\b.*"
    r"|von meinem\b.*\bgesendet.*|gesendet von meinem\b.*|enviado desde mi\b.*"
    r"|enviado do meu\b.*|inviato da\b.*|verzonden (?:vanaf|met) mijn\b.*|wysłane z\b.*"
    r"|skickat från\b.*|sendt fra\b.*|отправлено с\b.*)$"
)
_MAX_HEADER_LEN = 500


def _is_quoted(line: str) -> bool:
    return line.lstrip().startswith(">")


def _is_attribution(s: str) -> bool:
    return len(s) <= _MAX_HEADER_LEN and bool(_WROTE.search(s) or _DATE_ATTRIBUTION.match(s))


def _label_kind(line: str) -> str | None:
    s = line.strip()
    for kind, pattern in _LABEL_RES.items():
        if pattern.match(s):
            return kind
    return None


def _header_block_at(lines: list[str], i: int) -> bool:
    """Outlook's header-only quote: "From: … / Sent: … / To: … / Subject: …", any language."""
    first = _label_kind(lines[i])
    if first is None:
        return False
    kinds = {first}
    for line in lines[i + 1 : i + 8]:
        if not line.strip():
            break
        kind = _label_kind(line)
        if kind:
            kinds.add(kind)
    return "from" in kinds and len(kinds) >= 3


def _quote_header_at(lines: list[str], i: int) -> tuple[str, int] | None:
    """("attribution" | "header", number of lines) when a quote introduction starts at line i.

    An attribution ("On … wrote:") normally precedes ``>`` lines; a header (banner, Outlook block,
    forwarded-message intro) means everything after it is the quoted mail, ``>`` or not.
    """
    line = lines[i]
    s = line.strip()
    if not s or len(s) > _MAX_HEADER_LEN or _is_quoted(line):
        return None
    if (s.startswith("--") and len(s) <= 90 and _BANNER_WORD.search(s)) or _FORWARD_INTRO.match(s):
        return ("header", 1)
    if _is_attribution(s):
        return ("attribution", 1)
    if _ATTRIBUTION_START.match(s):  # Gmail and Apple wrap long attributions over 2-3 lines
        joined = s
        for extra in (1, 2):
            if i + extra >= len(lines):
                break
            nxt = lines[i + extra]
            if not nxt.strip() or _is_quoted(nxt):
                break
            joined += " " + nxt.strip()
            if _is_attribution(joined) and _TIME_OR_ADDRESS.search(joined):
                return ("attribution", extra + 1)
    if _header_block_at(lines, i):
        return ("header", 1)
    return None


def _first_quote(lines: list[str]) -> tuple[int, str, int] | None:
    for i, line in enumerate(lines):
        if _is_quoted(line):
            return (i, "quoted", 1)
        found = _quote_header_at(lines, i)
        if found:
            return (i, *found)
    return None


def _bottom_posted(lines: list[str], start: int) -> list[str]:
    """The unquoted lines of a reply written below (or between) ``>`` quotes.

    Only ``>`` quotes can be skipped; a header-style quote means the rest is the quoted mail.
    """
    collected: list[str] = []
    i = start
    while i < len(lines):
        line = lines[i]
        if _is_quoted(line):
            i += 1
            continue
        found = _quote_header_at(lines, i)
        if found:
            kind, span = found
            after = i + span
            while after < len(lines) and not lines[after].strip():
                after += 1
            if kind == "attribution" and after < len(lines) and _is_quoted(lines[after]):
                i += span
                continue
            break
        collected.append(line)
        i += 1
    return collected


def split_reply(text: str) -> tuple[str, str]:
    """(reply text, command text) of a mail body.

    The reply is what the player wrote above the first quote (``>`` line, attribution, banner,
    Outlook header block) — or, when nothing is above it, their unquoted lines below ``>`` quotes
    (bottom-posting). The command text is the reply cut at the first signature line.
    """
    lines = text.split("\n")
    first = _first_quote(lines)
    if first is None:
        reply = lines
    else:
        reply = lines[: first[0]]
        if not any(line.strip() for line in reply):
            reply = _bottom_posted(lines, first[0])
    command: list[str] = []
    for line in reply:
        if len(line) < 100 and _SIGNATURE.match(line.strip()):
            break
        command.append(line)
    return "\n".join(reply).strip(), "\n".join(command).strip()


