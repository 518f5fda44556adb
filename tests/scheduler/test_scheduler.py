"""Reminders, digests, grace and forfeit, outages: each exactly once, with the clock moved by hand.

Every scheduler action is checked three ways: it happens when due, a second run at the same time does
nothing, and a new Scheduler object (a restarted server) does nothing either.
"""

from __future__ import annotations

from datetime import timedelta
from email.message import EmailMessage

import pytest

from pbem.cli.mailbox import reply_to
from pbem.community import deadlines as dl
from pbem.community.scheduler import HEARTBEAT, Scheduler
from pbem.record import positions, replay_json, replay_record
from tests.moderation.helpers import seat_token_in
from tests.scheduler.conftest import ALICE, BOB, CAROL, MODERATOR, WEEK, Clocked
from tests.server.harness import headline, text_of, to
from tests.server.players import Player, attached_record


@pytest.fixture(autouse=True)
def no_allowance(server: Clocked) -> None:
    """These tests are about what a deadline's policy does; the yearly allowance, spent before it
    applies, has tests of its own (tests/scheduler/test_allowance.py)."""
    server.config.deadlines.vacation_days_per_year = 0


def flat(message) -> str:
    """The plain text with its line wrapping undone."""
    return " ".join(text_of(message).split())


def _advance_to(server: Clocked, when) -> None:
    server.clock.set(when)


def _nothing_more(server: Clocked) -> None:
    """Same time, same object and a new one: nothing happens again."""
    scheduler = server.scheduler()
    assert server.run(scheduler) == []
    assert server.run(scheduler) == []
    assert server.run() == []


def test_the_clock_starts_with_the_game_and_follows_the_moves(server: Clocked) -> None:
    started = server.clock.now()
    game_id, your_move = server.start_alien_city()
    row = server.game(game_id)
    assert row.deadline_at == started + WEEK
    assert row.record["time_control"] == {"kind": "move", "days_per_move": 7, "policy": "forfeit"}
    assert "Deadline for your move: Fri 27 Nov 2026, 10:00 UTC" in flat(your_move)
    server.clock.advance(hours=5)
    out = server.submit(reply_to(your_move, ALICE, Player(ALICE).choose_move(your_move)))
    row = server.game(game_id)
    assert row.to_move == "white"
    assert row.deadline_at == server.clock.now() + WEEK
    assert "Deadline for your move" in flat(to(out, BOB)[0])


def test_reminders_48_and_12_hours_before(server: Clocked) -> None:
    game_id, your_move = server.start_alien_city()
    deadline = server.game(game_id).deadline_at
    assert server.run() == []
    _advance_to(server, deadline - timedelta(hours=48, minutes=1))
    assert server.run() == []
    server.clock.advance(minutes=1)
    out = server.run()
    assert [rcpt for rcpt, _ in out] == [ALICE]
    reminder = out[0][1]
    assert headline(reminder) == f"Reminder: your move in {game_id} (move 1)"
    assert reminder["Subject"] == your_move["Subject"]  # in the game's thread
    assert "deadline Fri 27 Nov 2026, 10:00 UTC, in 2 days" in flat(reminder)
    _nothing_more(server)
    _advance_to(server, deadline - timedelta(hours=12))
    out = server.run()
    assert [rcpt for rcpt, _ in out] == [ALICE]
    assert "in 12 hours" in flat(out[0][1])
    _nothing_more(server)
    assert server.game(game_id).record["clock"]["reminded"] == [48, 12]
    # the reminder carries the seat's token: replying to it with a move plays the move
    state = replay_record(server.game(game_id).record)
    server.submit(reply_to(out[0][1], ALICE, state.move_text(state.legal_moves()[0])))
    assert server.game(game_id).to_move == "white"


def test_no_reminder_longer_than_the_move_itself(server: Clocked) -> None:
    game_id, _ = server.start_alien_city(extra="\ntimecontrol 1")
    deadline = server.game(game_id).deadline_at
    assert deadline == server.clock.now() + timedelta(days=1)
    server.clock.advance(minutes=1)
    assert server.run() == []  # the 48-hour reminder would come before the move began
    _advance_to(server, deadline - timedelta(hours=12))
    assert [rcpt for rcpt, _ in server.run()] == [ALICE]


def test_one_digest_for_two_games(server: Clocked) -> None:
    first, _ = server.start_alien_city()
    server.clock.advance(hours=1)
    second, _ = server.start_alien_city()
    d1, d2 = server.game(first).deadline_at, server.game(second).deadline_at
    _advance_to(server, d1 - timedelta(hours=48))
    out = server.run()
    assert [rcpt for rcpt, _ in out] == [ALICE]
    digest = out[0][1]
    assert str(digest["Subject"]) == "[pbem] Reminder: your move in 2 games"
    assert headline(digest) == "Reminder: your move in 2 games"
    text = flat(digest)
    assert f"{first} (Alien City, you play black against {BOB}), move 1" in text
    assert f"{second} (Alien City" in text
    # the second game's own 48-hour reminder falls on the same day: the digest already named it
    _advance_to(server, d2 - timedelta(hours=48))
    assert server.run() == []
    _nothing_more(server)
    assert server.game(second).record["clock"]["reminded"] == [48]
    # 12 hours before: both due within the same day (22:00 and 23:00 UTC), still one mail
    _advance_to(server, d1 - timedelta(hours=12))
    out = server.run()
    assert len(out) == 1 and headline(out[0][1]) == "Reminder: your move in 2 games"
    _advance_to(server, d2 - timedelta(hours=12))
    assert server.run() == []
    _nothing_more(server)


def test_a_reminder_on_an_already_reminded_day_waits_for_the_next(server: Clocked) -> None:
    first, _ = server.start_alien_city()
    d1 = server.game(first).deadline_at
    _advance_to(server, d1 - timedelta(hours=48))
    assert len(server.run()) == 1
    # a game started after today's digest went out: its reminder waits for tomorrow's mail
    second, _ = server.start_alien_city(extra="\ntimecontrol 1")
    _advance_to(server, server.game(second).deadline_at - timedelta(hours=12))
    assert server.clock.now().date() == (d1 - timedelta(hours=48)).date()
    assert server.run() == []
    server.clock.advance(hours=10)  # the next day in UTC
    out = server.run()
    assert len(out) == 1 and headline(out[0][1]) == "Reminder: your move in 2 games"
    _nothing_more(server)


def test_forfeit_after_one_grace_reminder(server: Clocked) -> None:
    game_id, _ = server.start_alien_city()
    deadline = server.game(game_id).deadline_at
    _advance_to(server, deadline)
    out = server.run()
    assert sorted(rcpt for rcpt, _ in out) == [ALICE, BOB]
    final = to(out, ALICE)[0]
    until = "Sat 28 Nov 2026, 10:00 UTC, in 1 day"
    assert headline(final) == f"Final reminder: your move in {game_id} (move 1) by {until}"
    assert f"This is your final reminder: move by {until}, or you forfeit the game." in flat(final)
    assert seat_token_in(server, final) == (game_id, "black")
    assert headline(to(out, BOB)[0]) == f"black ({ALICE}) missed the deadline in {game_id}"
    assert f"They have 24 more hours, until {until}; then they forfeit." in flat(to(out, BOB)[0])
    row = server.game(game_id)
    assert row.status == "active" and row.deadline_at == deadline + timedelta(hours=24)
    _nothing_more(server)
    server.clock.advance(hours=23, minutes=59)
    assert server.run() == []  # no further reminders during the grace period
    server.clock.advance(minutes=1)
    out = server.run()
    assert sorted(rcpt for rcpt, _ in out) == [ALICE, BOB]
    assert headline(to(out, ALICE)[0]) == f"Game over: you forfeited; {BOB} wins"
    assert headline(to(out, BOB)[0]) == f"Game over: {ALICE} forfeited; you win"
    late = {ALICE: "black (you)", BOB: f"black ({ALICE})"}
    for rcpt, message in out:
        assert f"{late[rcpt]} did not move by the deadline and the 24-hour grace" in flat(message)
        assert attached_record(message)["result"]["winners"] == ["white"]  # the game-over record
    row = server.game(game_id)
    assert row.status == "over" and row.to_move is None and row.deadline_at is None
    assert row.finished_at == server.clock.now()
    assert row.record["result"]["reason"] == "forfeit"
    assert row.record["result"]["forfeited"] == "black"
    assert row.record["result"]["winners"] == ["white"]
    _nothing_more(server)
    server.clock.advance(days=10)
    _nothing_more(server)


def test_forfeit_at_once_without_grace(server: Clocked) -> None:
    server.config.deadlines.grace_reminder = False
    game_id, _ = server.start_alien_city()
    _advance_to(server, server.game(game_id).deadline_at)
    out = server.run()
    assert {rcpt: headline(m) for rcpt, m in out} == {ALICE: f"Game over: you forfeited; {BOB} wins",
                                                      BOB: f"Game over: {ALICE} forfeited; you win"}
    assert "did not move by the deadline and forfeits" in flat(out[0][1])
    assert server.game(game_id).status == "over"
    _nothing_more(server)


def test_a_move_during_grace_saves_the_game(server: Clocked) -> None:
    game_id, _ = server.start_alien_city()
    _advance_to(server, server.game(game_id).deadline_at)
    final = to(server.run(), ALICE)[0]
    server.clock.advance(hours=3)
    state = replay_record(server.game(game_id).record)
    server.submit(reply_to(final, ALICE, state.move_text(state.legal_moves()[0])))
    row = server.game(game_id)
    assert row.to_move == "white" and row.deadline_at == server.clock.now() + WEEK
    server.clock.advance(hours=30)
    assert server.run() == []


def test_notify_policy_mails_the_moderators(server: Clocked) -> None:
    server.config.deadlines.policy = "notify"
    game_id, _ = server.start_alien_city()
    assert server.game(game_id).record["time_control"]["policy"] == "notify"
    _advance_to(server, server.game(game_id).deadline_at)
    out = server.run()
    assert sorted(rcpt for rcpt, _ in out) == [ALICE, BOB, MODERATOR]
    assert "did not move by" in flat(to(out, MODERATOR)[0])
    row = server.game(game_id)
    assert row.status == "active" and row.deadline_at is None and "expired" in row.record["clock"]
    _nothing_more(server)
    server.clock.advance(days=3)
    _nothing_more(server)


NO_MODERATOR = {
    "en": "This game's time control leaves a late player to the moderators ('notify'), but this server "
          "has none, so nobody would decide: the late player forfeits, as with 'forfeit'.",
    "de": "Die Bedenkzeit dieses Spiels überlässt einen säumigen Spieler den Moderatoren ('notify'), aber "
          "dieser Server hat keine, also würde niemand entscheiden: wer zu spät ist, verliert, wie bei "
          "'forfeit'.",
    "sk": "Časová kontrola tejto hry nechá hráča, ktorý mešká, na moderátorov ('notify'), ale tento server "
          "žiadnych nemá, takže by nikto nerozhodol: kto mešká, prehrá, ako pri 'forfeit'.",
}


def test_notify_without_moderators_forfeits_and_says_so(server: Clocked) -> None:
    """A game started with 'notify' whose server has no moderators any more: at its deadline nobody
    would decide, so the deadline applies 'forfeit' (the final reminder, then the loss), and every
    player reads why in their language; nobody reads that the moderators have been told."""
    server.config.deadlines.policy = "notify"
    with server.store.transaction() as tx:
        tx.set_player(BOB, {"language": "de"})
        tx.set_player(CAROL, {"language": "sk"})
    game_id, _ = server.start_alien_city()
    server.submit(server.mail(CAROL, f"observe {game_id}"))
    assert server.game(game_id).record["time_control"]["policy"] == "notify"
    server.config.moderators = []  # removed from the configuration since
    _advance_to(server, server.game(game_id).deadline_at)
    out = server.run()
    assert sorted(rcpt for rcpt, _ in out) == [ALICE, BOB]
    assert headline(to(out, ALICE)[0]).startswith(f"Final reminder: your move in {game_id} (move 1) by ")
    assert NO_MODERATOR["en"] in flat(to(out, ALICE)[0])
    assert NO_MODERATOR["de"] in flat(to(out, BOB)[0])
    assert server.game(game_id).status == "active"
    server.clock.advance(hours=24)
    out = server.run()
    assert {rcpt: headline(m) for rcpt, m in out} == {
        ALICE: f"Game over: you forfeited; {BOB} wins",
        BOB: f"Spiel vorbei: {ALICE} hat durch Fristablauf verloren; du gewinnst",
        CAROL: f"Koniec hry: {ALICE} prehral kontumačne; {BOB} vyhráva"}
    for rcpt, language in ((ALICE, "en"), (BOB, "de"), (CAROL, "sk")):
        assert NO_MODERATOR[language] in flat(to(out, rcpt)[0]), rcpt
        assert "moderators have been told" not in flat(to(out, rcpt)[0])
    row = server.game(game_id)
    assert row.status == "over" and row.record["result"]["reason"] == "forfeit"
    _nothing_more(server)


def _start_space_truckin(server: Clocked) -> dict[str, EmailMessage]:
    """Alice, Bob and Carol start st-1; returns each player's latest mail (the seat to move's is
    "Your move")."""
    invitations = server.submit(server.mail(ALICE, f"new space-truckin with {BOB} {CAROL}"))
    latest: dict[str, EmailMessage] = {}
    for address in (BOB, CAROL):
        for rcpt, message in server.submit(reply_to(to(invitations, address)[0], address, "accept")):
            latest[rcpt] = message
    return latest


def _seat_of(row, address: str) -> str:
    return next(s.seat for s in row.seats if s.email == address)


def _email_of(row, seat: str) -> str:
    return next(s.email for s in row.seats if s.seat == seat)


def _forfeit_now(server: Clocked) -> list[tuple[str, EmailMessage]]:
    """Let the seat to move in st-1 miss its deadline and the grace period."""
    _advance_to(server, server.game("st-1").deadline_at)
    assert len(server.run()) == 3  # the final reminder and two notes
    server.clock.advance(hours=24)
    return server.run()


def test_space_truckin_forfeit_drops_the_late_player_and_the_game_goes_on(server: Clocked) -> None:
    _start_space_truckin(server)
    row = server.game("st-1")
    assert row.status == "active" and row.deadline_at is not None
    seats = [s.seat for s in row.seats]
    late = row.to_move
    after = seats[(seats.index(late) + 1) % 3]
    before = replay_record(row.record)
    out = _forfeit_now(server)
    assert sorted(rcpt for rcpt, _ in out) == [ALICE, BOB, CAROL]
    your_move = to(out, _email_of(row, after))[0]
    assert headline(your_move) == f"Your move (move 1). {late} ({_email_of(row, late)}) is dropped from st-1."
    text = flat(your_move)
    assert f"{late} ({_email_of(row, late)}) did not move by the deadline and the 24-hour grace" in text
    assert f"{after} plays the tile {late} drew, {before.drawn_tile}" in text
    assert "Deadline for your move: Sat 05 Dec 2026, 10:00 UTC" in text and "DROPPED" in text
    assert seat_token_in(server, your_move) == ("st-1", after)
    assert "You take no more turns" in flat(to(out, _email_of(row, late))[0])
    third = next(s for s in seats if s not in (late, after))
    assert headline(to(out, _email_of(row, third))[0]) == (
        f"{late} ({_email_of(row, late)}) is dropped from st-1; {after} ({_email_of(row, after)}) is to move")
    row = server.game("st-1")
    assert row.status == "active" and row.to_move == after
    assert row.deadline_at == server.clock.now() + WEEK
    assert row.record["moves"][-1] == {"drop": late, "at": dl.iso(server.clock.now()), "reason": "forfeit"}
    assert row.record["dropped"] == [late] and "result" not in row.record
    state = replay_record(row.record)
    assert state.to_move == after and state.dropped_seats == (late,)
    assert state.drawn_tile == before.drawn_tile and state.ply == 0
    _nothing_more(server)
    # the dropped player can neither move nor resign; the new seat to move plays the drawn tile
    dropped_mail = to(out, _email_of(row, late))[0]
    reply = server.submit(reply_to(dropped_mail, _email_of(row, late), "resign st-1"))
    assert "you were dropped from game st-1" in flat(to(reply, _email_of(row, late))[0])
    move = Player(ALICE).choose_move(your_move)
    out = server.submit(reply_to(your_move, _email_of(row, after), move))
    # the seat to move next hears of it; the mover needs no confirmation (default notification level)
    assert [rcpt for rcpt, _ in out] == [_email_of(row, third)]
    told = headline(out[0][1])
    assert told == f"Your move (move 2). {_email_of(row, after)} played {move}."
    row = server.game("st-1")
    assert row.status == "active" and row.to_move == third
    assert row.deadline_at == server.clock.now() + WEEK


def test_space_truckin_plays_on_after_a_drop_until_the_last_forfeit(server: Clocked) -> None:
    """Two players play on by mail after the third is dropped; the record replays to the server's
    own state at every step; when one of the two is late as well, the other wins."""
    latest = _start_space_truckin(server)
    first_late = server.game("st-1").to_move
    for rcpt, message in _forfeit_now(server):
        latest[rcpt] = message
    players = {address: Player(address, seed) for seed, address in enumerate((ALICE, BOB, CAROL))}
    dropped_address = _email_of(server.game("st-1"), first_late)
    for _ in range(12):
        row = server.game("st-1")
        mover = _email_of(row, row.to_move)
        mail = latest[mover]
        assert "Your move (move " in headline(mail), headline(mail)
        out = server.submit(reply_to(mail, mover, players[mover].choose_move(mail)))
        assert dropped_address not in [rcpt for rcpt, _ in out]  # no boards for a dropped player
        for rcpt, message in out:
            latest[rcpt] = message
        row = server.game("st-1")
        live = server.processor.cache.get("st-1", row.record)
        again = replay_record(row.record)
        assert live is not None and again.render() == live.render()
        assert again.score().totals == live.score().totals and again.to_move == live.to_move
        assert row.to_move == again.to_move != first_late
    row = server.game("st-1")
    second_late = row.to_move
    winner = next(s.seat for s in row.seats if s.seat not in (first_late, second_late))
    totals = replay_record(row.record).score().totals
    out = _forfeit_now(server)
    assert sorted(rcpt for rcpt, _ in out) == [ALICE, BOB, CAROL]
    for rcpt, message in out:
        text = flat(message)
        assert f"The game ends here: only {winner} is left." in text
        assert f"{second_late} (forfeited)" in text and f"{first_late} {totals[first_late]} (dropped)" in text
        wins = "you win" if rcpt == _email_of(row, winner) else f"{_email_of(row, winner)} wins"
        late = "you forfeited" if rcpt == _email_of(row, second_late) else \
            f"{_email_of(row, second_late)} forfeited"
        assert headline(message) == f"Game over: {late}; {wins}"
    row = server.game("st-1")
    result = row.record["result"]
    assert row.status == "over" and row.deadline_at is None
    assert result["winners"] == [winner] and result["ranking"] == [winner, second_late, first_late]
    assert row.record["dropped"] == [first_late, second_late]
    # the final record replays; the drop is not a ply, so replay --json keeps one line per ply
    state = replay_record(row.record)
    assert state.dropped_seats == (first_late,) and state.to_move == second_late
    lines = [replay_json(p) for p in positions(row.record)]
    assert [line["ply"] for line in lines] == list(range(state.ply + 1))
    assert lines[0]["to_move"] != first_late and all(line["to_move"] != first_late for line in lines)
    _nothing_more(server)


def test_space_truckin_after_a_drop_plays_to_the_end_with_the_dropped_player_last(server: Clocked) -> None:
    latest = _start_space_truckin(server)
    dropped = server.game("st-1").to_move
    for rcpt, message in _forfeit_now(server):
        latest[rcpt] = message
    players = {address: Player(address, seed) for seed, address in enumerate((ALICE, BOB, CAROL))}
    while server.game("st-1").status == "active":
        row = server.game("st-1")
        mover = _email_of(row, row.to_move)
        out = server.submit(reply_to(latest[mover], mover, players[mover].choose_move(latest[mover])))
        for rcpt, message in out:
            latest[rcpt] = message
    assert sorted(rcpt for rcpt, _ in out) == [ALICE, BOB, CAROL]  # the dropped player gets the result
    row = server.game("st-1")
    result = row.record["result"]
    live = server.processor.cache.get("st-1", row.record)
    state = replay_record(row.record)
    assert live is not None and state.is_over and state.render() == live.render()
    assert state.score().totals == live.score().totals == result["totals"]
    assert result["reason"] == "scored" and result["ranking"][-1] == dropped
    assert dropped not in result["winners"] and state.dropped_seats == (dropped,)
    assert row.deadline_at is None and row.status == "over"


def test_outage_extends_every_deadline_once(server: Clocked) -> None:
    server.config.deadlines.outage_threshold_minutes = 30
    game_id, _ = server.start_alien_city()
    deadline = server.game(game_id).deadline_at
    assert server.run() == []  # writes the heartbeat
    server.clock.advance(minutes=20)
    assert server.run() == []
    assert server.game(game_id).deadline_at == deadline  # 20 minutes is no outage
    server.clock.advance(days=8)  # the server was down past the deadline
    report = server.scheduler().run_once()
    assert report.outage == timedelta(days=8) and report.extended == 1
    assert report.graces == report.forfeits == 0
    assert server.game(game_id).deadline_at == deadline + timedelta(days=8)
    server.take_outbox()
    _nothing_more(server)
    assert server.game(game_id).deadline_at == deadline + timedelta(days=8)
    with server.store.transaction() as tx:
        assert tx.get_meta(HEARTBEAT) == server.clock.now().isoformat()


def test_a_crash_before_commit_repeats_the_action_once(server: Clocked,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    game_id, _ = server.start_alien_city()
    _advance_to(server, server.game(game_id).deadline_at)
    broken = server.scheduler()

    def crash(*args: object, **kwargs: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(broken.outgoing, "deliver", crash)
    report = broken.run_once()
    assert report.errors == 1 and report.graces == 0
    assert server.take_outbox() == []
    assert server.game(game_id).deadline_at == server.clock.now()  # nothing committed
    out = server.run()  # restarted: the grace happens now, once
    assert sorted(rcpt for rcpt, _ in out) == [ALICE, BOB]
    _nothing_more(server)


def test_a_scheduler_in_another_process_sees_the_same_keys(server: Clocked) -> None:
    """Two schedulers racing (e.g. two daemons by mistake) still act once: claims share the store."""
    game_id, _ = server.start_alien_city()
    _advance_to(server, server.game(game_id).deadline_at - timedelta(hours=48))
    one, two = server.scheduler(), Scheduler(server.config, server.store, server.clock,
                                             secret=server.processor.secret)
    one.run_once()
    two.run_once()
    assert len(server.take_outbox()) == 1


def test_a_ply_that_comes_back_after_an_undo_gets_its_grace_again(server: Clocked) -> None:
    game_id, _ = server.start_alien_city()
    _advance_to(server, server.game(game_id).deadline_at)
    final = to(server.run(), ALICE)[0]
    state = replay_record(server.game(game_id).record)
    server.submit(reply_to(final, ALICE, state.move_text(state.legal_moves()[0])))
    # an undo (as cmd_observe does it): the move leaves the record, the clock restarts at ply 0
    with server.store.transaction() as tx:
        row = tx.get_game(game_id)
        row.record["moves"] = [e for e in row.record["moves"] if "move" not in e]
        row.to_move = "black"
        dl.start_clock(row, "black", server.clock.now())
        tx.save_game(row)
    assert dl.turn_key(server.game(game_id)) == "0.3"
    _advance_to(server, server.game(game_id).deadline_at)
    out = server.run()
    assert headline(to(out, ALICE)[0]).startswith(f"Final reminder: your move in {game_id} (move 1) by ")
    assert server.game(game_id).status == "active"


def test_observers_are_told_of_a_forfeit(server: Clocked) -> None:
    game_id, _ = server.start_alien_city()
    watcher = "carol@example.org"
    server.submit(server.mail(watcher, f"observe {game_id}"))
    server.config.deadlines.grace_reminder = False
    _advance_to(server, server.game(game_id).deadline_at)
    out = server.run()
    told = to(out, watcher)
    assert [headline(m) for m in told] == [f"Game over: {ALICE} forfeited; {BOB} wins"]
    assert f"black ({ALICE}) did not move by the deadline and forfeits game {game_id}." in flat(told[0])
    assert seat_token_in(server, told[0]) is None, "an observer must not get a seat token"
