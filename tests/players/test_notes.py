"""Notes on a game by mail: a private note shown only in its writer's own game mails, never to the
opponent or an observer, nor in any record they get; a sealed note hidden from everyone until the
game ends, then in every game-over mail and in the record; the limits, the listing and the
clearing, each refused or answered with what is wrong and what is right."""

from __future__ import annotations

import re

import pytest

from pbem.archive.export import archive_record
from pbem.players import notes
from pbem.record import player_view
from tests.classic.conftest import ANN, BO, DEE, Table, flat, only
from tests.server.harness import headline, text_of
from tests.server.players import Player, attached_record

PLAN = "Keep F6 free for the red dome"
SEALED = "I will win by more than ten points"


def resign(table: Table, player: str, game_id: str) -> list:
    asked = only(table.reply(player, f"resign {game_id}"), player)
    line = re.search(r"resign \S+ confirm [A-Z]{4}", headline(asked)).group(0)
    return table.reply(player, line, asked)


def play_one(table: Table, player: str, seed: int = 1, turn=None) -> list:
    """``player``'s move, answering ``turn`` (their "your move" mail; by default their newest)."""
    turn = turn or table.latest[player]
    return table.reply(player, Player(player, seed).choose_move(turn), turn)


def test_a_private_note_is_shown_only_in_its_writers_own_mails(table: Table) -> None:
    game_id = table.start()
    table.mail(DEE, f"observe {game_id}")
    out = table.reply(BO, f"note {PLAN}")  # a reply to his game mail: the game id may be left out
    reply = only(out, BO)
    assert headline(reply) == f"Note 1 kept for {game_id} (only you read it)"
    assert f"> {PLAN}" in text_of(reply)
    assert table.game(game_id).record["notes"] == {"white": [
        {"at": "2026-11-20T10:00:00Z", "ply": 0, "text": PLAN}]}
    out = play_one(table, ANN)
    bo_turn = only(out, BO)
    assert headline(bo_turn).startswith("Your move (move 2).")
    assert "== Your notes ==" in text_of(bo_turn)
    assert f"after move 0: {PLAN}" in text_of(bo_turn)
    assert PLAN not in text_of(only(out, DEE))
    for rcpt, mail in out:
        if rcpt != BO:
            assert PLAN not in text_of(mail) and "Your notes" not in text_of(mail)
    # nothing Ann can ask for shows it: the board, the history, the record
    for command in (f"board {game_id}", f"history {game_id}", f"record {game_id}", f"notes {game_id}"):
        answer = only(table.mail(ANN, command), ANN)
        assert PLAN not in text_of(answer), command
        assert "notes" not in (attached_record(answer) or {})
    # nor the record Bo asks for (private notes stay out of every copy), nor the archive's
    assert "notes" not in attached_record(only(table.mail(BO, f"record {game_id}"), BO))
    row = table.game(game_id)
    assert "notes" not in player_view(row.record)
    assert archive_record(row)["notes"]  # a moderator's full backup keeps everything
    assert "notes" not in archive_record(row, public=True)
    # Bo's own board shows them again, Ann's "your move" never
    out = play_one(table, BO, seed=2, turn=bo_turn)
    assert PLAN not in text_of(only(out, ANN))
    assert PLAN in text_of(only(table.mail(BO, f"board {game_id}"), BO))


def test_a_sealed_note_is_read_by_everyone_when_the_game_ends(table: Table) -> None:
    game_id = table.start()
    ann_turn = table.latest[ANN]
    table.mail(DEE, f"observe {game_id}")
    out = table.reply(ANN, f"note {game_id} secret {SEALED}")
    reply = only(out, ANN)
    assert headline(reply) == f"Sealed note 1 kept for {game_id}: read by everyone when the game ends"
    assert "It cannot be taken back." in flat(reply)
    out = play_one(table, ANN, turn=ann_turn)
    assert SEALED not in text_of(only(out, BO)) and SEALED not in text_of(only(out, DEE))
    ann = table.reply(ANN, f"board {game_id}")
    assert f"after move 0, sealed: {SEALED}" in text_of(only(ann, ANN))  # she sees her own
    for who in (BO, DEE):
        answer = only(table.mail(who, f"record {game_id}"), who)
        assert "secret_notes" not in attached_record(answer)
        assert SEALED not in text_of(answer)
    assert "secret_notes" not in player_view(table.game(game_id).record)
    out = resign(table, BO, game_id)
    for who in (ANN, BO, DEE):
        end = only(out, who)
        assert headline(end).startswith("Game over"), who
        assert "== Sealed notes, read at the end ==" in text_of(end), who
        assert SEALED in flat(end), who
    assert f"black (you), after move 0, 2026-11-20: {SEALED}" in flat(only(out, ANN))
    assert f"black ({ANN}), after move 0, 2026-11-20: {SEALED}" in flat(only(out, BO))
    record = attached_record(only(out, ANN))
    assert record["secret_notes"] == {"black": [{"at": "2026-11-20T10:00:00Z", "ply": 0, "text": SEALED}]}
    assert player_view(table.game(game_id).record)["secret_notes"]
    # after the end: listed for anyone who asks, and no new sealed note
    answer = only(table.mail(DEE, f"notes {game_id}"), DEE)
    assert headline(answer) == f"Sealed notes of {game_id}" and SEALED in flat(answer)
    refused = only(table.reply(ANN, f"note {game_id} secret too late"), ANN)
    assert headline(refused).startswith(f"Not done: game {game_id} is over: a sealed note would be read")
    assert f"'note {game_id} TEXT'" in flat(refused)


def test_private_notes_stay_private_after_the_end(table: Table) -> None:
    game_id = table.start()
    table.reply(BO, f"note {game_id} {PLAN}")
    out = resign(table, ANN, game_id)
    assert all(PLAN not in text_of(mail) for rcpt, mail in out if rcpt != BO)
    assert "notes" not in attached_record(only(out, BO))
    assert "notes" not in player_view(table.game(game_id).record)


def test_notes_are_listed_and_the_private_ones_cleared(table: Table) -> None:
    game_id = table.start()
    assert headline(only(table.reply(BO, f"notes {game_id}"), BO)) == f"You have no notes on {game_id}"
    table.reply(BO, f"note {game_id} first plan\nwith a second line")
    table.reply(BO, f"note {game_id} second plan")
    table.reply(BO, f"note {game_id} secret {SEALED}")
    listing = only(table.reply(BO, f"notes {game_id}"), BO)
    assert headline(listing) == f"Your notes on {game_id}: 3"
    text = text_of(listing)
    assert "after move 0, 2026-11-20: first plan\n  with a second line" in text
    assert f"after move 0, 2026-11-20, sealed until the end: {SEALED}" in flat(listing)
    assert f"notes {game_id} clear" in text
    cleared = only(table.reply(BO, f"notes {game_id} clear"), BO)
    assert headline(cleared) == f"2 notes on {game_id} deleted"
    assert "Sealed notes stay sealed until the game ends." in text_of(cleared)
    record = table.game(game_id).record
    assert "notes" not in record and record["secret_notes"]["white"][0]["text"] == SEALED
    refused = only(table.reply(BO, f"notes {game_id} clear"), BO)
    assert headline(refused) == (f"Not done: you have no private notes on game {game_id} to clear; keep one "
                                 f"with: note {game_id} TEXT")


def test_the_block_in_game_mails_is_short(table: Table) -> None:
    game_id = table.start()
    for n in range(5):
        table.reply(BO, f"note {game_id} plan number {n} " + "word " * 30)
    mail = only(play_one(table, ANN), BO)
    block = text_of(mail).split("== Your notes ==\n", 1)[1].split("\n--", 1)[0].strip().split("\n")
    assert block[-1] == f"(5 notes in all: notes {game_id})"
    assert [line.split(":")[1].split()[2] for line in block[:-1]] == ["2", "3", "4"]
    assert all(len(line) <= 68 for line in block)


def test_bad_notes_are_refused_with_the_right_form(table: Table, monkeypatch: pytest.MonkeyPatch) -> None:
    game_id = table.start()
    empty = only(table.reply(BO, f"note {game_id}"), BO)
    assert headline(empty) == (f"Not done: the note is empty: write note {game_id} TEXT (the text may go "
                               "on the following lines).")
    long = only(table.reply(BO, f"note {game_id} " + "word " * 200 + "x"), BO)
    assert ("a note has at most 1000 characters and 12 lines; yours has 1001 characters and 1 line. Split "
            "it, or shorten it.") in flat(long)  # one line, not "1 lines"
    lines = only(table.reply(BO, f"note {game_id} first" + "\nline" * 12), BO)
    assert "yours has 65 characters and 13 lines. Split it, or shorten it." in flat(lines)
    monkeypatch.setattr(notes, "MAX_SEALED", 1)
    table.reply(BO, f"note {game_id} secret one")
    full = only(table.reply(BO, f"note {game_id} secret two"), BO)
    assert headline(full) == (f"Not done: you have sealed 1 note in game {game_id}, the most a game keeps; "
                              "it cannot be taken back.")
    monkeypatch.setattr(notes, "MAX_NOTES", 2)
    table.reply(BO, f"note {game_id} one")
    table.reply(BO, f"note {game_id} two")
    full = only(table.reply(BO, f"note {game_id} three"), BO)
    assert (f"you have 2 notes on game {game_id}, the most a game keeps. 'notes {game_id}' shows them"
            in flat(full))
    # a note for a seat needs its token: a mail without one is not applied (the seat is warned)
    forged = only(table.mail(BO, f"note {game_id} secret forged"), BO)
    assert headline(forged) == f"A mail about {game_id} from {BO} was not accepted"
    assert table.game(game_id).record["secret_notes"] == {"white": [
        {"at": "2026-11-20T10:00:00Z", "ply": 0, "text": "one"}]}
    stranger = only(table.mail(DEE, f"notes {game_id}"), DEE)
    assert headline(stranger) == (f"Not done: you do not play in game {game_id}; only its players keep "
                                  "notes on it.")
    nogame = only(table.mail(ANN, "note plans"), ANN)  # a new mail, not a reply: no game named
    assert headline(nogame) == "Not done: which game? Write 'note GAME' (see 'games' for yours)."


def test_below_a_move_a_remark_labelled_note_goes_to_the_opponent_and_the_command_stays_private(
        table: Table) -> None:
    """"Note: ..." is how people begin a remark: below a move it is for the opponent, as any text
    there is. The command (no colon) keeps the note private, the game id left out in a reply."""
    game_id = table.start()
    ann_turn = table.latest[ANN]
    move = Player(ANN, 1).choose_move(ann_turn)
    out = table.reply(ANN, f"{move}\nNote: I am away next week\nnote {PLAN}", ann_turn)
    bo = only(out, BO)
    assert f"{ANN}: Note: I am away next week" in flat(bo)
    assert PLAN not in flat(bo)
    mine = only(out, ANN)
    assert f"Note 1 kept for {game_id} (only you read it)" in flat(mine)
    assert table.game(game_id).record["notes"]["black"][0]["text"] == PLAN


def test_a_strangers_mail_that_only_looks_like_a_note_is_not_answered(table: Table) -> None:
    assert table.mail("stranger@example.net", "note your account will be closed") == []
    assert table.mail("stranger@example.net", "Note: your account will be closed") == []
