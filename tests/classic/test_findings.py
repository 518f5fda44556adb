"""The community findings this issue fixes: a moderator's deadline honours the player's vacation;
the shortest time control is stated right; the invitation states the game's time control."""

from __future__ import annotations

from datetime import UTC, datetime

from pbem.community.moderation import Moderation, set_deadline
from tests.classic.conftest import ANN, BO, Table, flat, only
from tests.server.harness import headline, text_of


def test_a_moderators_deadline_honours_the_vacation(table: Table) -> None:
    game_id = table.start()  # Fri 20 Nov 10:00 UTC; Ann (black) is to move
    out = table.reply(ANN, "vacation 2026-11-23..2026-11-25")
    assert "Vacation set" in flat(only(out, ANN))
    moderation = Moderation(table.server.config, table.server.store, table.server.clock, secret=b"s" * 32)
    asked = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)  # in the middle of Ann's vacation
    _headline, sections, _queued = moderation.run(
        "referee", lambda ctx: set_deadline(ctx, game_id, asked, by="referee"))
    row = table.game(game_id)
    # 2 days 2 hours of clock time from now; the clock stops for the three vacation days
    assert row.deadline_at == datetime(2026, 11, 27, 12, 0, tzinfo=UTC)
    assert row.record["actions"][-1]["until"] == "2026-11-27T12:00:00Z"
    assert row.record["actions"][-1]["asked"] == "2026-11-24T12:00:00Z"
    told = [m for rcpt, m in table.server.take_outbox() if rcpt == ANN]
    assert headline(told[0]) == f"New deadline in {game_id}: black must move by 2026-11-27 12:00 UTC"
    assert "the clock does not run during black's vacation" in " ".join(text_of(told[0]).split())
    assert "2026-11-27 12:00" in " ".join(line for s in sections for line in s.lines)


def test_the_shortest_time_control_is_stated_right(table: Table) -> None:
    out = table.mail(ANN, f"new alien-city time 0.04 with {BO}")
    assert "a move needs at least one hour, 1/24 of a day (0.042 days), not 0.04" in flat(only(out, ANN))
    table.server.config.moderators = ["mod@example.org"]  # 'notify' needs somebody to decide
    out = table.mail(ANN, f"new alien-city time 0.042 notify with {BO}")
    invitation = only(out, BO)
    assert "Time control: 0.042 days per move; at the deadline: the moderators decide." in flat(invitation)


def test_the_invitation_states_the_time_control(table: Table) -> None:
    out = table.mail(ANN, f"new alien-city time 3 with {BO}")
    assert "Time control: 3 days per move; at the deadline: the late player forfeits." \
        in flat(only(out, BO))
