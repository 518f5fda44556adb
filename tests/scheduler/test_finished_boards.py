"""The board of a finished game names nobody to move: a game ended by a resignation, a loss on time
or an agreement stops in a position that would go on, and its last mails (and ``board`` asked
later) say the game is over there, in the reader's language, as each player and observer reads it."""

from __future__ import annotations

import html
from email.message import EmailMessage

from pbem.cli.mailbox import reply_to
from pbem.record import replay_record
from tests.scheduler.conftest import ALICE, BOB, CAROL, Clocked
from tests.server.harness import headline, html_of, text_of, to
from tests.server.mailcheck import MailCheck

TO_MOVE = ("To move", "Am Zug", "Na ťahu")


def _languages(server: Clocked) -> None:
    """Alice reads English, Bob German, Carol (who watches) Slovak."""
    with server.store.transaction() as tx:
        tx.set_player(BOB, {"language": "de"})
        tx.set_player(CAROL, {"language": "sk"})


def _send(server: Clocked, check: MailCheck, sender: str, message: EmailMessage
          ) -> list[tuple[str, EmailMessage]]:
    """``sender`` sends ``message``; everyone reads what it caused."""
    check.sent(sender, message)
    return _read(check, server.submit(message))


def _read(check: MailCheck, out: list[tuple[str, EmailMessage]]) -> list[tuple[str, EmailMessage]]:
    for rcpt, message in out:
        check.read(rcpt, message)
    return out


def _one_move_each(server: Clocked, check: MailCheck) -> tuple[str, EmailMessage]:
    """Alice's game with Bob, watched by Carol, after Alice's and Bob's first moves: Bob's latest
    mail (Alice is to move again)."""
    out = _send(server, check, ALICE, server.mail(ALICE, f"new alien-city with {BOB} as black"))
    game_id = str(to(out, ALICE)[0]["X-Pbem-Game"])
    out = _send(server, check, BOB, reply_to(to(out, BOB)[0], BOB, "accept"))
    black = to(out, ALICE)[0]
    _send(server, check, CAROL, server.mail(CAROL, f"observe {game_id}"))
    out = _send(server, check, ALICE, reply_to(black, ALICE, _a_move(server, game_id)))
    white = to(out, BOB)[0]
    _send(server, check, BOB, reply_to(white, BOB, _a_move(server, game_id)))
    return game_id, white


def _a_move(server: Clocked, game_id: str) -> str:
    state = replay_record(server.game(game_id).record)
    return state.move_text(state.legal_moves()[0])


def _over(message: EmailMessage, ended: str) -> None:
    """The mail shows the last board, which says the game is over and names nobody to move."""
    text = text_of(message)
    assert ended in text, text
    assert not [word for word in TO_MOVE if word in text], text
    page = html.unescape(html_of(message))
    assert ended in page and not [word for word in TO_MOVE if word in page]


def test_a_resigned_game_names_nobody_to_move_in_every_language(server: Clocked) -> None:
    _languages(server)
    check = MailCheck()
    game_id, white = _one_move_each(server, check)
    asked = to(_send(server, check, BOB, reply_to(white, BOB, f"resign {game_id}")), BOB)[0]
    line = text_of(asked).split(f"resign {game_id} confirm ")[1].split()[0]
    out = _send(server, check, BOB, reply_to(asked, BOB, f"resign {game_id} confirm {line}"))
    alice, carol = to(out, ALICE)[0], to(out, CAROL)[0]
    assert headline(alice) == f"Game over: {BOB} resigned; you win"
    _over(alice, "Game over after 2 moves.")
    _over(carol, "Koniec hry po 2 ťahoch.")
    # asked afterwards, the board says the same
    board = to(_send(server, check, BOB, reply_to(to(out, BOB)[0], BOB, f"board {game_id}")), BOB)[0]
    _over(board, "Spielende nach 2 Zügen.")
    board = to(server.submit(server.mail(ALICE, f"board {game_id} 1")), ALICE)[0]
    assert "To move: white, move 2." in text_of(board)  # a past position goes on as it did


def test_a_loss_on_time_names_nobody_to_move(server: Clocked) -> None:
    _languages(server)
    server.config.deadlines.grace_reminder = False
    server.config.deadlines.vacation_days_per_year = 0  # no allowance day is spent for Alice
    check = MailCheck()
    game_id, _white = _one_move_each(server, check)
    server.clock.set(server.game(game_id).deadline_at)
    out = _read(check, server.run())
    assert headline(to(out, ALICE)[0]) == f"Game over: you forfeited; {BOB} wins"
    _over(to(out, ALICE)[0], "Game over after 2 moves.")
    _over(to(out, BOB)[0], "Spielende nach 2 Zügen.")
    _over(to(out, CAROL)[0], "Koniec hry po 2 ťahoch.")


def test_an_agreed_draw_names_nobody_to_move(server: Clocked) -> None:
    _languages(server)
    check = MailCheck()
    game_id, white = _one_move_each(server, check)
    out = _send(server, check, BOB, reply_to(white, BOB, f"propose {game_id} draw"))
    offer = to(out, ALICE)[0]
    out = _send(server, check, ALICE, reply_to(offer, ALICE, f"accept {game_id}"))
    assert headline(to(out, BOB)[0]) == "Spiel vorbei: Remis nach Vereinbarung 0–0"
    _over(to(out, BOB)[0], "Spielende nach 2 Zügen.")
    _over(to(out, CAROL)[0], "Koniec hry po 2 ťahoch.")


def test_a_resigned_space_truckin_game_names_nobody_to_move(server: Clocked) -> None:
    out = server.submit(server.mail(ALICE, f"new space-truckin with {BOB}"))
    out = server.submit(reply_to(to(out, BOB)[0], BOB, "accept"))
    mover = next(rcpt for rcpt, m in out if headline(m).startswith("Your move"))
    other = BOB if mover == ALICE else ALICE
    mail = next(m for rcpt, m in out if rcpt == other)
    asked = to(server.submit(reply_to(mail, other, "resign st-1")), other)[0]
    line = text_of(asked).split("resign st-1 confirm ")[1].split()[0]
    out = server.submit(reply_to(asked, other, f"resign st-1 confirm {line}"))
    _over(to(out, mover)[0], "The game is over: see the final scores.")
