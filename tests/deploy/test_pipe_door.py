"""The Postfix pipe door as deploy/pipe/ sets it up: Postfix hands each mail for the server to
`pbem deliver`, run as the service user from the venv deploy/install.sh made; `pbem serve` runs
beside it with no door of its own and sends every reply back through the same Postfix."""

from __future__ import annotations

import os
import pwd
from collections.abc import Iterator

import pytest

from tests.deploy.installed import SERVICE_USER, Installation, Serve, pipe_mail_system
from tests.deploy.play import assert_bounce_told, assert_readme_shows, bounced_invitation, whole_game
from tests.services.postfix import Postfix

pytestmark = [pytest.mark.services, pytest.mark.slow]

DOOR = "relay=pbem,"  # Postfix's log line of a delivery through the pipe service named pbem


@pytest.fixture(scope="module")
def postfix(pipe_installation: Installation) -> Iterator[Postfix]:
    with pipe_mail_system(pipe_installation) as server:
        yield server


@pytest.fixture(scope="module")
def serve(pipe_installation: Installation, postfix: Postfix) -> Iterator[Serve]:
    server = Serve(pipe_installation)
    yield server
    assert server.stop() == 0, server.log()


def test_the_installed_configuration_passes_the_check_as_the_service_user(
        pipe_installation: Installation) -> None:
    result = pipe_installation.as_user("check-config", "-c", str(pipe_installation.config))
    assert result.returncode == 0, result.stderr
    assert (f"pipe: the MTA runs `{pipe_installation.pbem} deliver -c {pipe_installation.config} "
            "-f ${sender}`") in result.stdout
    assert "SMTP listener" not in result.stdout  # the pipe is the door; no port of its own
    # ... and it is the very command of the master.cf line install.sh wrote
    assert f"argv={pipe_installation.pbem} deliver -c {pipe_installation.config} -f ${{sender}}" in \
        pipe_installation.rendered("pipe/master.cf")



def test_the_readme_gives_the_commands_install_sh_prints(pipe_installation: Installation) -> None:
    assert_readme_shows(pipe_installation, "Postfix")

def test_a_whole_game_through_the_pipe(pipe_installation: Installation, postfix: Postfix,
                                       serve: Serve) -> None:
    whole_game(postfix, DOOR)
    # pbem deliver ran as the service user: the database is its, as the server's is
    user = pwd.getpwnam(SERVICE_USER)
    for path in pipe_installation.data_dir.iterdir():
        assert os.stat(path).st_uid == user.pw_uid, f"{path} is not {SERVICE_USER}'s"
    assert "Traceback" not in serve.log()


def test_a_bounce_comes_back_through_the_pipe_and_the_challenger_is_told(
        postfix: Postfix, serve: Serve) -> None:
    carol_mails, log = bounced_invitation(postfix)
    assert_bounce_told(carol_mails, log)
