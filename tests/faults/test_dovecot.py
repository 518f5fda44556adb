"""Dovecot restarting while ``pbem serve`` waits in IMAP IDLE, then refusing its login for a while:
the watcher reconnects by itself, no message is taken twice or skipped (UIDVALIDITY and the last
UID seen are kept), mail is answered within seconds of Dovecot's return, the log says each fault
once when it starts and once when it ends, and ``pbem status`` shows it while it lasts."""

from __future__ import annotations

from pathlib import Path

import pytest

from pbem.store import open_store
from tests.e2e.conftest import raw
from tests.faults import Served, help_mail, replied_to, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.services]


def test_dovecot_restart_and_refused_login(tmp_path: Path, dovecot, imap_user, smtp_sink) -> None:
    user, password = imap_user
    config = tmp_path / "pbem.toml"
    config.write_text(f'[server]\ndata_dir = "{tmp_path / "data"}"\n[smtp]\nenabled = false\n'
                      f'[imap]\nhost = "{dovecot.host}"\nport = {dovecot.port}\nsecurity = "none"\n'
                      f'username = "{user}"\npassword = "{password}"\nmax_backoff_seconds = 2\n'
                      f'[relay]\nhost = "{smtp_sink.host}"\nport = {smtp_sink.port}\n'
                      'security = "none"\n')
    server = Served(config, tmp_path / "serve.log")
    mails = [help_mail(n) for n in range(4)]

    def answered(*numbers: int) -> bool:
        return all(replied_to(smtp_sink.messages, mails[n]) for n in numbers)

    try:
        dovecot.deliver(user, raw(mails[0]))
        wait_until(lambda: answered(0), 30, "the first reply")
        store = open_store(tmp_path / "data" / "pbem.sqlite3")
        try:
            before = store.imap_state("INBOX")
        finally:
            store.close()

        # Dovecot restarts: every session gets BYE, the port refuses for a while.
        dovecot.stop()
        try:
            wait_until(lambda: server.fault_lines(), 30, "the fault")
            code, report = server.status()
            assert code == 1 and "FAULT: the IMAP server cannot be used" in report, report
        finally:
            dovecot.start()
        dovecot.deliver(user, raw(mails[1]))
        wait_until(lambda: answered(1), 30, "the reply after Dovecot's return")

        # The login is refused for a while (the password changed, the sessions were kicked).
        dovecot.add_user(user, password + "-changed")
        dovecot.kick(user)
        dovecot.deliver(user, raw(mails[2]))
        wait_until(lambda: len(server.fault_lines()) == 3, 30, "the kick")
        wait_until(lambda: "login refused" in server.status()[1], 30, "the refused login")
        code, report = server.status()
        assert code == 1 and "FAULT: the IMAP server cannot be used" in report, report
        assert "check [imap] username and password" in report
        dovecot.add_user(user, password)  # accepted again
        dovecot.deliver(user, raw(mails[3]))
        wait_until(lambda: answered(2, 3), 30, "the replies after the login works again")
        wait_until(lambda: not dovecot.list_messages(user, "INBOX"), 30, "INBOX emptied")
        wait_until(lambda: len(server.fault_lines()) == 4, 30, "the end of the fault")
        assert server.status()[0] == 0
    finally:
        server.stop()
    for message in mails:  # each taken once: one reply
        assert len(replied_to(smtp_sink.messages, message)) == 1, message["From"]
    assert len(dovecot.list_messages(user, "processed")) == 4
    store = open_store(tmp_path / "data" / "pbem.sqlite3")
    try:
        assert store.imap_state("INBOX")[0] == before[0]  # the same UIDVALIDITY: nothing rescanned
        assert store.inbound_counts()["done"] == 4
    finally:
        store.close()
    lines = server.fault_lines()
    assert [line.split(":")[0] for line in lines] == ["fault", "fault over", "fault", "fault over"]
    assert all("IMAP server" in line for line in lines), lines
    assert "Traceback" not in server.log()
