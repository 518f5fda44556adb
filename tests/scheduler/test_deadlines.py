"""pbem.community.deadlines on its own: clock arithmetic and the clock operations moderators use."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbem.clocks import log as cl
from pbem.community import deadlines as dl
from pbem.store.base import GameRow, Seat

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
H = timedelta(hours=1)


def _row(seats: tuple[str, ...] = ("black", "white"), status: str = "active") -> GameRow:
    row = GameRow(id="ac-1", game="alien-city", status=status, record={"moves": []},
                  seats=[Seat(seat=s, email=f"{s}@example.org") for s in seats])
    row.to_move = seats[0]
    return row


# --- arithmetic --------------------------------------------------------------------------------------

def test_deadline_after_skips_vacations() -> None:
    away = [(T0 + 2 * H, T0 + 5 * H), (T0 + 4 * H, T0 + 6 * H), (T0 - 10 * H, T0 - 9 * H)]
    assert dl.merge_intervals(away) == [(T0 - 10 * H, T0 - 9 * H), (T0 + 2 * H, T0 + 6 * H)]
    assert dl.deadline_after(T0, H, away) == T0 + H
    # time that runs out just as a vacation begins lasts until the vacation ends: the clock has not
    # run over while it stood still
    assert dl.deadline_after(T0, 2 * H, away) == T0 + 6 * H
    assert dl.deadline_after(T0, 3 * H, away) == T0 + 7 * H
    assert dl.deadline_after(T0 + 3 * H, H, away) == T0 + 7 * H  # starting inside a vacation
    assert dl.running_time(T0, T0 + 7 * H, away) == 3 * H
    assert dl.running_time(T0 + 7 * H, T0, away) == timedelta(0)


_times = st.integers(min_value=0, max_value=10_000).map(lambda m: T0 + timedelta(minutes=m))
_intervals = st.lists(st.tuples(_times, st.integers(min_value=0, max_value=3000)).map(
    lambda t: (t[0], t[0] + timedelta(minutes=t[1]))), max_size=5)


@given(start=_times, minutes=st.integers(min_value=0, max_value=20_000), away=_intervals)
def test_running_time_inverts_deadline_after(start: datetime, minutes: int,
                                             away: list[dl.Interval]) -> None:
    duration = timedelta(minutes=minutes)
    end = dl.deadline_after(start, duration, away)
    assert end >= start + duration
    assert dl.running_time(start, end, away) == duration


@given(start=_times, minutes=st.integers(min_value=1, max_value=20_000), away=_intervals,
       more=_intervals)
def test_retiming_keeps_the_time_left(start: datetime, minutes: int, away: list[dl.Interval],
                                      more: list[dl.Interval]) -> None:
    row = _row()
    row.record["time_control"] = {"kind": "move", "days_per_move": minutes / 1440, "policy": "forfeit"}
    dl.start_clock(row, "black", start, away=away)
    assert row.deadline_at == dl.deadline_after(start, timedelta(minutes=minutes), away)
    dl.retime_for_vacations(row, start, away, [*away, *more])
    assert dl.running_time(start, row.deadline_at, [*away, *more]) == timedelta(minutes=minutes)
    dl.retime_for_vacations(row, start, [*away, *more], away)
    assert row.deadline_at == dl.deadline_after(start, timedelta(minutes=minutes), away)
    assert cl.check(row.record) == []


# --- clock operations ----------------------------------------------------------------------------------

def test_pause_and_resume_keep_the_time_left() -> None:
    row = _row()
    dl.start_clock(row, "black", T0)
    assert row.deadline_at == T0 + timedelta(days=7)
    dl.pause(row, T0 + timedelta(days=2))
    assert row.deadline_at is None and dl.is_paused(row)
    with pytest.raises(dl.ClockError, match="already paused"):
        dl.pause(row, T0)
    # a new turn while paused stays paused, with the whole time waiting
    dl.start_clock(row, "white", T0 + timedelta(days=3))
    assert row.deadline_at is None and dl.is_paused(row)
    dl.resume(row, T0 + timedelta(days=10))
    assert row.deadline_at == T0 + timedelta(days=17)
    with pytest.raises(dl.ClockError, match="not paused"):
        dl.resume(row, T0)
    dl.pause(row, T0 + timedelta(days=16))
    away = [(T0 + timedelta(days=20), T0 + timedelta(days=22))]
    dl.resume(row, T0 + timedelta(days=20), away)  # resumed into the mover's vacation
    assert row.deadline_at == T0 + timedelta(days=23)
    assert cl.check(row.record) == [] and cl.final_deadline(row.record) == row.deadline_at


def test_set_deadline_and_its_refusals() -> None:
    row = _row()
    with pytest.raises(dl.ClockError, match="not in the future"):
        dl.set_deadline(row, T0, T0)
    with pytest.raises(dl.ClockError, match="timezone-aware"):
        dl.set_deadline(row, datetime(2026, 3, 2), T0)
    dl.start_clock(row, "black", T0)
    dl.pause(row, T0)
    dl.set_deadline(row, T0 + H, T0)
    assert row.deadline_at == T0 + H and not dl.is_paused(row) and dl.generation(row) == 1
    over = _row(status="over")
    with pytest.raises(dl.ClockError, match="is over"):
        dl.set_deadline(over, T0 + H, T0)
    with pytest.raises(dl.ClockError):
        dl.pause(over, T0)


def test_set_time_control() -> None:
    row = _row(status="invited")
    dl.set_time_control(row, {"days_per_move": 3})
    assert row.record["time_control"] == {"kind": "move", "days_per_move": 3, "policy": "forfeit"}
    dl.set_time_control(row, {"days_per_move": 0.5, "policy": "notify"})
    assert row.record["time_control"] == {"kind": "move", "days_per_move": 0.5, "policy": "notify"}
    for bad in (0, -1, 366, float("nan"), "x"):
        with pytest.raises(dl.ClockError):
            dl.set_time_control(row, {"days_per_move": bad})
    with pytest.raises(dl.ClockError, match="forfeit or notify"):
        dl.set_time_control(row, {"days_per_move": 3, "policy": "ignore"})
    assert "clock_log" not in row.record  # before the game starts nothing is logged
    row = _row()
    dl.start_clock(row, "black", T0)
    dl.set_time_control(row, {"kind": "total", "total_days": 20}, T0 + H)
    assert row.deadline_at == T0 + timedelta(days=7)  # the deadline running stays
    assert [e["event"] for e in row.record["clock_log"]] == ["control", "start", "control"]


def test_forfeit_two_and_three_seats() -> None:
    row = _row()
    dl.start_clock(row, "black", T0)
    result = dl.forfeit(row, {"black": 9, "white": 3}, "black", T0)
    assert result["winners"] == ["white"] and result["forfeited"] == "black"
    assert row.status == "over" and row.deadline_at is None and row.finished_at == T0
    assert "dropped" not in row.record
    row = _row(("red", "blue", "green"))
    result = dl.forfeit(row, {"red": 9, "blue": 4, "green": 4}, "red", T0)
    assert result["winners"] == ["blue", "green"] and result["ranking"] == ["blue", "green", "red"]
    assert row.record["dropped"] == ["red"]


def test_forfeit_after_a_drop_ranks_the_dropped_seats_last() -> None:
    row = _row(("red", "blue", "green", "yellow"))
    row.record["moves"] = [{"drop": "green", "at": "x", "reason": "forfeit"},
                           {"drop": "red", "at": "y", "reason": "forfeit"}]
    row.record["dropped"] = ["green", "red"]
    assert dl.dropped_seats(row.record) == ["green", "red"] and dl.playing_seats(row) == ["blue", "yellow"]
    result = dl.forfeit(row, {"red": 30, "blue": 4, "green": 20, "yellow": 2}, "blue", T0)
    assert result["winners"] == ["yellow"]
    assert result["ranking"] == ["yellow", "blue", "red", "green"]
    assert row.record["dropped"] == ["green", "red", "blue"] and row.status == "over"


# --- players -------------------------------------------------------------------------------------------

def test_find_timezone() -> None:
    assert dl.find_timezone("Europe/Bratislava") == "Europe/Bratislava"
    assert dl.find_timezone("europe/bratislava") == "Europe/Bratislava"
    assert dl.find_timezone("utc") == "UTC"
    assert dl.find_timezone("Mars/Olympus") is None
    assert dl.find_timezone("../../etc/passwd") is None
    assert dl.find_timezone("") is None


def test_vacation_days_split_by_year_and_local_midnight() -> None:
    entry = dl.vacation_entry(date(2026, 12, 30), date(2027, 1, 2), ZoneInfo("Europe/Bratislava"))
    assert dl.vacation_days(entry) == {2026: 2, 2027: 2}
    assert entry["start"] == "2026-12-29T23:00:00+00:00"
    # a vacation over the spring clock change is 23 hours short of whole UTC days
    spring = dl.vacation_entry(date(2026, 3, 29), date(2026, 3, 29), ZoneInfo("Europe/Bratislava"))
    (start, end), = dl.vacation_intervals({"vacations": [spring]})
    assert end - start == timedelta(hours=23)


def test_format_when() -> None:
    zone = ZoneInfo("America/New_York")
    assert dl.format_when(T0, zone, T0 - timedelta(days=2, hours=3)) == (
        "Sun 01 Mar 2026, 07:00 EST (12:00 UTC), in 2 days 3 hours")
    assert dl.format_when(T0, ZoneInfo("UTC"), T0 + timedelta(minutes=5)) == (
        "Sun 01 Mar 2026, 12:00 UTC, 5 minutes ago")


def test_a_running_clock_from_before_the_log_keeps_its_deadline() -> None:
    """Records from before the clock log: the first change takes the turn into a log, keeping the
    deadline (or, paused, the time left), and the control without a kind is per move."""
    row = _row()
    row.record.update(time_control={"days_per_move": 3, "policy": "forfeit"},
                      clock={"ply": 0, "seat": "black", "started": "2026-03-01T12:00:00Z", "turn": 1,
                             "reminded": [48]})
    row.deadline_at = T0 + timedelta(days=3, hours=5)  # an outage extended it by 5 hours
    assert dl.running(row) is not None and row.deadline_at == T0 + timedelta(days=3, hours=5)
    dl.pause(row, T0 + timedelta(days=1))
    dl.resume(row, T0 + timedelta(days=2))
    assert row.deadline_at == T0 + timedelta(days=4, hours=5)
    assert [e["event"] for e in row.record["clock_log"]] == [
        "control", "start", "deadline", "pause", "resume"]
    assert cl.check(row.record) == []
    paused = _row()
    paused.record["clock"] = {"ply": 0, "seat": "black", "started": "2026-03-01T12:00:00Z", "turn": 1,
                              "remaining_seconds": 7200.0, "paused_at": "2026-03-02T12:00:00Z"}
    assert dl.is_paused(paused)
    dl.resume(paused, T0 + timedelta(days=5))
    assert paused.deadline_at == T0 + timedelta(days=5, hours=2)
    assert "remaining_seconds" not in paused.record["clock"] and cl.check(paused.record) == []


# --- one reading of the log per event ---------------------------------------------------------------------

_steps = st.lists(st.tuples(
    st.sampled_from(["move", "queued", "pause", "resume", "control", "taken back", "restart", "stop"]),
    st.integers(min_value=1, max_value=5000),  # minutes since the step before
    _intervals), min_size=1, max_size=12)
_controls = st.sampled_from([{"kind": "move", "days_per_move": 2, "policy": "forfeit"},
                             {"kind": "fischer", "initial_days": 1, "increment_days": 0.5, "cap_days": 2,
                              "policy": "forfeit", "weekends_off": True},
                             {"kind": "total", "total_days": 3, "policy": "notify", "nights_off": True}])


def _play(control: dict, steps: list[tuple[str, int, list[dl.Interval]]]) -> dict:
    """The clock operations of a game's life, as the processor and the moderators call them."""
    row = _row()
    row.record["time_control"] = control
    now = T0
    dl.start_clock(row, "black", now, "Europe/Bratislava")
    for kind, minutes, away in steps:
        now += timedelta(minutes=minutes)
        seat = row.to_move or "black"
        other = "white" if seat == "black" else "black"
        if kind in ("move", "queued"):  # a move received a while ago; with a queued reply after it
            row.record["moves"].append({"seat": seat, "move": "m", "at": cl.stamp(now)})
            if kind == "queued":
                row.record["moves"].append({"seat": other, "move": "q", "at": cl.stamp(now)})
                other = seat
            dl.close_turn(row, now, now - timedelta(minutes=minutes // 2))
            dl.start_clock(row, other, now, "UTC", away)
            row.to_move = other
        elif kind == "pause" and dl.running(row) is not None and not dl.is_paused(row):
            dl.pause(row, now)
        elif kind == "resume" and dl.is_paused(row):
            dl.resume(row, now)
        elif kind == "control":
            dl.set_time_control(row, {**control, "policy": "notify"}, now)
        elif kind == "taken back" and row.record["moves"]:
            row.record["moves"].pop()
            dl.close_turn(row, now)
            dl.start_clock(row, seat, now, "UTC", away)
        elif kind == "restart":  # a new turn while one runs: start_clock ends it first
            dl.start_clock(row, other, now, "UTC", away)
            row.to_move = other
        elif kind == "stop":
            dl.stop_clock(row, now, now)
            dl.start_clock(row, seat, now)
    return row.record


@settings(max_examples=150, deadline=None)
@given(control=_controls, steps=_steps)
def test_the_turn_read_once_is_the_turn_read_again(control: dict, steps: list) -> None:
    """Ending a turn and starting the next reads the clock log once each and hands what it read to
    the event it appends (``cl.append``'s ``fold``): the record is the one that reading the log
    again for every event gives, value for value."""
    handed_over = _play(control, steps)
    append = cl.append
    try:
        cl.append = lambda record, event, fold=None: append(record, event)  # type: ignore[assignment]
        read_again = _play(control, steps)
    finally:
        cl.append = append  # type: ignore[assignment]
    assert handed_over == read_again
    assert cl.check(handed_over) == []
