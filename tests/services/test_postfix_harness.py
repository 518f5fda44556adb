"""Smoke tests of the private Postfix the deploy tests rely on: players' mail lands in their
Maildirs, an unknown player is refused at RCPT on the players' port but accepted and bounced on the
relay port (a real delivery report to the sender), and an administrator's commands work on the
instance, not on the system's Postfix."""

from __future__ import annotations

import os
import re
import smtplib
import time
from collections.abc import Iterator

import pytest

from tests.services.postfix import Postfix
from tests.services.requirements import missing

pytestmark = pytest.mark.services


@pytest.fixture(scope="module")
def postfix() -> Iterator[Postfix]:
    if os.geteuid() != 0:
        missing("a private Postfix needs root (its master starts the services as their users)")
    with Postfix(domain="games.test", players=["ann", "bo"]) as server:
        yield server


def mail(sender: str, to: str, subject: str) -> bytes:
    return (f"From: {sender}\r\nTo: {to}\r\nSubject: {subject}\r\n"
            f"Message-ID: <{subject.replace(' ', '.')}@players.test>\r\n\r\nhello\r\n").encode()


def test_a_player_gets_mail_in_their_maildir(postfix: Postfix) -> None:
    with smtplib.SMTP(postfix.host, postfix.port, timeout=30) as smtp:
        smtp.sendmail("bo@players.test", ["ann@players.test"], mail("bo@players.test", "ann", "one"))
    (item,) = postfix.arrivals(["ann"]).wait_for(1)
    assert item.rcpt_tos == ["ann@players.test"] and item.message["Subject"] == "one"
    assert item.mail_from == "bo@players.test"  # the Return-Path Postfix wrote


def test_an_unknown_player_is_refused_at_rcpt_but_bounced_after_the_relay_port(postfix: Postfix) -> None:
    with (smtplib.SMTP(postfix.host, postfix.port, timeout=30) as smtp,
          pytest.raises(smtplib.SMTPRecipientsRefused) as refused):
        smtp.sendmail("bo@players.test", ["nobody@players.test"], mail("bo", "nobody", "two"))
    assert refused.value.recipients["nobody@players.test"][0] == 550
    before = len(postfix.maildir("bo"))
    with smtplib.SMTP(postfix.host, postfix.relay_port, timeout=30) as smtp:
        smtp.sendmail("bo@players.test", ["nobody@players.test"], mail("bo", "nobody", "three"))
    report = postfix.arrivals(["bo"]).wait_for(before + 1)[-1]
    assert report.message.get_content_type() == "multipart/report"
    assert report.mail_from == "", "a delivery report comes from the null sender"
    assert re.search(r"to=<nobody@players\.test>.*status=bounced", postfix.log())


def test_commands_work_on_this_instance(postfix: Postfix) -> None:
    postfix.apply(["postconf -e 'recipient_delimiter = +'",
                   "printf 'x@games.test discard:\\n' >/etc/postfix/test-map",
                   "postmap /etc/postfix/test-map",
                   "postfix check && postfix reload"])
    assert postfix.run("postconf", "-h", "recipient_delimiter").strip() == "+"
    assert (postfix.config_dir / "test-map.db").exists()
    assert not os.path.exists("/etc/postfix/test-map"), "the system's Postfix was touched"
    time.sleep(0.5)  # reloaded: still serving
    with smtplib.SMTP(postfix.host, postfix.port, timeout=30) as smtp:
        smtp.sendmail("bo@players.test", ["ann+x@players.test"], mail("bo", "ann", "four"))
    assert postfix.arrivals(["ann"]).wait_for(2)[-1].message["Subject"] == "four"
