"""The ``games`` listing as its reader gets it: every line within 78 columns in every language, with
long addresses, several opponents and finished games (their results are the longest lines)."""

from __future__ import annotations

import pytest

from pbem.cli.mailbox import reply_to
from tests.server.harness import Server, headline, text_of, to
from tests.server.mailcheck import MAX_COLUMNS

ANN = "annemarie.konstantinopoulou-schwarzenberger@universitaet.example.org"
BO = "bartholomaeus.vanderheijden-oberndorfer@hochschule.example.org"
CY = "cyprian.wolkenstein-rodenegg@bergakademie.example.org"


def _game(server: Server, *others: str, game: str = "alien-city") -> tuple[str, dict]:
    out = server.submit(server.mail(ANN, f"new {game} with {' '.join(others)}"))
    game_id = str(to(out, ANN)[0]["X-Pbem-Game"])
    latest = {}
    for other in others:
        for rcpt, message in server.submit(reply_to(to(out, other)[0], other, "accept")):
            latest[rcpt] = message
    return game_id, latest


def _resign(server: Server, address: str, mail, game_id: str) -> None:
    asked = to(server.submit(reply_to(mail, address, f"resign {game_id}")), address)[0]
    line = text_of(asked).split(f"resign {game_id} confirm ")[1].split()[0]
    out = server.submit(reply_to(asked, address, f"resign {game_id} confirm {line}"))
    assert any(headline(m).startswith(("Game over", "Spiel vorbei", "Koniec")) for _r, m in out)


@pytest.mark.parametrize("language", ["en", "de", "sk"])
def test_every_line_of_the_games_listing_fits(server: Server, language: str) -> None:
    with server.store.transaction() as tx:
        for address in (ANN, BO, CY):
            tx.set_player(address, {"language": language})
    first, latest = _game(server, BO)
    _resign(server, ANN, latest[ANN], first)  # Ann resigned: "you resigned; BO wins"
    second, latest = _game(server, BO)
    _resign(server, BO, latest[BO], second)  # Bo resigned: "BO resigned; you win"
    _game(server, BO, CY, game="space-truckin")  # running, two long opponents, a deadline
    server.submit(server.mail(ANN, f"new alien-city with {CY}"))  # waiting for Cy
    for reader in (ANN, BO):
        listing = to(server.submit(server.mail(reader, "games")), reader)[0]
        text = text_of(listing)
        wide = [line for line in text.split("\n") if len(line) > MAX_COLUMNS]
        assert not wide, (reader, wide)
        # nothing is lost by the wrapping: each game's result is there, its lines indented
        flat = " ".join(text.split())
        other = BO if reader == ANN else ANN
        assert other in flat and f"{first} " in flat and f"{second} " in flat
        table = text.split("\n\n")[1].split("\n")  # the listing, after the headline
        assert all(line.startswith(("ac-", "st-", "      ")) for line in table), table
