from __future__ import annotations

import pytest

from pbem.reading.html_text import html_to_text


def test_blocks_breaks_and_entities() -> None:
    markup = (
        "<html><head><title>T</title><style>p{color:red}</style><script>alert(1)</script></head>"
        "<body><p>tower&nbsp;red &amp; C4&lt;5&gt; caf&eacute; &#233;&#x263A;</p>"
        "<div>one<br>two<br/><br>three</div><ul><li>a</li><li>b</li></ul>"
        "<table><tr><td>c1</td><td>c2</td></tr></table></body></html>"
    )
    assert html_to_text(markup) == (
        "tower red & C4<5> café é☺\none\ntwo\n\nthree\na\nb\nc1 c2"
    )


def test_whitespace_collapses_like_a_browser() -> None:
    assert html_to_text("<p>  tower\n   red\tC4  </p>\n\n\n<p>claim</p>") == "tower red C4\nclaim"


def test_blockquote_lines_are_prefixed_per_level() -> None:
    markup = "mine<blockquote>q1<br>q2<blockquote>deep</blockquote>back</blockquote>after"
    assert html_to_text(markup) == "mine\n> q1\n> q2\n> > deep\n> back\nafter"


@pytest.mark.parametrize(
    "container",
    [
        '<div class="gmail_quote">', '<div id="divRplyFwdMsg">', '<div id="x_divRplyFwdMsg">',
        '<div class="yahoo_quoted">', '<div class="moz-cite-prefix">',
        '<span id="OLK_SRC_BODY_SECTION">', '<div id="appendonsend">',
    ],
)
def test_everything_from_a_quote_container_on_is_quoted(container: str) -> None:
    tag = container[1 : container.index(" ")]
    markup = f"<p>C4</p>{container}header</{tag}><p>red tower: C4 C5</p>"
    assert html_to_text(markup) == "C4\n> header\n> red tower: C4 C5"


def test_unclosed_head_does_not_hide_the_body() -> None:
    assert html_to_text("<head><title>x<body><p>C4</p>") == "C4"


def test_pre_keeps_lines() -> None:
    assert html_to_text("<pre>a\n  b\nc</pre>") == "a\nb\nc"


def test_outlook_conditional_comments_and_namespaced_tags() -> None:
    markup = (
        "<!--[if gte mso 9]><xml><o:shapedefaults/></xml><![endif]-->"
        "<p class=MsoNormal>C4<o:p>&nbsp;</o:p></p><![if !supportLists]>-<![endif]>x"
    )
    assert html_to_text(markup) == "C4\n-x"


@pytest.mark.parametrize(
    "markup",
    ["<![bogus section", "<![foo]> text", "<", "<<<>>>", "</p></div></blockquote>", "&#99999999;",
     "<div " * 1000, "<!--", "<svg><style>x</style></svg>y"],
)
def test_bad_markup_never_raises(markup: str) -> None:
    assert isinstance(html_to_text(markup), str)


def test_zero_width_characters_are_dropped() -> None:
    assert html_to_text("<p>\u200btower\ufeff red</p>") == "tower red"
