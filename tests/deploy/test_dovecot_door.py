"""Postfix -> Dovecot LMTP -> IMAP IDLE, as deploy/dovecot/ sets it up: Postfix hands the server's
mail (its address only) to Dovecot over LMTP into one mailbox; `pbem serve`, installed by
deploy/install.sh and run as the service user, watches that mailbox with IMAP IDLE and sends its
replies back through the same Postfix. Dovecot is set up like Debian's, the system's users first:
the deploy file must work beside them without changing how they log in or where their mail is."""

from __future__ import annotations

import pwd
import time
from collections.abc import Iterator

import pytest

from tests.deploy.installed import ADDRESS, DOMAIN, SERVICE_USER, Installation, Serve, dovecot_mail_system
from tests.deploy.play import assert_bounce_told, assert_readme_shows, bounced_invitation, whole_game
from tests.services.dovecot_lmtp import LmtpDovecot
from tests.services.postfix import Postfix

pytestmark = [pytest.mark.services, pytest.mark.slow]

DOOR = "[private/dovecot-lmtp]"  # Postfix's log line of a delivery into Dovecot's LMTP socket


@pytest.fixture(scope="module")
def mail_system(dovecot_installation: Installation) -> Iterator[tuple[Postfix, LmtpDovecot]]:
    with dovecot_mail_system(dovecot_installation) as servers:
        yield servers


@pytest.fixture(scope="module")
def postfix(mail_system: tuple[Postfix, LmtpDovecot]) -> Postfix:
    return mail_system[0]


@pytest.fixture(scope="module")
def dovecot(mail_system: tuple[Postfix, LmtpDovecot]) -> LmtpDovecot:
    return mail_system[1]


@pytest.fixture(scope="module")
def serve(dovecot_installation: Installation, dovecot: LmtpDovecot) -> Iterator[Serve]:
    server = Serve(dovecot_installation)
    yield server
    assert server.stop() == 0, server.log()


def test_the_mailbox_is_the_servers_alone(dovecot_installation: Installation, postfix: Postfix,
                                         dovecot: LmtpDovecot) -> None:
    """The LMTP socket is Postfix's; the server's address (with or without a domain or +TOKEN:
    username_format=%Ln) is one user whose mail is a Maildir in the data folder, owned by the service
    user; another user of the host keeps the system's mail location."""
    sock = postfix.queue_dir / "private" / "dovecot-lmtp"
    assert dovecot.owner(sock) == ("postfix", "postfix", 0o600)
    mailbox = dovecot_installation.data_dir / "mailbox"
    for name in (ADDRESS, ADDRESS.replace("@", "@LOCALHOST.").split(".", 1)[0] + "@localhost",
                 SERVICE_USER + "@" + DOMAIN.upper()):
        fields = dovecot.doveadm("user", "-f", "home", name).strip(), dovecot.doveadm(
            "user", "-f", "mail", name).strip()
        assert fields == (str(mailbox), "maildir:~/Maildir"), (name, fields)
    other = dovecot.doveadm("user", "pbemtest")
    assert "maildir" not in other and str(mailbox) not in other, other


def test_the_installed_configuration_passes_the_check_as_the_service_user(
        dovecot_installation: Installation, dovecot: LmtpDovecot) -> None:
    result = dovecot_installation.as_user("check-config", "-c", str(dovecot_installation.config))
    assert result.returncode == 0, result.stderr
    assert f"IMAP {ADDRESS}@127.0.0.1:{dovecot.port} mailbox INBOX -> processed" in result.stdout



def test_the_readme_gives_the_commands_install_sh_prints(dovecot_installation: Installation) -> None:
    assert_readme_shows(dovecot_installation, "Dovecot", "Postfix")

def test_a_whole_game_through_lmtp_and_imap_idle(dovecot_installation: Installation, postfix: Postfix,
                                                 dovecot: LmtpDovecot, serve: Serve) -> None:
    whole_game(postfix, DOOR)
    # Every mail was delivered into the service user's Maildir and moved aside once processed.
    maildir = dovecot_installation.data_dir / "mailbox" / "Maildir"
    user = pwd.getpwnam(SERVICE_USER)
    owners = {}
    for path in maildir.rglob("*"):
        try:  # Dovecot's lock files come and go while it works
            if path.is_file():
                owners[path] = path.stat().st_uid
        except FileNotFoundError:
            continue
    assert owners and set(owners.values()) == {user.pw_uid}, owners
    def status() -> dict[str, int]:
        return {folder: int(dovecot.doveadm("mailbox", "status", "-u", ADDRESS, "messages", folder)
                            .split("=")[1]) for folder in ("INBOX", "processed")}

    deadline = time.monotonic() + 30  # the last mail moves once its replies are queued
    while status()["INBOX"] and time.monotonic() < deadline:
        time.sleep(0.1)
    assert status()["INBOX"] == 0 and status()["processed"] >= 30, status()
    assert "Traceback" not in serve.log()


def test_a_bounce_comes_back_through_lmtp_and_the_challenger_is_told(
        postfix: Postfix, serve: Serve) -> None:
    carol_mails, log = bounced_invitation(postfix)
    assert_bounce_told(carol_mails, log)
