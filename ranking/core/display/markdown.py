"""A stored page as clean Markdown: the text the agent API reads, pages and cites.

Layer: ``ranking.core`` (pure Python; lexbor through selectolax parses the HTML). The agent
tools (:mod:`ranking.agent.tools`) turn a page's cached copy into this text once and address
it by character offsets: ``read`` pages through it, ``cached`` returns it beside the original
bytes, and every passage (:mod:`ranking.core.display.passages`) is a slice of it. The text
is therefore a pure function of the cached bytes (:func:`page_markdown`, the same bytes give
the same text on every machine and in every release that keeps :data:`FORMAT`).

What is kept, in document order:

* headings ``h1`` .. ``h6`` as ``#`` .. ``######`` lines;
* paragraphs and other blocks (``p``, ``div``, table cells, ``dt``/``dd`` ...) as paragraphs
  separated by one blank line, their white space collapsed to single spaces;
* list items as ``- `` lines; ``pre`` as fenced code blocks (its text as it is, tabs and line
  breaks kept); inline ``code``/``kbd``/``samp``/``tt`` in back-ticks;
* link text (not the link's target: citations name the page, not its links); ``img`` alt
  text in brackets.

What is left out (furniture and what is not text): ``head``, ``script``, ``style``,
``template``, ``noscript``, ``svg``, ``iframe``, ``object``, ``select``, ``button``, ``nav``,
``aside``, ``footer``, elements whose role is navigation, banner, contentinfo or search, and
elements with a class of the usual navigation blocks (:data:`FURNITURE_CLASSES`, as the
documentation generators write them). A page whose furniture removal leaves nothing is read
again without it.

Plain text (and Markdown, as an ``llms.txt`` or a ``.md`` twin is) is kept as it is, its line
ends made ``\\n``.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from selectolax.lexbor import LexborHTMLParser

FORMAT = 1  # bump when the text of the same bytes changes (offsets cited before go stale)
SKIP_TAGS = frozenset({"head", "script", "style", "template", "noscript", "svg", "iframe",
                       "object", "select", "button", "math", "canvas", "title"})
FURNITURE_TAGS = frozenset({"nav", "aside", "footer"})
FURNITURE_ROLES = frozenset({"navigation", "banner", "contentinfo", "search"})
FURNITURE_CLASSES = frozenset({"sphinxsidebar", "related", "navbar", "breadcrumb",
                               "breadcrumbs", "sidebar", "toc", "skip-link", "headerlink",
                               "footer", "navigation"})
BLOCK_TAGS = frozenset({"p", "div", "section", "article", "main", "header", "blockquote",
                        "table", "tr", "td", "th", "dl", "dt", "dd", "ul", "ol", "figure",
                        "figcaption", "form", "fieldset", "address", "details", "summary",
                        "caption", "body", "html", "hr", "center", "dir", "menu"})
HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
CODE_TAGS = frozenset({"code", "kbd", "samp", "tt"})
FENCE = "```"
_SPACE = re.compile(r"\s+")
_HEADING_LINE = re.compile(r"^(#{1,6}) (.+)$", re.MULTILINE)


FURNITURE = ", ".join([*sorted(FURNITURE_TAGS),
                       *(f'[role="{r}"]' for r in sorted(FURNITURE_ROLES)),
                       *(f".{c}" for c in sorted(FURNITURE_CLASSES))])


# The serialised tree, after lexbor removed what is left out. lexbor writes tags in lower
# case and every attribute value in double quotes (a quote inside as &quot;), so a tag is
# matched exactly by _TAG even when a value holds ">".
_ATTRS = r"""(?:\s+[^\s"'>/=]+(?:="[^"]*")?)*\s*/?"""
_TAG = re.compile(r"<(/?)([a-z][a-z0-9-]*)" + _ATTRS + ">")
_PRE = re.compile(r"<pre\b" + _ATTRS + r">(.*?)</pre>", re.DOTALL)
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_ALT = re.compile(r'\balt="([^"]*)"')
_ANY_TAG = re.compile(r"<[^>]*>")
_CODE_MARK = "\ue000"  # stands for a fenced block (its number follows) until the end
_ITEM_MARK = "\ue001"  # starts a list item's line
_END_MARK = "\ue002"  # ends a fenced block's line


def _serialised_markdown(markup: str) -> str:
    """Markdown of ``markup`` (lexbor's serialisation of the tree; see the module docstring):
    regular expressions over the string, so the work per page is done in C."""
    for mark in (_CODE_MARK, _ITEM_MARK, _END_MARK):
        markup = markup.replace(mark, " ")
    markup = _COMMENT.sub("", markup)
    fenced: list[str] = []

    def pre(m: re.Match[str]) -> str:
        code = html.unescape(_ANY_TAG.sub("", m.group(1))).replace("\r\n", "\n").strip("\n")
        fenced.append(f"{FENCE}\n{code}\n{FENCE}")
        return f"{_CODE_MARK}{len(fenced) - 1}{_END_MARK}"

    if "<pre" in markup:
        markup = _PRE.sub(pre, markup)
    markup = " ".join(markup.split())  # white space runs as one space (str.split is C)
    markup = markup.replace(_CODE_MARK, "\n" + _CODE_MARK).replace(_END_MARK, "\n")

    def tag(m: re.Match[str]) -> str:
        closing, name = m.group(1), m.group(2)
        if name in HEADINGS:
            return "\n" if closing else "\n" + "#" * HEADINGS[name] + " "
        if name == "li":
            return "\n" if closing else f"\n{_ITEM_MARK}"
        if name in BLOCK_TAGS:
            return "\n"
        if name in CODE_TAGS:
            return "`"
        if name == "br":
            return " "
        if name == "img" and not closing:
            alt = _ALT.search(m.group(0))
            text = html.unescape(alt.group(1)).strip() if alt else ""
            return f"[{text}]" if text else ""
        return ""

    blocks: list[str] = []
    item = False
    # markers are looked for before entities are decoded: the page's text cannot make one
    for raw in _TAG.sub(tag, markup).split("\n"):
        line = raw.strip()
        if line.startswith(_ITEM_MARK):
            item, line = True, line.lstrip(_ITEM_MARK).strip()
        if line.startswith(_CODE_MARK) and line[1:].isdigit():
            blocks.append(fenced[int(line[1:])])
            item = False
            continue
        line = " ".join(html.unescape(line).split())
        if not line.strip("`#") or (line.startswith("#") and not line.lstrip("#").strip()):
            continue  # nothing but marks: an empty heading or code element
        blocks.append("- " + line if item else line)
        item = False
    return _joined(blocks) if blocks else ""


@dataclass(frozen=True, slots=True)
class Heading:
    """A heading line of a Markdown text: its ``level`` (1 to 6), ``title`` and the offset
    where its line starts."""

    level: int
    title: str
    start: int


def html_markdown(text: str) -> str:
    """The Markdown of an HTML document (see the module docstring)."""
    for furniture in (True, False):
        tree = LexborHTMLParser(text)
        root = tree.body or tree.root
        if root is None:
            return ""
        tree.strip_tags(sorted(SKIP_TAGS))
        if furniture:
            for node in tree.css(FURNITURE):
                node.decompose()
        made = _serialised_markdown(root.html or "")
        if made:
            return made
    return ""


def _joined(blocks: list[str]) -> str:
    """Blocks separated by a blank line, the items of one list by a line break."""
    out = [blocks[0]]
    for before, block in zip(blocks, blocks[1:], strict=False):
        out.append("\n" if block.startswith("- ") and before.startswith("- ") else "\n\n")
        out.append(block)
    return "".join(out)


def plain_markdown(text: str) -> str:
    """A plain text or Markdown document as it is, its line ends ``\\n``, outer blank lines
    dropped."""
    return text.replace("\r\n", "\n").replace("\r", "\n").strip("\n")


def page_markdown(text: str, is_html: bool) -> str:
    """The text the agent API addresses of a decoded cached page."""
    return html_markdown(text) if is_html else plain_markdown(text)


def headings(text: str) -> list[Heading]:
    """Every heading line of ``text`` (outside fenced code), in order."""
    found = []
    fenced = _fenced_spans(text)
    for m in _HEADING_LINE.finditer(text):
        if not any(a <= m.start() < b for a, b in fenced):
            found.append(Heading(len(m.group(1)), m.group(2).strip(), m.start()))
    return found


def _fenced_spans(text: str) -> list[tuple[int, int]]:
    spans, at = [], 0
    while True:
        start = text.find(FENCE, at)
        if start < 0:
            return spans
        end = text.find(FENCE, start + len(FENCE))
        if end < 0:
            return [*spans, (start, len(text))]
        spans.append((start, end + len(FENCE)))
        at = end + len(FENCE)


def section_span(text: str, section: str) -> tuple[int, int] | None:
    """(start, end) of the section of ``text`` whose heading is ``section`` (compared without
    case; else the first heading that contains it): from its heading line to the next heading
    of the same or a higher level. None when no heading matches."""
    wanted = _SPACE.sub(" ", section).strip().lower()
    if not wanted:
        return None
    found = headings(text)
    chosen = next((h for h in found if h.title.lower() == wanted), None) or \
        next((h for h in found if wanted in h.title.lower()), None)
    if chosen is None:
        return None
    end = next((h.start for h in found if h.start > chosen.start and h.level <= chosen.level),
               len(text))
    return chosen.start, end


def heading_at(found: list[Heading], offset: int) -> str:
    """The title of the last heading that starts at or before ``offset`` ("" if none)."""
    title = ""
    for h in found:
        if h.start > offset:
            break
        title = h.title
    return title
