"""The mail commands vacation, timezone and timecontrol, through the real reader and processor."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import pytest

from pbem.cli.mailbox import reply_to
from pbem.commands.parsing import Command, parse_line
from pbem.community.deadline_commands import take_time_option
from pbem.config import config_from_dict
from pbem.processing.games import CommandFailed
from pbem.record import replay_record
from tests.scheduler.conftest import ALICE, BOB, CAROL, WEEK, Clocked
from tests.server.harness import headline, text_of, to
from tests.services.requirements import free_port


def flat(message) -> str:
    return " ".join(text_of(message).split())


def _reply(server: Clocked, original, sender: str, body: str) -> str:
    out = server.submit(reply_to(original, sender, body))
    return flat(to(out, sender)[0])


# --- timezone ----------------------------------------------------------------------------------------

def test_timezone_is_validated_and_used_for_reminders(server: Clocked) -> None:
    game_id, _ = server.start_alien_city()
    out = server.submit(server.mail(ALICE, "timezone europe/bratislava"))
    text = flat(to(out, ALICE)[0])
    assert "Your timezone: Europe/Bratislava" in text
    assert "It is now Fri 20 Nov 2026, 11:00 CET (10:00 UTC) there." in text
    assert f"{game_id}: your move, deadline Fri 27 Nov 2026, 11:00 CET (10:00 UTC), in 7 days" in text
    with server.store.transaction() as tx:
        assert tx.get_player(ALICE)["timezone"] == "Europe/Bratislava"
    out = server.submit(server.mail(ALICE, "timezone Mars/Olympus_Mons"))
    assert "I do not know the timezone 'Mars/Olympus_Mons'" in flat(to(out, ALICE)[0])
    with server.store.transaction() as tx:
        assert tx.get_player(ALICE)["timezone"] == "Europe/Bratislava"
    server.clock.set(server.game(game_id).deadline_at - timedelta(hours=48))
    reminder = to(server.run(), ALICE)[0]
    assert "deadline Fri 27 Nov 2026, 11:00 CET (10:00 UTC), in 2 days" in flat(reminder)
    assert "Times are in your timezone, Europe/Bratislava" in flat(reminder)


def test_timezone_alone_shows_it(server: Clocked) -> None:
    out = server.submit(server.mail(BOB, "timezone"))
    assert "Your timezone: UTC" in flat(to(out, BOB)[0])


# --- vacation ----------------------------------------------------------------------------------------

def test_vacation_stops_the_clock_and_cancel_restarts_it(server: Clocked) -> None:
    game_id, your_move = server.start_alien_city()
    deadline = server.game(game_id).deadline_at  # Fri 27 Nov 10:00 UTC
    text = _reply(server, your_move, ALICE, "vacation 2026-11-23..2026-11-25")
    assert "Vacation set" in text and "Deadlines moved: ac-1" in text
    assert "Vacation days used in 2026: 3 of 30; 27 left." in text
    assert server.game(game_id).deadline_at == deadline + timedelta(days=3)
    # the vacation is shown, and named in 'games'
    out = server.submit(server.mail(ALICE, "vacation"))
    assert "Vacation 2026-11-23 to 2026-11-25 (3 days)." in flat(to(out, ALICE)[0])
    text = _reply(server, your_move, ALICE, "vacation cancel")
    assert "Cancelled: 2026-11-23 to 2026-11-25." in text
    assert server.game(game_id).deadline_at == deadline
    assert "Vacation days used in 2026: 0 of 30" in text


def test_vacation_in_the_players_timezone(server: Clocked) -> None:
    game_id, your_move = server.start_alien_city()
    deadline = server.game(game_id).deadline_at
    server.submit(server.mail(ALICE, "timezone Asia/Tokyo"))
    _reply(server, your_move, ALICE, "vacation 2026-11-23")
    with server.store.transaction() as tx:
        entry = tx.get_player(ALICE)["vacations"][0]
    assert entry["start"] == "2026-11-22T15:00:00+00:00"  # midnight in Tokyo
    assert entry["end"] == "2026-11-23T15:00:00+00:00"
    assert server.game(game_id).deadline_at == deadline + timedelta(days=1)


def test_vacation_needs_a_token_when_it_moves_deadlines(server: Clocked) -> None:
    game_id, _ = server.start_alien_city()
    deadline = server.game(game_id).deadline_at
    out = server.submit(server.mail(ALICE, "vacation 2026-11-23..2026-11-25"))
    assert "needs your token" in flat(to(out, ALICE)[0])
    out = server.submit(server.mail(ALICE, "vacation cancel"))
    assert "needs your token" in flat(to(out, ALICE)[0])
    assert server.game(game_id).deadline_at == deadline
    # somebody without games may plan one with the From address alone
    out = server.submit(server.mail("newbie@example.org", "vacation 2026-12-01..2026-12-02"))
    assert "Vacation set" in flat(to(out, "newbie@example.org")[0])


def test_vacation_allowance_is_yearly(server: Clocked) -> None:
    _game_id, your_move = server.start_alien_city()
    text = _reply(server, your_move, ALICE, "vacation 2026-12-01 to 2026-12-25")
    assert "Vacation days used in 2026: 25 of 30; 5 left." in text
    text = _reply(server, your_move, ALICE, "vacation 2026-12-26..2027-01-05")
    assert ("that is 6 vacation days in 2026, but you have only 5 of your 30 days a year left for "
            "2026.") in text
    # 27..31 December are the 5 days left for 2026; 1..5 January count against 2027
    text = _reply(server, your_move, ALICE, "vacation 2026-12-27 - 2027-01-05")
    assert "Vacation set" in text and "Vacation days used in 2026: 30 of 30; 0 left." in text
    with server.store.transaction() as tx:
        vacations = tx.get_player(ALICE)["vacations"]
    assert [(v["from"], v["to"]) for v in vacations] == [("2026-12-01", "2026-12-25"),
                                                         ("2026-12-27", "2027-01-05")]
    text = _reply(server, your_move, ALICE, "vacation 2026-12-26")
    assert "you have only 0 of your 30 days a year left for 2026" in text
    text = _reply(server, your_move, ALICE, "vacation 2026-12-20..2026-12-28")
    assert "it overlaps your vacation 2026-12-01 to 2026-12-25" in text
    text = _reply(server, your_move, ALICE, "vacation 2026-11-01..2026-11-02")
    assert "cannot start in the past" in text
    text = _reply(server, your_move, ALICE, "vacation 2026-12-02..2026-12-01")
    assert "ends (2026-12-01) before it starts" in text


def test_a_new_turn_during_a_vacation_starts_after_it(server: Clocked) -> None:
    game_id, your_move = server.start_alien_city()
    row = server.game(game_id)
    token = server.processor.token_for(game_id, "white")  # Bob's, as in a new mail he writes
    out = server.submit(server.mail(BOB, f"vacation 2026-11-21..2026-11-30\ntoken {token}"))
    assert "Vacation set" in flat(to(out, BOB)[0])
    server.clock.set(datetime(2026, 11, 22, 9, 0, tzinfo=UTC))
    state = replay_record(row.record)
    server.submit(reply_to(your_move, ALICE, state.move_text(state.legal_moves()[0])))
    row = server.game(game_id)
    assert row.to_move == "white"
    assert row.deadline_at == datetime(2026, 12, 1, tzinfo=UTC) + WEEK
    # no reminders while away; and none are due before the deadline nears anyway
    server.clock.set(datetime(2026, 11, 29, tzinfo=UTC))
    assert server.run() == []


def test_no_reminders_during_a_vacation(server: Clocked) -> None:
    game_id, your_move = server.start_alien_city(extra="\ntimecontrol 3")
    deadline = server.game(game_id).deadline_at  # Mon 23 Nov 10:00
    server.clock.set(datetime(2026, 11, 21, 12, tzinfo=UTC))
    _reply(server, your_move, ALICE, "vacation 2026-11-21")  # today: the rest of the day is off
    assert server.game(game_id).deadline_at == deadline + timedelta(hours=12)
    assert server.run() == []  # the 48-hour reminder is due, but Alice is away
    server.clock.set(datetime(2026, 11, 22, 0, 1, tzinfo=UTC))
    assert [rcpt for rcpt, _ in server.run()] == [ALICE]


# --- timecontrol -------------------------------------------------------------------------------------

def test_timecontrol_in_the_mail_that_proposes_the_game(server: Clocked) -> None:
    out = server.submit(server.mail(ALICE, f"new alien-city with {BOB} as black\ntimecontrol 3 days"))
    invitation = to(out, BOB)[0]
    assert "Time control: 3 days per move" in flat(invitation)
    assert "Time control of ac-1: 3 days per move" in flat(to(out, ALICE)[0])
    out = server.submit(reply_to(invitation, BOB, "accept"))
    row = server.game("ac-1")
    assert row.record["time_control"] == {"kind": "move", "days_per_move": 3, "policy": "forfeit"}
    assert row.deadline_at == server.clock.now() + timedelta(days=3)


def test_timecontrol_later_by_the_challenger_only_before_anyone_accepts(server: Clocked) -> None:
    out = server.submit(server.mail(ALICE, f"new alien-city with {BOB} as black"))
    created, invitation = to(out, ALICE)[0], to(out, BOB)[0]
    text = _reply(server, invitation, BOB, "timecontrol ac-1 1")
    assert "only the player who proposed game ac-1" in text
    out = server.submit(reply_to(created, ALICE, "timecontrol 2 notify"))
    assert headline(to(out, ALICE)[0]) == "Time control of ac-1 changed"  # what changed, first
    assert headline(to(out, BOB)[0]) == f"{ALICE} changed the time control of ac-1"
    assert "Time control: 2 days per move" in flat(to(out, BOB)[0])
    assert server.game("ac-1").record["time_control"] == {
        "kind": "move", "days_per_move": 2, "policy": "notify"}
    # without the token: no effect and no reply, only the seat's notice (as for any game command)
    out = server.submit(server.mail(ALICE, "timecontrol ac-1 5"))
    notice = f"A mail about ac-1 from {ALICE} was not accepted"
    assert [(rcpt, headline(m)) for rcpt, m in out] == [(ALICE, notice)]
    assert server.game("ac-1").record["time_control"]["days_per_move"] == 2
    server.submit(reply_to(invitation, BOB, "accept"))
    text = _reply(server, created, ALICE, "timecontrol 9")
    assert "now only a moderator can change it" in text
    out = server.submit(server.mail(ALICE, "timecontrol ac-1"))
    assert "Time control of ac-1: 2 days per move; at a deadline the moderators decide." in flat(
        to(out, ALICE)[0])


@pytest.mark.parametrize(("line", "expected"), [
    ("timecontrol 3", {"said": {"kind": "move", "days_per_move": 3}}),
    ("timecontrol ac-2 1.5 days notify", {"said": {
        "kind": "move", "days_per_move": 1.5, "policy": "notify"}}),
    ("timecontrol 4d forfeit", {"said": {"kind": "move", "days_per_move": 4, "policy": "forfeit"}}),
    ("timecontrol ac-2", {"said": None}),
    ("timecontrol ac-2 fischer 3d+36h cap 5 weekends off", {"said": {
        "kind": "fischer", "initial_days": 3, "increment_days": 1.5, "cap_days": 5, "weekends_off": True}}),
    ("timecontrol total 20 nights off notify", {"said": {
        "kind": "total", "total_days": 20, "nights_off": True, "policy": "notify"}}),
    ("timecontrol weekends on", {"said": {"weekends_off": False}}),
])
def test_timecontrol_parsing(line: str, expected: dict) -> None:
    command = parse_line(line, in_game_reply=False)
    assert isinstance(command, Command) and command.args == expected


@pytest.mark.parametrize("line", ["timecontrol soon", "timecontrol 3 days maybe", "timecontrol fischer 10",
                                  "timecontrol fischer 10+1 cap 5", "timecontrol total",
                                  "timecontrol 3 nights",
                                  "vacation next week", "vacation 2026-02-30", "timezone Europe Paris"])
def test_bad_time_commands(line: str) -> None:
    assert not isinstance(parse_line(line, in_game_reply=False), Command)


def test_take_time_option_for_new() -> None:
    ctx = SimpleNamespace(config=config_from_dict({"deadlines": {"default_days": 5},
                                                   "moderators": {"addresses": ["mod@x.org"]}}))
    command = parse_line("new alien-city edition 1.2 time 3 days notify with bob@x.org",
                         in_game_reply=False)
    assert isinstance(command, Command)
    assert take_time_option(ctx, command) == {
        "time_control": {"kind": "move", "days_per_move": 3, "policy": "notify"}}
    assert command.option_words == ["edition", "1.2"]
    command = Command("new", "(JSON)", game="alien-city", options={"time": 2, "edition": "2.2"})
    assert take_time_option(ctx, command) == {
        "time_control": {"kind": "move", "days_per_move": 2, "policy": "forfeit"}}
    assert command.options == {"edition": "2.2"}
    assert take_time_option(ctx, Command("new", "x", option_words=["symmetric"])) == {}
    # what the words do not say is the server's default: here 5 days per move
    command = Command("new", "x", option_words=["symmetric", "weekends", "off"])
    assert take_time_option(ctx, command) == {"time_control": {
        "kind": "move", "days_per_move": 5, "policy": "forfeit", "weekends_off": True}}
    assert command.option_words == ["symmetric"]
    command = Command("new", "(JSON)", game="alien-city",
                      options={"time": "fischer 10+36h cap 12 nights off"})
    assert take_time_option(ctx, command) == {"time_control": {
        "kind": "fischer", "initial_days": 10, "increment_days": 1.5, "cap_days": 12, "policy": "forfeit",
        "nights_off": True}}
    with pytest.raises(CommandFailed):
        take_time_option(ctx, Command("new", "x", option_words=["time", "never"]))


def test_time_control_chosen_on_new(tmp_path) -> None:
    from tests.server.harness import Server
    from tests.server.harness import to as to_address

    server = Server(tmp_path)
    server.config.moderators = ["mod@example.org"]  # 'notify' needs somebody to decide
    try:
        out = server.submit(server.mail("ann@example.org", "new alien-city with bo@example.org time 3"))
        assert to_address(out, "bo@example.org"), [m["Subject"] for _r, m in out]
        assert server.game("ac-1").record["time_control"]["days_per_move"] == 3
        out = server.submit(server.mail("ann@example.org",
                                        "new alien-city time 2 notify with bo@example.org as white"))
        control = server.game("ac-2").record["time_control"]
        assert control["days_per_move"] == 2 and control["policy"] == "notify"
        out = server.submit(server.mail("ann@example.org", "new alien-city with bo@example.org time x"))
        assert "time" in to_address(out, "ann@example.org")[0].get_body(("plain",)).get_content()
    finally:
        server.close()


@pytest.mark.parametrize(("body", "said"), [
    ("new alien-city time total 0 with bo@example.org",
     "time: the days for the whole game: more than 0 and at most 365 days, not 0"),
    ("new alien-city time fischer 10+0 with bo@example.org",
     "time: the days a Fischer clock adds per move: more than 0 and at most 365 days, not 0"),
    ("new alien-city time fischer 10+1 cap 400 with bo@example.org",
     "time: the cap of a Fischer clock: more than 0 and at most 365 days, not 400"),
    ('{"command": "new", "game": "alien-city", "with": ["bo@example.org"], '
     '"options": {"time": {"kind": "fischer", "initial_days": 10}}}',
     "time: the days a Fischer clock adds per move: missing; e.g. time fischer 10+1.5"),
    ('{"command": "new", "game": "alien-city", "with": ["bo@example.org"], '
     '"options": {"time": {"kind": "total", "total_days": "lots"}}}',
     "time: the days for the whole game: a number of days, like time total 30, not 'lots'"),
])
def test_a_refused_amount_is_named_with_what_would_be_right(server: Clocked, body: str, said: str) -> None:
    """Each amount of a time control is refused by its own name (not 'days per move' for a total or a
    Fischer cap), with the words that would be right."""
    out = server.submit(server.mail("ann@example.org", body))
    [reply] = to(out, "ann@example.org")
    assert headline(reply) == f"Not done: {said}"
    assert server.game("ac-1") is None


@pytest.mark.parametrize(("language", "said"), [
    ("de", "Nicht erledigt: time: die Tage für das ganze Spiel: mehr als 0 und höchstens 365 Tage, "
           "nicht 0"),
    ("sk", "Nevykonané: time: dni na celú hru: viac ako 0 a najviac 365 dní, nie 0"),
])
def test_a_refused_amount_in_german_and_slovak(server: Clocked, language: str, said: str) -> None:
    with server.store.transaction() as tx:
        tx.set_player("ann@example.org", {"language": language})
    out = server.submit(server.mail("ann@example.org", "new alien-city time total 0 with bo@example.org"))
    assert headline(to(out, "ann@example.org")[0]) == said


def test_settings_show_the_timezone_beside_the_allowance(server: Clocked) -> None:
    """A player asking for their settings sees the timezone their times, weekends and nights follow
    (set with 'timezone', not 'set'), and how to change it while it is the default."""
    text = flat(to(server.submit(server.mail(ALICE, "settings")), ALICE)[0])
    assert "Times are shown in your timezone, UTC (change it with: timezone Area/City)." in text
    assert "Vacation allowance 2026: 30 of 30 days left" in text
    server.submit(server.mail(ALICE, "timezone Europe/Bratislava"))
    text = flat(to(server.submit(server.mail(ALICE, "settings")), ALICE)[0])
    assert "Times are shown in your timezone, Europe/Bratislava. Vacation allowance 2026" in text


def test_a_refused_vacation_says_what_would_be_right(server: Clocked) -> None:
    _game_id, your_move = server.start_alien_city()  # Fri 20 Nov 2026, UTC
    for line, said in (
            ("vacation 2026-12-02..2026-12-01",
             "the vacation ends (2026-12-01) before it starts (2026-12-02): the first day comes first, e.g. "
             "vacation 2026-12-01..2026-12-02"),
            ("vacation 2026-11-01..2026-11-22",
             "a vacation cannot start in the past: today is 2026-11-20 in UTC. From today on, e.g. vacation "
             "2026-11-20..2026-11-22"),
            ("vacation 2026-12-01..2027-03-01",
             "that is 31 vacation days in 2026, but you have only 30 of your 30 days a year left for 2026. "
             "The longest you can take from 2026-12-01: vacation 2026-12-01..2026-12-30")):
        reply = to(server.submit(reply_to(your_move, ALICE, line)), ALICE)[0]
        assert flat(reply).startswith(f"Not done: {said}"), flat(reply)
    # the suggestion is taken as it is
    reply = to(server.submit(reply_to(your_move, ALICE, "vacation 2026-12-01..2026-12-30")), ALICE)[0]
    assert headline(reply) == "Vacation set"


def test_the_bank_under_a_deadline_keeps_its_indent_when_wrapped(server: Clocked) -> None:
    out = server.submit(server.mail(ALICE, f"new alien-city time fischer 10+1.5 weekends off with {BOB} "
                                           "as black"))
    game_id = str(to(out, ALICE)[0]["X-Pbem-Game"])
    server.submit(reply_to(to(out, BOB)[0], BOB, "accept"))
    text = text_of(to(server.submit(server.mail(ALICE, "vacation")), ALICE)[0])
    lines = text.split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith(f"{game_id}: your move, deadline"))
    bank = lines[at + 1:at + 4]
    assert bank[0].startswith("  Your time: 10 d, +36 h per move, at most 10 d.")
    assert bank[1] == "  count.)" and all(len(line) <= 78 for line in lines)


def test_games_shows_every_deadline_in_the_readers_timezone(server: Clocked) -> None:
    """Bob in New York reads Alice's deadline in his own time (it was 'deadline 2026-11-27 10:00 UTC'
    for everyone, whatever 'timezone' they had set)."""
    server.start_alien_city()
    server.submit(server.mail(BOB, "timezone America/New_York"))
    text = text_of(to(server.submit(server.mail(BOB, "games")), BOB)[0])
    assert (f"black ({ALICE}) to move\n      deadline Fri 27 Nov 2026, 05:00 EST (10:00 UTC), in 7 days"
            in text)


def test_a_server_without_vacations_says_so(server: Clocked) -> None:
    """With [deadlines] vacation_days_per_year = 0 a vacation was refused with "you have only 0 of
    your 0 days a year left"; the player learns there are none, and what to do instead."""
    server.config.deadlines.vacation_days_per_year = 0
    _game_id, your_move = server.start_alien_city()
    refused = to(server.submit(reply_to(your_move, ALICE, "vacation 2026-12-20..2026-12-22")), ALICE)[0]
    assert headline(refused) == ("Not done: this server gives no vacation days ([deadlines] "
                                 "vacation_days_per_year = 0): to be away, ask its moderators to pause "
                                 "your games.")
    shown = flat(to(server.submit(server.mail(ALICE, "vacation")), ALICE)[0])
    assert "This server gives no vacation days" in shown and "0 of 0" not in shown


def test_notify_is_refused_where_no_moderator_would_decide(tmp_path, capsys) -> None:
    """On a server without moderators a game with 'notify' stalled at its deadline, and both players
    read "The moderators have been told and will decide": nobody was. Chosen in 'new' or with
    'timecontrol', it is refused with what would do; check-config warns of such a default."""
    from pbem.cli import main
    from tests.server.harness import Server
    from tests.server.harness import to as to_address

    server = Server(tmp_path)
    try:
        out = server.submit(server.mail("ann@example.org",
                                        "new alien-city time 3 notify with bo@example.org"))
        said = ("Not done: 'notify' leaves a late player to the moderators, and this server has none: at a "
                "deadline nobody would decide. Leave it out (the late player forfeits), or write forfeit.")
        assert headline(to_address(out, "ann@example.org")[0]) == said
        assert to_address(out, "bo@example.org") == [] and server.game("ac-1") is None
        out = server.submit(server.mail("ann@example.org", "new alien-city with bo@example.org\n"
                                                           "timecontrol 3 notify"))
        assert said in flat(to_address(out, "ann@example.org")[0])
        assert (server.game("ac-1").record.get("time_control") or {}).get("policy") != "notify"
    finally:
        server.close()
    config = tmp_path / "pbem.toml"
    config.write_text(f'[server]\ndata_dir = "{tmp_path / "data"}"\n[smtp]\nport = {free_port()}\n'
                      '[deadlines]\npolicy = "notify"\n')
    assert main(["check-config", "-c", str(config)]) == 0
    assert ('warning: [deadlines] policy = "notify" leaves every late player to the moderators, and '
            "[moderators] addresses is empty") in capsys.readouterr().out


def test_commands_in_the_wrong_state_say_what_the_game_is(server: Clocked) -> None:
    """'join' of a game that never was a challenge read "challenge ac-1 is full: the game has
    started"; 'timecontrol' of a finished game read "now only a moderator can change it" (a
    moderator cannot either)."""
    game_id, your_move = server.start_alien_city()
    out = server.submit(server.mail(CAROL, f"join {game_id}"))
    assert headline(to(out, CAROL)[0]) == (f"Not done: game {game_id} is not an open challenge (it is "
                                          "running). Send 'challenges' for the open ones.")
    asked = to(server.submit(reply_to(your_move, ALICE, f"resign {game_id}")), ALICE)[0]
    code = flat(asked).split(f"resign {game_id} confirm ")[1].split()[0]
    server.submit(reply_to(asked, ALICE, f"resign {game_id} confirm {code}"))
    assert server.game(game_id).status == "over"
    out = server.submit(reply_to(your_move, ALICE, f"timecontrol {game_id} 3"))
    assert headline(to(out, ALICE)[0]) == (f"Not done: game {game_id} is over; its time control no longer "
                                           "matters.")
