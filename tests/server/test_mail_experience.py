"""What players read (issue 10), through the real reader, processor and store: the right mail to the
right person, notes, settings, looking back, rematch, observers, one-tap links, greetings."""

from __future__ import annotations

from datetime import timedelta
from email.message import EmailMessage
from pathlib import Path

import pytest

from engine import get_game
from pbem.cli.mailbox import reply_to
from pbem.record import replay_record
from tests.server.harness import Server, headline, html_of, text_of, to
from tests.server.players import Player, attached_record, follow, mailto_links, move_links, with_taps

ANN, BO, CY, OTTO = "ann@example.org", "bo@example.org", "cy@example.org", "otto@example.net"


@pytest.fixture
def server(tmp_path: Path):
    srv = Server(tmp_path)
    yield srv
    srv.close()


def challenge(server: Server, *others: str, game: str = "alien-city",
              first: str = "as black") -> dict[str, EmailMessage]:
    """Ann challenges the others, who accept; returns each player's newest mail."""
    out = server.submit(server.mail(ANN, f"new {game} with {' '.join(others)} {first}".strip()))
    latest = {ANN: to(out, ANN)[-1]}
    invitations = {other: to(out, other)[0] for other in others}
    for other in others:
        out = server.submit(reply_to(invitations[other], other, "accept"))
        for rcpt, message in out:
            latest[rcpt] = message
    return latest


def mover_mail(latest: dict[str, EmailMessage]) -> tuple[str, EmailMessage]:
    return next((a, m) for a, m in latest.items() if "Your move" in headline(m))


def play(server: Server, address: str, mail: EmailMessage, extra: str = "") -> list:
    move = Player(address, 4).choose_move(mail)
    return server.submit(reply_to(mail, address, move + extra))


# --- the right mail to the right person -------------------------------------------------------------

def test_after_a_move_only_the_next_player_hears_by_default(server: Server) -> None:
    latest = challenge(server, BO)
    out = play(server, ANN, latest[ANN])
    assert [rcpt for rcpt, _m in out] == [BO]
    mail = out[0][1]
    first = headline(mail)
    assert first.startswith(f"Your move (move 2). {ANN} played ") and first.endswith(".")
    assert "white (you)" in text_of(mail) and "Legal builds for white (you)" in text_of(mail)
    assert attached_record(mail) is None


def test_every_move_level_confirms_at_once_and_sends_boards(server: Server) -> None:
    latest = challenge(server, BO, CY, game="space-truckin", first="")
    for address in (ANN, BO, CY):  # a reply to any game mail proves the address
        out = server.submit(reply_to(latest[address], address, "set notify every"))
        assert headline(to(out, address)[0]) == "Done: notify is now every"
    address, mail = mover_mail(latest)
    out = play(server, address, mail)
    confirmation = to(out, address)[0]
    assert headline(confirmation).startswith("Applied: ") and "is next" in headline(confirmation)
    assert len(text_of(confirmation).splitlines()) < 12  # a few lines, no board
    waiting = [a for a in (ANN, BO, CY) if a != address and "Your move" not in headline(to(out, a)[0])]
    assert len(waiting) == 1 and "is to move" in headline(to(out, waiting[0])[0])
    assert move_links(to(out, waiting[0])[0]) == []


def test_waiting_players_of_three_get_nothing_by_default(server: Server) -> None:
    latest = challenge(server, BO, CY, game="space-truckin", first="")
    address, mail = mover_mail(latest)
    out = play(server, address, mail)
    assert len(out) == 1 and "Your move" in headline(out[0][1])


def test_text_only_mail_has_no_html_part(server: Server) -> None:
    latest = challenge(server, BO)
    server.submit(reply_to(latest[BO], BO, "set mail text"))
    out = play(server, ANN, latest[ANN])
    mail = to(out, BO)[0]
    assert mail.get_content_type() == "text/plain" and "Legal builds" in text_of(mail)


def test_digest_holds_news_and_sends_one_mail_a_day(server: Server) -> None:
    from pbem.community.scheduler import Scheduler

    latest = challenge(server, BO)
    server.submit(reply_to(latest[BO], BO, "set notify digest\nset mail tap"))
    out = play(server, ANN, latest[ANN])
    assert to(out, BO) == []  # held for the digest
    scheduler = Scheduler(server.config, server.store, server.clock, secret=b"s" * 32)
    server.clock.advance(hours=21)  # 07:00 UTC the next day
    scheduler.run_once()
    digest = [m for rcpt, m in server.take_outbox() if rcpt == BO]
    assert len(digest) == 1 and headline(digest[0]) == "Daily digest: your move in ac-1"
    assert "played" in text_of(digest[0]) and "write: move ac-1 MOVE" in text_of(digest[0])
    # the digest serves every game, so its links name the game and the move they were meant for
    links = mailto_links(digest[0])
    assert links and all(link["body"].startswith("move ac-1 ") and link["body"].endswith("(move 2)")
                         for link in links)
    scheduler.run_once()
    assert [m for rcpt, m in server.take_outbox() if rcpt == BO] == []  # once a day
    server.submit(follow(links[0], BO))  # the digest's link moves in that game
    assert len(server.game("ac-1").record["moves"]) == 2


# --- talking ------------------------------------------------------------------------------------------

def test_text_after_a_move_is_a_note_relayed_with_it(server: Server) -> None:
    latest = challenge(server, BO)
    out = play(server, ANN, latest[ANN], "\nGood luck!\nCheers, Ann")
    assert len(server.game("ac-1").record["moves"]) == 1
    assert f"{ANN}: Good luck!" in text_of(to(out, BO)[0])
    assert "Cheers" not in text_of(to(out, BO)[0])
    ack = to(out, ANN)[0]  # the note is acknowledged: the mover gets a short confirmation
    assert headline(ack).startswith("Applied: ") and f"Your note went to white ({BO})" in text_of(ack)


def test_a_name_signed_under_a_move_is_no_note(server: Server) -> None:
    """Many sign with their name alone, without the "-- " line: that goes to nobody."""
    latest = challenge(server, BO)
    out = play(server, ANN, latest[ANN], "\n\nAnn")
    assert len(server.game("ac-1").record["moves"]) == 1
    assert [rcpt for rcpt, _m in out] == [BO]  # no note, so no confirmation to Ann either
    assert f"{ANN}: Ann" not in text_of(to(out, BO)[0])
    out = play(server, BO, to(out, BO)[0], "\nNice start!\n- Bo")  # a note, then the name: the note
    assert f"{BO}: Nice start!" in text_of(to(out, ANN)[0]) and "- Bo" not in text_of(to(out, ANN)[0])


def test_message_any_time_and_to_observers_by_choice(server: Server) -> None:
    latest = challenge(server, BO)
    server.submit(server.mail(OTTO, "observe ac-1"))
    out = server.submit(reply_to(latest[BO], BO, "message ac-1 Nice opening.\nTake your time."))
    assert sorted(rcpt for rcpt, _m in out) == [ANN, BO]
    assert headline(to(out, BO)[0]) == f"Your message went to {ANN}"
    assert headline(to(out, ANN)[0]) == f"{BO} writes: Nice opening."
    assert "Take your time." in text_of(to(out, ANN)[0])
    out = server.submit(reply_to(latest[BO], BO, "message ac-1 all Hello watchers"))
    assert sorted(rcpt for rcpt, _m in out) == [ANN, BO, OTTO]
    assert attached_record(to(out, OTTO)[0]) is None and "+" in to(out, OTTO)[0]["Reply-To"]


def test_a_move_and_a_message_in_one_mail_are_answered_in_one_headline(server: Server) -> None:
    latest = challenge(server, BO)
    out = play(server, ANN, latest[ANN], "\nmessage ac-1 good luck")
    first = headline(to(out, ANN)[0])
    assert first.startswith("Applied: ") and first.endswith(f" is next; Your message went to {BO}"), first
    assert ".;" not in first
    assert "> message ac-1 good luck" in text_of(to(out, ANN)[0])  # her commands quoted to her
    # ... and to nobody else: Bo reads the message once, not Ann's command line quoted at him
    message = next(m for m in to(out, BO) if headline(m) == f"{ANN} writes: good luck")
    assert [line for m in to(out, BO) for line in text_of(m).splitlines() if line.startswith(">")] == []
    assert text_of(message).count("good luck") == 2  # the headline and the message itself


def test_a_challenge_written_like_a_person_writes_it(server: Server) -> None:
    out = server.submit(server.mail(ANN, f"Hi Bo, fancy a game?\nnew alien-city with {BO}\n"
                                         "Looking forward to it\nCheers, Ann", "A game?"))
    reply = to(out, ANN)[0]
    assert headline(reply).startswith("Game ac-1 created") and "Not understood" not in text_of(reply)
    assert reply["Subject"] == "[pbem ac-1] ann vs bo"
    invitation = to(out, BO)[0]
    assert f"{ANN}: Looking forward to it" in text_of(invitation)
    assert [(link["text"], link["body"]) for link in mailto_links(invitation)] == [
        ("Accept", "accept ac-1"), ("Decline", "decline ac-1")]
    assert "Time control: 7 days per move" in text_of(invitation)


def test_an_empty_reply_is_answered_in_the_thread(server: Server) -> None:
    latest = challenge(server, BO)
    out = server.submit(reply_to(latest[ANN], ANN, ""))
    answer = to(out, ANN)[0]
    assert answer["Subject"] == latest[ANN]["Subject"]
    assert answer["Reply-To"] == latest[ANN]["Reply-To"]
    assert headline(answer) == "I found no move in your mail; it is your move (move 1)"
    assert "for example:" in text_of(answer)
    out = play(server, ANN, answer)  # replying to the answer works
    assert len(server.game("ac-1").record["moves"]) == 1 and to(out, BO)


# --- resign, rules, looking back, rematch ---------------------------------------------------------

def test_resign_inside_a_move_reply_does_not_end_the_game(server: Server) -> None:
    latest = challenge(server, BO)
    server.submit(reply_to(latest[ANN], ANN, "resign"))
    assert server.game("ac-1").status == "active"


def test_rules_is_a_command(server: Server) -> None:
    latest = challenge(server, BO)
    out = server.submit(reply_to(latest[BO], BO, "rules"))
    reply = to(out, BO)[0]
    assert headline(reply) == "Rules of Alien City" and "Rulings" in text_of(reply)
    out = server.submit(server.mail(OTTO, "rules"))
    assert "alien-city: Alien City, 2 players" in text_of(to(out, OTTO)[0])


def test_history_board_n_games_and_record(server: Server) -> None:
    latest = challenge(server, BO)
    out = play(server, ANN, latest[ANN])
    out = play(server, BO, to(out, BO)[0])
    moves = [e["move"] for e in server.game("ac-1").record["moves"]]
    reply = to(server.submit(server.mail(ANN, "history ac-1")), ANN)[0]
    assert headline(reply) == "History of ac-1: 2 moves"
    lines = [line.split() for line in text_of(reply).splitlines() if line[:5].strip().endswith(".")]
    assert lines == [["1.", "black", "(you)", *moves[0].split()],
                     ["2.", "white", f"({BO})", *moves[1].split()]]
    # "history" alone in a reply about the game is that game's (as its mails offer "history ac-1");
    # in a mail of its own, the sender's games
    reply = to(server.submit(reply_to(to(out, ANN)[0], ANN, "history")), ANN)[0]
    assert headline(reply) == "History of ac-1: 2 moves"
    reply = to(server.submit(server.mail(ANN, "history")), ANN)[0]
    assert headline(reply).startswith(f"History of {ANN}")
    reply = to(server.submit(server.mail(ANN, "board ac-1 1")), ANN)[0]
    assert headline(reply) == f"Board of ac-1 after move 1 (black: {moves[0]})"
    after_one = replay_record(server.game("ac-1").record, get_game("alien-city"), upto_ply=1)
    assert after_one.render("black") in text_of(reply)
    reply = to(server.submit(server.mail(ANN, "board ac-1 9")), ANN)[0]
    assert "has moves 0 to 2" in text_of(reply)
    reply = to(server.submit(server.mail(ANN, "games")), ANN)[0]
    assert f"ac-1  Alien City vs {BO}" in text_of(reply) and "your move, deadline" in text_of(reply)
    reply = to(server.submit(server.mail(ANN, "record ac-1")), ANN)[0]
    record = attached_record(reply)
    assert record is not None and [e["move"] for e in record["moves"]] == moves


def test_rematch_swaps_seats_and_keeps_options(server: Server) -> None:
    out = server.submit(server.mail(ANN, f"new alien-city location-bonus time 3 with {BO} as black"))
    out = server.submit(reply_to(to(out, BO)[0], BO, "accept"))
    resign = server.submit(reply_to(to(out, BO)[0], BO, "resign ac-1"))
    line = headline(to(resign, BO)[0]).split("confirm with: ")[1]
    over = server.submit(reply_to(to(resign, BO)[0], BO, line))
    out = server.submit(reply_to(to(over, ANN)[0], ANN, "rematch ac-1"))
    assert headline(to(out, ANN)[0]) == "Rematch ac-2 created"
    row = server.game("ac-2")
    assert {s.seat: s.email for s in row.seats} == {"black": BO, "white": ANN}
    assert row.record["options"]["location_bonus"] and row.record["time_control"]["days_per_move"] == 3
    assert headline(to(out, BO)[0]) == f"{ANN} invites you to Alien City"


def test_observers_are_told_of_a_resignation(server: Server) -> None:
    latest = challenge(server, BO)
    server.submit(server.mail(OTTO, "observe ac-1"))
    asked = to(server.submit(reply_to(latest[BO], BO, "resign ac-1")), BO)[0]
    line = headline(asked).split("confirm with: ")[1]
    out = server.submit(reply_to(asked, BO, line))
    told = to(out, OTTO)
    assert len(told) == 1 and headline(told[0]) == f"Game over: {BO} resigned; {ANN} wins"


def test_settings_need_the_address_token_and_are_listed(server: Server) -> None:
    out = server.submit(server.mail(ANN, "set notify every"))
    asked = to(out, ANN)[0]
    assert headline(asked) == "Confirm: set notify every"
    with server.store.transaction() as tx:
        assert tx.get_player(ANN).get("notify") is None  # a forged From changes nothing
    out = server.submit(follow(mailto_links(asked)[0], ANN))
    assert headline(to(out, ANN)[0]) == "Done: notify is now every"
    reply = to(server.submit(reply_to(to(out, ANN)[0], ANN, "settings")), ANN)[0]
    assert "notify    every" in text_of(reply) and "nickname  none" in text_of(reply)
    out = server.submit(reply_to(reply, ANN, "set nickname Ann B."))
    assert headline(to(out, ANN)[0]) == "Done: nickname is now Ann B."
    out = server.submit(server.mail(BO, "set nickname ann b."))
    assert "the nickname 'ann b.' is taken" in text_of(to(out, BO)[0])
    help_text = text_of(to(server.submit(server.mail(ANN, "help settings")), ANN)[0])
    assert "set notify every|turn|digest" in help_text and "set nickname NAME|none" in help_text


def test_nicknames_name_players_in_new_games(server: Server) -> None:
    out = server.submit(server.mail(ANN, "set nickname Annie"))
    server.submit(follow(mailto_links(to(out, ANN)[0])[0], ANN))
    out = server.submit(server.mail(BO, f"new alien-city with {ANN}"))
    invitation = to(out, ANN)[0]
    assert invitation["Subject"] == "[pbem ac-1] bo vs Annie"
    assert "white (you)" in text_of(invitation) or "black (you)" in text_of(invitation)


# --- one tap --------------------------------------------------------------------------------------

def test_every_link_parses_back_to_its_move_and_address(server: Server) -> None:
    latest = challenge(server, BO)
    mail = with_taps(server, ANN, latest[ANN], "ac-1")
    links = move_links(mail)
    state = replay_record(server.game("ac-1").record)
    legal = {state.move_text(m) for m in state.legal_moves()}
    assert {link["body"] for link in links} == legal  # each legal move, exactly once
    assert {link["to"] for link in links} == {mail["Reply-To"].addresses[0].addr_spec}
    out = server.submit(follow(links[-1], ANN))
    assert server.game("ac-1").record["moves"][0]["move"] == links[-1]["body"]
    assert to(out, BO)
    assert "<a href=\"mailto:" in html_of(mail)


def test_suggestions_never_lead_to_resign(server: Server) -> None:
    from pbem.commands.parsing import VERBS, suggest_verbs

    assert VERBS.index("resign") > VERBS.index("move")
    for typo in ("sign", "design", "reign", "resume", "rsgn", "resing"):
        assert "resign" not in suggest_verbs(typo), typo
    assert suggest_verbs("gmaes")[0] == "games"


def test_only_a_mail_with_the_record_says_it_is_attached(server: Server) -> None:
    latest = challenge(server, BO)
    for mail in latest.values():
        assert attached_record(mail) is None and "attached" not in text_of(mail)
    reply = to(server.submit(reply_to(latest[BO], BO, "record ac-1")), BO)[0]
    assert attached_record(reply) is not None and "ac-1.json is attached" in text_of(reply)


def test_every_command_of_a_mail_is_in_its_first_line(server: Server) -> None:
    """The inbox preview names what each command did, also a command answered with a titled section
    after another command's answer (the vacation was left out of it); what the answers share (the
    timezone their times are in) is said once."""
    start = (server.clock.now() + timedelta(days=30)).date()
    body = f"timezone Europe/Bratislava\nvacation {start}..{start + timedelta(days=9)}\nsettings"
    reply = to(server.submit(server.mail(ANN, body)), ANN)[0]
    assert headline(reply) == f"Your timezone: Europe/Bratislava; Vacation set; Your settings ({ANN})"
    text = text_of(reply)
    assert f"> vacation {start}" in text and "== Vacation set ==" not in text  # said once, above
    assert text.count("Times are shown in your timezone, Europe/Bratislava.") == 1  # not after each
