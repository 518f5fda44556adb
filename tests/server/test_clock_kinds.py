"""The clock kinds by mail, with the clock moved by hand: a Fischer game where quick answers bank
time and a slow one spends it, to a loss on time; a weekend that does not count; a day of vacation
allowance spent on a timeout and the game going on; an open challenge refused for reliability. Each
game's record replays to every bank and deadline (``pbem replay``)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from pathlib import Path

import pytest

from pbem.archive.names import pseudonym
from pbem.archive.search import Filters
from pbem.archive.site import write_site
from pbem.cli import main
from pbem.cli.mailbox import reply_to
from pbem.clocks import log as cl
from pbem.community import standings_page
from pbem.i18n import speaking
from pbem.record import replay_record
from pbem.store.secret import server_secret
from tests.scheduler.conftest import ALICE, BOB, CAROL, Clocked
from tests.server.harness import headline, text_of, to
from tests.server.mailcheck import MailCheck
from tests.server.players import attached_record

FRI = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)  # the harness's clock starts here: a Friday


def flat(message: EmailMessage) -> str:
    return " ".join(text_of(message).split())


@pytest.fixture
def server(tmp_path: Path):
    srv = Clocked(tmp_path)
    srv.config.deadlines.outage_threshold_minutes = 10**8  # the tests jump days ahead
    yield srv
    srv.close()


class Game:
    """Two players with mail clients; every mail goes through MailCheck (threads, 78 columns, "your
    move" only to the seat to move)."""

    def __init__(self, server: Clocked, new_line: str, first: str = ALICE, second: str = BOB) -> None:
        self.server, self.check = server, MailCheck()
        self.latest: dict[str, EmailMessage] = {}
        out = self.send(server.mail(first, new_line))
        self.id = str(to(out, first)[0]["X-Pbem-Game"])
        self.invitation = self.latest[second]
        self.send(reply_to(self.invitation, second, "accept"))

    def send(self, message: EmailMessage) -> list[tuple[str, EmailMessage]]:
        self.check.sent(message["From"].addresses[0].addr_spec, message)
        return self.read(self.server.submit(message))

    def read(self, out: list[tuple[str, EmailMessage]]) -> list[tuple[str, EmailMessage]]:
        for rcpt, mail in out:
            if headline(mail).startswith(("Reminder", "Final reminder")):
                self.light_check(rcpt, mail)  # a "your move" mail whose first line is the reminder
            else:
                self.check.read(rcpt, mail)
            self.latest[rcpt] = mail
        return out

    def light_check(self, rcpt: str, mail: EmailMessage) -> None:
        """MailCheck's width, subject and thread, without its rules for the first line."""
        assert all(len(line) <= 78 for line in text_of(mail).split("\n")), headline(mail)
        game = str(mail["X-Pbem-Game"])
        assert self.check.subject.setdefault(game, str(mail["Subject"])) == mail["Subject"]
        assert str(mail["In-Reply-To"]) in self.check.known[rcpt]
        self.check.known[rcpt].add(str(mail["Message-ID"]))

    def run(self) -> list[tuple[str, EmailMessage]]:
        return self.read(self.server.run())

    def move(self, player: str) -> list[tuple[str, EmailMessage]]:
        state = replay_record(self.server.game(self.id).record)
        return self.send(reply_to(self.latest[player], player, state.move_text(state.legal_moves()[0])))

    def row(self):
        return self.server.game(self.id)


def replays(record: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """``pbem replay`` of the record: every bank and deadline recomputed from the times agrees."""
    assert cl.check(record) == []
    path = tmp_path / "game.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    capsys.readouterr()
    assert main(["replay", str(path)]) == 0
    out = capsys.readouterr().out
    assert "=== clock ===" in out and "recomputed from the times agrees" in out
    assert main(["replay", str(path), "--json", "--clock"]) == 0
    last = json.loads(capsys.readouterr().out.strip().split("\n")[-1])
    assert last["clock_check"] == "ok" and len(last["clock"]) == len(record["clock_log"])
    return out


def test_fischer_quick_answers_bank_time_a_slow_one_spends_it_to_a_loss_on_time(
        server: Clocked, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    server.config.deadlines.vacation_days_per_year = 0  # no allowance: the policy applies at once
    game = Game(server, f"new alien-city time fischer 2+1 cap 3 with {BOB} as black")
    assert ("Time control: Fischer clock: 2 d, +1 d per move, at most 3 d; at the deadline: the late "
            "player forfeits.") in flat(game.invitation)
    first = flat(game.latest[ALICE])
    assert "Deadline for your move: Sun 22 Nov 2026, 10:00 UTC, in 2 days." in first
    assert "Your time: 2 d, +1 d per move, at most 3 d." in first
    # quick answers: an hour each; the bank grows by the increment, up to the cap
    server.clock.advance(hours=1)
    bob = to(game.move(ALICE), BOB)[0]
    assert "Your time: 2 d, +1 d per move, at most 3 d." in flat(bob)
    assert game.row().deadline_at == FRI + timedelta(hours=1, days=2)
    server.clock.advance(hours=1)
    alice = to(game.move(BOB), ALICE)[0]
    assert "Your time: 2 d 23 h, +1 d per move, at most 3 d." in flat(alice)
    assert game.row().deadline_at == FRI + timedelta(days=3, hours=1)  # 2 d 23 h from 12:00
    server.clock.advance(hours=1)
    bob = to(game.move(ALICE), BOB)[0]
    assert "Your time: 2 d 23 h, +1 d per move, at most 3 d." in flat(bob)
    server.clock.advance(hours=1)
    alice = to(game.move(BOB), ALICE)[0]
    assert "Your time: 3 d, +1 d per move, at most 3 d." in flat(alice)  # the cap
    # a slow answer spends the bank: two days of Bob's 2 d 23 h, then one day back
    server.clock.advance(hours=1)
    game.move(ALICE)
    server.clock.advance(days=2)
    alice = to(game.move(BOB), ALICE)[0]
    server.clock.advance(hours=1)
    bob = to(game.move(ALICE), BOB)[0]
    assert "Your time: 2 d, +1 d per move, at most 3 d." in flat(bob)  # 3 d - 2 d + 1 d
    # now Bob does not answer: his 2 d run out, the final reminder, then the loss on time
    deadline = game.row().deadline_at
    assert deadline == server.clock.now() + timedelta(days=2)
    server.clock.set(deadline - timedelta(hours=12))
    reminder = to(game.run(), BOB)[0]
    assert headline(reminder).startswith(f"Reminder: your move in {game.id}")
    assert "Your time: 12 h, +1 d per move, at most 3 d." in flat(reminder)
    server.clock.set(deadline)
    assert headline(to(game.run(), BOB)[0]).startswith(f"Final reminder: your move in {game.id}")
    server.clock.advance(hours=24)
    out = game.run()
    ended = to(out, ALICE)[0]
    assert headline(ended) == f"Game over: {BOB} forfeited; you win"
    row = game.row()
    assert row.status == "over" and row.record["result"]["reason"] == "forfeit"
    events = [e["event"] for e in row.record["clock_log"]]
    assert events[0] == "control" and events[-2:] == ["grace", "timeout"]
    lefts = [e["left"] / 3600 for e in row.record["clock_log"] if e["event"] == "move"]
    assert lefts == [71, 71, 72, 72, 72, 48, 72]  # hours: banked, capped, spent
    replayed = replays(attached_record(ended), tmp_path, capsys)
    assert "black moved: used 1 h, bank left 2 d 23 h" in replayed
    # a record whose stored bank the times do not give is caught, and named
    tampered = attached_record(ended)
    moved = next(e for e in tampered["clock_log"] if e["event"] == "move")
    moved["left"] += 3600
    path = tmp_path / "tampered.json"
    path.write_text(json.dumps(tampered), encoding="utf-8")
    assert main(["replay", str(path)]) == 1
    err = capsys.readouterr().err
    assert "(move at 2026-11-20 11:00:00 UTC): left stored as 259200, the times give 255600" in err


def test_a_weekend_does_not_count(server: Clocked, tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    game = Game(server, f"new alien-city time 2 weekends off with {BOB} as black")
    assert "Time control: 2 days per move (weekends do not count); at the deadline" in flat(game.invitation)
    first = flat(game.latest[ALICE])
    # Friday 10:00 to Saturday 00:00 is 14 hours; the weekend stands still; 34 more from Monday
    assert "Deadline for your move: Tue 24 Nov 2026, 10:00 UTC, in 4 days." in first
    assert "Your time: 2 d for this move. (Weekends do not count.)" in first
    server.clock.set(datetime(2026, 11, 21, 12, 0, tzinfo=UTC))  # Saturday noon: nothing is due
    assert game.run() == []
    # Sunday: 46 hours before the deadline, but the clock stands still: a reminder counts the
    # clock's hours (a 48-hour one is longer than the move itself), and the bank says it stands still
    server.clock.set(datetime(2026, 11, 22, 12, 0, tzinfo=UTC))
    assert game.run() == []
    turn = game.latest[ALICE]
    listing = flat(to(game.send(game.server.mail(ALICE, "games")), ALICE)[0])
    assert ("Your time: 34 h for this move. Your clock stands still until Mon 23 Nov 2026, 00:00 UTC. "
            "(Weekends do not count.)") in listing
    game.latest[ALICE] = turn
    server.clock.set(datetime(2026, 11, 23, 9, 0, tzinfo=UTC))  # Monday 09:00
    bob = to(game.move(ALICE), BOB)[0]
    assert "Your time: 2 d for this move." in flat(bob)
    used = [e["used"] for e in game.row().record["clock_log"] if e["event"] == "move"]
    assert used == [23 * 3600]  # 14 h on Friday, 9 h on Monday
    # in Bratislava the weekend is Bratislava's: Bob's new turn counts from Monday 09:00 UTC
    assert game.row().deadline_at == datetime(2026, 11, 25, 9, 0, tzinfo=UTC)
    replays(game.row().record, tmp_path, capsys)


STANDS_STILL = {"en": "Your clock stands still until Mon 23 Nov 2026, 00:00 UTC.",
                "de": "Deine Uhr steht bis Mo 23 Nov 2026, 00:00 UTC still.",
                "sk": "Tvoje hodiny stoja až do po 23 nov 2026, 00:00 UTC."}


@pytest.mark.parametrize("language", ["en", "de", "sk"])
def test_a_reminder_counts_the_clock_and_a_weekend_says_it_stands_still(server: Clocked,
                                                                         language: str) -> None:
    """A day per move, weekends off, from Friday 10:00: 14 hours run on Friday, the deadline is
    Monday 10:00. The 12-hour reminder comes when 12 hours of the clock are left (Friday 22:00),
    not on a Saturday on which it stands still; in the weekend the bank says it stands still, and
    until when, in the player's language."""
    with server.store.transaction() as tx:
        tx.set_player(ALICE, {"language": language})
    game = Game(server, f"new alien-city time 1 weekends off with {BOB} as black")
    assert game.row().deadline_at == datetime(2026, 11, 23, 10, 0, tzinfo=UTC)
    assert STANDS_STILL[language] not in flat(game.latest[ALICE])  # Friday: it runs
    server.clock.set(datetime(2026, 11, 20, 21, 59, tzinfo=UTC))
    assert game.run() == []
    server.clock.set(datetime(2026, 11, 20, 22, 0, tzinfo=UTC))
    reminder = to(game.run(), ALICE)
    assert len(reminder) == 1 and "2026, 10:00 UTC" in flat(reminder[0])
    if language == "en":
        assert headline(reminder[0]) == f"Reminder: your move in {game.id} (move 1)"
        assert ("deadline Mon 23 Nov 2026, 10:00 UTC, in 2 days 12 hours. Your time: 12 h for this move. "
                "(Weekends do not count.)") in flat(reminder[0])
    server.clock.set(datetime(2026, 11, 21, 10, 0, tzinfo=UTC))  # Saturday: 24 hours on the wall
    assert game.run() == []
    turn = game.latest[ALICE]
    listing = flat(to(game.send(server.mail(ALICE, "games")), ALICE)[0])
    assert STANDS_STILL[language] in listing
    game.latest[ALICE] = turn
    server.clock.set(datetime(2026, 11, 23, 9, 0, tzinfo=UTC))  # Monday: nothing more was due
    assert game.run() == []
    assert STANDS_STILL[language] not in flat(to(game.send(server.mail(ALICE, "games")), ALICE)[0])


def test_the_players_weekend_is_in_their_timezone(server: Clocked) -> None:
    server.submit(server.mail(ALICE, "timezone Pacific/Auckland"))  # UTC+13 in November
    game = Game(server, f"new alien-city time 1 weekends off with {BOB} as black")
    # Friday 10:00 UTC is Friday 23:00 in Auckland: an hour to the weekend, then Monday 00:00
    # there (Sunday 11:00 UTC), and 23 more hours
    assert game.row().deadline_at == datetime(2026, 11, 23, 10, 0, tzinfo=UTC)
    assert "(Weekends do not count.)" in flat(game.latest[ALICE])


def test_an_allowance_day_spent_on_a_timeout_and_the_game_goes_on(
        server: Clocked, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    game = Game(server, f"new alien-city time 1 with {BOB} as black")
    other = Game(server, f"new alien-city time 3 with {CAROL} as black", second=CAROL)  # Alice to move
    deadline = game.row().deadline_at
    other_deadline = other.row().deadline_at
    server.clock.set(deadline + timedelta(minutes=1))
    out = game.run()
    alice = to(out, ALICE)
    assert [headline(m) for m in alice] == [
        f"Your time ran out in {game.id}: a vacation day was spent for you"]
    assert (f"so 1 day of your vacation allowance was spent: your clocks in all your games stop until Sun "
            f"22 Nov 2026, 10:00 UTC (29 left this year). Move in {game.id} by Sun 22 Nov 2026, 10:00 UTC"
            ) in flat(alice[0])
    assert [headline(m) for m in to(out, BOB)] == [
        f"black ({ALICE}) ran out of time in {game.id}: a vacation day of theirs was spent"]
    assert to(out, CAROL) == []
    assert game.row().status == "active" and game.row().deadline_at == deadline + timedelta(days=1)
    # every clock of hers stops until the day ends (in the other game from the moment it was spent)
    assert other.row().deadline_at == other_deadline + (deadline + timedelta(days=1) - server.clock.now())
    assert game.run() == []  # once
    settings = flat(to(server.submit(reply_to(alice[0], ALICE, "settings")), ALICE)[0])
    assert ("Vacation allowance 2026: 29 of 30 days left (0 on vacation, 1 spent when your time ran out)"
            in settings)
    vacation = flat(to(server.submit(reply_to(alice[0], ALICE, "vacation")), ALICE)[0])
    assert "Vacation days used in 2026: 1 of 30; 29 left." in vacation
    assert "1 of them was spent when your time ran out in a game." in vacation
    # the game goes on: Alice moves within her extra day, and it is Bob's turn with his own day
    server.clock.advance(hours=5)
    out = game.move(ALICE)
    assert headline(to(out, BOB)[0]).startswith("Your move (move 2).")
    row = game.row()
    assert row.to_move == "white" and row.deadline_at == server.clock.now() + timedelta(days=1)
    moved = [e for e in row.record["clock_log"] if e["event"] == "move"][-1]
    assert moved["used"] == 86400  # her day: the allowance day did not count
    replays(row.record, tmp_path, capsys)
    with server.store.transaction() as tx:
        assert tx.allowance_use(ALICE, 2026) == (0, 1)


def test_one_day_spent_covers_every_game_that_ran_out_in_it(server: Clocked) -> None:
    """Two games of Alice's run out in the same minute (the scheduler looks once a minute): one day
    of her allowance is spent, and it stops both clocks."""
    one = Game(server, f"new alien-city time 1 with {BOB} as black")
    two = Game(server, f"new alien-city time 1 with {CAROL} as black", second=CAROL)
    server.clock.set(two.row().deadline_at + timedelta(minutes=1))
    out = one.run()
    assert [headline(m) for m in to(out, ALICE)] == [
        f"Your time ran out in {one.id}: a vacation day was spent for you"]  # one mail: one day
    assert [headline(m) for m in to(out, CAROL)] == [
        f"black ({ALICE}) ran out of time in {two.id}: a vacation day of theirs was spent"]
    with server.store.transaction() as tx:
        assert tx.allowance_use(ALICE, 2026) == (0, 1)
    assert two.row().deadline_at == one.row().deadline_at > server.clock.now()  # the same day's end
    spends = [e for e in two.row().record["clock_log"] if e["event"] == "spend"]
    assert [e["days"] for e in spends] == [0] and cl.check(two.row().record) == []


def test_the_allowance_runs_out_then_the_policy_applies(server: Clocked) -> None:
    server.config.deadlines.vacation_days_per_year = 2
    server.config.deadlines.grace_reminder = False
    game = Game(server, f"new alien-city time 1 with {BOB} as black")
    # the scheduler was away for days (no outage here): it spends both days in one go, then forfeits
    server.clock.set(game.row().deadline_at + timedelta(days=5))
    out = game.run()
    assert [headline(m) for m in to(out, ALICE)] == [
        f"Your time ran out in {game.id}: 2 vacation days were spent for you",
        "Game over: you forfeited; bob@example.org wins"]
    events = [e["event"] for e in game.row().record["clock_log"]]
    assert events[-3:] == ["spend", "spend", "timeout"]


def test_a_challenge_refused_for_reliability(server: Clocked, tmp_path: Path) -> None:
    server.config.deadlines.vacation_days_per_year = 0
    server.config.deadlines.grace_reminder = False
    lost = Game(server, f"new alien-city time 1 with {BOB} as black")
    server.clock.set(lost.row().deadline_at)
    lost.run()
    assert lost.row().record["result"]["forfeited"] == "black"  # Alice lost on time
    out = server.submit(server.mail(CAROL, "new alien-city open reliable 90"))
    posted = to(out, CAROL)[0]
    challenge = str(posted["X-Pbem-Game"])
    assert "For players who lost at most 10 % of their finished games on time (reliable 90)." in flat(posted)
    listing = flat(to(server.submit(reply_to(lost.latest[ALICE], ALICE, "challenges")), ALICE)[0])
    assert "For players who lost at most 10 %" in listing
    # listed, with why she cannot join it, before she tries
    assert ("You cannot join it: you lost 1 of your 1 finished game on time, so you are 0 % reliable."
            in listing and f"join {challenge}" not in listing)
    listing = flat(to(server.submit(reply_to(lost.latest[BOB], BOB, "challenges")), BOB)[0])
    assert f"To play: join {challenge}" in listing and "You cannot join it" not in listing
    out = server.submit(reply_to(lost.latest[ALICE], ALICE, f"join {challenge}"))
    refusal = to(out, ALICE)[0]
    assert headline(refusal).startswith(
        f"Not done: challenge {challenge} is for players who lost at most 10 %")
    assert ("you lost 1 of 1 on time, so you are 0 % reliable. Send 'challenges' for others, or post your "
            "own: new alien-city open") in flat(refusal)
    assert server.game(challenge).status == "open"
    # Bob, who won, joins; the standings show both
    out = server.submit(reply_to(lost.latest[BOB], BOB, f"join {challenge}"))
    assert server.game(challenge).status == "active"
    standings = flat(to(server.submit(reply_to(lost.latest[BOB], BOB, "standings")), BOB)[0])
    key = server_secret(server.store)  # anyone may ask: players by their public pseudonyms
    assert "RATING ON TIME" in standings and f"{pseudonym(ALICE, key)} 1 0 1 0 1484 0 %" in standings
    assert f"{pseudonym(BOB, key)} (you) 1 1 0 0 1516 100 %" in standings  # the reader, marked
    assert ALICE not in standings and BOB not in standings
    assert "You are number 1 of 2: 1 game, 1 won, 0 lost, 0 drawn, rating 1516." in standings
    assert "Your reliability: 1 game finished, 0 of them lost on time (100 % reliable)." in standings
    # and on the archive site: players by their public names only
    done = to(server.submit(reply_to(lost.latest[ALICE], ALICE, "set nickname Alice A.")), ALICE)[0]
    assert headline(done) == "Done: nickname is now Alice A.", flat(done)
    # Alice reads the standings under her name; she never moved, and they do not say she did
    standings = flat(to(server.submit(reply_to(lost.latest[ALICE], ALICE, "standings")), ALICE)[0])
    assert "Alice A. (you) 1 0 1 0 1484 0 %" in standings and ALICE not in standings
    assert ("Your reliability: 1 game finished, 1 of them lost on time (0 % reliable). 0 of 1 turn ended "
            "with a move in time (0 %).") in standings
    # in German, every word of the table is German
    server.submit(reply_to(lost.latest[ALICE], ALICE, "set language de"))
    standings = to(server.submit(reply_to(lost.latest[ALICE], ALICE, "standings")), ALICE)[0]
    table = next(line for line in text_of(standings).split("\n") if line.strip().startswith("#"))
    assert table.split() == ["#", "SPIELER", "PARTIEN", "GEW.", "VERL.", "REMIS", "WERTUNG", "PÜNKTLICH"]
    assert "Alice A. (du)" in text_of(standings)
    with speaking("de"):
        assert pseudonym(BOB, key) in text_of(standings) and pseudonym(BOB, key).startswith("Spieler ")
    server.submit(reply_to(lost.latest[BOB], BOB, "set language sk"))
    slovak = text_of(to(server.submit(reply_to(lost.latest[BOB], BOB, "standings")), BOB)[0])
    with speaking("sk"):
        assert f"{pseudonym(BOB, key)} (ty)" in slovak and "Alice A." in slovak
    assert "Bei 0 von 1 Mal am Zug rechtzeitig gezogen (0 %)." in flat(standings)
    site = tmp_path / "site"
    write_site(server.store, site, Filters())
    page = (site / standings_page.PAGE).read_text(encoding="utf-8")  # linked from the index
    assert ('<tr class="reliability"><td>Alice A.</td><td data-label="Games finished">1</td>'
            '<td data-label="Lost on time">1</td><td data-label="Reliable">0 %</td>') in page
    assert BOB not in page and standings_page.PAGE in (site / "index.html").read_text(encoding="utf-8")


def test_each_reader_gets_the_clock_in_their_language(server: Clocked) -> None:
    game = Game(server, f"new alien-city time fischer 2+1 cap 3 weekends off with {BOB} as black")
    board = dict(game.latest)  # the game's mails: the moves answer them
    game.send(reply_to(game.latest[ALICE], ALICE, "set language de"))
    game.send(reply_to(game.latest[BOB], BOB, "set language sk"))
    game.latest.update(board)
    server.clock.advance(hours=1)
    bob = to(game.move(ALICE), BOB)[0]
    assert "Tvoj čas: 2 d, +1 d za ťah, najviac 3 d. (Víkendy sa nepočítajú.)" in flat(bob)
    server.clock.advance(hours=1)
    alice = to(game.move(BOB), ALICE)[0]
    assert "Deine Zeit: 2 T 23 Std., +1 T pro Zug, höchstens 3 T. (Wochenenden zählen nicht.)" in flat(alice)
    server.clock.set(game.row().deadline_at + timedelta(minutes=1))
    out = game.run()
    assert headline(to(out, ALICE)[0]) == (
        f"Deine Zeit in {game.id} ist abgelaufen: ein Urlaubstag wurde für dich verbraucht")
    assert headline(to(out, BOB)[0]) == (
        f"čierny ({ALICE}) prekročil čas v {game.id}: minul sa mu deň dovolenky")
    settings = flat(to(server.submit(reply_to(alice, ALICE, "settings")), ALICE)[0])
    assert ("Urlaubskontingent 2026: 29 von 30 Tagen übrig (0 im Urlaub, 1 bei abgelaufener Zeit "
            "verbraucht)") in settings


def test_an_open_challenge_for_reliable_players_as_a_turn_file(server: Clocked) -> None:
    """The JSON twin of 'new GAME open ... reliable 90' (there was none: 'new' required 'with', and
    the refusal named the game's name against a game id's pattern)."""
    server.config.deadlines.vacation_days_per_year = 0
    server.config.deadlines.grace_reminder = False
    lost = Game(server, f"new alien-city time 1 with {BOB} as black")
    server.clock.set(lost.row().deadline_at)
    lost.run()
    out = server.submit(server.mail(CAROL, json.dumps(
        {"command": "new", "game": "alien-city", "open": True, "reliable": 90,
         "options": {"time": "fischer 3+1 weekends off"}})))
    posted = to(out, CAROL)[0]
    challenge = str(posted["X-Pbem-Game"])
    assert headline(posted) == f"Open challenge {challenge} posted: Alien City, waiting for 1 player"
    assert ("Fischer clock: 3 d, +1 d per move, at most 3 d (weekends do not count). For players who lost "
            "at most 10 % of their finished games on time (reliable 90).") in flat(posted)
    refusal = to(server.submit(reply_to(lost.latest[ALICE], ALICE, f"join {challenge}")), ALICE)[0]
    assert "you lost 1 of 1 on time, so you are 0 % reliable" in flat(refusal)
    # a 'new' with neither 'with' nor 'open': the reply names what is missing
    out = server.submit(server.mail(CAROL, json.dumps({"command": "new", "game": "alien-city"})))
    assert "$: 'with' is a required property" in flat(to(out, CAROL)[0])
