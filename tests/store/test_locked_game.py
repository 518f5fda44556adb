"""What a transaction remembers instead of asking again (``pbem.store.locked_game``, ``SqlTx``):
a game read under its lock with its seats' settings, bounces, threads and observers; an address's
settings, block and bounce read together; a save that writes only the columns that changed; a
message claimed without reading it again; a queued mail's id without RETURNING (SQLite). Each
answer is held equal to the statement it replaces, run in the same transaction, over many sequences
of changes (both stores)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbem.store.base import GameRow, Seat
from pbem.store.common import dt_to_text, json_dumps, result_columns
from pbem.store.sql import Db, SqlStore, SqlTx
from tests.store.conftest import Backend

T0 = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
EMAILS = ("ann@x.org", "bo@x.org", "cy@x.org")
FEW = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


class _Recording(Db):
    """The transaction's connection, keeping the statements it is sent."""

    __slots__ = ("sent",)

    def __init__(self, db: Db) -> None:
        super().__init__(db.conn, db.dialect)
        self.sent: list[str] = []

    def run(self, statement: str, params: Sequence[Any] | None = None) -> Any:
        self.sent.append(statement)
        return super().run(statement, params)


def _recording(tx: SqlTx) -> list[str]:
    tx._db = recording = _Recording(tx._c)
    return recording.sent


class _Undo(Exception):
    """Ends an example's transaction without committing it: the next starts from the same rows."""


def _game(store: SqlStore, game_id: str = "ac-1") -> None:
    with store.transaction() as tx:
        tx.insert_game(GameRow(
            id=game_id, game="alien-city", status="active", created_at=T0, updated_at=T0,
            record={"format": "pbem-record/1", "moves": [], "note": "ünïcode"}, to_move="black",
            thread_id=f"<{game_id}@pbem>",
            seats=[Seat("black", EMAILS[0], "Ann", "h1"), Seat("white", EMAILS[1], "Bo", "h2")]))
        tx.set_player(EMAILS[1], {"language": "de"})
        tx.mark_bouncing(EMAILS[1], T0, "550")
        tx.set_mail_thread(game_id, EMAILS[0], "<root@pbem>", "<last@pbem>")


# --- the save ---------------------------------------------------------------------------------------------

_changes = st.fixed_dictionaries({}, optional={
    "status": st.sampled_from(["active", "over", "cancelled"]),
    "to_move": st.sampled_from([None, "black", "white"]),
    "thread_id": st.sampled_from([None, "<ac-1@pbem>", "<other@pbem>"]),
    "updated_at": st.integers(0, 3).map(lambda h: T0 + timedelta(hours=h)),
    "deadline_at": st.sampled_from([None, T0 + timedelta(days=2), T0 + timedelta(days=3)]),
    "finished_at": st.sampled_from([None, T0 + timedelta(days=1)]),
    "move": st.booleans(),
    "result": st.sampled_from([None, {"reason": "scored", "winners": ["black"]},
                               {"reason": "resigned", "winners": ["white"]}]),
})


def _change(row: GameRow, change: dict[str, Any]) -> None:
    for key in ("status", "to_move", "thread_id", "updated_at", "deadline_at", "finished_at"):
        if key in change:
            setattr(row, key, change[key])
    if change.get("move"):
        row.record["moves"].append({"seat": "black", "move": "tower red A1", "at": "2026-11-20T10:00:00Z"})
    if "result" in change:
        row.record.pop("result", None)
        if change["result"] is not None:
            row.record["result"] = change["result"]


def _stored(backend: Backend, tx: SqlTx, game_id: str) -> tuple[Any, ...]:
    return tuple(tx._c.one("SELECT status, record, to_move, thread_id, updated_at, deadline_at,"
                           " finished_at, ending FROM games WHERE id = ?", (game_id,)))


def _expected(row: GameRow) -> tuple[Any, ...]:
    ending, _ = result_columns(row.status, row.record, [s.seat for s in row.seats])
    return (row.status, json_dumps(row.record), row.to_move, row.thread_id, dt_to_text(row.updated_at),
            dt_to_text(row.deadline_at) if row.deadline_at else None,
            dt_to_text(row.finished_at) if row.finished_at else None, ending)


@FEW
@given(changes=st.lists(_changes, min_size=1, max_size=4))
def test_a_save_stores_what_setting_every_column_would(store: SqlStore, backend: Backend,
                                                      changes: list[dict[str, Any]]) -> None:
    """However a game changes, and however often it is saved in one transaction (each save compares
    with what the one before wrote), the row holds the game as last saved, outcomes included."""
    if store.get_game("ac-1") is None:
        _game(store)
    try:
        with store.transaction() as tx:
            row = tx.get_game("ac-1", for_update=True)
            assert row is not None
            for change in changes:
                _change(row, change)
                tx.save_game(row)
                assert _stored(backend, tx, "ac-1") == _expected(row)
            outcomes = dict(tx._c.all("SELECT seat, outcome FROM seats WHERE game_id = ?", ("ac-1",)))
            assert outcomes == {"black": None, "white": None, **result_columns(
                row.status, row.record, ["black", "white"])[1]}
            raise _Undo
    except _Undo:
        pass


def test_a_save_that_changes_nothing_writes_nothing(store: SqlStore) -> None:
    _game(store)
    with store.transaction() as tx:
        row = tx.get_game("ac-1", for_update=True)
        assert row is not None
        written = _recording(tx)
        tx.save_game(row)
        row.deadline_at = T0 + timedelta(days=1)
        tx.save_game(row)
    assert written == ["UPDATE games SET deadline_at = ? WHERE id = ?"]
    assert store.get_game("ac-1").deadline_at == T0 + timedelta(days=1)  # type: ignore[union-attr]


# --- what the transaction remembers ---------------------------------------------------------------------

_email = st.sampled_from(EMAILS)
_ops = st.lists(st.one_of(
    st.tuples(st.just("load"), st.just("")),
    st.tuples(st.sampled_from(["block", "unblock", "mark", "clear", "player", "observe", "unobserve",
                               "thread", "ask"]), _email),
), min_size=1, max_size=14)


def _truth(tx: SqlTx, email: str) -> tuple[Any, ...]:
    """The answers the statements give, in the same transaction."""
    db = tx._c
    settings_text = db.value("SELECT settings FROM players WHERE email = ?", (email,))
    thread = db.one("SELECT root_id, last_id FROM mail_threads WHERE game_id = ? AND email = ?",
                    ("ac-1", email))
    return (db.one("SELECT 1 FROM blocked WHERE email = ?", (email,)) is not None,
            db.one("SELECT 1 FROM bouncing WHERE email = ?", (email,)) is not None,
            {} if settings_text is None else json.loads(settings_text),
            (thread[0], thread[1]) if thread else None,
            [r[0] for r in db.all("SELECT email FROM observers WHERE game_id = ? ORDER BY since, email",
                                  ("ac-1",))])


def _answers(tx: SqlTx, email: str) -> tuple[Any, ...]:
    return (tx.is_blocked(email), tx.is_bouncing(email), tx.get_player(email),
            tx.mail_thread("ac-1", email), tx.observers("ac-1"))


@FEW
@given(ops=_ops)
def test_the_transaction_answers_as_the_statements_do(store: SqlStore, ops: list[tuple[str, str]]) -> None:
    if store.get_game("ac-1") is None:
        _game(store)
    try:
        with store.transaction() as tx:
            for step, (op, email) in enumerate(ops):
                before = _truth(tx, email) if email else None
                if op == "load":
                    assert tx.get_game("ac-1", for_update=True) is not None
                elif op == "block":
                    tx.block(email, T0, "mod@x.org", "spam")
                elif op == "unblock":
                    assert tx.unblock(email) == before[0]  # type: ignore[index]
                elif op == "mark":
                    assert tx.mark_bouncing(email, T0, "550") == (not before[1])  # type: ignore[index]
                elif op == "clear":
                    assert tx.clear_bouncing(email) == before[1]  # type: ignore[index]
                elif op == "player":
                    tx.set_player(email, {"nickname": f"n{step}"})
                elif op == "observe":
                    tx.add_observer("ac-1", email, T0 + timedelta(minutes=step))
                elif op == "unobserve":
                    tx.remove_observer("ac-1", email)
                elif op == "thread":
                    tx.set_mail_thread("ac-1", email, f"<root{step}@pbem>", f"<last{step}@pbem>")
                for each in EMAILS:
                    assert _answers(tx, each) == _truth(tx, each), (op, email, each)
            raise _Undo
    except _Undo:
        pass


def test_a_move_asks_its_seats_nothing_more(store: SqlStore, backend: Backend) -> None:
    """Loaded under its lock, the game answers for its seats: their settings, bounces and threads,
    and its observers (none), without another statement."""
    _game(store)
    with store.transaction() as tx:
        assert tx.get_game("ac-1", for_update=True) is not None
        asked = _recording(tx)
        assert [tx.get_player(e) for e in EMAILS[:2]] == [{}, {"language": "de"}]
        assert [tx.is_bouncing(e) for e in EMAILS[:2]] == [False, True]
        assert tx.mail_thread("ac-1", EMAILS[0]) == ("<root@pbem>", "<last@pbem>")
        assert tx.mail_thread("ac-1", EMAILS[1]) is None
        assert tx.observers("ac-1") == []
        assert not tx.clear_bouncing(EMAILS[0])
        assert asked == []
        assert not tx.is_blocked(EMAILS[2])  # not a seat: asked, with its settings and bounce
        assert len(asked) == 1 and tx.get_player(EMAILS[2]) == {} and not tx.is_bouncing(EMAILS[2])
        assert len(asked) == 1


# --- the mail ----------------------------------------------------------------------------------------------

def test_a_message_read_before_is_claimed_as_claim_inbound_would(store: SqlStore) -> None:
    raw = [f"From: ann@x.org\r\nMessage-ID: <m{i}@x>\r\nTo: pbem+{'a' * 26}@x.org\r\n\r\nmove\r\n".encode()
           for i in range(3)]
    ids = [store.accept_inbound(r, "smtp", T0).inbound_id for r in raw]
    assert store.get_inbound_many([*ids, 10_000]) == {i: store.get_inbound(i) for i in ids}
    assert store.get_inbound_many([]) == {}
    with store.transaction() as tx:
        assert tx.claim_read(ids[0]) and tx.claim_read(ids[2]) and not tx.claim_read(10_000)
        assert bool(tx.claim_inbound(ids[1])) == tx.claim_read(ids[1])
        tx.mark_inbound(ids[0], "done", "ok", now=T0)
        assert not tx.claim_read(ids[0]) and tx.claim_inbound(ids[0]) is None


def test_a_queued_mail_gets_the_id_of_its_row(store: SqlStore) -> None:
    """SQLite's cursor tells the new row's id (no RETURNING): the id of the row, each time."""
    with store.transaction() as tx:
        ids = [tx.queue_outbound(message_id=f"<o{i}@pbem>", sender="pbem@x.org", recipients=["ann@x.org"],
                                 raw=b"x" * 5000, now=T0) for i in range(3)]
        assert ids == [tx._c.value("SELECT id FROM outbound WHERE message_id = ?", (f"<o{i}@pbem>",))
                       for i in range(3)]
