"""The block stream of a page parsed by lexbor: its text with block and code boundaries marked.

Layer: ``crawler.core.processing.processors``. :func:`block_stream` writes, for a lexbor
tree, the string :mod:`.blocks` writes with its stylesheet for an lxml tree (``OPEN tag
TAGEND`` where a block starts, and where it ends the same marker of the block around it;
code between ``CODE_OPEN`` and ``CODE_CLOSE``; a ``br`` as a space), and
:func:`.blocks.blocks_of_stream` cuts it into blocks and a language sample. Contract: for the
same tree, the same stream as :func:`.blocks.block_stream`; the text may hold the marker
characters only if the page held them (the HTML processor sends such pages to lxml).

Speed: one walk of the tree in Python over lexbor's nodes (a page has about two thousand),
by tag ids, not names, with an explicit stack (no recursion: nesting as deep as the HTML
processor lets lexbor parse, :func:`.html_bytes.deep_or_large`, stays off the call stack).
"""

from __future__ import annotations

from selectolax.lexbor import LexborHTMLParser, LexborNode

from crawler.core.processing.processors.blocks import (
    BLOCK_TAGS,
    CODE_CLOSE,
    CODE_OPEN,
    CODE_TAGS,
    OPEN,
    TAGEND,
)


def _tag_ids() -> dict[str, int]:
    """Lexbor's tag id of every tag name the walks look at (and ``-text``), read from a
    parsed sample (the ids are lexbor's, fixed by its build)."""
    sample = LexborHTMLParser(
        "<table><caption>c</caption><tr><th>h</th><td>d</td></tr></table>"
        "<dl><dt>t</dt><dd>d</dd></dl><select><option>o</option></select>"
        "<form><fieldset><legend>l</legend></fieldset></form>"
        "<details><summary>s</summary></details><br><pre>p</pre>"
        + "".join(f"<{tag}></{tag}>" for tag in (*BLOCK_TAGS, *CODE_TAGS)))
    ids = {node.tag: node.tag_id for node in sample.root.traverse(include_text=True)}
    missing = [tag for tag in (*BLOCK_TAGS, *CODE_TAGS, "br", "-text") if tag not in ids]
    if missing:  # a lexbor that parses these otherwise: the walk would lose blocks
        raise RuntimeError(f"lexbor tag ids not found for {missing}")
    return ids


_IDS = _tag_ids()
TEXT = _IDS["-text"]
_BR = _IDS["br"]
_PRE = _IDS["pre"]
# block tag id -> its marker
_BLOCK_MARK = {_IDS[tag]: f"{OPEN}{tag}{TAGEND}" for tag in BLOCK_TAGS}
_CODE = frozenset(_IDS[tag] for tag in CODE_TAGS)
_BODY_MARK = _BLOCK_MARK[_IDS["body"]]


def block_stream(root: LexborNode) -> str:
    """The text under ``root`` with block and code boundaries marked (see the module), as
    :func:`.blocks.block_stream` writes it for an lxml tree: without the end marker of
    ``root`` itself."""
    out: list[str] = []
    append = out.append
    mark = _BLOCK_MARK.get(root.tag_id)
    if mark is not None:
        append(mark)
        if root.tag_id == _PRE:
            append(CODE_OPEN)
    code = mark is not None and root.tag_id == _PRE
    if mark is None:
        mark = _BODY_MARK
        if root.tag_id in _CODE:
            append(CODE_OPEN)
            code = True
    # (children left to walk, the marker of the block they are in, whether they are code,
    # what to write when they are done)
    stack: list[tuple[object, str, bool, str]] = []
    children = root.iter(include_text=True)
    closing = ""
    while True:
        for child in children:
            tag = child.tag_id
            if tag == TEXT:
                append(child.text_content or "")
                continue
            inner = _BLOCK_MARK.get(tag)
            if inner is not None:
                append(inner)
                if tag == _PRE and not code:
                    append(CODE_OPEN)
                    stack.append((children, mark, code, closing))
                    children, mark, code, closing = (child.iter(include_text=True), inner,
                                                     True, CODE_CLOSE + mark)
                else:
                    stack.append((children, mark, code, closing))
                    children, mark, closing = child.iter(include_text=True), inner, mark
                break
            if tag in _CODE and not code:
                append(CODE_OPEN)
                stack.append((children, mark, code, closing))
                children, code, closing = child.iter(include_text=True), True, CODE_CLOSE
                break
            if tag == _BR:
                append(" ")
            elif child.first_child is not None:
                stack.append((children, mark, code, closing))
                children, closing = child.iter(include_text=True), ""
                break
        else:  # children done: close their element, back to its parent's
            if not stack:
                break
            if closing:
                append(closing)
            children, mark, code, closing = stack.pop()  # type: ignore[assignment]
    return "".join(out)
