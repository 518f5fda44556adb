"""The HTML part of "your move" mails as a phone shows it: headless Chromium emulating a 360 px
screen (tests/services/browser.py), for both games. The page must not scroll sideways, the drawn
board and every one-tap move must be there, and the links must be big enough to tap. Screenshots
are kept in the test's folder and their paths printed (``pytest -s``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pbem.cli.mailbox import reply_to
from tests.server.harness import Server, headline, html_of, to
from tests.server.players import move_links, with_taps
from tests.services.browser import Browser

ANN, BO, CY = "ann@example.org", "bo@example.org", "cy@example.org"

MEASURE = """(() => {
  const links = [...document.querySelectorAll("a[href^='mailto:']")];
  const heights = links.map(a => a.getBoundingClientRect().height);
  return {scrollWidth: document.documentElement.scrollWidth, links: links.length,
          smallest: heights.length ? Math.min(...heights) : 0,
          board: !!document.querySelector(".bd table")};
})()"""


def your_move_mail(server: Server, game: str, others: list[str]):
    out = server.submit(server.mail(ANN, f"new {game} with {' '.join(others)}"))
    invitations = {o: to(out, o)[0] for o in others}
    for other in others:
        out = server.submit(reply_to(invitations[other], other, "accept"))
    address, mail = next((r, m) for r, m in out if "Your move" in headline(m))
    return with_taps(server, address, mail, str(mail["X-Pbem-Game"]))


@pytest.mark.parametrize("game, others", [("alien-city", [BO]), ("space-truckin", [BO, CY])])
def test_your_move_mail_on_a_phone(tmp_path: Path, game: str, others: list[str]) -> None:
    server = Server(tmp_path)
    try:
        mail = your_move_mail(server, game, others)
    finally:
        server.close()
    page = tmp_path / f"{game}.html"
    page.write_text(html_of(mail), encoding="utf-8")
    with Browser(tmp_path / "profile") as browser:
        browser.open(page.as_uri(), width=360, height=780)
        seen = browser.evaluate(MEASURE)
        shot = browser.screenshot(tmp_path / f"{game}-mail-360px.png")
    assert seen["scrollWidth"] <= 360, f"the mail scrolls sideways on a phone: {seen}"
    assert seen["board"], "no drawn board in the HTML part"
    assert seen["links"] == len(move_links(mail)) > 0
    assert seen["smallest"] >= 18, f"links too small to tap: {seen}"
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    print(f"screenshot of the {game} 'your move' mail at 360 px: {shot}")
