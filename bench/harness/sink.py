"""The relay the daemon sends its replies to: an SMTP sink that notes when each one arrived.

Every latency and throughput figure of the mail benchmarks ends at this timestamp, taken when the
sink holds the whole message; only the header block is parsed there, so that the sink's own work does
not delay the timestamps of the messages behind it.
"""

from __future__ import annotations

import email
import email.parser
import email.policy
import functools
import re
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from email.message import EmailMessage
from typing import Any


@dataclass
class Arrival:
    """One reply at the relay; ``game`` and ``ply`` (from pbem's X-Pbem-* headers) tie it to the move
    it answers."""

    at: float  # time.monotonic() when the sink had the whole message
    rcpt: str
    subject: str
    game: str | None
    ply: int | None
    data: bytes

    @property
    def message(self) -> EmailMessage:
        return email.message_from_bytes(self.data, policy=email.policy.default)  # type: ignore[return-value]

    @functools.cached_property
    def headline(self) -> str:
        """The body's first line, which says what the mail is ("Your move (move 3): ...", "... invites
        you to ..."): every mail of a game has the game's subject."""
        from tests.server.players import headline

        return headline(self.message)


_HEAD_END = re.compile(rb"\r?\n\r?\n")


def start_sink() -> Any:
    """A started ``RecordingSink``. The class is made here, not at import, because the test sink
    brings aiosmtpd: the daemon's process imports the scenario modules too, and needs none of it."""
    from bench.harness.lean import LeanController
    from tests.services.smtp_sink import SmtpSink

    class RecordingSink(SmtpSink):
        """``SmtpSink`` that timestamps every message and reads only its header block, on pbem's
        lean SMTP session (``bench/harness/lean.py``)."""

        controller_class = LeanController

        def __init__(self) -> None:
            self.arrivals: list[Arrival] = []
            super().__init__()

        def _store(self, message: Any) -> None:
            at = time.monotonic()
            data = message.data
            match = _HEAD_END.search(data)
            head = email.parser.BytesHeaderParser(policy=email.policy.compat32).parsebytes(
                data[: match.end()] if match else data)
            ply = head.get("X-Pbem-Ply")
            arrival = Arrival(at=at, rcpt=message.rcpt_tos[0] if message.rcpt_tos else "",
                              subject=" ".join(str(head.get("Subject", "")).split()),
                              game=head.get("X-Pbem-Game"),
                              ply=int(ply) if ply and ply.strip().isdigit() else None, data=data)
            with self._cond:
                self.arrivals.append(arrival)
                self._cond.notify_all()

        def count(self) -> int:
            with self._cond:
                return len(self.arrivals)

        def wait_until(self, predicate: Callable[[list[Arrival]], bool], timeout: float,
                       what: str, stall: float = 20.0) -> list[Arrival]:
            """Until ``predicate(arrivals)``; TimeoutError after ``timeout`` seconds, or sooner when
            nothing arrived for ``stall`` seconds (the server is not going to send more)."""
            started = time.monotonic()
            deadline = started + timeout
            with self._cond:
                while not predicate(self.arrivals):
                    now = time.monotonic()
                    last = self.arrivals[-1].at if self.arrivals else started
                    if now >= deadline or now - max(last, started) >= stall:
                        raise TimeoutError(
                            f"sink: {what} not reached after {now - started:.0f} s "
                            f"({len(self.arrivals)} messages so far, the last "
                            f"{now - max(last, started):.0f} s ago)")
                    self._cond.wait(min(0.5, deadline - now))
                return list(self.arrivals)

        def since(self, index: int) -> list[Arrival]:
            with self._cond:
                return self.arrivals[index:]

        def wait_quiet(self, quiet: float, timeout: float) -> None:
            """Until no message arrived for ``quiet`` seconds (the setup's stragglers are in)."""
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                with self._cond:
                    last = self.arrivals[-1].at if self.arrivals else 0.0
                if time.monotonic() - last >= quiet:
                    return
                time.sleep(0.05)

    return RecordingSink()



def all_replied(base: int, keys: Collection[tuple[str, int]]) -> Callable[[list[Arrival]], bool]:
    """A ``wait_until`` predicate: the reply of every move in ``keys`` (the opponent's "Your move"; the
    mover gets none at the default notification level), by (game, ply), arrived after the first
    ``base`` messages. It looks at each arrival once (the sink asks after every message, and a scan
    of the whole list each time cost the load generator's process a tenth of a millisecond a move)."""
    wanted = set(keys)
    seen = [base]

    def predicate(arrivals: list[Arrival]) -> bool:
        for a in arrivals[seen[0]:]:
            wanted.discard((a.game, a.ply))
        seen[0] = max(seen[0], len(arrivals))
        return not wanted

    return predicate
