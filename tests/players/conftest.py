"""Fixtures of the tests of players' own features (notes, automove, blocking): the in-process
server and the players of tests.classic, whose mails are all read as their recipients would."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.classic.conftest import Table
from tests.server.harness import Server


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    srv = Server(tmp_path)
    yield srv
    srv.close()


@pytest.fixture
def table(server: Server) -> Table:
    return Table(server)
