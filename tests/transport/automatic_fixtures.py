"""Mail nobody typed, written for the tests in the shapes the common mail systems send: delivery
reports (Postfix, Exim, Gmail, Exchange, qmail, a plain-text one from a bounce address, one that
carries a player's From), vacation replies, a read receipt and a feedback-loop complaint.

Each is addressed to a seat's address (``{to}``: the server's plus-address with a seat token), so
that a wrong answer would also be a notice to a player. The failed recipients they report
(``carol@example.net`` and others) hold no seat, so that nothing may leave the server at all.
"""

from __future__ import annotations

from tests.mail import test_reading

FAILED = "carol@example.net"

# Postfix: the reading tests' delivery report, sent to a seat's address.
_POSTFIX = test_reading.DSN.decode().replace("Return-Path: <>\n", "").replace(
    "To: pbem@example.org", "To: {to}\nMessage-ID: <dsn-postfix-{n}@mx.example.org>")


def _report(sender: str, subject: str, name: str, text: str, mta: str, status: str) -> str:
    """A multipart/report delivery report as Gmail and Exchange send it."""
    return (f"From: {sender}\nTo: {{to}}\nSubject: {subject}\nMessage-ID: <dsn-{name}-{{n}}@{mta}>\n"
            "MIME-Version: 1.0\nContent-Type: multipart/report; report-type=delivery-status; "
            f'boundary="R"\n\n--R\nContent-Type: text/plain; charset="UTF-8"\n\n{text}\n\n'
            f"--R\nContent-Type: message/delivery-status\n\nReporting-MTA: dns; {mta}\n\n"
            f"Final-Recipient: rfc822; {FAILED}\nAction: failed\nStatus: {status}\n\n--R--\n")


_GMAIL = _report("Mail Delivery Subsystem <mailer-daemon@googlemail.com>",
                 "Delivery Status Notification (Failure)", "gmail", "** Address not found **\n\n"
                 f"Your message wasn't delivered to {FAILED} because the address couldn't be found.",
                 "googlemail.com", "5.1.1")
_EXCHANGE = _report("postmaster@contoso.example", "Undeliverable: Re: [pbem ac-1] Your move (ply 3)",
                    "exchange", "Delivery has failed to these recipients or groups:\n\n"
                    f"{FAILED}\nThe email address you entered couldn't be found.", "contoso.example",
                    "5.1.10")

_EXIM = """\
From: Mail Delivery System <Mailer-Daemon@exim.example.org>
To: {to}
Subject: Mail delivery failed: returning message to sender
Message-ID: <dsn-exim-{n}@exim.example.org>
X-Failed-Recipients: carol@example.net
Auto-Submitted: auto-replied

This message was created automatically by mail delivery software.

A message that you sent could not be delivered to one or more of its
recipients. This is a permanent error. The following address(es) failed:

  carol@example.net
    mailbox is full: retry timeout exceeded
"""

_QMAIL = """\
From: MAILER-DAEMON@qmail.example.net
To: {to}
Subject: failure notice
Message-ID: <dsn-qmail-{n}@qmail.example.net>

Hi. This is the qmail-send program at qmail.example.net.
I'm afraid I wasn't able to deliver your message to the following addresses.
This is a permanent error; I've given up. Sorry it didn't work out.

<carol@example.net>:
Sorry, no mailbox here by that name. (#5.1.1)
"""

# Defect 2 of the issue: plain text, From a bounce address that is no daemon's, no Auto-Submitted.
_PLAIN_BOUNCE = """\
From: Mail Delivery <bounces@relay.example.com>
To: {to}
Subject: Delivery Status Notification (Failure)
Message-ID: <dsn-plain-{n}@relay.example.com>

Delivery to the following recipient failed permanently:

     carol@example.net

Technical details of permanent failure: the mailbox does not exist.
"""

# Defect 3: From is a player's address, but Sender is the postmaster and X-Envelope-From is <>.
_PLAYERS_FROM = """\
From: Bob <bob@example.org>
Sender: postmaster@example.org
X-Envelope-From: <>
To: {to}
Subject: Re: [pbem ac-1] Your move (ply 3)
Message-ID: <dsn-forged-{n}@example.org>

Your message to carol@example.net could not be delivered: quota exceeded.
"""

_VACATION = """\
From: Bob <bob@example.org>
To: {to}
Subject: Out of Office: [pbem ac-1] Your move (ply 3)
Message-ID: <vacation-{n}@example.org>
Auto-Submitted: auto-replied

I am away until Monday and will answer your mail then.
"""

_OUTLOOK_AUTO = """\
From: Bob <bob@example.org>
To: {to}
Subject: Automatic reply: [pbem ac-1] Your move (ply 3)
Message-ID: <autoreply-{n}@example.org>
X-Autoreply: yes

Thank you for your mail. I am out of the office.
"""

_SIEVE_DE = """\
From: Bob <bob@example.org>
To: {to}
Subject: Abwesenheitsnotiz: [pbem ac-1] Your move (ply 3)
Message-ID: <abwesend-{n}@example.org>
Precedence: bulk

Ich bin bis Montag nicht im Büro.
"""

_READ_RECEIPT = """\
From: Bob <bob@example.org>
To: {to}
Subject: Read: [pbem ac-1] Your move (ply 3)
Message-ID: <mdn-{n}@example.org>
MIME-Version: 1.0
Content-Type: multipart/report; report-type=disposition-notification; boundary="MDN"

--MDN
Content-Type: text/plain

The message was displayed on the recipient's computer.

--MDN
Content-Type: message/disposition-notification

Reporting-UA: mail.example.org; Thunderbird
Final-Recipient: rfc822;bob@example.org
Disposition: manual-action/MDN-sent-manually; displayed

--MDN--
"""

_FEEDBACK_LOOP = """\
From: Feedback Loop <fbl@isp.example.net>
To: {to}
Subject: Complaint about message from pbem
Message-ID: <arf-{n}@isp.example.net>
MIME-Version: 1.0
Content-Type: multipart/report; report-type=feedback-report; boundary="ARF"

--ARF
Content-Type: text/plain

This is an email abuse report for an email message received from IP 192.0.2.1.

--ARF
Content-Type: message/feedback-report

Feedback-Type: abuse
User-Agent: ExampleFBL/1.0
Version: 1

--ARF--
"""

FIXTURES: dict[str, str] = {
    "postfix dsn": _POSTFIX, "exim bounce": _EXIM, "gmail dsn": _GMAIL, "exchange ndr": _EXCHANGE,
    "qmail bounce": _QMAIL, "plain-text bounce": _PLAIN_BOUNCE, "player's From, postmaster Sender":
    _PLAYERS_FROM, "vacation": _VACATION, "outlook automatic reply": _OUTLOOK_AUTO,
    "sieve vacation (de)": _SIEVE_DE, "read receipt": _READ_RECEIPT, "feedback loop": _FEEDBACK_LOOP,
}


def render(template: str, to: str, n: int, crlf: bool = True) -> bytes:
    text = template.format(to=to, n=n)
    return (text.replace("\n", "\r\n") if crlf else text).encode("utf-8")
