"""``tournament T pause`` stops the time of the tournament, not only its rounds: every game in play
has its move clock stopped (as ``admin pause`` does for one game) and the round's deadline stands
still; ``resume`` starts each clock again with the time it had left and moves the round's
deadline on by the pause. Each entrant gets one mail each time, in their language, naming their
own games; a game a moderator had paused on its own stays paused."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from pbem.record import replay_record
from tests.server.players import headline, text_of
from tests.store.conftest import Backend
from tests.tournaments.club import MODERATOR, Club
from tests.tournaments.test_by_mail import PLAYERS, announce


def test_pause_stops_the_clocks_and_resume_restarts_them(backend: Backend, tmp_path: Path) -> None:
    club = Club(tmp_path, backend.target, deadlines={"vacation_days_per_year": 0})
    try:
        players = PLAYERS[:6]
        announce(club, "swiss rounds 2 round 10 time 3 forfeit", players)
        club.reply(players[1], club.send(players[1], "set language de"), "set language de")
        club.tick(days=21)  # it starts
        row = club.store.tournament_views().get("t-1")
        games = [g["id"] for g in row.doc["rounds"][0]["games"]]
        started = club.clock.now()
        round_deadline = row.doc["rounds"][0]["deadline_at"]
        alone = games[2]  # a moderator pauses this one game before the tournament pauses
        club.moderate(f"admin pause {alone}")
        for _ in range(48):  # a day passes (in short steps: a long gap would read as an outage)
            club.tick(minutes=30)
        before = {p: len(club.inbox[p]) for p in players}
        answer = club.moderate("tournament t-1 pause the holidays")
        assert headline(answer) == ("t-1 is paused: no new round, and its games' clocks stop until it "
                                    "resumes"), headline(answer)
        assert f"Games: {games[0]}, {games[1]}." in text_of(answer), text_of(answer)
        for player in players:
            new = club.inbox[player][before[player]:]
            assert len(new) == 1, [headline(m) for m in new]
            mine = next(g for g in games if player in [s.email for s in club.store.get_game(g).seats])
            text = text_of(new[0])
            if player == players[1]:
                assert new[0]["Content-Language"] == "de" and "t-1 ist pausiert" in headline(new[0]), text
                assert "Grund: the holidays" in text, text
            else:
                assert "Reason: the holidays" in text
                assert (f"{mine}: the clock is stopped." in text) == (mine != alone), text
                assert ("You may go on playing meanwhile (answer each game's own mail); no time counts "
                        "until it resumes.") in " ".join(text.split()) or mine == alone
        assert all(club.store.get_game(g).deadline_at is None for g in games)
        club.tick(days=20)  # three days a move and ten a round: without the pause all would be over
        assert all(club.store.get_game(g).status == "active" for g in games)
        assert not [m for m in club.inbox.get(MODERATOR, []) if "passed its deadline" in headline(m)]
        before = {p: len(club.inbox[p]) for p in players}
        resumed_at = club.clock.now()
        answer = club.moderate("tournament t-1 resume")
        assert headline(answer) == "t-1 goes on: its games' clocks run again", headline(answer)
        for g in games[:2]:
            game = club.store.get_game(g)
            assert game.deadline_at == resumed_at + timedelta(days=2), (g, game.deadline_at)
            mover = next(s.email for s in game.seats if s.seat == game.to_move)
            told = club.inbox[mover][before[mover]:]
            assert len(told) == 1
            said = ("du bist am Zug, bis" if mover == players[1] else "your move, by")
            assert f"{g}: {said} {resumed_at + timedelta(days=2):%Y-%m-%d %H:%M} UTC." in \
                text_of(told[0]), text_of(told[0])
        assert club.store.get_game(alone).deadline_at is None  # still the moderator's pause
        row = club.store.tournament_views().get("t-1")
        moved = row.doc["rounds"][0]["deadline_at"]
        assert moved > round_deadline and "paused" not in row.doc
        assert row.due_at is not None and row.due_at - (started + timedelta(days=10)) == timedelta(days=20)
        actions = [a["action"] for a in club.store.get_game(games[0]).record["actions"]]
        assert actions == ["pause", "resume"], actions
    finally:
        club.close()


STOPPED = {"en": "No deadline for now: your clock is stopped (the tournament is paused). You will be "
                 "told when it runs again.",
           "de": "Vorerst keine Frist: deine Uhr ist angehalten (das Turnier ist pausiert). Du erfährst, "
                 "wann sie wieder läuft.",
           "sk": "Zatiaľ žiadny termín: tvoje hodiny stoja (turnaj je pozastavený). Dozvieš sa, keď sa "
                 "znova rozbehnú."}


@pytest.mark.parametrize("language", ["en", "de", "sk"])
def test_a_move_while_the_tournament_is_paused_says_the_clock_is_stopped(tmp_path: Path,
                                                                         language: str) -> None:
    """The listing gives the games' time control with what a deadline does; a move made while the
    tournament is paused brings the next player a "your move" without a deadline, saying their
    clock is stopped and why, in their language."""
    club = Club(tmp_path, deadlines={"vacation_days_per_year": 0})
    try:
        players = PLAYERS[:2]
        announce(club, "swiss rounds 1 round 10 time 3 forfeit", players)
        listing = " ".join(text_of(club.send(players[0], "tournaments")).split())
        assert "Time control: 3 days per move; at the deadline: the late player forfeits." in listing
        for player in players:
            club.reply(player, club.send(player, f"set language {language}"), f"set language {language}")
        club.tick(days=21)  # it starts
        game_id = club.store.tournament_views().get("t-1").doc["rounds"][0]["games"][0]["id"]
        club.moderate("tournament t-1 pause")
        game = club.store.get_game(game_id)
        mover = next(s.email for s in game.seats if s.seat == game.to_move)
        other = next(s.email for s in game.seats if s.email != mover)
        state = replay_record(game.record)
        out = club.reply(mover, club.game_mail(mover, game_id), state.move_text(state.legal_moves()[0]))
        told = " ".join(text_of(next(m for rcpt, m in out if rcpt == other)).split())
        assert STOPPED[language] in told, told
        assert club.store.get_game(game_id).deadline_at is None
    finally:
        club.close()
