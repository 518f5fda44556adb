"""Every format runs to its end by mail, on both stores: the moderator announces it, players enter
and play (moves or resignations, answered as a person answers mail), the scheduler starts it at
its date, and every mail is read as its recipient reads it (``MailCheck``: one thread a game, 78
columns, "your move" only to the player to move)."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from pbem.archive.names import pseudonym
from pbem.store.secret import server_secret
from pbem.tournaments import document as d
from pbem.tournaments.running import ranking
from tests.server.players import headline, text_of
from tests.store.conftest import Backend
from tests.tournaments.club import Club

PLAYERS = [f"p{i}@example.org" for i in range(10)]


def announce(club: Club, spec: str, players: list[str], game: str = "alien-city") -> None:
    answer = club.moderate(f"tournament new {game} {spec} starts 2026-12-10")
    first = headline(answer)
    assert first.startswith("Tournament t-1 (") and "announced" in first, first
    for player in players:
        club.send(player, "help")  # a first mail, as a newcomer writes
        answer = club.enter(player, "t-1")
        assert headline(answer).startswith("You entered t-1"), headline(answer)


def round_mails(club: Club, player: str) -> list[str]:
    return [headline(m) for m in club.inbox[player] if " of t-1" in headline(m)]


def finish(club: Club, players: list[str], seed: int = 1) -> None:
    club.tick(days=21)  # the start date passes: the scheduler starts it
    club.play(random.Random(seed))
    row = club.store.tournament_views().get("t-1")
    assert row.status == "over", (row.status, row.doc.get("rounds"))
    for player in players:
        last = [m for m in club.inbox[player] if "is over" in headline(m)]
        assert len(last) == 1, [headline(m) for m in club.inbox[player]]
        assert "you finished in place" in headline(last[0])


def test_swiss_to_the_end(club: Club) -> None:
    players = PLAYERS[:6]
    announce(club, "swiss rounds 3 time 5 forfeit", players)
    again = club.send(players[0], "enter t-1")
    assert headline(again) == ("Not done: you have already entered t-1; nothing changed. The table: "
                               "tournament t-1; to leave: withdraw t-1")
    assert "t-1 (Alien City, Swiss): starts 2026-12-10" in text_of(club.send(players[0], "games"))
    finish(club, players)
    row = club.store.tournament_views().get("t-1")
    assert len(row.doc["rounds"]) == 3
    meetings = [frozenset(g["players"]) for r in row.doc["rounds"] for g in r["games"]]
    assert len(meetings) == len(set(meetings)) == 9, "no pair meets twice"
    for player in players:
        rounds = round_mails(club, player)
        assert [r.split(" of t-1")[0].split(". ")[-1] for r in rounds] == ["Round 1", "Round 2",
                                                                           "Round 3"], rounds
    for game_id in (g["id"] for r in row.doc["rounds"] for g in r["games"]):
        game = club.store.get_game(game_id)
        assert game.record["tournament"]["id"] == "t-1"
        assert game.record["time_control"]["days_per_move"] == 5
    table = text_of(club.send(players[0], "tournament t-1"))
    assert "Buch" in table and "Round 3" in table
    # the table is a function of what is stored: computed again from a fresh read, the same
    stored = row.doc["result"]["ranking"]
    assert ranking(club.store.tournament_views().get("t-1")) == [tuple(x) for x in stored]
    standings = text_of(club.send(players[0], "standings alien-city"))
    key = server_secret(club.store)  # every player listed, by the pseudonym the site gives them
    assert all(pseudonym(p, key) in standings for p in players), "tournament games are rated"
    assert f"{pseudonym(players[0], key)} (you)" in standings
    assert not any(p in standings for p in players), "no address in a mail anyone may ask for"


def test_round_robin_with_a_rest_and_a_withdrawal(club: Club) -> None:
    players = PLAYERS[:5]
    announce(club, "round-robin", players)
    club.tick(days=21)
    rests = [h for p in players for h in round_mails(club, p) if "no game this round" in h]
    assert len(rests) == 1  # five players: one rests each round
    resting = next(m for p in players for m in club.inbox[p] if "no game this round" in headline(m))
    assert "Your next game comes with the next round, when this round's games end (at the latest after " \
        "its deadline, 2027-01-01 10:00 UTC). The table: tournament t-1" in " ".join(text_of(resting).split())
    # p4 withdraws in round 1: the game in play is forfeited, the later ones are won without a game
    answer = club.send(players[4], "withdraw t-1")
    assert headline(answer) == "Confirm: withdraw t-1"
    out = club.reply(players[4], answer, "withdraw t-1")
    assert any(headline(m).startswith("You withdrew from t-1") for rcpt, m in out if rcpt == players[4])
    assert any("withdrew from t-1" in headline(m) for rcpt, m in out if rcpt == players[0])
    club.play(random.Random(3))
    row = club.store.tournament_views().get("t-1")
    assert row.status == "over"
    unplayed = [g for r in row.doc["rounds"] for g in r["games"] if not g.get("played", True)]
    assert unplayed and all(g["points"][g["players"].index(players[4])] == 0 for g in unplayed)
    final = [m for m in club.inbox[players[0]] if "is over" in headline(m)][-1]
    assert "   X" in text_of(final), "the crosstable"
    assert "* withdrew" in text_of(final)
    # "(you)" marks the reader, in the table, the crosstable, the rounds and the winner's line
    table = text_of(final)
    assert table.count("p0@example.org (you)") >= 3 and "p1@example.org (you)" not in table, table
    winner = row.doc["result"]["ranking"][0][1]
    said = text_of([m for m in club.inbox[winner] if "is over" in headline(m)][-1])
    assert f"The winner: {winner} (you)." in said, said


@pytest.mark.parametrize("kind", ["elimination", "double-elimination"])
def test_elimination_to_the_end(club: Club, kind: str) -> None:
    players = PLAYERS[:5]
    announce(club, kind, players)
    finish(club, players, seed=4)
    row = club.store.tournament_views().get("t-1")
    places = row.doc["result"]["ranking"]
    assert sorted(p for _, p in places) == sorted(players)
    table = text_of(club.send(players[1], "tournament t-1"))
    assert "goes through" in table and ("L1-1" in table) == (kind == "double-elimination")
    # seeds by rating: everyone starts at 1500, so by entry; the top three seeds have byes, and
    # every match whose players are known starts at once (seeds 2 and 3 meet in the first stage)
    first = {frozenset(g["players"]) for g in row.doc["rounds"][0]["games"]}
    assert first == {frozenset(players[3:5]), frozenset(players[1:3])}


def test_ladder_challenges(club: Club) -> None:
    players = PLAYERS[:9]
    announce(club, "ladder", players)
    club.tick(days=21)
    started = club.last(players[8])
    assert "number 9 of 9 on the ladder" in headline(started)
    assert "You may challenge places 6 to 8: tournament t-1 challenge 8" in text_of(started)
    assert "You are at the top: the others challenge you." in text_of(club.last(players[0]))
    assert "You may challenge the player at place 1: tournament t-1 challenge 1" in text_of(
        club.last(players[1]))  # not "up to 2 places above" from place 2
    far = club.reply(players[8], started, "tournament t-1 challenge 5")
    said = " ".join(text_of([m for r, m in far if r == players[8]][-1]).split())
    assert ("from place 9 you may challenge at most 3 places above. You may challenge places 6 to 8: "
            "tournament t-1 challenge 8") in said, said
    top = club.reply(players[0], club.last(players[0]), "tournament t-1 challenge 2")
    said = " ".join(text_of([m for r, m in top if r == players[0]][-1]).split())
    assert "you are number 1: you may challenge only players above you. You are at the top" in said
    out = club.reply(players[8], started, "tournament t-1 challenge 6")
    mine = [m for r, m in out if r == players[8]][-1]
    assert headline(mine).startswith("Your move (move 1). You challenged p5@example.org (place 6)")
    assert any(headline(m).startswith("Your move") is False and "A ladder challenge" in headline(m)
               for r, m in out if r == players[5])
    two = club.reply(players[8], started, "tournament t-1 challenge 7")
    assert "one at a time" in headline([m for r, m in two if r == players[8]][-1])
    game = club.store.tournament_views().get("t-1").doc["challenges"][0]["id"]
    club.resign(players[5], game, club.game_mail(players[5], game))  # the defender resigns
    row = club.store.tournament_views().get("t-1")
    assert row.doc["ladder"].index(players[8]) == 5 and row.doc["ladder"].index(players[5]) == 6
    assert headline(club.last(players[8], "on the ladder")) == "t-1: you take place 6 on the ladder"
    for moved, place in ((players[5], 7), (players[6], 8), (players[7], 9)):  # each moved down is told
        told = club.last(moved, "on the ladder")
        assert headline(told) == "t-1: p8@example.org takes place 6 on the ladder", headline(told)
        assert f"You are now number {place}." in text_of(told)
    again = club.send(players[8], "tournament t-1 challenge 5")
    assert "Not done" in headline(again)  # a new mail without the token: a challenge starts a game
    rematch = club.reply(players[5], club.last(players[5]), "tournament t-1 challenge 6")
    assert "played recently" in headline([m for r, m in rematch if r == players[5]][-1])
    table = text_of(club.send(players[6], "tournament t-1"))
    assert "Running: 9 players on the ladder." in table and "round 0" not in table, table
    assert "p6@example.org (you)" in table and "You may challenge places 5 to 7: tournament t-1 challenge 7" \
        in " ".join(table.split()), table
    ended = club.moderate("tournament t-1 end")
    assert club.store.tournament_views().get("t-1").status == "over", text_of(ended)


def test_league_two_seasons_with_promotion(club: Club) -> None:
    players = PLAYERS[:6]
    announce(club, "league division 3 seasons 2", players)
    finish(club, players, seed=5)
    row = club.store.tournament_views().get("t-1")
    first, second = row.doc["seasons"]
    top, bottom = first["final"]
    assert second["divisions"][0] == [*top[:2], bottom[0]]  # the best of division 2 went up
    assert second["divisions"][1] == [top[2], *bottom[1:]]  # the last of division 1 went down
    assert any("season 2 starts" in headline(m) for m in club.inbox[players[0]])


def test_space_truckin_tables(club: Club) -> None:
    players = PLAYERS[:7]
    announce(club, "swiss rounds 2 tables 3", players, game="space-truckin")
    finish(club, players, seed=6)
    row = club.store.tournament_views().get("t-1")
    for round_ in row.doc["rounds"]:
        sizes = sorted(len(g["players"]) for g in round_["games"])
        assert sizes == [3, 4]
        for g in round_["games"]:
            assert sum(g["points"]) == pytest.approx(len(g["players"]) / 2)  # scored by place


def test_round_robin_at_tables_all_at_once(club: Club) -> None:
    players = PLAYERS[:6]
    announce(club, "round-robin tables 3 together", players, game="space-truckin")
    club.tick(days=21)
    mails = [h for h in round_mails(club, players[0])]
    assert len(mails) == 1 and "new games" in mails[0], mails  # one mail with all their games
    club.play(random.Random(7))
    row = club.store.tournament_views().get("t-1")
    assert row.status == "over" and len(row.doc["rounds"]) == 1
    met = {frozenset((a,
                      b)) for g in row.doc["rounds"][0]["games"] for a in g["players"] for b in g["players"]
           if a != b}
    assert len(met) == 15


def test_json_twin_announces_the_same(club: Club) -> None:
    turn = {"command": "tournament", "action": "new", "game": "alien-city", "format": "swiss",
            "settings": ["rounds", "3", "starts", "2026-12-10"]}
    answer = club.send("mod@example.org", json.dumps(turn) + "\n")
    assert "Not done" in headline(answer)  # without the moderator token
    body = json.dumps({"commands": [turn], "token": club.token})
    answer = club.send("mod@example.org", body)
    assert headline(answer) == "Tournament t-1 (Alien City, Swiss) announced", headline(answer)
    row = club.store.tournament_views().get("t-1")
    assert row.doc["settings"]["rounds"] == 3 and row.doc["settings"]["min"] == 6
    entered = club.send(PLAYERS[0], json.dumps({"command": "enter", "tournament": "t-1"}))
    assert headline(entered) == "Confirm: enter t-1"


def test_bad_input_gets_clear_answers_and_creates_nothing(club: Club) -> None:
    cases = {
        "tournament new alien-city swiss rounds 5 max 2": "a swiss of 5 rounds needs at least 10 players",
        "tournament new alien-city roundabout": "which format?",
        "tournament new alien-city swiss starts 2026-13-40": "is not a date",
        "tournament new alien-city swiss starts 2020-01-01": "in the past",
        "tournament new alien-city elimination tables 3": "tables of 3 work only for round-robin and swiss",
        "tournament new space-truckin swiss tables 6": "'tables 6': a whole number from 3 to 5",
        "tournament new alien-city ladder rounds 3": "'rounds' is for swiss",
        "tournament new chess swiss": "chess",
    }
    for line, expected in cases.items():
        answer = club.moderate(line)
        assert expected in text_of(answer), (line, text_of(answer))
    assert club.store.tournament_views().list() == []
    stranger = club.send(PLAYERS[0], "tournament new alien-city swiss")
    assert "only the moderators announce tournaments" in text_of(stranger)
    announce(club, "swiss rounds 1 max 2", PLAYERS[:2])
    full = club.send(PLAYERS[2], "enter t-1")
    assert "t-1 is over" in text_of(full) or "full" in text_of(full) or "closed" in text_of(full)
    club.play(random.Random(8))
    assert club.store.tournament_views().get("t-1").status == "over"
    late = club.reply(PLAYERS[0], club.last(PLAYERS[0]), "withdraw t-1")
    assert "t-1 is over; there is nothing to withdraw from" in text_of([m for r,
                                                                        m in late if r == PLAYERS[0]][-1])
    other = club.reply(PLAYERS[1], club.last(PLAYERS[1]), "tournament t-1 pause")
    refused = " ".join(text_of([m for r, m in other if r == PLAYERS[1]][-1]).split())
    assert ("only the organizer of t-1 (mod@example.org) or a moderator can pause it; ask them. "
            "'tournament t-1' sends you the table.") in refused, refused
    # every refusal says what would be right (the findings of a demanding user, tourn2-findings.md)
    said = {line: " ".join(text_of(club.send(PLAYERS[5], line)).split()) for line in (
        "enter t1", "tournament t-1 frobnicate", "tournaments chess", "withdraw t-1")}
    assert "did you mean enter t-1?" in said["enter t1"]
    assert ("'frobnicate' is not something a tournament does; the operations are table, challenge, start, "
            "pause,") in said["tournament t-1 frobnicate"] and "The table: tournament t-1." in \
        said["tournament t-1 frobnicate"]
    assert "space-truckin. tournaments [GAME-NAME]" in said["tournaments chess"]  # one full stop
    assert "t-1 is over; there is nothing to withdraw from" in said["withdraw t-1"]
    unknown = club.send(PLAYERS[0], "enter t-99")
    assert "there is no tournament t-99" in text_of(unknown)
    assert "is a game, not a tournament" in text_of(club.send(PLAYERS[0], "tournament ac-1"))


def test_moderator_operations_are_logged_and_told(club: Club) -> None:
    players = PLAYERS[:4]
    announce(club, "swiss rounds 2", players)
    club.send(players[1], "set language de")
    club.reply(players[1], club.last(players[1]), "set language de")
    club.tick(days=21)
    row = club.store.tournament_views().get("t-1")
    first = [g["id"] for g in row.doc["rounds"][0]["games"]]
    answer = club.moderate("tournament t-1 repair fresh start")
    assert "paired again" in headline(answer), text_of(answer)
    row = club.store.tournament_views().get("t-1")
    assert [g["id"] for g in row.doc["rounds"][0]["games"]] != first
    assert all(club.store.get_game(g).status == "cancelled" for g in first)
    club.moderate("tournament t-1 pause holidays")
    assert club.store.tournament_views().get("t-1").status == "paused"
    told = [m for m in club.inbox[players[0]] if "is paused" in headline(m)]
    assert told and "Reason: holidays" in text_of(told[-1])
    german = [m for m in club.inbox[players[1]] if "t-1" in headline(m)][-1]
    assert german["Content-Language"] == "de"
    club.moderate("tournament t-1 resume")
    club.moderate("tournament t-1 deadline 2027-01-20")
    club.moderate(f"tournament t-1 replace {players[3]} new@example.org")
    row = club.store.tournament_views().get("t-1")
    assert d.entrant(row.doc, "new@example.org") is not None
    game = next(g for g in row.doc["rounds"][0]["games"] if "new@example.org" in g["players"])
    seat = next(s.seat for s in club.store.get_game(game["id"]).seats if s.email == players[2] or True)
    del seat
    result = club.moderate(f"tournament t-1 result {game['id']} draw")
    assert "Not done" not in headline(result), text_of(result)
    actions = [a["action"] for a in club.store.tournament_views().get("t-1").doc["actions"]]
    assert actions == ["repair", "pause", "resume", "deadline", "replace", "result"]
    club.moderate("tournament t-1 end")
    assert club.store.tournament_views().get("t-1").status == "over"


def test_a_reply_to_a_tournament_mail_is_about_that_tournament(club: Club) -> None:
    players = PLAYERS[:4]
    announce(club, "swiss rounds 2", players)
    club.tick(days=21)
    club.moderate("tournament t-1 pause a short break")
    notice = [m for m in club.inbox[players[2]] if "is paused" in headline(m)][-1]
    assert str(notice["Subject"]).startswith("[pbem t-1]")
    table = [m for r, m in club.reply(players[2], notice, "tournament") if r == players[2]][-1]
    assert headline(table).startswith("Tournament t-1 ("), headline(table)
    chat = [m for r, m in club.reply(players[2], notice, "Will we go on soon?") if r == players[2]][-1]
    assert "no game t-1" not in text_of(chat) and "not understood" in headline(chat).lower(), headline(chat)


def test_round_deadline_ends_games_by_the_score_and_pairs_the_next(club: Club) -> None:
    players = PLAYERS[:4]
    announce(club, "swiss rounds 2 round 3 adjudicate score", players)
    club.tick(days=21)
    assert len(club.store.tournament_views().get("t-1").doc["rounds"]) == 1
    club.tick(days=3, minutes=1)  # nobody moved; the round's deadline passes
    row = club.store.tournament_views().get("t-1")
    assert len(row.doc["rounds"]) == 2, row.doc["rounds"]
    first = [g["id"] for g in row.doc["rounds"][0]["games"]]
    assert all(club.store.get_game(g).status == "over" for g in first)
    assert all(g["points"] == [0.5, 0.5] for g in row.doc["rounds"][0]["games"])  # 0 - 0: drawn
    told = [m for m in club.inbox[players[0]] if "Round 2 of t-1" in headline(m)]
    assert len(told) == 1


def test_games_the_clock_ends_count_and_the_moderators_are_asked_at_the_deadline(
        backend: Backend, tmp_path: Path) -> None:
    # no yearly allowance to spend for the late players first: their time runs out at once
    club = Club(tmp_path, backend.target, deadlines={"vacation_days_per_year": 0})
    try:
        _clock_ends_games(club)
    finally:
        club.close()


def _clock_ends_games(club: Club) -> None:
    players = PLAYERS[:4]
    announce(club, "swiss rounds 2 round 30 time 1 forfeit", players)
    club.tick(days=21)
    row = club.store.tournament_views().get("t-1")
    first = row.doc["rounds"][0]["games"]
    for _ in range(3 * 24 * 2):  # a day a move, a day's grace: the scheduler forfeits the late players
        club.tick(minutes=30)  # (it runs often: a longer gap reads as an outage, which extends deadlines)
    row = club.store.tournament_views().get("t-1")
    assert all(club.store.get_game(g["id"]).status == "over" for g in first)
    assert len(row.doc["rounds"]) == 2, "the next round, paired in the scheduler's run"
    assert all(sorted(g["points"]) == [0.0, 1.0] for g in row.doc["rounds"][0]["games"])
    club.tick(days=31)  # round 2's deadline: the organizer is asked to decide what is in play
    notices = [m for m in club.inbox.get("mod@example.org", []) if "passed its deadline" in headline(m)]
    assert notices or club.store.tournament_views().get("t-1").status == "over"


def test_withdrawal_before_half_way_removes_the_player_from_the_table(club: Club) -> None:
    players = PLAYERS[:4]
    announce(club, "round-robin withdrawals remove", players)
    club.tick(days=21)
    club.reply(players[3], club.send(players[3], "withdraw t-1"), "withdraw t-1")
    club.play(random.Random(13))
    row = club.store.tournament_views().get("t-1")
    assert row.status == "over" and d.entrant(row.doc, players[3])["status"] == "removed"
    ranked = [p for _, p in row.doc["result"]["ranking"]]
    assert len(ranked) == 3 and players[3] not in ranked
    final = text_of([m for m in club.inbox[players[0]] if "is over" in headline(m)][-1])
    assert players[3] not in final.split("== Rounds ==")[0]  # not in the standings nor the crosstable


def test_a_player_who_moves_address_keeps_playing_the_tournament(club: Club) -> None:
    players = PLAYERS[:4]
    announce(club, "swiss rounds 2", players)
    club.tick(days=21)
    moved = "new.address@example.org"
    asked = club.reply(players[0], club.last(players[0]), f"set address {moved}")
    code = re.search(r"confirm address (\w+)", text_of([m for r, m in asked if r == moved][-1])).group(1)
    club.send(moved, f"confirm address {code}")
    row = club.store.tournament_views().get("t-1")
    assert d.entrant(row.doc, moved) is not None and d.entrant(row.doc, players[0]) is None
    assert [e for e, _s, _t in row.entrants if e == moved] and not [e for e, _s, _t in row.entrants
                                                                  if e == players[0]]
    assert any(moved in g["players"] for g in row.doc["rounds"][0]["games"])
    club.play(random.Random(14))
    row = club.store.tournament_views().get("t-1")
    assert row.status == "over" and any(moved in g["players"] for g in row.doc["rounds"][1]["games"])
    assert [m for m in club.inbox[moved] if "is over" in headline(m)]


def test_help_on_tournaments_in_every_language(club: Club) -> None:
    for lang, word in (("en", "Formats"), ("de", "Formate"), ("sk", "Formáty")):
        reader = f"reader-{lang}@example.org"
        club.reply(reader, club.send(reader, f"set language {lang}"), f"set language {lang}")
        answer = club.send(reader, "help tournaments")  # every mail's lines are checked: 78 columns
        assert word in text_of(answer) and "double-elimination" in text_of(answer), text_of(answer)
    assert "tournament new GAME FORMAT" in text_of(club.send(PLAYERS[0], "help"))


def test_the_clock_kinds_of_new_work_for_tournament_games(club: Club) -> None:
    players = PLAYERS[:4]
    announce(club, "swiss rounds 2 time fischer 10+1.5 cap 10 weekends off", players)
    assert "Fischer clock" in text_of(club.send(players[0], "tournament t-1"))
    club.tick(days=21)
    row = club.store.tournament_views().get("t-1")
    for game in (club.store.get_game(g["id"]) for g in row.doc["rounds"][0]["games"]):
        control = game.record["time_control"]
        assert (control["kind"], control.get("weekends_off")) == ("fischer", True), control
