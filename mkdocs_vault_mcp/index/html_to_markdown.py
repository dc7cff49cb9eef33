"""Rendered HTML back to Markdown, as a reader of the page sees it.

`read` answers with this: what MkDocs, its Markdown extensions and every plugin
made of the page (generated API reference, snippets, macros), written as plain
Markdown for an agent, without the theme's chrome. The conversion runs when a
page is read, not during the build, so it costs the build nothing.

markdownify does the conversion; the few constructs it does not know are made
plain HTML first: Material's admonitions and collapsible blocks become block
quotes with their title in bold, content tabs become each tab's label in bold
over its content, `pymdownx.highlight` line-number tables become their code.

markdownify recurses once per level of nesting, so HTML nested deeper than
MAX_DEPTH elements (no page a theme renders comes close) is cut there: what
lies deeper is kept as plain text, and the Markdown ends with a note that says so.
"""

from __future__ import annotations

import re
from urllib.parse import urljoin

from bs4 import BeautifulSoup, Tag
from markdownify import ATX, MarkdownConverter

from .. import budget

# Elements that carry nothing a reader reads: buttons (copy to clipboard), the radio inputs of content tabs,
# what never shows; and by class, permalinks (¶) and line numbers.
_CHROME_ELEMENTS = frozenset({"button", "input", "script", "style", "template", "svg"})
_CHROME_CLASSES = {"a": ("headerlink",), "td": ("linenos",), "div": ("linenodiv",)}
_LANGUAGE_CLASS = re.compile(r"^(?:language|highlight|lang)-([\w+#.-]+)$")
_BLANK_LINES = re.compile(r"\n{3,}")
# HTML that takes more than a few hundredths of a second to parse and convert: done in a worker process, as a
# heavy call's work (index/conversion_pool.py, budget.py).
HEAVY_CHARS = 100_000
# Levels of elements converted as such; markdownify takes three Python frames per level, far below the limit.
MAX_DEPTH = 100
DEPTH_NOTE = (
    f"*(Note: the HTML of this part nests elements more than {MAX_DEPTH} levels deep; "
    "what lies deeper is shown as plain text.)*"
)


class _ReaderMarkdown(MarkdownConverter):
    def __init__(self, base_url: str, languages: dict[str, str]) -> None:
        super().__init__(heading_style=ATX, bullets="-", escape_underscores=False)
        self.base_url = base_url
        self.languages = languages

    def process_tag(self, node: Tag, parent_tags: set[str] | None = None) -> str:
        budget.check()  # the conversion is the call's work too: a huge page stops at the call's limit
        converted: str = super().process_tag(node, parent_tags)  # type: ignore[misc]
        return converted

    # markdownify's own stub (__init__.pyi) leaves its convert_* methods out: hence the two ignores.
    def convert_a(self, el: Tag, text: str, parent_tags: set[str]) -> str:
        href = el.get("href")
        if isinstance(href, str) and href:
            el["href"] = urljoin(self.base_url, href)
        converted: str = super().convert_a(el, text, parent_tags)  # type: ignore[misc]
        return converted

    def convert_img(self, el: Tag, text: str, parent_tags: set[str]) -> str:
        src = el.get("src")
        if isinstance(src, str) and src:
            el["src"] = urljoin(self.base_url, src)
        converted: str = super().convert_img(el, text, parent_tags)  # type: ignore[misc]
        return converted

    def convert_pre(self, el: Tag, text: str, parent_tags: set[str]) -> str:
        text = text.strip("\n")
        if not text:
            return ""
        # A fence longer than any run of backticks in the code, so code that shows a fence stays inside.
        fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", text)), default=0))
        language = code_language(el) or self.languages.get("".join(text.split()), "")
        return f"\n\n{fence}{language}\n{text}\n{fence}\n\n"


def code_language(pre: Tag) -> str:
    """The language a code block was highlighted as: `language-python` on the block, its code or a wrapper."""
    for element in (pre.find("code"), pre, *pre.parents):
        if element is None or not isinstance(element, Tag):
            continue
        for name in element.get("class") or ():
            match = _LANGUAGE_CLASS.match(name)
            if match:
                return match.group(1)
        if element.name == "div" and "highlight" in (element.get("class") or ()):
            break
    return ""


def html_to_markdown(fragment: str, base_url: str, languages: dict[str, str] | None = None) -> str:
    """The Markdown a reader sees in `fragment`; links and images resolved against `base_url`. A code block
    whose HTML does not say its language takes it from `languages` (code without white space -> language)."""
    soup = BeautifulSoup(fragment, "lxml")  # faster than html.parser on MkDocs' pages
    budget.check()
    cut_deep = _flatten_deep(soup, MAX_DEPTH)
    # One walk, outer elements first; an element inside one that was removed is removed with it.
    for element in soup.find_all(True):
        if element.decomposed:
            continue
        name, classes = element.name, element.get("class") or ()
        if name in _CHROME_ELEMENTS or any(kind in _CHROME_CLASSES.get(name, ()) for kind in classes):
            element.decompose()
        elif name == "table" and "highlighttable" in classes:
            code = element.select_one("td.code pre") or element.find("pre")
            if code is not None:
                element.replace_with(code)
            else:
                element.decompose()
        elif name == "div" and "tabbed-set" in classes:
            _plain_tabs(soup, element)
        elif (name == "div" and "admonition" in classes) or name == "details":
            _plain_callout(soup, element)
    markdown = _BLANK_LINES.sub("\n\n", _ReaderMarkdown(base_url, languages or {}).convert_soup(soup)).strip()
    return f"{markdown}\n\n{DEPTH_NOTE}" if cut_deep else markdown


def _flatten_deep(soup: BeautifulSoup, max_depth: int) -> bool:
    """Replace what each element at `max_depth` holds by its text, where it holds elements; whether any did.

    One pass in document order (parents before children), without recursion, and each element cut holds a
    subtree of its own: linear in the size of the page."""
    depths = {id(soup): 0}
    deepest: dict[int, Tag] = {}
    for number, element in enumerate(soup.find_all(True)):
        if number % 1000 == 0:
            budget.check()
        depth = depths.get(id(element.parent), max_depth + 1) + 1
        if depth <= max_depth:
            depths[id(element)] = depth
        elif depth == max_depth + 1 and element.parent is not None:
            deepest[id(element.parent)] = element.parent
    for element in deepest.values():
        text = element.get_text(" ")
        element.clear()
        element.append(text)
    return bool(deepest)


def _plain_tabs(soup: BeautifulSoup, tabs: Tag) -> None:
    """Content tabs as each tab's label in bold over its content (pymdownx.tabbed, both styles)."""
    labels = [
        label.get_text(" ", strip=True)
        for label in tabs.find_all("label", recursive=True)
        if label.find_parent("div", class_="tabbed-set") is tabs
    ]
    blocks = tabs.select(":scope > .tabbed-content > .tabbed-block") or tabs.select(":scope > .tabbed-content")
    plain = soup.new_tag("div")
    for label, block in zip(labels, blocks, strict=False):  # a label or a block without its pair is left out
        title = soup.new_tag("p")
        strong = soup.new_tag("strong")
        strong.string = label
        title.append(strong)
        plain.append(title)
        block.name = "div"
        plain.append(block.extract())
    tabs.replace_with(plain)


def _plain_callout(soup: BeautifulSoup, box: Tag) -> None:
    """An admonition or a collapsible block as a block quote whose first line is its title in bold."""
    if box.name == "details":
        title = box.find("summary", recursive=False)
    else:
        title = box.find("p", class_="admonition-title", recursive=False)
    label = title.get_text(" ", strip=True) if title is not None else ""
    if title is not None:
        title.decompose()
    if not label:
        kinds = [name for name in box.get("class") or () if name not in ("admonition", "inline", "end")]
        label = kinds[0].capitalize() if kinds else ""
    quote = soup.new_tag("blockquote")
    if label:
        heading = soup.new_tag("p")
        strong = soup.new_tag("strong")
        strong.string = label
        heading.append(strong)
        quote.append(heading)
    for child in list(box.contents):
        quote.append(child.extract())
    box.replace_with(quote)
