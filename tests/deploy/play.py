"""What both doors are tested with: a whole game by mail, and a player's address that bounces.

The players only have a mail client: they submit to Postfix over SMTP and read their Maildirs.
What is asserted is what they read (through ``MailCheck``: one subject per game, only the player
on turn told to move, "(you)" for the reader, lines within 78 columns) and what Postfix's log says
it did with each mail.
"""

from __future__ import annotations

import re
import time

from pbem.cli.mailbox import new_mail
from pbem.record import replay_record
from tests.deploy.installed import ADDRESS, REPO, Installation, submitter
from tests.e2e.test_mail_game import drive_game
from tests.server.mailcheck import MailCheck
from tests.server.players import attached_record, headline, text_of
from tests.services.postfix import Postfix


def whole_game(postfix: Postfix, door: str) -> None:
    """Alice challenges Bob at the server's address; both answer every mail until the game is over.
    Every mail to the server went through ``door`` (how Postfix's log names where it delivered:
    ``relay=pbem,`` for the pipe service, ``[private/dovecot-lmtp]`` for the LMTP socket), none
    through Postfix's local delivery."""
    alice, bob = postfix.address("alice"), postfix.address("bob")
    check = MailCheck()
    finished = drive_game(submitter(postfix.port), postfix.arrivals(["alice", "bob"]), timeout=600,
                          check=check, alice=alice, bob=bob, server=ADDRESS)
    assert sorted(finished) == [alice, bob]
    for message in finished.values():
        assert "Final scores" in text_of(message)
        record = attached_record(message)
        assert record is not None and replay_record(record).is_over
    # One game, one subject, for both players; each read every mail of it in one thread.
    assert len(check.subject) == 1, check.subject
    log = postfix.log()
    to_server = [line for line in log.splitlines()
                 if re.search(rf"to=<{re.escape(ADDRESS.split('@')[0])}(\+[^@>]*)?@", line)
                 and "status=" in line]
    assert len(to_server) >= 30, "a whole game is more than 30 mails to the server"
    assert all(door in line and "status=sent" in line for line in to_server), \
        [line for line in to_server if "status=sent" not in line or door not in line][:3]


def bounced_invitation(postfix: Postfix, timeout: float = 60) -> tuple[list, str]:
    """Carol invites an address the players' mail system does not know. The server's invitation is
    accepted by the relay and bounced by Postfix (a real delivery status notification to the
    server's envelope sender, from <>), which comes back through the door. Returns carol's new
    mails after the report was processed, and the Postfix log."""
    carol = postfix.address("carol")
    ghost = postfix.address("ghost")
    before = len(postfix.maildir("carol"))
    submitter(postfix.port)(new_mail(carol, ADDRESS, f"new alien-city with {ghost}"))
    log = wait_for_log(postfix, lambda text: _report_delivered(text) is not None, timeout)
    # The invitation itself: accepted for delivery, then bounced as unknown.
    assert re.search(rf"to=<{re.escape(ghost)}>.*status=bounced \(unknown user", log), log[-3000:]
    # The report: from the null sender to the server's address, through the door.
    assert _report_delivered(log) is not None
    deadline = time.monotonic() + timeout
    while len(postfix.maildir("carol")) < before + 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)  # anything more (an answer to the report, a second notice) would arrive now
    return postfix.maildir("carol")[before:], postfix.log()


def _report_delivered(log: str) -> str | None:
    """The door's delivery line of the delivery report (sender <>) to the server, if it is there."""
    ids = re.findall(r" ([0-9A-F]{6,}): from=<>, ", log)
    for queue_id in ids:
        for line in log.splitlines():
            if f" {queue_id}: to=<{ADDRESS}>" in line and "status=sent" in line:
                return line
    return None


def wait_for_log(postfix: Postfix, ready, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while not ready(log := postfix.log()):
        assert time.monotonic() < deadline, f"Postfix log:\n{log[-4000:]}"
        time.sleep(0.05)
    return log


def assert_bounce_told(carol_mails: list, log: str) -> None:
    """Carol got her confirmation of the challenge, then one mail in the game's thread saying the
    invitation is cancelled because mail to the invited address cannot be delivered, with the
    mail system's reason from the report; nothing went to the report's null sender, nothing more
    to the bouncing address."""
    headlines = [headline(m) for m in carol_mails]
    assert len(carol_mails) == 2, headlines
    told, text = headlines[1], text_of(carol_mails[1])
    assert "cancelled" in told and "ghost@players.test cannot be delivered" in told, told
    assert 'unknown user: "ghost@players.test"' in text, text  # Postfix's words, from the report
    assert carol_mails[1]["Subject"] == carol_mails[0]["Subject"], "the notice stays in the thread"
    assert "to=<MAILER-DAEMON" not in log and "to=<postmaster" not in log
    assert len(re.findall(r"to=<ghost@players\.test>", log)) == 1, "one invitation, never answered again"


def assert_readme_shows(inst: Installation, *titles: str) -> None:
    """The README's "Running it for real" gives, line for line, the commands install.sh printed
    for these steps (with the default folders, user and example address)."""
    readme = (REPO / "README.md").read_text()
    section = readme.split("## Running it for real", 1)[1].split("\n## ", 1)[0]
    lines = {line.strip() for line in section.splitlines()}
    for title in titles:
        for command in inst.steps(title):
            assert inst.as_documented(command) in lines, f"README lacks: {inst.as_documented(command)}"
