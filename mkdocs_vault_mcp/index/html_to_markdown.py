"""Rendered HTML back to Markdown, as a reader of the page sees it.

`read` answers with this: what MkDocs, its Markdown extensions and every plugin
made of the page (generated API reference, snippets, macros), written as plain
Markdown for an agent, without the theme's chrome. The same text is each page's
Markdown copy that the build publishes (index/query/agent_pages.py).

html-to-markdown (a native library) does the conversion; lxml first makes the
page plain HTML where the library does not know what the theme meant: the
chrome is dropped, Material's admonitions and collapsible blocks become block
quotes with their title in bold, content tabs become each tab's label in bold
over its content, `pymdownx.highlight` line-number tables become their code,
each code block says its language on its `<code>`, and links and images are
resolved against the page's address.

HTML nested deeper than MAX_DEPTH elements (no page a theme renders comes close)
is cut there: what lies deeper is kept as plain text, and the Markdown ends with
a note that says so. libxml2 stops parsing at a fixed depth, so a page nested
deeper than that is cut by counting its tags before it is parsed. An element
with more than MAX_ATTRIBUTES attributes (libxml2 builds those in quadratic
time) makes its part hostile HTML, which the converter reads on its own.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from typing import cast
from urllib.parse import urljoin, urlsplit

import html_to_markdown as native
import lxml.html
from lxml import etree

from .. import budget

_LANGUAGE_CLASS = re.compile(r"^(?:language|highlight|lang)-([\w+#.-]+)$")
_BLANK_LINES = re.compile(r"\n{3,}")
# What lxml cannot hold in a tree (control characters, lone surrogates, non-characters): a browser shows none of it.
_UNSHOWN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
# HTML that takes more than a few hundredths of a second to parse and convert: done in a worker process, as a
# heavy call's work (index/conversion_pool.py, budget.py).
HEAVY_CHARS = 100_000
# libxml2 adds an element's attributes one by one at the end of a list it walks: quadratic in their number. A
# fragment long enough to hold an element with that many is first read without a tree, to see whether one does.
MAX_ATTRIBUTES = 1000
CROWDED_CHARS = 25 * MAX_ATTRIBUTES
# Levels of elements converted as such; deeper ones are plain text.
MAX_DEPTH = 100
DEPTH_NOTE = (
    f"*(Note: the HTML of this part nests elements more than {MAX_DEPTH} levels deep; "
    "what lies deeper is shown as plain text.)*"
)


def _has_class(name: str) -> str:
    return f"contains(concat(' ', normalize-space(@class), ' '), ' {name} ')"


# Elements that carry nothing a reader reads: buttons (copy to clipboard), the radio inputs of content tabs,
# what never shows; and by class, permalinks (¶) and line numbers.
_CHROME = frozenset({"button", "input", "script", "style", "template", "svg"})
_CHROME_CLASSES = {"a": "headerlink", "td": "linenos", "div": "linenodiv"}
# The elements looked at: the chrome, and the constructs made plain HTML (by their class, but `details`).
_LOOKED_AT = (*_CHROME, "a", "td", "div", "table", "details", "dt", "figcaption")
_CODE_OF_TABLE = etree.XPath(f".//td[{_has_class('code')}]//pre")
_TAB_LABELS = etree.XPath(".//label")
_TAB_BLOCKS = etree.XPath(f"./*[{_has_class('tabbed-content')}]/*[{_has_class('tabbed-block')}]")
_TAB_CONTENTS = etree.XPath(f"./*[{_has_class('tabbed-content')}]")
_TABS_OF = etree.XPath(f"ancestor::div[{_has_class('tabbed-set')}][1]")
_ADMONITION_TITLE = etree.XPath(f"./p[{_has_class('admonition-title')}][1]")
# The elements MAX_DEPTH levels under the root that hold elements: what they hold is cut to its text.
_TOO_DEEP = etree.XPath("/".join(["*"] * MAX_DEPTH) + "[*]")
# Every choice given as the library's own value, not a name: a name is looked up anew on each call.
_OPTIONS = native.ConversionOptions(
    heading_style=native.HeadingStyle.ATX,
    bullets="-",
    escape_asterisks=True,
    escape_underscores=False,
    autolinks=True,  # a link whose text is its address as <address>
    extract_metadata=False,
    include_blockquote_citations=False,
    hidden_content=native.HiddenContent.ALL,  # what the page hides until asked (a closed block) is the reader's too
    compact_tables=True,  # no padding: characters an agent pays for and a reader does not need
    max_depth=4 * MAX_DEPTH,  # the tree is cut at MAX_DEPTH already: a bound, never reached
    list_indent_type=native.ListIndentType.SPACES,
    highlight_style=native.HighlightStyle.DOUBLE_EQUAL,
    whitespace_mode=native.WhitespaceMode.NORMALIZED,
    newline_style=native.NewlineStyle.SPACES,
    code_block_style=native.CodeBlockStyle.BACKTICKS,
    inline_data_media=native.InlineDataMedia.KEEP,
    url_escape_style=native.UrlEscapeStyle.ANGLE,
    link_style=native.LinkStyle.INLINE,
    output_format=native.OutputFormat.MARKDOWN,
    tier_strategy=native.TierStrategy.AUTO,
)


def html_to_markdown(fragment: str, base_url: str, languages: dict[str, str] | None = None) -> str:
    """The Markdown a reader sees in `fragment`; links and images resolved against `base_url`. A code block
    whose HTML does not say its language takes it from `languages` (code without white space -> language)."""
    budget.check()
    if not fragment.strip():
        return ""
    if len(fragment) > CROWDED_CHARS and _crowded(fragment):
        # Hostile HTML (libxml2 would build its tree in quadratic time): the converter reads it on its own.
        return _BLANK_LINES.sub("\n\n", native.convert(fragment, _options(base_url)).content or "").strip()
    root, cut_deep = _parse(fragment)
    if root is None:
        return ""
    budget.check()
    cut_deep = _flatten_deep(root) or cut_deep
    _plain_html(root)
    options = _options(base_url)
    if options.base_url is None:
        _resolve_links(root, base_url)  # a relative address (a site without site_url): the converter leaves it
    _mark_languages(root, languages or {})
    for quote in list(root.iter("blockquote")):
        # In a section of its own, the converter sets it apart by a blank line, as any other block.
        section = lxml.html.Element("section")
        _replace(quote, section)
        section.append(quote)
    budget.check()
    converted = native.convert(lxml.html.tostring(root, encoding="unicode"), options).content or ""
    budget.check()
    markdown = _BLANK_LINES.sub("\n\n", converted).strip()
    return f"{markdown}\n\n{DEPTH_NOTE}" if cut_deep else markdown


@functools.lru_cache(maxsize=64)  # the parts of a page share its address
def _options(base_url: str) -> native.ConversionOptions:
    """The options, with `base_url` when it is absolute: links and images resolved by the converter."""
    return dataclasses.replace(_OPTIONS, base_url=base_url) if urlsplit(base_url).scheme else _OPTIONS


def _parse(fragment: str) -> tuple[lxml.html.HtmlElement | None, bool]:
    """The fragment as a tree under one root element, and whether it had to be cut before it was parsed."""
    document, complete = _parsed(fragment)
    if not complete:  # nested too deep for libxml2
        budget.check()
        document, _ = _parsed(_cut_tags(fragment, MAX_DEPTH))
    return (None if document is None else document.find("body")), not complete


class _AttributeCount:
    """A parser target (no tree, so linear) that tells whether an element has more than MAX_ATTRIBUTES."""

    def __init__(self) -> None:
        self.crowded = False

    def start(self, tag: str, attrib: dict[str, str]) -> None:
        self.crowded = self.crowded or len(attrib) > MAX_ATTRIBUTES

    def close(self) -> bool:
        return self.crowded


def _crowded(fragment: str) -> bool:
    """Whether an element of `fragment` has more attributes than MAX_ATTRIBUTES."""
    # The stubs' protocol lists every event; lxml calls only the methods a target has (here `start`).
    parser = etree.HTMLParser(encoding="utf-8", target=cast("etree.ParserTarget[bool]", _AttributeCount()))
    crowded: bool = etree.fromstring(_document(fragment), parser)
    return crowded


def _document(fragment: str) -> bytes:
    # A lone surrogate (no page has one, a hostile string may) goes to libxml2 as bytes it shows as U+FFFD.
    return f"<html><body>{fragment}</body></html>".encode("utf-8", "surrogatepass")


def _parsed(fragment: str) -> tuple[lxml.html.HtmlElement | None, bool]:
    """The fragment parsed as a page's body, and whether libxml2 parsed it to its end."""
    # UTF-8 whatever the page says: a <meta charset> in the fragment must not change how the rest is read.
    parser = lxml.html.HTMLParser(encoding="utf-8", huge_tree=True, remove_comments=True, remove_pis=True)
    document = etree.fromstring(_document(fragment), parser)
    return document, not any(error.level_name == "FATAL" for error in parser.error_log)


# No `<` inside a tag: each attempt to match ends at the next one, so the scan stays linear.
_TAG = re.compile(r"<(/?)([a-zA-Z][^\s/<>]*)[^<>]*?(/?)>")
_VOID = frozenset("area base br col embed hr img input link meta param source track wbr".split())


def _cut_tags(fragment: str, max_depth: int) -> str:
    """The fragment without the tags that open or close elements deeper than `max_depth`, counted as written
    (for HTML too deep for libxml2 to parse: what is cut stays as its text, a space between elements)."""
    pieces: list[str] = []
    depth = 0
    start = 0
    for number, tag in enumerate(_TAG.finditer(fragment)):
        if number % 10_000 == 0:
            budget.check()
        closing, name, self_closing = tag.group(1), tag.group(2).lower(), tag.group(3)
        if name in _VOID or self_closing:
            keep = depth < max_depth
        elif closing:
            keep = depth <= max_depth
            depth = max(0, depth - 1)
        else:
            depth += 1
            keep = depth <= max_depth
        pieces.append(fragment[start : tag.start()])
        pieces.append(tag.group(0) if keep else " ")
        start = tag.end()
    pieces.append(fragment[start:])
    return "".join(pieces)


def _flatten_deep(root: lxml.html.HtmlElement) -> bool:
    """Replace what each element MAX_DEPTH levels down holds by its text, where it holds elements; whether any
    did. The elements are found by one XPath, in C: linear in the size of the page."""
    deepest = _TOO_DEEP(root)
    for element in deepest:
        text = " ".join(element.itertext())
        del element[:]
        element.text = _UNSHOWN.sub("", text)
    return bool(deepest)


def _plain_html(root: lxml.html.HtmlElement) -> None:
    """Drop the chrome and make plain HTML of what the converter would not read as the theme means it."""
    for element in list(root.iter(*_LOOKED_AT)):  # a list: the loop changes the tree
        name = str(element.tag)
        classes = _classes(element)
        if name in _CHROME or _CHROME_CLASSES.get(name, "-") in classes:
            if element.getparent() is not None:  # not already taken out with what held it
                element.drop_tree()
        elif name == "table" and "highlighttable" in classes:
            _plain_line_numbers(element)
        elif name == "div" and "tabbed-set" in classes:
            _plain_tabs(element)
        elif name == "details" or (name == "div" and "admonition" in classes):
            _plain_callout(element)
        elif name == "dt":  # the converter writes a term as a paragraph of its own: in bold, it reads as a term
            _in_bold(element)
        elif name == "figcaption":  # a paragraph, not the converter's italics, which would double those inside
            element.tag = "div"


def _resolve_links(root: lxml.html.HtmlElement, base_url: str) -> None:
    for element in root.iter("a", "img"):
        attribute = "href" if element.tag == "a" else "src"
        address = element.get(attribute)
        if address:
            element.set(attribute, urljoin(base_url, address))


def _classes(element: lxml.html.HtmlElement) -> list[str]:
    return (element.get("class") or "").split()


def _words(element: lxml.html.HtmlElement) -> str:
    """The text of `element` and what it holds, its pieces stripped and joined by a space."""
    return " ".join(text.strip() for text in element.itertext() if text.strip())


def _replace(old: lxml.html.HtmlElement, new: lxml.html.HtmlElement | None) -> None:
    """Put `new` where `old` is (or nothing), keeping the text that follows `old`."""
    parent = old.getparent()
    if parent is None:
        return
    if new is None:
        old.drop_tree()
        return
    new.tail, old.tail = old.tail, None
    parent.replace(old, new)


def _plain_line_numbers(table: lxml.html.HtmlElement) -> None:
    """A `pymdownx.highlight` line-number table as its code."""
    code = _CODE_OF_TABLE(table) or list(table.iter("pre"))
    _replace(table, code[0] if code else None)


def _in_bold(element: lxml.html.HtmlElement) -> None:
    """What `element` holds, in a <strong> of its own."""
    if element.text or len(element):
        strong = lxml.html.Element("strong")
        strong.text, element.text = element.text, None
        for child in list(element):
            strong.append(child)
        element.append(strong)


def _bold_paragraph(text: str) -> lxml.html.HtmlElement:
    paragraph = lxml.html.Element("p")
    strong = lxml.html.Element("strong")
    strong.text = _UNSHOWN.sub("", text)
    paragraph.append(strong)
    return paragraph


def _plain_tabs(tabs: lxml.html.HtmlElement) -> None:
    """Content tabs as each tab's label in bold over its content (pymdownx.tabbed, both styles)."""
    labels = [_words(label) for label in _TAB_LABELS(tabs) if _TABS_OF(label)[0] is tabs]
    blocks = _TAB_BLOCKS(tabs) or _TAB_CONTENTS(tabs)
    del tabs[:]
    tabs.text = None
    tabs.attrib.clear()
    for label, block in zip(labels, blocks, strict=False):  # a label or a block without its pair is left out
        tabs.append(_bold_paragraph(label))
        block.tag = "div"
        tabs.append(block)


def _plain_callout(box: lxml.html.HtmlElement) -> None:
    """An admonition or a collapsible block as a block quote whose first line is its title in bold."""
    if box.tag == "details":
        title = box.find("summary")
    else:
        titles = _ADMONITION_TITLE(box)
        title = titles[0] if titles else None
    label = ""
    if title is not None:
        label = _words(title)
        title.drop_tree()
    if not label:
        kinds = [name for name in _classes(box) if name not in ("admonition", "inline", "end")]
        label = kinds[0].capitalize() if kinds else ""
    box.tag = "blockquote"
    box.attrib.clear()
    if label:
        heading = _bold_paragraph(label)
        heading.tail, box.text = box.text, None
        box.insert(0, heading)


def _mark_languages(root: lxml.html.HtmlElement, languages: dict[str, str]) -> None:
    """Each code block's language on its `<code>` (made if missing), where the converter looks for it: from a
    `language-x` class on the block, its code or a wrapper, else from `languages` by the code's text."""
    for pre in list(root.iter("pre")):
        language = code_language(pre)
        if not language and languages:
            language = languages.get("".join("".join(pre.itertext()).split()), "")
        code = pre.find("code")
        pre.attrib.pop("class", None)
        if code is None:
            code = lxml.html.Element("code")
            pre.append(code)
            code.text, pre.text = pre.text, None
            for child in list(pre)[:-1]:
                code.append(child)
        code.attrib.pop("class", None)
        if language:
            code.set("class", f"language-{language}")


def code_language(pre: lxml.html.HtmlElement) -> str:
    """The language a code block was highlighted as: `language-python` on the block, its code or a wrapper."""
    for element in (pre.find("code"), pre, *pre.iterancestors()):
        if element is None:
            continue
        for name in _classes(element):
            match = _LANGUAGE_CLASS.match(name)
            if match:
                return match.group(1)
        if element.tag == "div" and "highlight" in _classes(element):
            break
    return ""
