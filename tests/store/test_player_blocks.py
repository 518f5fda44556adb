"""Each player's own block list (migration 9), on SQLite and PostgreSQL alike: added once, listed in
order, looked up by the blocked address, removed, kept apart from the moderators' ``blocked``
table, and moved with the player to a new address (both the list and the player's place on
others' lists)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from pbem.store.sql import SqlStore

T0 = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
ANN, BO, CY, DEE = "ann@example.org", "bo@example.org", "cy@example.org", "dee@example.org"


def test_a_players_list_is_kept_and_looked_up_both_ways(store: SqlStore) -> None:
    with store.transaction() as tx:
        assert tx.add_player_block(ANN, BO, T0)
        assert tx.add_player_block(ANN, "Cy@Example.ORG", T0 + timedelta(hours=1))
        assert not tx.add_player_block("ANN@example.org", BO, T0 + timedelta(days=1))  # already
        assert tx.add_player_block(DEE, BO, T0)
    with store.transaction() as tx:
        assert tx.player_blocks(ANN) == [(BO, T0), (CY, T0 + timedelta(hours=1))]
        assert tx.player_blocks(BO) == []
        assert tx.blocked_by(BO) == {ANN, DEE}
        assert tx.blocked_by("BO@example.org") == {ANN, DEE}
        assert tx.blocked_by(ANN) == set()
        assert not tx.is_blocked(BO)  # the moderators' list is another
        assert tx.remove_player_block(ANN, BO)
        assert not tx.remove_player_block(ANN, BO)
    with store.transaction() as tx:
        assert tx.blocked_by(BO) == {DEE}
        assert tx.player_blocks(ANN) == [(CY, T0 + timedelta(hours=1))]


def test_a_rolled_back_block_is_not_kept(store: SqlStore) -> None:
    try:
        with store.transaction() as tx:
            tx.add_player_block(ANN, BO, T0)
            raise RuntimeError("the mail failed")
    except RuntimeError:
        pass
    with store.transaction() as tx:
        assert tx.player_blocks(ANN) == []


def test_blocks_move_with_the_player_to_a_new_address(store: SqlStore) -> None:
    new = "ann@new.example.net"
    with store.transaction() as tx:
        tx.add_player_block(ANN, BO, T0)       # Ann's own list
        tx.add_player_block(ANN, CY, T0)
        tx.add_player_block(new, CY, T0 + timedelta(days=2))  # the new address's own row stays
        tx.add_player_block(ANN, new, T0)      # Ann blocking her new address: gone, not a self-block
        tx.add_player_block(DEE, ANN, T0)      # Ann on Dee's list: Dee still blocks her
        tx.move_player(ANN, new)
    with store.transaction() as tx:
        assert tx.player_blocks(ANN) == []
        assert tx.player_blocks(new) == [(BO, T0), (CY, T0 + timedelta(days=2))]
        assert tx.blocked_by(new) == {DEE}
        assert tx.blocked_by(ANN) == set()
