"""The HTML part of "your move" mails as a phone shows it: headless Chromium at 360 px, for both
games. The page must not scroll sideways (a wide board scrolls inside its own box), the board and
every one-tap move must be there, and the links must be big enough to tap. Screenshots are kept in
the test's folder and their paths printed."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from pbem.cli.mailbox import reply_to
from tests.server.harness import Server, headline, html_of, to
from tests.server.players import move_links
from tests.services.requirements import missing

ANN, BO, CY = "ann@example.org", "bo@example.org", "cy@example.org"
WIDTH = 360

# Headless Chromium will not make its window narrower than about 500 px, so the mail is shown in a
# 360 px wide frame (a phone's width: the frame is the mail's viewport). The outer page measures the
# mail inside the frame and writes the result into its own DOM, which --dump-dom returns.
FRAME = """<!DOCTYPE html><html><body style="margin:0">
<iframe id="mail" src="{src}" style="border:0;width:{width}px;height:1600px"></iframe>
<script>
document.getElementById("mail").addEventListener("load", () => {{
  const doc = document.getElementById("mail").contentDocument;
  const links = [...doc.querySelectorAll("a[href^='mailto:']")];
  const heights = links.map(a => a.getBoundingClientRect().height);
  document.body.setAttribute("data-probe", JSON.stringify({{
    scrollWidth: doc.documentElement.scrollWidth, links: links.length,
    smallest: heights.length ? Math.min(...heights) : 0,
    board: !!doc.querySelector(".bd table, .bd svg")}}));
}});
</script></body></html>"""


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        missing("headless Chromium is not installed (Debian package: chromium)")
    return found


def browse(tmp_path: Path, page: Path, *extra: str) -> str:
    result = subprocess.run(
        [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--allow-file-access-from-files", f"--user-data-dir={tmp_path / 'chromium-profile'}",
         "--window-size=600,1700", *extra,
         page.as_uri()], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def your_move_mail(server: Server, game: str, others: list[str]):
    out = server.submit(server.mail(ANN, f"new {game} with {' '.join(others)}"))
    invitations = {o: to(out, o)[0] for o in others}
    for other in others:
        out = server.submit(reply_to(invitations[other], other, "accept"))
    return next(m for _rcpt, m in out if "Your move" in headline(m))


@pytest.mark.parametrize("game, others", [("alien-city", [BO]), ("space-truckin", [BO, CY])])
def test_your_move_mail_on_a_phone(tmp_path: Path, game: str, others: list[str]) -> None:
    server = Server(tmp_path)
    try:
        mail = your_move_mail(server, game, others)
    finally:
        server.close()
    html = html_of(mail)
    (tmp_path / f"{game}-mail.html").write_text(html, encoding="utf-8")
    page = tmp_path / f"{game}.html"
    page.write_text(FRAME.format(src=f"{game}-mail.html", width=WIDTH), encoding="utf-8")
    dom = browse(tmp_path, page, "--dump-dom", "--virtual-time-budget=5000")
    probe = json.loads(re.search(r'data-probe="([^"]*)"', dom).group(1).replace("&quot;", '"'))
    assert probe["scrollWidth"] <= WIDTH, f"the page scrolls sideways at {WIDTH}px: {probe}"
    assert probe["board"], "no drawn board in the HTML part"
    assert probe["links"] == len(move_links(mail)) > 0
    assert probe["smallest"] >= 18, f"links too small to tap: {probe}"
    shot = tmp_path / f"{game}-{WIDTH}px.png"
    browse(tmp_path, page, f"--screenshot={shot}")
    assert shot.stat().st_size > 5000
    print(f"screenshot of the {game} 'your move' mail at {WIDTH}px: {shot}")
