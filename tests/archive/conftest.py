"""Fixtures of the archive tests: stores filled with random finished games, and the CLI."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from pbem.archive.sample import random_rows
from pbem.cli import main
from pbem.store import open_store
from pbem.store.base import GameRow, Store


def fill(store: Store, rows: Iterable[GameRow]) -> None:
    with store.transaction() as tx:
        for row in rows:
            tx.insert_game(row)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = open_store(tmp_path / "source.sqlite3")
    yield opened
    opened.close()


@pytest.fixture(scope="session")
def few_rows() -> list[GameRow]:
    """Twelve finished games (Alien City and Space Truckin'), some resigned."""
    return random_rows(12, seed=5, space_truckin_share=0.35, n_players=5)


class Cli:
    """Runs ``pbem`` in-process against a configuration whose database is ``database``."""

    def __init__(self, tmp_path: Path, database: Path):
        self.config = tmp_path / "pbem.toml"
        self.config.write_text(f'[server]\ndata_dir = "{tmp_path / "data"}"\ndatabase = "{database}"\n',
                               encoding="utf-8")

    def __call__(self, *argv: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        words = list(argv)
        # -c goes after the (sub)command words, as argparse wants it
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main([*words, "-c", str(self.config)])
        return code, out.getvalue(), err.getvalue()
