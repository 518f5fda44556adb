"""pbem.clocks on its own: the time-control words, counted time without weekends and nights, the
clock log (live and replayed alike, and a tampered one caught), reliability, the movable clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbem.clock import ManualClock
from pbem.clocks import control as tc
from pbem.clocks import log as cl
from pbem.clocks import reliability
from pbem.clocks.counted import OffTime, counted, moment_after
from pbem.clocks.movable import ClockMoveError, MovableClock, move, parse_shift, read_offset
from pbem.config import DeadlineConfig
from pbem.store.base import GameRow, Seat

FRI = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
H = timedelta(hours=1)
D = timedelta(days=1)


# --- the words ------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("words", "control", "rest"), [
    ("time 5 symmetric", {"kind": "move", "days_per_move": 5, "policy": "forfeit"}, ["symmetric"]),
    ("edition 1.2 time 5 days per move notify", {"kind": "move", "days_per_move": 5, "policy": "notify"},
     ["edition", "1.2"]),
    ("time 36h", {"kind": "move", "days_per_move": 1.5, "policy": "forfeit"}, []),
    ("time fischer 10+1.5 cap 10", {"kind": "fischer", "initial_days": 10, "increment_days": 1.5,
                                    "cap_days": 10, "policy": "forfeit"}, []),
    ("time fischer 3d + 36h weekends off", {"kind": "fischer", "initial_days": 3, "increment_days": 1.5,
                                            "cap_days": 3, "policy": "forfeit", "weekends_off": True}, []),
    ("nights off time total 30 forfeit", {"kind": "total", "total_days": 30, "policy": "forfeit",
                                          "nights_off": True}, []),
    ("weekends off", {"kind": "move", "days_per_move": 7, "policy": "forfeit", "weekends_off": True}, []),
    ("symmetric", None, ["symmetric"]),
])
def test_the_one_reader_of_the_words(words: str, control: dict | None, rest: list[str]) -> None:
    assert tc.take(words.split()) == (control, rest)


@pytest.mark.parametrize(("words", "error"), [
    ("time", "the days per move are a number"),
    ("time soon", "the days per move are a number"),
    ("time fischer 10", "after 'fischer' come the initial days and the days added per move"),
    ("time fischer 10+1 cap", "after 'cap' come the most days a bank may hold"),
    ("time fischer 10+2 cap 5", "the cap of a Fischer clock is at least its initial time and its increment"),
    ("time total", "after 'total' come the days for the whole game"),
    ("time 400", "at most 365"),
    ("time 0.01", "a move needs at least one hour"),
])
def test_words_that_are_no_time_control_say_what_would_be(words: str, error: str) -> None:
    with pytest.raises(tc.ClockError, match=error):
        tc.take(words.split())


def test_what_the_words_leave_out_comes_from_the_game_or_the_server() -> None:
    config = DeadlineConfig(default_days=3, policy="notify")
    assert tc.take(["weekends", "off"], config=config)[0] == {
        "kind": "move", "days_per_move": 3, "policy": "notify", "weekends_off": True}
    fischer = tc.take(["time", "fischer", "10+1", "cap", "12", "nights", "off", "notify"])[0]
    assert fischer is not None
    # another kind keeps the policy and what does not count; the same kind keeps its amounts
    assert tc.take(["total", "20"], fischer, whole=True)[0] == {
        "kind": "total", "total_days": 20, "policy": "notify", "nights_off": True}
    assert tc.take(["weekends", "off", "forfeit"], fischer, whole=True)[0] == {
        **fischer, "weekends_off": True, "policy": "forfeit"}
    assert tc.take(["nights", "on"], fischer, whole=True)[0] == {
        k: v for k, v in fischer.items() if k != "nights_off"}
    with pytest.raises(tc.ClockError, match="I do not understand 'please'"):
        tc.take(["3", "please"], whole=True)


def test_json_values_mean_the_same() -> None:
    assert tc.from_json(3) == tc.take(["time", "3"])[0]
    assert tc.from_json("fischer 10+1.5 cap 10") == tc.take(["time", "fischer", "10+1.5", "cap", "10"])[0]
    assert tc.from_json({"kind": "total", "total_days": 30}) == tc.take(["time", "total", "30"])[0]
    assert tc.from_json({"days_per_move": 2, "policy": "notify"}) == tc.take(["time", "2", "notify"])[0]
    for bad in (True, [], "", {"kind": "hourglass"}, {"kind": "fischer", "initial_days": 2}):
        with pytest.raises(tc.ClockError):
            tc.from_json(bad)


def test_a_record_from_before_the_kinds_is_per_move() -> None:
    old = {"days_per_move": 3, "policy": "notify"}
    assert tc.normalize(old) == {"kind": "move", "days_per_move": 3, "policy": "notify"}
    assert tc.initial_bank(old) == 3 * D
    assert tc.normalize(None, DeadlineConfig(default_days=5)) == {
        "kind": "move", "days_per_move": 5, "policy": "forfeit"}


def test_banks() -> None:
    fischer = {"kind": "fischer", "initial_days": 10, "increment_days": 1.5, "cap_days": 10}
    assert tc.after_move(fischer, 10 * D, H) == 10 * D  # the cap
    assert tc.after_move(fischer, 10 * D, 4 * D) == 7.5 * D
    assert tc.after_move(fischer, 2 * D, 3 * D) == 1.5 * D  # overdrawn: empty, then the increment
    assert tc.after_end(fischer, 5 * D, D) == 4 * D  # no increment without a move
    total = {"kind": "total", "total_days": 30}
    assert tc.after_move(total, 30 * D, 2 * D) == 28 * D
    assert tc.after_move({"kind": "move", "days_per_move": 3}, 3 * D, 2 * D) == 3 * D


def test_texts() -> None:
    assert [tc.span_text(x) for x in (6 * D + 4 * H, 36 * H, 10 * D, 3 * H + 20 * timedelta(minutes=1),
                                      2 * H + 20 * timedelta(minutes=1), 2 * D - timedelta(seconds=3))] == [
        "6 d 4 h", "36 h", "10 d", "3 h", "2 h 20 min", "2 d"]
    fischer = {"kind": "fischer", "initial_days": 10, "increment_days": 1.5, "cap_days": 10,
               "policy": "forfeit", "weekends_off": True}
    assert tc.bank_line(fischer, 6 * D + 4 * H) == (
        "Your time: 6 d 4 h, +36 h per move, at most 10 d. (Weekends do not count.)")
    assert tc.describe(fischer, False) == (
        "Fischer clock: 10 d, +36 h per move, at most 10 d (weekends do not count); a late player forfeits")
    assert tc.kind_text({"kind": "move", "days_per_move": 1}) == "1 day per move"
    assert tc.kind_text({"kind": "total", "total_days": 30, "nights_off": True}) == (
        "30 d for the whole game (nights 23:00-07:00 do not count)")


# --- counted time ------------------------------------------------------------------------------------------

def test_weekends_and_nights_in_the_players_timezone() -> None:
    utc = OffTime(weekends=True)
    assert moment_after(utc, FRI, 14 * H) == datetime(2026, 11, 23, 0, 0, tzinfo=UTC)  # to Monday
    assert moment_after(utc, FRI, 15 * H) == datetime(2026, 11, 23, 1, 0, tzinfo=UTC)
    assert counted(utc, FRI, FRI + 7 * D) == 5 * D
    night = OffTime(zone=ZoneInfo("Europe/Bratislava"), nights=True)
    # Friday 11:00 in Bratislava: 12 hours to 23:00, then 07:00 the next morning
    assert moment_after(night, FRI, 13 * H) == datetime(2026, 11, 21, 7, 0, tzinfo=UTC)
    assert counted(night, FRI, FRI + D) == 16 * H


def test_summer_time_moves_the_nights_with_the_players_day() -> None:
    zone = ZoneInfo("Europe/Bratislava")
    night = OffTime(zone=zone, nights=True)
    sat = datetime(2026, 3, 28, 12, 0, tzinfo=zone)  # the clocks go forward in that night
    end = moment_after(night, sat.astimezone(UTC), 12 * H)
    assert end.astimezone(zone) == datetime(2026, 3, 29, 8, 0, tzinfo=zone)  # 11 h before, 1 h after 07:00


_times = st.integers(min_value=0, max_value=60 * 24 * 30).map(lambda m: FRI + timedelta(minutes=m))


@settings(max_examples=60, deadline=None)
@given(start=_times, minutes=st.integers(min_value=0, max_value=60 * 24 * 20),
       zone=st.sampled_from(["UTC", "Europe/Bratislava", "America/New_York", "Pacific/Auckland"]),
       weekends=st.booleans(), nights=st.booleans(),
       pauses=st.lists(st.tuples(_times, st.integers(min_value=1, max_value=5000)), max_size=3))
def test_counted_inverts_moment_after(start: datetime, minutes: int, zone: str, weekends: bool, nights: bool,
                                      pauses: list[tuple[datetime, int]]) -> None:
    off = OffTime(zone=ZoneInfo(zone), weekends=weekends, nights=nights,
                  pauses=tuple((a, a + timedelta(minutes=m)) for a, m in pauses))
    amount = timedelta(minutes=minutes)
    end = moment_after(off, start, amount)
    assert end >= start + amount
    assert counted(off, start, end) == amount
    # the last such moment: a minute later the clock has run over (or stands still there)
    assert counted(off, start, end + timedelta(minutes=1)) <= amount + timedelta(minutes=1)


# --- the log --------------------------------------------------------------------------------------------

def _log(control: dict) -> dict:
    record: dict = {}
    cl.append(record, {"event": "control", "at": cl.stamp(FRI), "control": control})
    return record


def test_live_and_replayed_alike_and_a_tampered_log_is_caught() -> None:
    record = _log(tc.take(["time", "fischer", "2+1", "cap", "3", "weekends", "off"])[0] or {})
    at = FRI
    for seat, wait in (("black", H), ("white", 3 * D), ("black", 30 * timedelta(minutes=1))):
        cl.append(record, {"event": "start", "at": cl.stamp(at), "seat": seat, "zone": "Europe/Bratislava"})
        at += wait
        cl.append(record, {"event": "move", "at": cl.stamp(at), "seat": seat})
    cl.append(record, {"event": "start", "at": cl.stamp(at), "seat": "white", "zone": "UTC"})
    cl.append(record, {"event": "pause", "at": cl.stamp(at + H), "why": "moderator"})
    cl.append(record, {"event": "resume", "at": cl.stamp(at + 5 * H)})
    cl.append(record, {"event": "outage", "at": cl.stamp(at + 9 * H), "from": cl.stamp(at + 7 * H)})
    stored = cl.append(record, {"event": "deadline", "at": cl.stamp(at + 10 * H),
                                "until": cl.stamp(at + 3 * D)})
    assert cl.check(record) == []
    assert cl.final_deadline(record) == cl.deadline_of(stored) == at + 3 * D
    white = next(e for e in record["clock_log"] if e["event"] == "move" and e["seat"] == "white")
    # Friday 12:00 to Monday 12:00 in Bratislava, less the weekend: 12 h on Friday, 12 on Monday
    assert white["used"] == 24 * 3600 and white["left"] == 2 * 24 * 3600
    tampered = {**record, "clock_log": [dict(e) for e in record["clock_log"]]}
    tampered["clock_log"][4]["left"] += 3600  # an hour more than the times give
    [wrong] = cl.check(tampered)
    assert wrong.index == 4 and wrong.differences == {"left": (white["left"] + 3600, white["left"])}


def test_a_spent_day_and_the_grace_and_the_timeout() -> None:
    record = _log({"kind": "move", "days_per_move": 1, "policy": "forfeit"})
    cl.append(record, {"event": "start", "at": cl.stamp(FRI), "seat": "black", "zone": "UTC"})
    spent = cl.append(record, {"event": "spend", "at": cl.stamp(FRI + D + H), "seat": "black",
                               "from": cl.stamp(FRI + D), "until": cl.stamp(FRI + 2 * D), "days": 1,
                               "left_days": 0})
    assert cl.deadline_of(spent) == FRI + 2 * D  # the clock stands still for the day
    graced = cl.append(record, {"event": "grace", "at": cl.stamp(FRI + 2 * D + H)})
    assert cl.deadline_of(graced) == FRI + 3 * D
    ended = cl.append(record, {"event": "timeout", "at": cl.stamp(FRI + 3 * D), "seat": "black",
                               "action": "forfeit"})
    # the day's bank, and the grace period (time over the bank is used time; the spent day is not)
    assert ended["used"] == 2 * 86400 and cl.running(record) is None and cl.check(record) == []


def test_an_event_for_another_seat_is_refused() -> None:
    record = _log({"kind": "move", "days_per_move": 1})
    with pytest.raises(cl.LogError, match="no turn is running"):
        cl.append(record, {"event": "move", "at": cl.stamp(FRI), "seat": "black"})
    cl.append(record, {"event": "start", "at": cl.stamp(FRI), "seat": "black"})
    with pytest.raises(cl.LogError, match="white is not the seat to move"):
        cl.append(record, {"event": "move", "at": cl.stamp(FRI), "seat": "white"})


# --- reliability ----------------------------------------------------------------------------------------

def _game(game_id: str, status: str, result: dict | None, log: list[dict]) -> GameRow:
    record = {"moves": [], "clock_log": log, **({"result": result} if result else {})}
    return GameRow(id=game_id, game="alien-city", status=status, record=record,
                   seats=[Seat("black", "ann@x.org"), Seat("white", "bo@x.org")])


def test_reliability_from_the_games() -> None:
    def turn(seat: str, bank: int, used: int, late: bool = False) -> list[dict]:
        return [{"event": "start", "seat": seat, "bank": bank},
                *([{"event": "spend", "seat": seat}] if late else []),
                {"event": "move", "seat": seat, "used": used, "left": 0}]
    rows = [_game("ac-1", "over", {"reason": "forfeit", "forfeited": "white", "winners": ["black"]},
                  [*turn("black", 100, 50), *turn("white", 100, 100, late=True),
                   {"event": "start", "seat": "black", "bank": 100},
                   {"event": "move", "seat": "black", "used": 0},
                   {"event": "start", "seat": "white", "bank": 100},
                   {"event": "timeout", "seat": "white", "action": "forfeit"}]),
            _game("ac-2", "over", {"reason": "scored", "winners": ["white"]}, []),
            _game("ac-3", "active", None, turn("black", 200, 20))]
    table = reliability.compute(rows)
    bo, ann = table["bo@x.org"], table["ann@x.org"]
    assert (bo.finished, bo.lost_on_time, bo.moves, bo.in_time) == (2, 1, 2, 0)
    assert bo.percent == 50.0 and bo.time_used_percent == 100.0
    assert (ann.finished, ann.lost_on_time, ann.moves, ann.in_time) == (2, 0, 3, 3)
    assert ann.percent == 100.0 and ann.time_used_percent == pytest.approx((50 + 0 + 10) / 3)
    assert reliability.short_text(bo) == "reliable 50 % of 2 games"
    assert reliability.long_text(bo) == ("2 games finished, 1 of them lost on time (50 % reliable). 0 of 2 "
                                         "turns ended with a move in time (0 %); 100 % of the time used on "
                                         "average.")
    assert reliability.of_player(rows, "cy@x.org").percent == 100.0  # nothing lost yet


# --- the movable clock ----------------------------------------------------------------------------------

def test_the_movable_clock_reads_the_offset_every_process_shares(tmp_path: Path) -> None:
    base = ManualClock(FRI)
    clock = MovableClock(tmp_path, base)
    assert clock.now() == FRI and read_offset(tmp_path) == timedelta(0)
    assert move(tmp_path, parse_shift("+2d")) == 2 * D
    other = MovableClock(tmp_path, base)  # another process reading the same file
    assert clock.now() == other.now() == FRI + 2 * D
    move(tmp_path, parse_shift("1d12h"))
    assert clock.now() == FRI + 3.5 * D
    assert [parse_shift(text) for text in ("+36h", "+1w", "+90m", "+30s")] == [
        36 * H, 7 * D, 90 * timedelta(minutes=1), timedelta(seconds=30)]
    for bad in ("-2d", "+0d", "soon", "2 days"):
        with pytest.raises(ClockMoveError):
            parse_shift(bad)
    with pytest.raises(ClockMoveError, match="only moves forward"):
        move(tmp_path, -H)


def test_the_movable_clock_follows_the_system_clock_back_and_never_its_offset(tmp_path: Path) -> None:
    base = ManualClock(FRI)
    move(tmp_path, 2 * D)
    clock = MovableClock(tmp_path, base)
    assert clock.now() == FRI + 2 * D
    # an NTP correction of an hour: followed, like the system clock (standing still instead until
    # the system clock caught up stopped the server's time for an hour, in every process)
    base.advance(-3600)
    assert clock.now() == FRI + 2 * D - H
    base.advance(60)
    assert clock.now() == FRI + 2 * D - H + timedelta(seconds=60)  # and runs on from there
    # a smaller offset written by hand is not taken: what the server did cannot be undone
    (tmp_path / "clock-offset").write_text("3600\n")
    assert clock.now() == FRI + 2 * D - H + timedelta(seconds=60)


def test_admin_clock_refuses_back_and_too_far_in_one_line(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """``-1d`` used to end in argparse's "unrecognized arguments", and ``+1000000w`` in a traceback
    (past the year 9999): both are said in the command's own words, and the clock stays put."""
    from pbem.cli import main
    from pbem.store import open_store

    (tmp_path / "data").mkdir()
    open_store(tmp_path / "data" / "pbem.sqlite3").close()  # a server's database, as serve makes it
    config = tmp_path / "pbem.toml"
    config.write_text(f'[server]\ndata_dir = "{tmp_path / "data"}"\nclock = "movable"\n')
    assert main(["admin", "clock", "+1d", "-c", str(config)]) == 0
    capsys.readouterr()
    for shift, said in (("-1d", "'-1d' would move the clock back; it only moves forward"),
                        ("+1000000w", "'+1000000w' is more than a year: move the clock at most +366d at a "
                                      "time (and again for more)"),
                        ("+367d", "'+367d' is more than a year")):
        assert main(["admin", "clock", shift, "-c", str(config)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"pbem admin clock: {said}") and "Traceback" not in err
    assert main(["admin", "clock", "--bogus", "-c", str(config)]) == 2
    assert capsys.readouterr().err == "pbem admin clock: unrecognized arguments: --bogus\n"
    assert read_offset(tmp_path / "data") == D
    assert main(["admin", "clock", "+366d", "-c", str(config)]) == 0
    assert read_offset(tmp_path / "data") == 367 * D


def test_a_turn_says_until_when_its_clock_stands_still() -> None:
    """Weekends and nights off in Bratislava, a vacation from Tuesday: the stretch the clock does not
    run, merged (Sunday's night runs on into the weekend's end), ends when it runs again."""
    zone = "Europe/Bratislava"  # UTC+1 in November
    turn = cl.Turn(seat="black", started=datetime(2026, 11, 20, 9, 0, tzinfo=UTC), bank=timedelta(days=3),
                   control={"kind": "move", "days_per_move": 3, "weekends_off": True, "nights_off": True},
                   zone=zone, away=[(datetime(2026, 11, 24, 12, 0, tzinfo=UTC),
                                     datetime(2026, 11, 26, 12, 0, tzinfo=UTC))])
    assert turn.stands_still(datetime(2026, 11, 20, 12, 0, tzinfo=UTC)) is None  # Friday noon: it runs
    monday_seven = datetime(2026, 11, 23, 6, 0, tzinfo=UTC)  # 07:00 in Bratislava
    assert turn.stands_still(datetime(2026, 11, 21, 10, 0, tzinfo=UTC)) == monday_seven
    assert turn.stands_still(datetime(2026, 11, 20, 22, 0, tzinfo=UTC)) == monday_seven  # Friday night
    assert turn.stands_still(monday_seven) is None
    assert turn.stands_still(datetime(2026, 11, 25, 0, 0, tzinfo=UTC)) == datetime(2026, 11, 26, 12, 0,
                                                                                     tzinfo=UTC)
    turn.paused_at = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)  # a pause has no known end
    assert turn.stands_still(datetime(2026, 11, 21, 10, 0, tzinfo=UTC)) is None
