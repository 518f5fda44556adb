"""The sender's SMTP client (``PlainQuotingSMTP``) quotes MAIL FROM and RCPT TO without the stdlib's
address parser, and must send what ``smtplib.SMTP`` sends: the same envelope and the same ESMTP
options (SIZE, which every relay that advertises it gets), for plain addresses and for the forms
that take the stdlib's own path. Checked against a real aiosmtpd relay."""

from __future__ import annotations

import smtplib

import pytest

from pbem.outbox.sender import PlainQuotingSMTP
from tests.services.smtp_sink import SmtpSink

SENDERS = ["pbem@example.org", "<pbem@example.org>", "Pbem Server <pbem@example.org>",
           '"Server, pbem" <pbem@example.org>', ""]
RECIPIENTS = ["ann@example.org", "Ann Lee <ann.lee@example.org>", "<bob+x@example.org>",
              '"Lee, Ann" <ann@example.org>']
MAIL = b"From: pbem@example.org\r\nTo: ann@example.org\r\nSubject: ac-1\r\n\r\nYour move.\r\n"


def envelope(client_class: type[smtplib.SMTP], sink: SmtpSink, sender: str, recipients: list[str],
             mail_options: tuple[str, ...] = ()) -> tuple[str, list[str], list[str], bytes]:
    sink.clear()
    with client_class("127.0.0.1", sink.port, local_hostname="pbem.test") as client:
        client.sendmail(sender, recipients, MAIL, mail_options=mail_options)
    (message,) = sink.wait_for(1)
    return message.mail_from, message.rcpt_tos, message.mail_options, message.data


@pytest.mark.parametrize("sender", SENDERS)
def test_the_envelope_and_its_options_are_smtplibs(smtp_sink: SmtpSink, sender: str) -> None:
    ours = envelope(PlainQuotingSMTP, smtp_sink, sender, RECIPIENTS)
    stdlib = envelope(smtplib.SMTP, smtp_sink, sender, RECIPIENTS)
    assert ours == stdlib
    assert any(option.upper().startswith("SIZE=") for option in ours[2])  # the relay advertises it


def test_smtputf8_takes_smtplibs_own_path(smtp_sink: SmtpSink) -> None:
    args = (smtp_sink, "pbem@example.org", ["zoë@example.org"], ("SMTPUTF8",))
    ours = envelope(PlainQuotingSMTP, *args)
    stdlib = envelope(smtplib.SMTP, *args)
    assert ours == stdlib and "SMTPUTF8" in [o.upper() for o in ours[2]]
