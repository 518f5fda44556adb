"""A private Dovecot set up like Debian's, with a conf.d file of deploy/ included as it is.

``Dovecot`` (dovecot.py) is a test server with users of its own; this one is the host an
administrator has: the system's users in the first passdb and userdb (PAM and passwd, as Debian's
``auth-system.conf.ext``), Debian's ``mail_location`` for them, IMAP and LMTP, and then the
deploy file (``conf_d``), which must bring its own user, mail location and LMTP socket. Only
the paths of the deploy file are the test's (its LMTP socket in the private Postfix's queue
directory, the passwd-file in the temporary directory); the rest is read as written.
"""

from __future__ import annotations

import grp
import subprocess
from pathlib import Path

from .dovecot import Dovecot

_CONFIG = """\
# Written by tests/services/dovecot_lmtp.py: a private instance set up like Debian's.
instance_name = pbem-deploy-{port}
base_dir = {tmp}/run
state_dir = {tmp}/state
log_path = {tmp}/dovecot.log
protocols = imap lmtp
listen = {host}
ssl = no
auth_verbose = yes
auth_debug = yes
default_internal_user = {user}
default_internal_group = {group}
default_login_user = {user}
# The host's own users, as Debian's 10-mail.conf and auth-system.conf.ext have them.
mail_location = mbox:~/mail:INBOX=/var/mail/%u
passdb {{
  driver = pam
}}
userdb {{
  driver = passwd
}}
mailbox_idle_check_interval = 1 secs
service imap-login {{
  chroot =
  inet_listener imap {{
    address = {host}
    port = {port}
  }}
  inet_listener imaps {{
    port = 0
  }}
}}
service anvil {{
  chroot =
}}
!include {tmp}/conf.d/*.conf
"""


class LmtpDovecot(Dovecot):
    """``conf_d``: the deploy file's text with this test's paths; ``passwd``: name -> content of
    files the deploy file reads (put next to it, their paths replaced in ``conf_d`` by the caller)."""

    def __init__(self, conf_d: str, start_timeout: float = 10.0) -> None:
        self._conf_d = conf_d
        super().__init__(start_timeout=start_timeout)

    def _write_config(self) -> None:
        folder = self.tmp / "conf.d"
        folder.mkdir(exist_ok=True)
        (folder / "99-pbem.conf").write_text(self._conf_d)
        self.conf.write_text(_CONFIG.format(
            tmp=self.tmp, host=self.host, port=self.port, user=self._user.pw_name,
            group=grp.getgrgid(self._user.pw_gid).gr_name))

    def lmtp_socket_owner(self, socket: Path) -> tuple[str, str, int]:
        """(user, group, mode) of the LMTP socket, as Postfix will find it."""
        st = socket.stat()
        import pwd
        return pwd.getpwuid(st.st_uid).pw_name, grp.getgrgid(st.st_gid).gr_name, st.st_mode & 0o777

    def config_check(self) -> str:
        """``doveconf -n``: the settings Dovecot read, or an error naming the bad line."""
        proc = subprocess.run(["doveconf", "-c", str(self.conf), "-n"], capture_output=True, text=True,
                              timeout=30)
        if proc.returncode != 0:
            raise RuntimeError(proc.stderr)
        return proc.stdout
