"""What one mail may cost: the limits checked before the full parse, with defaults every real
client's mail passes by a wide margin, and what the sender of a mail over a limit gets."""

from __future__ import annotations

import dataclasses
from email.message import EmailMessage
from pathlib import Path

import pytest

from pbem.cli.mailbox import reply_to
from pbem.config import LimitsConfig
from pbem.reading.incoming import read_headers
from pbem.reading.limits import LimitExceeded, check_limits
from tests.mail import test_reading, test_reading_fuzz
from tests.server.harness import Server, start_game, text_of, to
from tests.services.requirements import missing

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "mail-corpus" / "replies"
DEFAULTS = LimitsConfig()
ALICE, BOB = "alice@example.org", "bob@example.org"


def corpus() -> list[bytes]:
    if not CORPUS.is_dir():
        missing(f"the mail corpus is not at {CORPUS}")
    return [p.read_bytes() for p in sorted(CORPUS.glob("*.eml"))]


def fixtures() -> list[bytes]:
    """The hand-written fixtures of the reading tests (real clients' shapes)."""
    return [test_reading.SIGNED, test_reading.DSN, test_reading_fuzz.SEED]


def test_every_corpus_mail_and_fixture_passes_with_a_wide_margin() -> None:
    """Each default is at least four times what any of these needs (the whole test suite's mails
    go through the same check in the processor, too)."""
    quarter = LimitsConfig(**{f.name: max(1, getattr(DEFAULTS, f.name) // 4)
                              for f in dataclasses.fields(LimitsConfig)})
    mails = corpus() + fixtures()
    assert len(mails) >= 15
    for raw in mails:
        assert check_limits(raw, DEFAULTS, 2_000_000) is None
        assert check_limits(raw, quarter, 500_000) is None


HEAD = b"From: Bob <bob@example.com>\r\nTo: pbem@example.org\r\nSubject: hi\r\nMIME-Version: 1.0\r\n"


def nested(levels: int) -> bytes:
    opening = b"".join(b'Content-Type: multipart/mixed; boundary="b%d"\r\n\r\n--b%d\r\n' % (i, i)
                       for i in range(levels))
    closing = b"".join(b"--b%d--\r\n" % i for i in reversed(range(levels)))
    return HEAD + opening + b"Content-Type: text/plain\r\n\r\nmove\r\n" + closing


def forwarded(levels: int) -> bytes:
    return HEAD + (b"Content-Type: message/rfc822\r\n\r\n" + HEAD) * levels + b"\r\nmove\r\n"


def parts(count: int) -> bytes:
    return (HEAD + b"Content-Type: multipart/mixed; boundary=b\r\n\r\n"
            + b"--b\r\nContent-Type: text/plain\r\n\r\nx\r\n" * (count - 1) + b"--b--\r\n")


def fields(count: int) -> bytes:
    return HEAD + b"".join(b"X-F%d: v\r\n" % i for i in range(count - 4)) + b"\r\nbody\r\n"


def header_bytes(size: int) -> bytes:
    filler = size - len(HEAD) - len(b"X-Long: \r\n")
    return HEAD + b"X-Long: " + b"\r\n ".join([b"x" * 70] * (filler // 73)) + b"\r\n\r\nbody\r\n"


def lines(count: int) -> bytes:
    return HEAD + b"\r\n" + b"x\r\n" * (count - 5)


@pytest.mark.parametrize(("name", "make", "limit"), [
    ("max_mime_depth", nested, 20), ("max_mime_depth", forwarded, 20),
    ("max_mime_parts", parts, 100), ("max_header_fields", fields, 500),
    ("max_lines", lines, 60_000),
])
def test_each_limit_is_exact(name: str, make, limit: int) -> None:
    assert check_limits(make(limit), DEFAULTS, 2_000_000) is None
    exceeded = check_limits(make(limit + 1), DEFAULTS, 2_000_000)
    assert exceeded is not None and exceeded.name == name and exceeded.limit == limit


def test_header_bytes_and_size() -> None:
    assert check_limits(header_bytes(120_000), DEFAULTS) is None
    exceeded = check_limits(header_bytes(130_000), DEFAULTS)
    assert exceeded is not None and exceeded.name == "max_header_bytes"
    too_big = check_limits(b"x" * 2_000_001, DEFAULTS, 2_000_000)
    assert too_big == LimitExceeded("max_message_bytes", 2_000_001, 2_000_000)
    assert too_big.sentence() == ("your mail has 2 MB (2000001 bytes); the limit is 2 MB (2000000 "
                                  "bytes). Moves need no attachments: send the move as plain text.")


def test_lines_inside_nested_parts_count_once_per_level() -> None:
    """The parser tests every line against the boundary of every multipart it is in: 3,000 lines
    20 levels deep cost it as much as 60,000 lines."""
    deep = nested(20).replace(b"move\r\n", b"move\r\n" * 3000)
    exceeded = check_limits(deep, DEFAULTS, 2_000_000)
    assert exceeded is not None and exceeded.name == "max_lines" and exceeded.value > 60_000
    assert check_limits(nested(2).replace(b"move\r\n", b"move\r\n" * 25_000), DEFAULTS) is None


def test_delivery_status_blocks_count_as_header_fields() -> None:
    report = (HEAD + b"Content-Type: multipart/report; report-type=delivery-status; boundary=b\r\n\r\n"
              + b"--b\r\nContent-Type: message/delivery-status\r\n\r\n"
              + b"Final-Recipient: rfc822; a@b.c\r\nAction: failed\r\n\r\n" * 300 + b"--b--\r\n")
    exceeded = check_limits(report, DEFAULTS)
    assert exceeded is not None and exceeded.name == "max_header_fields"


def test_the_scan_never_raises_on_garbage() -> None:
    for raw in (b"", b"\r\n\r\n", b"--", b"Content-Type: multipart/mixed; boundary=\r\n\r\n--\r\n",
                b'Content-Type: multipart/x; boundary="' + b"\\" * 1000 + b'"\r\n\r\n',
                b"Content-Type: message/rfc822\r\n" * 5000, bytes(range(256)) * 100):
        check_limits(raw, DEFAULTS, 2_000_000)


def test_read_headers_of_a_mail_over_a_limit() -> None:
    mail = read_headers(nested(50) + b"x" * 100, own_addresses=["pbem@example.org"],
                        envelope_from="bob@example.com")
    assert (mail.from_addr, mail.subject, mail.auto) == ("bob@example.com", "hi", None)
    assert mail.text == "" and mail.command_lines == []


# --- through the processor ---------------------------------------------------------------------------

@pytest.fixture
def server(tmp_path: Path):
    srv = Server(tmp_path)
    yield srv
    srv.close()


def deep_reply(board: EmailMessage, levels: int = 25) -> bytes:
    """A reply to the board mail (so it carries Alice's token) whose body nests too deep."""
    reply = reply_to(board, ALICE, "tower red A2 claim A2")
    head, _, _body = reply.as_bytes().partition(b"\n\n")
    head = b"\n".join(line for line in head.split(b"\n") if not line.lower().startswith(
        (b"content-type", b"content-transfer-encoding", b"mime-version")))
    return head + b"\n" + nested(levels)[len(HEAD):]


def test_over_a_limit_a_player_is_told_once_and_nothing_is_read(server: Server) -> None:
    board, _ = start_game(server, ALICE, BOB)
    before = server.game("ac-1").record
    out = server.submit(deep_reply(board))
    (told,) = to(out, ALICE)
    text = " ".join(text_of(told).split())
    assert "Your mail was not read" in text
    assert "Your mail has at least 21 levels of nested MIME parts; the limit is 20." in text
    assert told["Subject"].startswith("[pbem ac-1]")  # in the game's thread
    assert server.game("ac-1").record == before
    last = list(server.store.iter_inbound())[-1]
    assert last.status == "ignored" and "max_mime_depth" in (last.outcome or "")
    # a second one within the hour: stored as ignored, no second reply
    assert server.submit(deep_reply(board, 30)) == []
    assert list(server.store.iter_inbound())[-1].status == "ignored"


def test_over_a_limit_a_stranger_gets_nothing(server: Server) -> None:
    raw = nested(25).replace(b"bob@example.com", b"stranger@example.net")
    assert server.submit(raw) == []
    (stored,) = list(server.store.iter_inbound())
    assert stored.status == "ignored" and "max_mime_depth" in (stored.outcome or "")


def test_oversized_mail_kept_as_header_gets_the_size_notice(server: Server) -> None:
    """The IMAP door stores only the header of a mail over the size limit, with its size."""
    board, _ = start_game(server, ALICE, BOB)
    header = reply_to(board, ALICE, "x").as_bytes().partition(b"\n\n")[0] + b"\n\n"
    server.store.accept_inbound(header, "imap", server.clock.now(), original_size=5_123_456)
    server.processor.process_pending()
    (told,) = to(server.take_outbox(), ALICE)
    assert ("Your mail has 5.12 MB (5123456 bytes); the limit is 2 MB (2000000 bytes). Moves need "
            "no attachments: send the move as plain text.") in " ".join(text_of(told).split())
