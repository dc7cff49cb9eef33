"""What one hostile page costs `mkdocs-vault-mcp index`, against a plain page of the same size.

    .venv/bin/python bench/hostile_index.py [--kb 64] [--runs 3]

Each hostile page repeats one piece of HTML that made the scanning quadratic (an unclosed `<!--`, `<article `,
`<a href>`...) until the page is `--kb` kB, inside the content element (or before it, for what is read from the
whole page: the content element's start tag, `<title>`). The time is what `index` does for one page: find the
content element, take the theme's parts out, read the title, and make the page's document (sections, links,
anchors, summary: what the index writer does). Times are this process's CPU time (the machine is shared: wall
time counts the others' work), the median of `--runs`. Two ratios: against a plain page of the same size
(paragraphs of words), and against the same hostile page at an eighth of the size: about 8 when the scanning is
linear, about 64 when it is quadratic. Writes bench/results/speed/hostile_index.json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from mkdocs_vault_mcp.build_steps import built_pages as built_site  # noqa: E402
from mkdocs_vault_mcp.page.documents import build_document  # noqa: E402
from mkdocs_vault_mcp.page.model import RenderedPage  # noqa: E402
from report import table, write_results  # noqa: E402

MAIN = '<div role="main">'
MATERIAL = '<article class="md-content__inner md-typeset">'

# name -> (piece repeated, where: "content" inside the content element, "page" before it)
CASES = {
    "unclosed <!--": ("<!--", "content"),
    "unclosed <!-- before the content": ("<!--", "page"),
    "<article  (no >) before the content": ("<article ", "page"),
    "<article  (no >) in Material's": ("<article ", "material"),
    "<a href> (never closed)": ("<a href>", "content"),
    "<a  (no >)": ("<a ", "content"),
    "< (no >)": ("<", "content"),
    "<h2> (never closed)": ("<h2>", "content"),
    "<h2  (no >)": ("<h2 ", "content"),
    "<p> (never closed)": ("<p>", "content"),
    "<script> (never closed)": ("<script>", "content"),
    "<title> (never closed)": ("<title>", "page"),
    "<img  (no >)": ("<img ", "content"),
    '<a class="headerlink"> (never closed)': ('<a class="headerlink" href="#x">', "content"),
    "<div data-search-exclude></div>": ("<div data-search-exclude></div>", "content"),
    '<nav class="md-tags"></nav> (theme parts)': ('<nav class="md-tags"></nav>', "material"),
    '<button class="md-content__button"> (theme parts)': ('<a class="md-content__button">x</a>', "material"),
    '<b id="x (quote never closed)': ('<b id="x', "content"),
    "<div> (nested, never closed)": ("<div>", "content"),
}


def page_html(piece: str, where: str, size: int) -> str:
    repeated = piece * (size // len(piece))
    if where == "page":
        return f"<html><head>{repeated}</head><body>{MAIN}<h1 id='t'>Title</h1><p>Text</p></div></body></html>"
    start = MATERIAL if where == "material" else MAIN
    end = "</article>" if where == "material" else "</div>"
    return (
        f"<html><head><title>Page - Site</title></head><body>{start}<h1 id='t'>Title</h1>{repeated}{end}</body></html>"
    )


def plain_html(size: int) -> str:
    words = ("wind", "vane", "calibrate", "anemometer", "breeze", "station", "reading", "sensor")
    paragraph = "<p>" + " ".join(words[i % len(words)] for i in range(60)) + "</p>\n"
    return page_html(paragraph, "content", size)


def one_page(html_text: str) -> None:
    """What `index` does with one page's HTML (built_site.index_site and the writer's build_document)."""
    content = built_site.content_element(html_text)
    assert content is not None
    content, theme_title = built_site.without_theme_parts(content)
    title = built_site.page_title(
        built_site.page_title_text(html_text) or "", "Site", "page/", {}, theme_title, content
    )
    build_document(
        RenderedPage(
            path="page.md",
            url="/page/",
            title=title,
            meta={},
            markdown="",
            html=content,
            modified=dt.datetime.now(dt.UTC),
            modified_source="mtime",
            page_path="/page/",
        ),
        "auto",
    )


def median_seconds(html_text: str, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.process_time()
        one_page(html_text)
        times.append(time.process_time() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kb", type=int, default=64, help="size of each page (default 64)")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    size = args.kb * 1024
    plain = median_seconds(plain_html(size), args.runs)
    plain_eighth = median_seconds(plain_html(size // 8), args.runs)
    rows = [
        ["page", "median CPU ms", "vs plain page", "vs an eighth of it"],
        ["plain page (baseline)", f"{plain * 1000:.2f}", "1.0", f"{plain / plain_eighth:.1f}"],
    ]
    for name, (piece, where) in CASES.items():
        seconds = median_seconds(page_html(piece, where, size), args.runs)
        eighth = median_seconds(page_html(piece, where, size // 8), args.runs)
        rows.append([name, f"{seconds * 1000:.2f}", f"{seconds / plain:.1f}", f"{seconds / eighth:.1f}"])
        print(f"{name}: {seconds * 1000:.2f} ms", file=sys.stderr)
    report = (
        f"Pages of {args.kb} kB through what `index` does with one page, median CPU time of {args.runs} runs; "
        "ratios against the plain page and against the same page at an eighth of the size, in the same run."
        "\n\n" + table(rows)
    )
    print(report)
    write_results("hostile_index", report)


if __name__ == "__main__":
    main()
