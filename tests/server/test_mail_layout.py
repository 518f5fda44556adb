"""How a mail's text is laid out, as its reader sees it: one blank line between the headline and
what follows, whatever the first section holds."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.server.harness import Server, start_game, text_of, to

ANN, BO = "ann@example.org", "bo@example.org"


@pytest.fixture
def server(tmp_path: Path):
    srv = Server(tmp_path)
    yield srv
    srv.close()


@pytest.mark.parametrize("language", ["en", "de", "sk"])
def test_one_blank_line_after_the_headline_before_a_table(server: Server, language: str) -> None:
    with server.store.transaction() as tx:
        tx.set_player(ANN, {"language": language})
    start_game(server, ANN, BO)
    for command in ("settings", "games", "help settings", "board ac-1"):
        lines = text_of(to(server.submit(server.mail(ANN, command)), ANN)[0]).split("\n")
        assert lines[1] == "" and lines[2].strip(), (command, lines[:4])
        assert "\n\n\n" not in "\n".join(lines).split("\n-- \n")[0], command
