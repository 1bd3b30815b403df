"""A web page's main text and links: the page's `<main>` (or its largest `<article>`, or its
body) without navigation, headers, footers and asides, rendered by the HTML parser every door
uses; links are every same-page `<a href>` made absolute, fragments dropped."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from urllib.parse import urldefrag, urljoin, urlsplit

from bs4 import BeautifulSoup, Tag

from bunko.errors import BunkoError
from bunko.parsing.html import parse_html

_CHROME = ("nav", "header", "footer", "aside", "script", "style", "noscript", "template", "form")
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([\w.:-]+)""", re.IGNORECASE)


@dataclass(frozen=True)
class Page:
    title: str
    text: str  # "" when the page has no main text
    links: list[str]
    noindex: bool  # <meta name="robots" content="noindex">: not kept
    nofollow: bool  # ... "nofollow": its links are not followed


def read_page(data: bytes, url: str, charset: str | None) -> Page:
    if charset is None:
        declared = _META_CHARSET.search(data[:4096])
        charset = declared.group(1).decode("ascii") if declared else "utf-8"
    try:
        markup = data.decode(charset, "replace")
    except LookupError:
        markup = data.decode("utf-8", "replace")
    soup = BeautifulSoup(markup, "lxml")
    robots = " ".join(
        str(m.get("content", "")).lower()
        for m in soup.find_all("meta", attrs={"name": re.compile("^robots$", re.I)})
    )
    base = url
    base_tag = soup.find("base", href=True)
    if isinstance(base_tag, Tag):
        base = urljoin(url, str(base_tag["href"]))
    links: list[str] = []
    for a in soup.find_all("a", href=True):
        rel = " ".join(a.get("rel") or []).lower()
        href = str(a["href"]).strip()
        if "nofollow" in rel or href.startswith(("mailto:", "javascript:", "tel:")):
            continue
        link = urldefrag(urljoin(base, href))[0]
        if urlsplit(link).scheme in ("http", "https"):
            links.append(link)
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    for tag in soup.find_all(_CHROME):
        tag.decompose()
    main = soup.find("main") or soup.find(attrs={"role": "main"})
    if main is None:
        articles = soup.find_all("article")
        main = max(articles, key=lambda a: len(a.get_text()), default=None)
    main = main or soup.body or soup
    wrapped = f"<html><head><title>{html.escape(title)}</title></head><body>{main}</body></html>"
    try:
        text = parse_html(wrapped.encode("utf-8"), "utf-8").text
    except BunkoError:
        text = ""
    return Page(
        title=title,
        text=text,
        links=list(dict.fromkeys(links)),
        noindex="noindex" in robots or "none" in robots,
        nofollow="nofollow" in robots or "none" in robots,
    )


def sitemap_urls(data: bytes) -> tuple[list[str], bool]:
    """The `<loc>`s of a sitemap, and whether it is an index of sitemaps."""
    soup = BeautifulSoup(data, "lxml-xml")
    index = soup.find("sitemapindex") is not None
    return [loc.get_text(strip=True) for loc in soup.find_all("loc")], index
