"""Mutated real mail for the fuzz test and ``bench/fuzz_mail.py``: truncated MIME, broken
boundaries, bad charsets and transfer encodings, NULs, deep nesting, huge header blocks, header
injection with CR/LF and encoded words, long lines, many parts, mixed line ends.

Deterministic: the same seed and seeds give the same mails, so a failure can be replayed. Every
injection names ``victim@evil.example``; no mail to it, and no header naming it, may ever leave.
"""

from __future__ import annotations

import base64
import random
import re
from collections.abc import Iterator

VICTIM = "victim@evil.example"
_BOUNDARY = re.compile(rb'boundary="?([^";\r\n]+)"?', re.IGNORECASE)
_CHARSET = re.compile(rb'charset="?[^";\r\n]*"?', re.IGNORECASE)
_CTE = re.compile(rb"(?im)^content-transfer-encoding:[^\r\n]*")
_SUBJECT = re.compile(rb"(?im)^subject:[^\r\n]*")
_FROM = re.compile(rb"(?im)^from:[^\r\n]*")

CHARSETS = [b'charset="x-unknown"', b"charset=utf-7", b"charset=utf-16", b'charset=""', b"charset=cp1252",
            b"charset=iso-2022-jp", b"charset=\x00", b"charset=" + b"a" * 300, b"charset=unicode-1-1-utf-7"]
ENCODINGS = [b"base64", b"quoted-printable", b"x-uuencode", b"8bit", b"7bit", b"binary", b"bogus",
             b"base64; junk"]


def _b64_word(text: str) -> bytes:
    return b"=?utf-8?b?" + base64.b64encode(text.encode()) + b"?="


INJECTIONS = [
    f"=?utf-8?q?x=0D=0ABcc:_{VICTIM}?=".encode(),
    _b64_word("x\r\nBcc: " + VICTIM),
    _b64_word("x\vCc: " + VICTIM),
    f"=?utf-8?q?x=E2=80=A8To:_{VICTIM}?=".encode(),
    f"x\rBcc: {VICTIM}".encode(),
    f"x\r\n\tBcc: {VICTIM}".encode(),
    f"=?iso-8859-1?q?x=0ABcc=3A_{VICTIM}?= tail".encode(),
]


def _split(raw: bytes) -> tuple[bytes, bytes]:
    for sep in (b"\r\n\r\n", b"\n\n"):
        head, found, body = raw.partition(sep)
        if found:
            return head + sep[: len(sep) // 2], body
    return raw, b""


def nested(depth: int, inner: bytes, kind: str = "multipart") -> bytes:
    if kind == "message":
        wrapper = b"From: a@b.example\r\nContent-Type: message/rfc822\r\n\r\n"
        return wrapper * depth + inner
    opening = b"".join(b'Content-Type: multipart/mixed; boundary="n%d"\r\n\r\n--n%d\r\n' % (i, i)
                       for i in range(depth))
    return opening + inner + b"".join(b"\r\n--n%d--\r\n" % i for i in reversed(range(depth)))


class Mutator:
    """Most mutations keep a mail small; one in ten of those that can make it large does (up to
    about 2 MB), so that ten thousand mails stay quick to send while the big cases are all hit."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def size(self, small: list[int], big: list[int]) -> int:
        return self.rng.choice(big if self.rng.random() < 0.1 else small)

    def mutate(self, raw: bytes) -> bytes:
        rng = self.rng
        for _ in range(rng.randint(1, 4)):
            raw = getattr(self, "_" + rng.choice(self.KINDS))(raw)
        return raw

    KINDS = ("truncate", "boundary", "charset", "encoding", "nuls", "nest", "headers", "inject",
             "flip", "line_ends", "parts", "long_line", "inject", "truncate")

    def _truncate(self, raw: bytes) -> bytes:
        return raw[: self.rng.randint(0, len(raw))]

    def _boundary(self, raw: bytes) -> bytes:
        found = _BOUNDARY.findall(raw)
        if not found:
            return raw.replace(b"\n--", b"\n-", 1)
        name = self.rng.choice(found)
        how = self.rng.randint(0, 3)
        if how == 0:
            return raw.replace(b"--" + name + b"--", b"")  # no closing delimiter
        if how == 1:
            return raw.replace(b"--" + name, b"--" + name[:-1], self.rng.randint(1, 3))
        if how == 2:
            return raw.replace(name, name + b"x", 1)  # declared boundary never used
        return raw.replace(b"\n--" + name, b"\n--" + name + b" junk", 1)

    def _charset(self, raw: bytes) -> bytes:
        return _CHARSET.sub(lambda m: self.rng.choice(CHARSETS), raw, count=2) if _CHARSET.search(raw) \
            else raw.replace(b"\r\n\r\n", b"\r\nContent-Type: text/plain; " + self.rng.choice(CHARSETS)
                             + b"\r\n\r\n", 1)

    def _encoding(self, raw: bytes) -> bytes:
        value = b"Content-Transfer-Encoding: " + self.rng.choice(ENCODINGS)
        if _CTE.search(raw):
            raw = _CTE.sub(value, raw, count=1)
        else:
            head, body = _split(raw)
            raw = head.rstrip(b"\r\n") + b"\r\n" + value + b"\r\n\r\n" + body
        if self.rng.random() < 0.5:  # and broken content for it
            at = self.rng.randint(0, len(raw))
            junk = self.rng.choice([b"=ZZ=\r\n", b"!!==**", b"=\r\n=", b"====", b"\xff\xfe"])
            raw = raw[:at] + junk + raw[at:]
        return raw

    def _nuls(self, raw: bytes) -> bytes:
        data = bytearray(raw)
        for _ in range(self.rng.randint(1, 20)):
            data.insert(self.rng.randint(0, len(data)), 0)
        return bytes(data)

    def _nest(self, raw: bytes) -> bytes:
        head, body = _split(raw)
        kind = self.rng.choice(["multipart", "message"])
        depth = self.size([2, 5, 10, 19, 21], [40, 200, 3000])
        inner = b"Content-Type: text/plain\r\n\r\n" + body
        return head.rstrip(b"\r\n") + b"\r\nMIME-Version: 1.0\r\n" + nested(depth, inner, kind)

    def _headers(self, raw: bytes) -> bytes:
        head, body = _split(raw)
        count = self.size([10, 100, 499], [600, 3000, 20000])
        if self.rng.random() < 0.5:
            extra = b"".join(b"X-Junk-%d: =?utf-8?q?%s?=\r\n" % (i, b"a=C3=A9" * self.rng.randint(1, 5))
                             for i in range(count))
        else:
            extra = b"X-Folded: start\r\n" + b" folded continuation line\r\n" * count
        return head.rstrip(b"\r\n") + b"\r\n" + extra + b"\r\n" + body

    def _inject(self, raw: bytes) -> bytes:
        value = self.rng.choice(INJECTIONS)
        which = self.rng.randint(0, 3)
        if which == 0 and _SUBJECT.search(raw):
            return _SUBJECT.sub(lambda m: b"Subject: " + value, raw, count=1)
        if which == 1 and _FROM.search(raw):
            return _FROM.sub(lambda m: m.group(0).replace(b"From: ", b"From: " + value + b" ", 1), raw,
                             count=1)
        if which == 2:
            return raw.replace(b"Message-ID: <", b"Message-ID: <" + value.replace(b" ", b""), 1)
        return b"References: " + value + b"\r\nIn-Reply-To: " + value + b"\r\n" + raw

    def _flip(self, raw: bytes) -> bytes:
        data = bytearray(raw)
        for _ in range(self.rng.randint(1, 8)):
            if data:
                data[self.rng.randrange(len(data))] = self.rng.randrange(256)
        return bytes(data)

    def _line_ends(self, raw: bytes) -> bytes:
        return raw.replace(b"\r\n", self.rng.choice([b"\n", b"\r", b"\n\r", b"\r\r\n"]))

    def _parts(self, raw: bytes) -> bytes:
        head, body = _split(raw)
        count = self.size([3, 10, 50], [99, 101, 1000])
        part = b"--p\r\nContent-Type: application/json; name=turn.json\r\n\r\n" + body[:200] + b"\r\n"
        return (head.rstrip(b"\r\n") + b'\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="p"'
                b"\r\n\r\n" + part * count + b"--p--\r\n")

    def _long_line(self, raw: bytes) -> bytes:
        at = self.rng.randint(0, len(raw))
        return raw[:at] + self.rng.choice([b"x", b"<b>", b"> ", b"=", b"\t"]) * self.size(
            [100, 1000], [20000, 200000]) + raw[at:]


def mutated(seeds: list[bytes], count: int, heavy: list[bytes] = (), seed: int = 14) -> Iterator[bytes]:
    """``count`` mails: each a seed with one to four mutations (one in twenty left intact). The
    ``heavy`` seeds (megabytes each, see ``hostile``) come once as they are and twice mutated,
    spread over the run, rather than as often as the small ones."""
    mutator = Mutator(seed)
    heavy_runs = [(raw, intact) for raw in heavy for intact in (True, False, False)]
    every = max(1, count // max(1, len(heavy_runs)))
    for n in range(count):
        if heavy_runs and n % every == every - 1:
            raw, intact = heavy_runs.pop()
        else:
            raw, intact = seeds[n % len(seeds)], mutator.rng.random() < 0.05
        if not intact:
            raw = mutator.mutate(raw)
        # a Message-ID of its own, so that de-duplication does not swallow repeats
        yield raw.replace(b"Message-ID: <", b"Message-ID: <f%d." % n, 1) if b"Message-ID: <" in raw \
            else b"Message-ID: <f%d@fuzz.example>\r\n" % n + raw


def hostile(size_limit: int = 2_000_000) -> list[bytes]:
    """Mails at or near the limits, built to cost the most reading time they are allowed."""
    head = b"From: Fuzz <fuzz@example.org>\r\nTo: pbem@localhost\r\nSubject: hi\r\nMIME-Version: 1.0\r\n"
    room = size_limit - 2000
    return [
        head + b"Content-Type: text/html\r\n\r\n" + b"<b>x" * (room // 4),
        head + b"Content-Type: text/html\r\n\r\n" + b"<div>x</div>\r\n" * 59_000,
        head + b"\r\n" + b"games\r\n" * 59_000,
        head + b"\r\n" + b"tower red C4 claim C4 " * (room // 22),
        head + nested(20, b"Content-Type: text/plain\r\n\r\n" + b"x\r\n" * 2_900),
        head + nested(19, head + b"\r\nx\r\n", "message"),
        head + b'Content-Type: multipart/mixed; boundary="b"\r\n\r\n'
        + (b"--b\r\nContent-Type: application/json\r\n\r\n" + b"[" * 19_000 + b"\r\n") * 99 + b"--b--\r\n",
        head + b"".join(b"X-H%d: =?utf-8?q?a=C3=A9?= <a@b.c>\r\n" % i for i in range(495)) + b"\r\nx\r\n",
        head.replace(b"To: pbem@localhost", b"To: pbem@localhost,\r\n" + b" a@b.cc,\r\n" * 12_000 + b" z@b.c")
        + b"\r\nx\r\n",
        head.replace(b"Subject: hi", b"Subject: " + b"Re: " * 31_000) + b"\r\nx\r\n",
        head + b"Content-Type: text/plain; format=flowed; delsp=yes\r\n\r\n" + b"ab \r\n" * 59_000,
        head + b"\r\n"
        + b"On Tue, 1 Jan 2026 at 10:00, B <b@c> wrote:\r\nFrom: x\r\nSent: y\r\n> q\r\n" * 14_000,
        head + b"\r\n" + b"x" * (size_limit + 100),  # over the size limit: refused at the door
    ]
