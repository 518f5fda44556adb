"""The text a person wrote, from any MIME structure: the preferred part, any charset and transfer
encoding, format=flowed joined, inline PGP unwrapped, HTML turned into text. Walking is iterative and
depth-limited, so hostile nesting cannot recurse."""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
from email.message import Message

from pbem.reading.html_text import html_to_text

_MAX_DEPTH = 30  # MIME nesting beyond this is an attack, not a mail
#: The text read at most: a player's commands come first (or below a quote of our mail, a few
#: hundred lines), and quote detection costs 3-25 microseconds per line, so a mail of 60,000
#: lines would otherwise cost a quarter of a second or more.
MAX_TEXT_LINES = 3_000
MAX_TEXT_CHARS = 100_000


def walk_parts(msg: Message) -> Iterator[Message]:
    """Leaves and multiparts, depth-first, without entering attached messages (message/*).

    Iterative and depth-limited, unlike ``Message.walk``, so hostile nesting cannot recurse.
    """
    stack: list[tuple[Message, int]] = [(msg, 0)]
    while stack:
        part, depth = stack.pop()
        yield part
        try:
            if depth < _MAX_DEPTH and part.get_content_maintype() == "multipart":
                children = part.get_payload()
                if isinstance(children, list):
                    children = [c for c in children if isinstance(c, Message)]
                    stack.extend((c, depth + 1) for c in reversed(children))
        except Exception:
            continue


_UTF8_MULTIBYTE = re.compile(rb"[\xc2-\xf4][\x80-\xbf]+")


def _guess_8bit(data: bytes) -> str:
    """Undeclared or mislabelled 8-bit text: UTF-8 if it is that, else Windows' Latin-1."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    if _UTF8_MULTIBYTE.search(data):  # mostly UTF-8 with a few broken bytes
        return data.decode("utf-8", "replace")
    try:
        return data.decode("cp1252")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def decode_bytes(data: bytes, charset: str | None) -> str:
    """Text in the declared charset, or the best guess when the label is wrong or unknown."""
    label = (charset or "").strip().strip("\"'").lower()
    if label:
        try:
            return data.decode(label)
        except UnicodeDecodeError:
            try:
                if codecs.lookup(label).name not in ("ascii", "utf-8"):
                    return data.decode(label, "replace")
            except Exception:
                pass
        except Exception:  # unknown label (LookupError) or a codec that is not a text codec
            pass
    return _guess_8bit(data)


def part_bytes(part: Message) -> bytes:
    try:
        data = part.get_payload(decode=True)
    except Exception:
        data = None
    if isinstance(data, bytes):
        return data
    try:
        payload = part.get_payload()
    except Exception:
        return b""
    return payload.encode("utf-8", "surrogateescape") if isinstance(payload, str) else b""


def _part_text(part: Message) -> str:
    try:
        charset = part.get_content_charset()
    except Exception:
        charset = None
    text = decode_bytes(part_bytes(part), charset)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text[1:] if text.startswith("\ufeff") else text


def content_param(part: Message, name: str) -> str:
    try:
        value = part.get_param(name)
    except Exception:
        return ""
    return value.strip().lower() if isinstance(value, str) else ""


def unflow(text: str, delsp: bool = False) -> str:
    """Undo RFC 3676 format=flowed: join soft-broken lines (those ending in a space).

    Quote depth is kept (rendered as ``> `` per level) because quote stripping relies on it, and
    lines of different depth are never joined.
    """
    out: list[str] = []
    buf: str | None = None
    buf_depth = 0

    def emit(content: str, depth: int) -> None:
        out.append(("> " * depth + content) if depth else content)

    for line in text.split("\n"):
        depth = len(line) - len(line.lstrip(">"))
        content = line[depth:]
        if content.startswith(" "):
            content = content[1:]  # space-stuffing
        if buf is not None and depth != buf_depth:
            emit(buf, buf_depth)
            buf = None
        if content == "-- ":  # the signature separator is never flowed
            if buf is not None:
                emit(buf, buf_depth)
                buf = None
            emit(content, depth)
            continue
        soft = content.endswith(" ")
        if soft and delsp:
            content = content[:-1]
        buf = content if buf is None else buf + content
        buf_depth = depth
        if not soft:
            emit(buf, depth)
            buf = None
    if buf is not None:
        emit(buf, buf_depth)
    return "\n".join(out)


_PGP_BEGIN = "-----BEGIN PGP SIGNED MESSAGE-----"
_PGP_SIGNATURE = "-----BEGIN PGP SIGNATURE-----"
_PGP_END = "-----END PGP SIGNATURE-----"


def _strip_inline_pgp(text: str) -> str:
    """Unwrap a cleartext-signed body, whose armour lines would otherwise look like a banner.

    Nothing is verified here; the armour is only removed so the signed text reads as typed.
    """
    lines = text.split("\n")
    start = next((i for i, line in enumerate(lines) if line.strip() == _PGP_BEGIN), None)
    if start is None:
        return text
    body_start = start + 1
    while body_start < len(lines) and lines[body_start].strip():  # "Hash: SHA256" and the like
        body_start += 1
    sig = next(
        (i for i in range(body_start, len(lines)) if lines[i].strip() == _PGP_SIGNATURE), None
    )
    body_end = len(lines) if sig is None else sig
    after: list[str] = []
    if sig is not None:
        end = next((i for i in range(sig, len(lines)) if lines[i].strip() == _PGP_END), None)
        after = [] if end is None else lines[end + 1 :]
    signed = lines[body_start + 1 : body_end]
    body = [line[2:] if line.startswith("- ") else line for line in signed]  # dash-escaping
    return "\n".join(lines[:start] + body + after)


def _capped(text: str) -> str:
    """The first ``MAX_TEXT_LINES`` lines (and ``MAX_TEXT_CHARS`` characters) at most."""
    if len(text) > MAX_TEXT_CHARS:
        text = text[:MAX_TEXT_CHARS]
    if text.count("\n") >= MAX_TEXT_LINES:
        text = "\n".join(text.split("\n", MAX_TEXT_LINES)[:MAX_TEXT_LINES])
    return text


def body_text(msg: Message) -> str:
    """The mail's text, at most ``MAX_TEXT_LINES`` lines of it: text/plain when it says anything,
    else its HTML rendered as text."""
    return _capped(_full_body_text(msg))


def _full_body_text(msg: Message) -> str:
    plain = html = None
    try:
        plain = msg.get_body(preferencelist=("plain",))  # type: ignore[attr-defined]
    except Exception:
        plain = None
    try:
        html = msg.get_body(preferencelist=("html",))  # type: ignore[attr-defined]
    except Exception:
        html = None
    if plain is None and html is None:
        try:
            if msg.get_content_maintype() == "text" and not msg.is_multipart():
                plain = msg  # e.g. a lone text part marked as attachment
        except Exception:
            plain = None
    if plain is not None:
        text = _capped(_part_text(plain))  # before unflowing, which costs per line too
        if content_param(plain, "format") == "flowed":
            text = unflow(text, delsp=content_param(plain, "delsp") == "yes")
        text = _strip_inline_pgp(text)
        if text.strip() or html is None:
            return text
    if html is not None:
        return html_to_text(_part_text(html))
    return ""


