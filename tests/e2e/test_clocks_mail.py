"""The clock kinds end to end: a real ``pbem serve`` (its SMTP listener, processor process, scheduler)
with ``[server] clock = "movable"``, a real SMTP relay (aiosmtpd), and ``pbem admin clock +TIME``
moving the running server's time, so days pass in seconds.

One server, one story: a Fischer game in which quick answers bank time and a slow one spends it;
a game with weekends off whose player moves on Sunday, untouched by the weekend (his clock stands
still, and says so); the Fischer game's
slow player running out of time, a day of his yearly allowance (one day here) spent and the game
going on, then running out again with nothing left: the final reminder, then the loss on time; the
loser refused by an open challenge that asks for reliable players; ``pbem replay`` of the record
the game-over mail carries, every bank and deadline recomputed from the times.
"""

from __future__ import annotations

import json
import re
import smtplib
import time
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from pathlib import Path

import pytest

from pbem.archive.names import pseudonym
from pbem.cli import main
from pbem.cli.mailbox import new_mail, reply_to
from pbem.clocks.movable import read_offset
from pbem.record import replay_record
from pbem.store import open_store
from pbem.store.secret import server_secret
from tests.e2e.conftest import listening, raw, serve, serve_toml, stop
from tests.server.mailcheck import MailCheck
from tests.server.players import attached_record, headline, text_of
from tests.services.requirements import free_port

ANN, BO, CY, SERVER = "ann@example.org", "bo@example.org", "cy@example.org", "pbem@localhost"


def flat(message: EmailMessage) -> str:
    return " ".join(text_of(message).split())


class People:
    """People with mail clients, and the administrator moving the clock; each waits for the mails
    its action causes at the relay and reads them as their recipients would."""

    def __init__(self, port: int, sink, config: Path, database: Path) -> None:
        self.port, self.sink, self.config, self.database = port, sink, config, database
        self.checks: dict[str, MailCheck] = {}  # one per game: each game is a thread of its own
        self.sent: list[tuple[str, EmailMessage]] = []
        self.seen = 0
        self.latest: dict[str, EmailMessage] = {}

    def _collect(self, expect: int) -> dict[str, list[EmailMessage]]:
        received = self.sink.wait_for(self.seen + expect, timeout=60)[self.seen:]
        self.seen += len(received)
        got: dict[str, list[EmailMessage]] = {}
        for item in received:
            mail, rcpt = item.message, item.rcpt_tos[0]
            check = self._check(str(mail["X-Pbem-Game"] or ""))
            if headline(mail).startswith(("Reminder", "Final reminder", "Not ", "To resign")):
                check.known[rcpt].add(str(mail["Message-ID"]))  # not a board mail's first line
            else:
                check.read(rcpt, mail)
            got.setdefault(rcpt, []).append(mail)
            self.latest[rcpt] = mail
        return got

    def _check(self, game: str) -> MailCheck:
        """The game's own check; a game new to it has the mails sent outside any game (a 'new'
        line starts one) in its thread."""
        if game not in self.checks:
            self.checks[game] = MailCheck()
            for sender, message in self.sent:
                self.checks[game].sent(sender, message)
        return self.checks[game]

    def send(self, message: EmailMessage, expect: int) -> dict[str, list[EmailMessage]]:
        sender = message["From"].addresses[0].addr_spec
        named = re.search(r"\[pbem ([a-z]+-\d+)\]", str(message["Subject"] or ""))
        if named:
            self._check(named.group(1)).sent(sender, message)
        else:
            self.sent = [(sender, message)]
        with smtplib.SMTP("127.0.0.1", self.port, timeout=30) as smtp:
            smtp.sendmail(sender, [SERVER], raw(message))
        return self._collect(expect)

    def reply(self, who: str, text: str, expect: int, to: EmailMessage | None = None) -> dict:
        return self.send(reply_to(to or self.latest[who], who, text), expect)

    def move(self, who: str, game_id: str, expect: int, to: EmailMessage | None = None) -> dict:
        state = self.position(game_id)
        return self.reply(who, state.move_text(state.legal_moves()[0]), expect, to)

    def clock(self, shift: str, expect: int) -> dict[str, list[EmailMessage]]:
        """``pbem admin clock +SHIFT``: the running server's time moves, and what falls due happens."""
        assert main(["admin", "clock", shift, "-c", str(self.config)]) == 0
        got = self._collect(expect)
        time.sleep(0.5)  # anything more would arrive now
        more = self.sink.messages[self.seen:]
        assert not more, [headline(m.message) for m in more]
        return got

    def game(self, game_id: str):
        store = open_store(self.database)
        try:
            return store.get_game(game_id)
        finally:
            store.close()

    def position(self, game_id: str):
        return replay_record(self.game(game_id).record)


def _to_friday_noon(data: Path) -> str:
    """The shift that brings the clock to the next Friday, 12:00:20 UTC (the weekend comes next)."""
    now = datetime.now(UTC) + read_offset(data)
    target = (now + timedelta(days=(4 - now.weekday()) % 7)).replace(hour=12, minute=0, second=20,
                                                                      microsecond=0)
    if target <= now + timedelta(minutes=1):
        target += timedelta(days=7)
    return f"+{int((target - now).total_seconds())}s"


@pytest.fixture
def server(tmp_path: Path, smtp_sink):
    port = free_port()
    config = serve_toml(tmp_path, port, smtp_sink,
                        'clock = "movable"\n[deadlines]\nvacation_days_per_year = 1')
    process = serve(config, None)
    try:
        listening(port, process)
        yield People(port, smtp_sink, config, tmp_path / "data" / "pbem.sqlite3")
    finally:
        stop(process)


def test_clock_kinds_by_mail_on_a_movable_clock(server: People, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    people = server
    people.clock(_to_friday_noon(tmp_path / "data"), 0)
    friday = datetime.now(UTC) + read_offset(tmp_path / "data")
    assert friday.weekday() == 4 and friday.hour == 12

    # a Fischer game: 2 days, +1 day a move, at most 3 days
    got = people.send(new_mail(ANN, SERVER, f"new alien-city time fischer 2+1 cap 3 with {BO} as black"), 2)
    assert ("Time control: Fischer clock: 2 d, +1 d per move, at most 3 d; at the deadline: the late player "
            "forfeits.") in flat(got[BO][0])
    got = people.reply(BO, "accept", 2)
    assert "Your time: 2 d, +1 d per move, at most 3 d." in flat(got[ANN][0])
    got = people.move(ANN, "ac-1", 1)  # quick answers bank time: each adds a day, up to 3
    assert "Your time: 2 d, +1 d per move, at most 3 d." in flat(got[BO][0])
    got = people.move(BO, "ac-1", 1)
    assert "Your time: 3 d, +1 d per move, at most 3 d." in flat(got[ANN][0])

    # weekends off: Cy's day runs 12 hours on Friday and 12 on Monday
    got = people.send(new_mail(CY, SERVER, f"new alien-city time 1 weekends off with {ANN} as black"), 2)
    assert "Time control: 1 day per move (weekends do not count)" in flat(got[ANN][-1])
    invitation = got[ANN][-1]
    got = people.reply(ANN, "accept", 2, to=invitation)
    cy_turn = got[CY][0]
    monday = (friday + timedelta(days=3)).strftime("%a %d %b %Y")
    assert f"Deadline for your move: {monday}, 12:00 UTC, in 3 days." in flat(cy_turn)
    assert "Your time: 1 d for this move. (Weekends do not count.)" in flat(cy_turn)

    # Sunday 18:00: Ann's reminder, 48 hours before her deadline, 18 hours of her Fischer bank
    # left; none for Cy: his clock stands still at weekends, and his reminders count its hours (12
    # of them are left, so his 12-hour reminder comes as Monday begins)
    got = people.clock("+2d6h", 1)
    assert list(got) == [ANN]
    assert headline(got[ANN][0]) == "Reminder: your move in ac-1 (move 3)"
    assert "Your time: 18 h, +1 d per move, at most 3 d." in flat(got[ANN][0])
    # what Cy's 'games' says meanwhile: his deadline, and that his clock stands still until Monday
    got = people.send(new_mail(CY, SERVER, "games"), 1)
    assert f"ac-2: your move, deadline {monday}, 12:00 UTC, in 18 hours" in flat(got[CY][0])
    assert f"Your clock stands still until {monday}, 00:00 UTC. (Weekends do not count.)" in flat(got[CY][0])
    # Cy's weekend did not count: his move on Sunday is in time, the game goes on
    got = people.move(CY, "ac-2", 1, to=cy_turn)
    assert headline(got[ANN][0]).startswith("Your move (move 2).")
    assert people.game("ac-2").status == "active"
    ann_in_ac2 = got[ANN][0]
    got = people.reply(ANN, "resign ac-2", 1, to=ann_in_ac2)
    code = re.search(r"resign ac-2 confirm (\w+)", flat(got[ANN][0])).group(1)
    got = people.reply(ANN, f"resign ac-2 confirm {code}", 2, to=got[ANN][0])
    assert people.game("ac-2").status == "over"

    # a slow answer spends the bank: Ann used 2 d 6 h of her 3 d, and has 1 d 18 h left
    got = people.move(ANN, "ac-1", 1, to=_latest_of(people, ANN, "ac-1"))
    assert "Your time: 3 d, +1 d per move, at most 3 d." in flat(got[BO][0])
    lefts = [e["left"] for e in people.game("ac-1").record["clock_log"] if e["event"] == "move"]
    assert round(lefts[-1] / 3600) == 42  # 3 d - 2 d 6 h + 1 d

    # Bo does not answer: his 3 days run out; his one allowance day is spent and the game goes on
    got = people.clock("+3d1m", 2)
    assert headline(got[BO][0]) == "Your time ran out in ac-1: a vacation day was spent for you"
    assert "(0 left this year)" in flat(got[BO][0])
    assert headline(got[ANN][0]) == (
        f"white ({BO}) ran out of time in ac-1: a vacation day of theirs was spent")
    got = people.move(BO, "ac-1", 1, to=_latest_of(people, BO, "ac-1"))
    assert "Your time: 42 h, +1 d per move, at most 3 d." in flat(got[ANN][0])
    got = people.move(ANN, "ac-1", 1, to=got[ANN][0])
    assert "Your time: 1 d, +1 d per move, at most 3 d." in flat(got[BO][0])  # 0 left, + 1 d
    # (his clocks stand still until the day he spent ends, then his day runs)
    assert ", in 1 day 23 hours." in flat(got[BO][0])

    # ... and runs out again: nothing left of the allowance, so the final reminder, then the loss
    got = people.clock("+2d", 2)
    assert headline(got[BO][0]).startswith("Final reminder: your move in ac-1")
    assert headline(got[ANN][0]) == f"white ({BO}) missed the deadline in ac-1"
    got = people.clock("+1d", 2)
    assert headline(got[ANN][0]) == f"Game over: {BO} forfeited; you win"
    assert headline(got[BO][0]) == f"Game over: you forfeited; {ANN} wins"

    # the record replays to every bank and deadline
    record = attached_record(got[ANN][0])
    path = tmp_path / "ac-1.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    capsys.readouterr()
    assert main(["replay", str(path)]) == 0
    out = capsys.readouterr().out
    assert "vacation day spent" in out and "final reminder" in out and "timed out: forfeit" in out
    assert "recomputed from the times agrees" in out

    # an open challenge for reliable players: Bo, who lost on time, is refused and told why
    got = people.send(new_mail(CY, SERVER, "new alien-city open reliable 90"), 1)
    got = people.send(new_mail(CY, SERVER, "challenges"), 1)
    assert "For players who lost at most 10 % of their finished games on time" in flat(got[CY][0])
    got = people.reply(BO, "join ac-3", 1, to=people.latest[BO])
    assert ("challenge ac-3 is for players who lost at most 10 % of their finished games on time "
            "(reliable 90); you lost 1 of 1 on time, so you are 0 % reliable.") in flat(got[BO][0])
    got = people.reply(ANN, "join ac-3", 2, to=people.latest[ANN])
    assert people.game("ac-3").status == "active"
    got = people.send(new_mail(CY, SERVER, "standings"), 1)
    store = open_store(people.database)
    try:  # anyone may ask: players by the archive site's pseudonyms, never by address
        bo = pseudonym(BO, server_secret(store))
    finally:
        store.close()
    assert re.search(rf"{re.escape(bo)}\s+1\s+0\s+1\s+0\s+\d+\s+0 %", text_of(got[CY][0]))
    assert BO not in text_of(got[CY][0])

    # the clock as the administrator sees it
    capsys.readouterr()
    assert main(["admin", "clock", "-c", str(people.config)]) == 0
    assert "clock: movable, " in capsys.readouterr().out


def _latest_of(people: People, who: str, game_id: str) -> EmailMessage:
    """The newest mail ``who`` got about ``game_id`` (its Reply-To carries the seat's token)."""
    return next(item.message for item in reversed(people.sink.messages)
                if item.rcpt_tos[0] == who and str(item.message["X-Pbem-Game"]) == game_id)


def test_a_system_clock_is_not_moved(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "pbem.toml"
    config.write_text(f'[server]\ndata_dir = "{tmp_path / "data"}"\n')
    assert main(["admin", "clock", "+2d", "-c", str(config)]) == 1
    err = capsys.readouterr().err
    assert 'this server runs on the system clock ([server] clock = "system"' in err
    assert main(["admin", "clock", "-c", str(config)]) == 0
    assert "clock: the system's" in capsys.readouterr().out
    assert not (tmp_path / "data" / "clock-offset").exists()
    movable = tmp_path / "movable.toml"
    movable.write_text(f'[server]\ndata_dir = "{tmp_path / "data"}"\nclock = "movable"\n'
                       f'[smtp]\nport = {free_port()}\n')
    assert main(["admin", "clock", "+soon", "-c", str(movable)]) == 2
    assert "not a time to move forward by" in capsys.readouterr().err
    assert main(["check-config", "-c", str(movable)]) == 0
    assert 'warning: [server] clock = "movable"' in capsys.readouterr().out
