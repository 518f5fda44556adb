"""The clock log as the others see it (pbem.clocks.privacy): a player's absences cut to their own
turns and unnamed, their allowance left out, their timezone only where it decides what counts; every
stored value still replays, and is the same as in the full log."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from pbem.clocks import log as cl
from pbem.clocks.privacy import others_view, public_log

FRI = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
H = timedelta(hours=1)
D = timedelta(days=1)
VALUES = ("used", "left", "bank", "deadline")


def _record(control: dict) -> dict:
    record: dict = {"clock_log": []}
    cl.append(record, {"event": "control", "at": cl.stamp(FRI), "control": control})
    return record


def _spans(items: list[tuple[int, int]], base: datetime) -> list[list[str]]:
    return [[cl.stamp(base + a * H), cl.stamp(base + (a + b) * H)] for a, b in items]


def test_a_turn_keeps_only_its_own_absences_and_the_rest_is_gone() -> None:
    record = _record({"kind": "fischer", "initial_days": 3, "increment_days": 1, "cap_days": 5,
                      "policy": "forfeit"})
    christmas = [cl.stamp(datetime(2026, 12, 24, tzinfo=UTC)), cl.stamp(datetime(2026, 12, 27, tzinfo=UTC))]
    monday = [cl.stamp(FRI + 3 * D - 10 * H), cl.stamp(FRI + 4 * D - 10 * H)]  # Mon 23 Nov, UTC day
    cl.append(record, {"event": "start", "at": cl.stamp(FRI), "seat": "black", "zone": "Europe/Vienna",
                       "away": [monday, christmas]})
    cl.append(record, {"event": "move", "at": cl.stamp(FRI + 2 * H), "seat": "black"})
    cl.append(record, {"event": "start", "at": cl.stamp(FRI + 2 * H), "seat": "white", "zone": "Asia/Tokyo"})
    cl.append(record, {"event": "spend", "at": cl.stamp(FRI + 3 * D + 3 * H), "seat": "white",
                       "from": cl.stamp(FRI + 3 * D + 2 * H), "until": cl.stamp(FRI + 4 * D + 2 * H),
                       "days": 0, "left_days": 12})
    shown = public_log(record["clock_log"])
    text = json.dumps(shown)
    assert '"away"' not in text and "2026-12-2" not in text and "left_days" not in text
    assert '"days"' not in text and "Vienna" not in text and "Tokyo" not in text  # all hours count
    # black moved two hours in: the deadline the server showed (Monday, past the day away) is the
    # latest time of the turn, so the day away before it stays, unnamed, and replays
    assert shown[1]["off"] == [monday]
    assert cl.check({"clock_log": shown}) == []
    assert [{k: e.get(k) for k in VALUES} for e in shown] == [
        {k: e.get(k) for k in VALUES} for e in record["clock_log"]]
    # a record given out is a copy: the full one keeps everything for the moderators
    given = others_view(record)
    assert given["clock_log"] == shown and record["clock_log"][1]["away"] == [monday, christmas]


def test_the_timezone_stays_where_weekends_or_nights_do_not_count() -> None:
    record = _record({"kind": "move", "days_per_move": 2, "policy": "forfeit", "weekends_off": True})
    cl.append(record, {"event": "start", "at": cl.stamp(FRI), "seat": "black", "zone": "America/New_York"})
    [_, start] = public_log(record["clock_log"])
    assert start["zone"] == "America/New_York"
    assert cl.check({"clock_log": public_log(record["clock_log"])}) == []


_turn = st.tuples(
    st.integers(0, 200),  # hours the turn runs before its end
    st.lists(st.tuples(st.integers(-300, 900), st.integers(1, 200)), max_size=3),  # away at the start
    st.lists(st.tuples(st.integers(0, 900), st.integers(1, 200)), max_size=2),  # away changed later
    st.sampled_from(["move", "timeout", "running", "pause", "spend"]),
)


@settings(max_examples=60, deadline=None)
@given(kind=st.sampled_from(["move", "fischer", "total"]), weekends=st.booleans(), nights=st.booleans(),
       turns=st.lists(_turn, min_size=1, max_size=4))
def test_every_value_replays_and_is_the_full_logs(kind: str, weekends: bool, nights: bool,
                                                   turns: list) -> None:
    control = {"move": {"kind": "move", "days_per_move": 3},
               "fischer": {"kind": "fischer", "initial_days": 3, "increment_days": 1, "cap_days": 4},
               "total": {"kind": "total", "total_days": 20}}[kind]
    control = {**control, "policy": "forfeit", **({"weekends_off": True} if weekends else {}),
               **({"nights_off": True} if nights else {})}
    record = _record(control)
    at = FRI
    for n, (hours, away, changed, end) in enumerate(turns):
        seat = ("black", "white")[n % 2]
        cl.append(record, {"event": "start", "at": cl.stamp(at), "seat": seat, "zone": "Europe/Bratislava",
                           "away": _spans(away, at)})
        if changed:
            cl.append(record, {"event": "away", "at": cl.stamp(at + H), "seat": seat,
                               "intervals": _spans(changed, at)})
        at += max(hours, 2) * H
        if end == "pause":
            cl.append(record, {"event": "pause", "at": cl.stamp(at), "why": "moderator"})
            break
        if end == "spend":
            cl.append(record, {"event": "spend", "at": cl.stamp(at), "seat": seat, "from": cl.stamp(at),
                               "until": cl.stamp(at + D), "days": 1, "left_days": 3})
            at += D
            end = "move"  # after the day, in the time it gave
        if end == "running":
            break
        cl.append(record, {"event": end, "at": cl.stamp(at), "seat": seat,
                           **({"action": "forfeit"} if end == "timeout" else {})})
    shown = public_log(record["clock_log"])
    assert cl.check({"clock_log": shown}) == []
    assert [{k: e.get(k) for k in VALUES} for e in shown] == [
        {k: e.get(k) for k in VALUES} for e in record["clock_log"]]
    assert not any("away" in e or e["event"] == "away" or "left_days" in e for e in shown)
    # whatever is kept of an absence lies within its own turn, as far as the turn's values reach
    starts = [i for i, e in enumerate(shown) if e["event"] == "start"]
    for n, first in enumerate(starts):
        turn = shown[first:starts[n + 1] if n + 1 < len(starts) else len(shown)]
        latest = max([cl.moment(e["at"]) for e in turn]
                     + [cl.moment(e["deadline"]) for e in turn if isinstance(e.get("deadline"), str)])
        for event in turn:
            for a, b in event.get("off", event.get("intervals", [])):
                assert cl.moment(turn[0]["at"]) <= cl.moment(a) < cl.moment(b) <= latest
