"""Fixtures of the tests of players' own features (notes, automove, blocking): the in-process
server and the players of tests.classic, whose mails are all read as their recipients would."""

from __future__ import annotations

from tests.classic.conftest import server, table

__all__ = ["server", "table"]
