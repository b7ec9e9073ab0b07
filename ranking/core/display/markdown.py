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

import re
from dataclasses import dataclass

from selectolax.lexbor import LexborHTMLParser, LexborNode

FORMAT = 1  # bump when the text of the same bytes changes (offsets cited before go stale)
SKIP_TAGS = frozenset({"head", "script", "style", "template", "noscript", "svg", "iframe",
                       "object", "select", "button", "math", "canvas", "-comment", "title"})
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


def _furniture(node: LexborNode) -> bool:
    tag = node.tag
    if tag in FURNITURE_TAGS:
        return True
    attrs = node.attributes
    if not attrs:
        return False
    if (attrs.get("role") or "").strip().lower() in FURNITURE_ROLES:
        return True
    classes = (attrs.get("class") or "").lower().split()
    return any(c in FURNITURE_CLASSES for c in classes)


class _Writer:
    """Blocks of Markdown written from a walk of the tree: ``line`` collects the current
    block's inline text, ``blocks`` the finished ones."""

    def __init__(self) -> None:
        self.blocks: list[str] = []
        self.line: list[str] = []
        self.prefix = ""

    def flush(self) -> None:
        text = _SPACE.sub(" ", "".join(self.line)).strip()
        self.line = []
        if text:
            self.blocks.append(self.prefix + text)
        self.prefix = ""

    def raw(self, block: str) -> None:
        self.flush()
        if block.strip():
            self.blocks.append(block)


def _walk(root: LexborNode, writer: _Writer, furniture: bool) -> None:
    """Write ``root``'s text into ``writer``; an explicit stack keeps deep pages off the call
    stack. A stack entry is a node to enter or, as a string, the close of a block."""
    stack: list[LexborNode | str] = [root]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if item == "`":
                writer.line.append("`")
            else:
                writer.flush()
            continue
        tag = item.tag
        if tag == "-text":
            writer.line.append(item.text_content or "")
            continue
        if tag in SKIP_TAGS or (furniture and _furniture(item)):
            continue
        if tag == "pre":
            code = (item.text(deep=True) or "").replace("\r\n", "\n").strip("\n")
            writer.raw(f"{FENCE}\n{code}\n{FENCE}")
            continue
        if tag == "br":
            writer.line.append(" ")
            continue
        if tag == "img":
            alt = ((item.attributes or {}).get("alt") or "").strip()
            if alt:
                writer.line.append(f"[{alt}]")
            continue
        children = []
        child = item.child
        while child is not None:
            children.append(child)
            child = child.next
        if tag in HEADINGS:
            writer.flush()
            writer.prefix = "#" * HEADINGS[tag] + " "
            stack.append("/")
        elif tag == "li":
            writer.flush()
            writer.prefix = "- "
            stack.append("/")
        elif tag in BLOCK_TAGS:
            writer.flush()
            stack.append("/")
        elif tag in CODE_TAGS:
            writer.line.append("`")
            stack.append("`")
        stack.extend(reversed(children))


@dataclass(frozen=True, slots=True)
class Heading:
    """A heading line of a Markdown text: its ``level`` (1 to 6), ``title`` and the offset
    where its line starts."""

    level: int
    title: str
    start: int


def html_markdown(text: str) -> str:
    """The Markdown of an HTML document (see the module docstring)."""
    tree = LexborHTMLParser(text)
    root = tree.body or tree.root
    if root is None:
        return ""
    for furniture in (True, False):
        writer = _Writer()
        _walk(root, writer, furniture)
        writer.flush()
        if writer.blocks:
            return _joined(writer.blocks)
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
