"""The stats page's drawing: the HTML it is collected in (with its headings, for the table of contents),
horizontal bar charts with their tables of numbers, and the column chart of changes by month. Bars are inline
SVG whose geometry lives in SVG attributes, coloured by the stylesheet through the theme's CSS variables."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Any, TypedDict

MAX_BARS = 15  # more keys than this: the first MAX_BARS - 1, then one "other" bar
MONTH_LABELS = 8  # at most this many labels under the month chart
LABEL_STEPS = (1, 2, 3, 6, 12, 24, 60, 120, 240, 600, 1200)  # months between labels
BAR_UNITS = 1000  # horizontal bars are drawn in a viewBox this wide


def escaped(value: Any) -> str:
    """Text made safe for HTML, in element content and in quoted attribute values alike."""
    return html.escape(str(value), quote=True)


def number(count: int) -> str:
    return f"{count:,}"


def plural(count: int, one: str, many: str) -> str:
    return f"{number(count)} {one if count == 1 else many}"


@dataclass
class Bar:
    label: str
    count: int
    key: str | None = None  # None for the "other" bar
    members: int = 0  # how many keys the "other" bar stands for


class TocToken(TypedDict):
    """A heading as mkdocs.structure.toc.get_toc takes it."""

    level: int
    id: str
    name: str
    children: list[TocToken]


class PageHtml:
    """Collects the HTML and the headings (for the page's table of contents)."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.headings: list[TocToken] = []
        self.ids: set[str] = set()

    def add(self, *parts: str) -> None:
        self.parts.extend(parts)

    def heading(self, text: str) -> None:
        slug = re.sub(r"[^\w]+", "-", text.casefold()).strip("-") or "section"
        unique, n = slug, 1
        while unique in self.ids:
            n += 1
            unique = f"{slug}-{n}"
        self.ids.add(unique)
        self.headings.append({"level": 2, "id": unique, "name": escaped(text), "children": []})
        self.add(f'<h2 id="{unique}">{escaped(text)}</h2>')


def ranked(buckets: list[dict[str, Any]], label: Any, kind: tuple[str, str]) -> list[Bar]:
    """Bars in bucket order (count descending, then key); a long tail becomes one "other" bar."""
    bars = [Bar(label(bucket["key"]), bucket["count"], bucket["key"]) for bucket in buckets]
    if len(bars) <= MAX_BARS:
        return bars
    shown, tail = bars[: MAX_BARS - 1], bars[MAX_BARS - 1 :]
    other = Bar(f"other ({plural(len(tail), *kind)})", sum(bar.count for bar in tail), None, len(tail))
    return [*shown, other]


def bar_chart(out: PageHtml, chart: str, bars: list[Bar], title: str, columns: tuple[str, str], note: str = "") -> None:
    top = max(bar.count for bar in bars) or 1
    spoken = "; ".join(f"{bar.label}: {number(bar.count)}" for bar in bars)
    out.add(
        f'<div class="vm-chart" data-chart="{escaped(chart)}">',
        f'<div class="vm-bars" role="img" aria-label="{escaped(f"Bar chart, {title}. {spoken}.")}">',
    )
    for bar in bars:
        width = max(round(BAR_UNITS * bar.count / top, 1), 3 if bar.count else 0)
        data = f'data-key="{escaped(bar.key)}"' if bar.key is not None else f'data-other="{bar.members}"'
        kind = " vm-row--other" if bar.key is None else ""
        out.add(
            f'<div class="vm-row{kind}" {data} data-count="{bar.count}">'
            f'<span class="vm-label" title="{escaped(bar.label)}">{escaped(bar.label)}</span>'
            f'<svg class="vm-bar" viewBox="0 0 {BAR_UNITS} 10" preserveAspectRatio="none" aria-hidden="true"'
            f' focusable="false"><rect width="{width:g}" height="10"></rect></svg>'
            f'<span class="vm-value">{number(bar.count)}</span></div>'
        )
    out.add("</div>")
    if note:
        out.add(f'<p class="vm-note">{escaped(note)}</p>')
    rows = "".join(f"<tr><td>{escaped(bar.label)}</td><td>{number(bar.count)}</td></tr>" for bar in bars)
    table(out, title, columns, rows)
    out.add("</div>")


def table(out: PageHtml, title: str, columns: tuple[str, str], rows: str) -> None:
    out.add(
        f'<details class="vm-numbers"><summary>{escaped(title)}: the numbers</summary>'
        f"<table><thead><tr><th>{escaped(columns[0])}</th><th>{escaped(columns[1])}</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></details>"
    )


def month_index(key: str) -> int:
    year, month = key.split("-")
    return int(year) * 12 + int(month) - 1


def month_key(index: int) -> str:
    return f"{index // 12:04d}-{index % 12 + 1:02d}"


def label_step(first: int, last: int) -> int:
    """The fewest months between labels, on calendar boundaries, that keeps at most MONTH_LABELS labels."""
    for step in LABEL_STEPS:
        if sum(1 for m in range(first, last + 1) if m % step == 0) <= MONTH_LABELS:
            return step
    return LABEL_STEPS[-1]


def months(out: PageHtml, snapshot: dict[str, Any]) -> None:
    out.heading("Changes by month")
    buckets = snapshot["by_month"]["buckets"]
    if not buckets:
        out.add("<p>No pages.</p>")
        return
    counts = {month_index(b["key"]): b["count"] for b in buckets}
    top = max(counts.values())
    busiest = month_key(min(m for m in counts if counts[m] == top))
    out.add(
        "<p>Each page counts once, in the month (UTC) of its last change: how much of the site is "
        "fresh and how much has stood still.</p>"
    )
    summary = (
        f"Column chart, pages by month of last change, {month_key(min(counts))} to {month_key(max(counts))}; "
        f"the busiest month is {busiest} with {plural(top, 'page', 'pages')}; "
        f"{plural(len(counts), 'month has', 'months have')} changes."
    )
    last = max(counts)
    first = min(min(counts), last - 11)  # at least a year, so a young site's columns are not slabs
    out.add(
        f'<div class="vm-chart" data-chart="months"><div class="vm-months" role="img" aria-label="{escaped(summary)}">',
        f'<div class="vm-ymax" aria-hidden="true">{plural(top, "page", "pages")}</div>',
        month_columns(counts, first, last),
        month_axis(first, last),
        "</div>",
    )
    rows = "".join(f"<tr><td>{month_key(m)}</td><td>{number(counts[m])}</td></tr>" for m in sorted(counts))
    table(out, "Pages by month of last change", ("Month (UTC)", "Pages"), rows)
    out.add("</div>")


def month_columns(counts: dict[int, int], first: int, last: int) -> str:
    """One SVG stretched to the chart's box; each month is 10 units wide, the tallest column 100 high."""
    span = last - first + 1
    top = max(counts.values())
    gap = 2 if span <= 120 else 0  # narrower columns show no gap
    columns = []
    for m in range(first, last + 1):
        count = counts.get(m, 0)
        if count:
            height = max(round(100 * count / top, 2), 1)
            columns.append(
                f'<rect x="{(m - first) * 10 + gap / 2:g}" y="{100 - height:g}" width="{10 - gap}" '
                f'height="{height:g}" data-key="{month_key(m)}" data-count="{count}">'
                f"<title>{month_key(m)}: {plural(count, 'page', 'pages')}</title></rect>"
            )
    return (
        f'<svg class="vm-plot" viewBox="0 0 {span * 10} 100" preserveAspectRatio="none" aria-hidden="true"'
        ' focusable="false"><line class="vm-grid" x1="0" x2="100%" y1="0" y2="0"'
        f' vector-effect="non-scaling-stroke"></line>{"".join(columns)}</svg>'
    )


def month_axis(first: int, last: int) -> str:
    """Labels in an unscaled SVG placed in percent, so text keeps its size: a tick and a label at the start
    of every `step`-th month; every other label is `vm-minor`, which the CSS hides when the chart is narrow."""
    span = last - first + 1
    step = label_step(first, last)
    labels = []
    for n, m in enumerate(m for m in range(first, last + 1) if m % step == 0):
        text = str(m // 12) if step >= 12 else month_key(m)
        x = (m - first) * 100 / span
        minor = " vm-minor" if n % 2 else ""
        labels.append(
            f'<line class="vm-tick" x1="{x:.3f}%" x2="{x:.3f}%" y1="0" y2="0.35em"></line>'
            f'<text class="vm-axis-label{minor}" x="{x:.3f}%" y="1.25em">{text}</text>'
        )
    return f'<svg class="vm-axis" aria-hidden="true" focusable="false">{"".join(labels)}</svg>'
