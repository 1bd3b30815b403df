"""HTML: the visible text, with paragraph and line breaks where the blocks are."""

from __future__ import annotations

import re

from bs4 import BeautifulSoup, Comment, Declaration, Doctype, NavigableString, Tag
from bs4.element import ProcessingInstruction

from bunko.parsing.document import ParsedDocument, from_text
from bunko.parsing.text import decode

_INVISIBLE = frozenset(
    {"script", "style", "noscript", "template", "head", "iframe", "object", "svg", "canvas"}
)
_PARAGRAPH = frozenset(
    [
        "p",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "ul",
        "ol",
        "dl",
        "table",
        "blockquote",
        "pre",
        "section",
        "article",
        "header",
        "footer",
        "nav",
        "aside",
        "main",
        "figure",
        "form",
        "fieldset",
        "address",
        "details",
        "hr",
    ]
)
_LINE = frozenset(
    ["div", "li", "tr", "dt", "dd", "caption", "figcaption", "summary", "legend", "option"]
)
_CELL = frozenset({"td", "th"})
_SKIPPED_STRINGS = (Comment, Declaration, Doctype, ProcessingInstruction)
_HTML_SPACE = re.compile(r"[ \t\n\r\f]+")  # HTML collapses these; U+3000 and nbsp stay
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([\w.:-]+)""", re.IGNORECASE)


def parse_html(data: bytes, charset: str | None) -> ParsedDocument:
    if charset is None:
        declared = _META_CHARSET.search(data[:4096])
        charset = declared.group(1).decode("ascii") if declared else None
    soup = BeautifulSoup(decode(data, charset), "lxml")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    body = _render(soup.body or soup)
    if title and not body.lstrip().startswith(title):
        body = f"{title}\n\n{body}"
    return from_text(body, "HTML")


def _render(root: Tag) -> str:
    """Walk the tree without recursion (HTML nesting can be arbitrarily deep)."""
    out: list[str] = []
    pre_depth = 0
    # Items are nodes, or (marker, text) tuples emitted when a tag closes.
    stack: list[object] = list(reversed(root.contents))
    while stack:
        item = stack.pop()
        if isinstance(item, tuple):
            kind, text = item
            if kind == "end_pre":
                pre_depth -= 1
            if text:
                out.append(text)
        elif isinstance(item, NavigableString):
            if isinstance(item, _SKIPPED_STRINGS):
                continue
            text = str(item) if pre_depth else _HTML_SPACE.sub(" ", str(item))
            if not pre_depth and text.startswith(" ") and (not out or out[-1][-1:] in " \n\t"):
                text = text[1:]
            if text:
                out.append(text)
        elif isinstance(item, Tag):
            stack.extend(_open(item, out))
            if item.name == "pre":
                pre_depth += 1
    return "".join(out)


def _open(tag: Tag, out: list[str]) -> list[object]:
    """Emit what goes before ``tag`` and return what to push: closing marker, then children."""
    name = tag.name
    if name in _INVISIBLE or tag.has_attr("hidden"):
        return []
    if name == "br":
        out.append("\n")
        return []
    if name in _PARAGRAPH:
        before = after = "\n\n"
    elif name in _LINE:
        before = after = "\n"
    elif name in _CELL:
        before, after = "", "\t"
    else:
        before = after = ""
    if before:
        out.append(before)
    closing = ("end_pre" if name == "pre" else "end", after)
    return [closing, *reversed(tag.contents)]
