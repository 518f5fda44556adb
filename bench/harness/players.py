"""The simulated players: tables of two, games set up by mail, moves answered, mail submitted by SMTP.

Players answer from the mail they got (``tests.server.players``), as a person would, so every move the
benchmark sends is one the server accepts and answers with the two replies the measurements wait for.
"""

from __future__ import annotations

import email.policy
import math
import smtplib
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from email.message import EmailMessage
from typing import Any

from bench.harness.sink import Arrival

SERVER = "pbem@localhost"
GAME = "alien-city"


def raw_bytes(message: EmailMessage) -> bytes:
    """As a mail client would put it on the wire (CRLF line ends), for SMTP and IMAP APPEND alike."""
    return message.as_bytes(policy=email.policy.SMTP)

# --- players -------------------------------------------------------------------------------------------

@dataclass
class Table:
    """One game's two players."""

    index: int
    white: str
    black: str
    game: str | None = None


def make_tables(count: int, tag: str) -> list[Table]:
    """``tag`` keeps the addresses of the two mail scenarios apart in logs and a kept store."""
    return [Table(i, f"w{i}.{tag}@example.org", f"b{i}.{tag}@example.org") for i in range(count)]


def setup_games(tables: list[Table], submit: Callable[[list[EmailMessage]], None], sink: Any,
                timeout: float) -> dict[str, Arrival]:
    """Start every game by mail (``new`` from white, ``accept`` from black) and return, by game id,
    the "Your move" mail that the player to move got."""
    from bench.harness.pbem_api import new_mail, reply_to

    start = sink.count()
    by_black = {t.black: t for t in tables}
    submit([new_mail(t.white, SERVER, f"new {GAME} with {t.black} as black") for t in tables])

    def invitations(arrivals: list[Arrival]) -> dict[str, Arrival]:
        return {a.rcpt: a for a in arrivals[start:]
                if "invites you" in a.headline and a.rcpt in by_black}

    sink.wait_until(lambda a: len(invitations(a)) >= len(tables), timeout, "all invitations")
    accepts = []
    for black, arrival in invitations(sink.since(0)).items():
        by_black[black].game = arrival.game
        accepts.append(reply_to(arrival.message, black, "accept"))
    games = {t.game for t in tables}

    def your_moves(arrivals: list[Arrival]) -> dict[str, Arrival]:
        found: dict[str, Arrival] = {}
        for a in arrivals[start:]:
            if a.game in games and a.headline.startswith("Your move"):
                found[a.game] = a  # type: ignore[index]
        return found

    submit(accepts)
    sink.wait_until(lambda a: len(your_moves(a)) >= len(tables), timeout, "every game started")
    sink.wait_quiet(1.0, timeout)
    return your_moves(sink.since(0))


def answer(arrival: Arrival, players: dict[str, Any]) -> EmailMessage | None:
    """The reply the addressee writes to ``arrival`` (a legal move, chosen from the record)."""
    from tests.server.players import Player

    player = players.setdefault(arrival.rcpt, Player(arrival.rcpt, seed=hash(arrival.rcpt) & 0xFFFF))
    return player.respond(arrival.message)


# --- SMTP submission ----------------------------------------------------------------------------------

def smtp_submit(port: int, messages: list[EmailMessage], connections: int) -> None:
    """Send ``messages`` over ``connections`` parallel SMTP sessions (see ``smtp_submit_raw``)."""
    prepared = [(m["From"].addresses[0].addr_spec, [m["To"].addresses[0].addr_spec], raw_bytes(m))
                for m in messages]
    smtp_submit_raw(port, prepared, connections)


def smtp_submit_raw(port: int | Sequence[int], prepared: list[tuple[str, list[str], bytes]],
                    connections: int, rate: float | None = None, failover: bool = False,
                    used: list[int] | None = None) -> list[tuple[float, float]]:
    """Send ``(sender, recipients, data)`` over ``connections`` parallel SMTP sessions, each sending
    its share (every ``connections``-th message) in order on one connection; with several ports
    (several servers), connection i goes to port i modulo their number. With a ``rate`` (messages
    per second in all) message i is due ``i / rate`` seconds after the start, and one that falls
    behind goes as soon as its session is free; without, each goes as soon as the one before it
    was taken. ``failover``: a session that breaks (its server was killed) goes on at the next
    port, sending again the message that had no ``250`` yet, as an MTA does. ``used``, when given,
    is filled with the port that acknowledged each message. Returns per message (time.monotonic
    before MAIL FROM, after the 250 to DATA)."""
    ports = [port] if isinstance(port, int) else list(port)
    times: list[tuple[float, float]] = [(math.nan, math.nan)] * len(prepared)
    if used is not None:
        used[:] = [0] * len(prepared)
    errors: list[BaseException] = []
    start = time.monotonic() + 0.05

    def run(first: int) -> None:
        at = first % len(ports)
        index = first
        tries = 0
        while index < len(prepared):
            try:
                with smtplib.SMTP("127.0.0.1", ports[at], timeout=120) as smtp:
                    while index < len(prepared):
                        if rate:
                            delay = start + index / rate - time.monotonic()
                            if delay > 0:
                                time.sleep(delay)
                        sender, rcpts, data = prepared[index]
                        before = time.monotonic()
                        smtp.sendmail(sender, rcpts, data)
                        times[index] = (before, time.monotonic())
                        if used is not None:
                            used[index] = ports[at]
                        index += connections
                        tries = 0
            except (OSError, smtplib.SMTPException) as exc:
                tries += 1
                if not failover or tries > len(ports):
                    errors.append(exc)
                    return
                at = (at + 1) % len(ports)
            except BaseException as exc:
                errors.append(exc)
                return

    threads = [threading.Thread(target=run, args=(i,), name=f"bench-smtp-{i}")
               for i in range(min(connections, len(prepared)))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise RuntimeError(f"SMTP submission failed: {errors[0]!r}") from errors[0]
    return times
