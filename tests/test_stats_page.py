"""The stats page: where it goes, the nav, escaping, and in a real headless Chromium under the `mkdocs` and
`material` themes (no console errors, bars that match snapshot.json, labels that do not overlap, the light
and dark palettes). Screenshots go to tests/out/.
"""

from __future__ import annotations

import html
import json
import logging
import posixpath
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from helpers.chromium import Browser, find_chromium, serve_directory
from helpers.mcp_session import call_tools
from helpers.paths import ROOT
from helpers.site import build_from
from mkdocs_vault_mcp.build_steps.stats_charts import MAX_BARS

OUT = Path(__file__).resolve().parent / "out"
NASTY = "<script>alert(\"x\")</script> & 'q'"


def nav_links(page_html: str) -> list[tuple[str, str]]:
    """(href, text) of the mkdocs theme's navigation entries (prev/next links start with rel=)."""
    return re.findall(r'<a href="([^"#][^"]*)" class="(?:nav-link|dropdown-item)[^"]*"[^>]*>([^<]*)</a>', page_html)


def mkdocs_theme(site) -> None:
    # highlight.js comes from a CDN by default; the browser tests allow no request outside the site.
    site.config["theme"] = {"name": "mkdocs", "highlightjs": False}


def write_small_site(site) -> None:
    site.write("index.md", "---\ntags: [intro]\n---\n# Home\n\nHello.\n")
    site.write("guide.md", "---\ntags: [intro, setup]\n---\n# Guide\n\nSteps.\n")
    site.write("deep/er/page.md", "# Deep page\n")


# -- where the page goes ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("option", "directory_urls", "output", "url"),
    [
        ("stats/", True, "stats/index.html", "stats/"),
        ("reports/site-stats.md", True, "reports/site-stats/index.html", "reports/site-stats/"),
        ("reports/site-stats.md", False, "reports/site-stats.html", "reports/site-stats.html"),
        ("stats", False, "stats.html", "stats.html"),
        ("/deep/er/", True, "deep/er/index.html", "deep/er/"),
    ],
)
def test_the_option_sets_the_path_and_the_links_resolve(site, option, directory_urls, output, url):
    write_small_site(site)
    mkdocs_theme(site)
    site.config.update(use_directory_urls=directory_urls, plugins=[{"vault-mcp": {"stats_page": option}}])
    site.build()
    page = (site.site_dir / output).read_text(encoding="utf-8")
    assert '<h1 id="site-statistics">Site statistics</h1>' in page
    assert "<title>Site statistics - Test site</title>" in page
    content = page[page.index('<link rel="stylesheet" href="') :]
    links = re.findall(r'href="([^"]+\.(?:json|css))"', content)[:2]
    assert [posixpath.basename(link) for link in links] == ["stats.css", "snapshot.json"]
    base = posixpath.dirname(url) if not url.endswith("/") else url.rstrip("/")
    for link in links:
        assert not link.startswith(("/", "http")), link
        target = posixpath.normpath(posixpath.join(base, link))
        assert (site.site_dir / target).is_file(), (link, target)
    assert "stats" not in " ".join(site.documents())  # the generated page is not indexed
    assert site.documents().keys() == {"index.md", "guide.md", "deep/er/page.md"}


def test_stats_page_false_writes_no_page_and_no_stylesheet(site):
    write_small_site(site)
    mkdocs_theme(site)
    site.config["plugins"] = [{"vault-mcp": {"stats_page": False}}]
    site.build()
    assert not (site.site_dir / "stats").exists()
    assert sorted(p.name for p in (site.site_dir / "vault-mcp").iterdir()) == ["index.sqlite", "snapshot.json"]
    assert "Site statistics" not in (site.site_dir / "index.html").read_text(encoding="utf-8")


def test_a_page_of_the_site_at_that_path_wins_with_a_warning(site):
    write_small_site(site)
    mkdocs_theme(site)
    site.write("stats/index.md", "# Our own statistics\n\nHand written.\n")
    site.build()
    page = (site.site_dir / "stats" / "index.html").read_text(encoding="utf-8")
    assert "Hand written." in page and "vm-stats" not in page
    [warning] = site.messages(logging.WARNING, "vault-mcp: The stats page")
    assert "'stats/index.md'" in warning and "stats_page" in warning


def test_the_stats_page_is_not_in_the_nav_by_default(site):
    write_small_site(site)
    mkdocs_theme(site)
    site.build()
    home = (site.site_dir / "index.html").read_text(encoding="utf-8")
    assert "Site statistics" not in home
    assert [href for href, _ in nav_links(home)] == [".", "guide/", "deep/er/page/"]
    assert not site.messages(logging.INFO, "The following pages exist in the docs directory")


def test_in_nav_appends_it_last_to_the_automatic_nav(site):
    write_small_site(site)
    mkdocs_theme(site)
    site.config["plugins"] = [{"vault-mcp": {"stats_page_in_nav": True}}]
    site.build()
    home = (site.site_dir / "index.html").read_text(encoding="utf-8")
    assert nav_links(home)[-1] == ("stats/", "Site statistics")
    last = (site.site_dir / "deep" / "er" / "page" / "index.html").read_text(encoding="utf-8")
    assert '<a rel="next" href="../../../stats/"' in last  # the page before it leads on to it


def test_in_nav_appends_it_to_an_explicit_nav_unless_the_nav_lists_it(site):
    write_small_site(site)
    mkdocs_theme(site)
    site.config["nav"] = [{"Start": "index.md"}, {"Docs": [{"The guide": "guide.md"}]}]
    site.config["plugins"] = [{"vault-mcp": {"stats_page_in_nav": True}}]
    site.build()
    home = (site.site_dir / "index.html").read_text(encoding="utf-8")
    assert nav_links(home) == [(".", "Start"), ("guide/", "The guide"), ("stats/", "Site statistics")]

    site.config["nav"] = [{"Numbers": "stats/index.md"}, {"Start": "index.md"}]
    site.build()
    home = (site.site_dir / "index.html").read_text(encoding="utf-8")
    assert nav_links(home) == [("stats/", "Numbers"), (".", "Start")]


def test_text_is_escaped_and_the_table_of_contents_and_search_see_the_content(site):
    site.write("index.md", f"---\ntags: [{json.dumps(NASTY)}, plain]\n---\n# Home\n")
    site.write("R&D <x>/page.md", "---\ntags: [plain]\n---\n# R and D\n")
    mkdocs_theme(site)
    site.config["site_name"] = "Docs & <Co>"
    site.config["plugins"] = ["search", "vault-mcp"]
    site.build()
    page = (site.site_dir / "stats" / "index.html").read_text(encoding="utf-8")
    content = page[page.index('<div class="vm-stats">') :]
    assert "<script>alert" not in content
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#x27;q&#x27;" in content
    assert 'data-key="R&amp;D &lt;x&gt;"' in content and "Docs &amp; &lt;Co&gt; publishes" in content
    assert re.search(r'<a href="#changes-by-month" class="nav-link">Changes by month</a>', page)
    index = json.loads((site.site_dir / "search" / "search_index.json").read_text(encoding="utf-8"))
    locations = {doc["location"] for doc in index["docs"]}
    assert {"stats/", "stats/#totals", "stats/#most-used-tags", "stats/#changes-by-month"} <= locations


BROKEN_ROW = re.compile(
    r'<tr data-path="[^"]*" data-broken="[^"]*"><td><a href="([^"]*)"><code>([^<]*)</code></a>'
    r'(?:<br><span class="vm-note">([^<]*)</span>)?</td><td>([^<]*)</td>'
    r'<td><code>([^<]*)</code> <span class="vm-note">\(no such (page|anchor)\)</span></td></tr>'
)


def test_the_stats_page_lists_the_broken_links_it_counts_as_the_links_tool_does(site):
    site.write("index.md", "# Home\n\n" + " ".join(f"[gone {n}](missing-{n:02d}.md)" for n in range(53)) + "\n")
    site.write("guide.md", "# Guide\n\n## Part\n\nBack [home & <away>](index.md#nowhere) and [in](#part).\n")
    mkdocs_theme(site)
    site.config["plugins"] = ["search", "vault-mcp"]
    site.build()
    page = (site.site_dir / "stats" / "index.html").read_text(encoding="utf-8")
    content = page[page.index('<div class="vm-stats">') :]
    [broken] = call_tools(site.index_path, [("links", {"show": "broken", "limit": 50})])
    assert broken["total"] == 54  # 53 missing pages and one missing anchor
    assert 'data-stat="broken_links" data-count="54"' in content
    rows = BROKEN_ROW.findall(content)
    assert [(path, section, text, target, kind) for _, path, section, text, target, kind in rows] == [
        (
            row["path"],
            html.escape(row["section"]),
            html.escape(row["text"]),
            html.escape(row["target"] + (f"#{row['anchor']}" if row["anchor"] else "")),
            row["broken"],
        )
        for row in broken["result"]
    ]
    assert rows[0][:2] == ("../guide/#part", "guide.md")  # the linking section, relative to the stats page
    assert rows[1][:2] == ("../#home", "index.md")
    assert "And 4 more: the MCP tool <code>links</code>" in content
    assert '<a href="#broken-links" class="nav-link">Broken links</a>' in page  # in the page's table of contents


def test_a_site_without_broken_links_says_so(site):
    write_small_site(site)
    mkdocs_theme(site)
    site.build()
    page = (site.site_dir / "stats" / "index.html").read_text(encoding="utf-8")
    assert "No link of this site leads to a missing page or anchor." in page
    assert "vm-broken" not in page


# -- in a browser ------------------------------------------------------------------------------------

CHART_DATA = """(() => {
  const charts = {};
  for (const chart of document.querySelectorAll('.vm-stats [data-chart]')) {
    charts[chart.dataset.chart] = [...chart.querySelectorAll('[data-count]')].map(el => {
      const rect = el.matches('rect') ? el : el.querySelector('rect');
      const box = rect.getBoundingClientRect();
      return {key: el.dataset.key ?? null, other: el.dataset.other ? Number(el.dataset.other) : null,
              count: Number(el.dataset.count), width: box.width, height: box.height,
              label: el.querySelector('.vm-label')?.textContent ?? null};
    });
  }
  const totals = {};
  for (const el of document.querySelectorAll('.vm-stats [data-stat]')) {
    totals[el.dataset.stat] = el.dataset.count !== undefined ? Number(el.dataset.count) : el.dataset.value;
  }
  return {charts, totals};
})()"""

OVERLAPS = """(() => {
  const box = el => el.getBoundingClientRect();
  const shown = el => getComputedStyle(el).display !== 'none';
  const problems = [];
  for (const axis of document.querySelectorAll('.vm-months')) {
    const labels = [...axis.querySelectorAll('.vm-axis-label')].filter(shown).map(box)
      .sort((a, b) => a.left - b.left);
    if (labels.length < 2) problems.push('fewer than 2 month labels');
    labels.forEach((b, i) => { if (i && b.left < labels[i - 1].right) problems.push('month labels overlap'); });
    const edge = box(axis);
    labels.forEach(b => {
      if (b.right > edge.right + 0.5 || b.left < edge.left - 0.5) problems.push('label outside');
    });
  }
  const inked = el => {  // where the text is drawn: its own extent, cut to the box when overflow is clipped
    const range = document.createRange();
    range.selectNodeContents(el);
    const text = range.getBoundingClientRect(), own = box(el);
    const clipped = getComputedStyle(el).overflowX !== 'visible';
    return clipped ? {left: Math.max(text.left, own.left), right: Math.min(text.right, own.right)} : text;
  };
  for (const row of document.querySelectorAll('.vm-row')) {
    const label = inked(row.querySelector('.vm-label')), value = inked(row.querySelector('.vm-value'));
    const bar = box(row.querySelector('svg'));
    const name = row.dataset.key ?? 'other';
    if (label.right > bar.left + 0.5 || bar.right > value.left + 0.5) problems.push('row overlaps: ' + name);
    // Squeezed: cut to under 20px. A label shorter than that (a language code, `en`) is shown whole.
    const full = row.querySelector('.vm-label').scrollWidth;
    if (label.right - label.left < Math.min(20, full - 0.5)) problems.push('label squeezed: ' + name);
  }
  return problems;
})()"""


def expected_bars(ranked: list[tuple[str, int]]) -> list[dict[str, Any]]:
    """At most MAX_BARS bars; a longer list keeps MAX_BARS - 1 and sums the rest into one `other` bar."""
    bars: list[dict[str, Any]] = [{"key": key, "other": None, "count": count} for key, count in ranked]
    if len(bars) > MAX_BARS:
        tail = bars[MAX_BARS - 1 :]
        bars = [*bars[: MAX_BARS - 1], {"key": None, "other": len(tail), "count": sum(b["count"] for b in tail)}]
    return bars


def expected_charts(snapshot: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    charts = {"folders": expected_bars([(b["key"], b["count"]) for b in snapshot["by_folder"]["buckets"]])}
    charts["languages"] = expected_bars([(b["key"], b["count"]) for b in snapshot["by_language"]["buckets"]])
    for name, result in snapshot["by_tag"].items():
        charts[f"tag:{name}"] = expected_bars([(b["key"], b["count"]) for b in result["buckets"]])
    if snapshot["links"]["most_linked"]:
        charts["most_linked"] = expected_bars(
            [(page["path"], page["linked_from"]) for page in snapshot["links"]["most_linked"]]
        )
    charts["months"] = sorted(
        ({"key": b["key"], "other": None, "count": b["count"]} for b in snapshot["by_month"]["buckets"]),
        key=lambda b: b["key"],
    )
    return charts


def check_page(browser: Browser, site) -> dict[str, Any]:
    """The assertions every theme shares; returns the DOM's chart data."""
    assert browser.console_errors() == []
    snapshot = json.loads((site.site_dir / "vault-mcp" / "snapshot.json").read_text(encoding="utf-8"))
    found = browser.evaluate(CHART_DATA)
    charts = found["charts"]
    assert {
        name: [{k: bar[k] for k in ("key", "other", "count")} for bar in bars] for name, bars in charts.items()
    } == expected_charts(snapshot)
    for name, bars in charts.items():  # what is drawn is what is counted: size proportional to count
        size = "height" if name == "months" else "width"
        scale = max(bar[size] for bar in bars) / max(bar["count"] for bar in bars)
        for bar in bars:
            assert abs(bar[size] - bar["count"] * scale) <= 1.0, (name, bar)
    [stats] = call_tools(site.index_path, [("stats", {})])
    assert found["totals"]["pages"] == snapshot["total"] == stats["document_count"]
    assert found["totals"]["sections"] == stats["section_count"]
    assert found["totals"]["folders"] == len(snapshot["by_folder"]["buckets"]) == stats["folder_count"]
    assert found["totals"]["languages"] == len(stats["languages"]) == 1
    assert found["totals"]["oldest_modified"] == stats["oldest_modified"]
    assert found["totals"]["newest_modified"] == stats["newest_modified"]
    for name, result in snapshot["by_tag"].items():
        assert found["totals"][f"tag:{name}"] == len(result["buckets"])
    [broken, orphans] = call_tools(site.index_path, [("links", {"show": "broken"}), ("links", {"show": "orphans"})])
    assert found["totals"]["broken_links"] == snapshot["links"]["broken_links"] == broken["total"]
    assert found["totals"]["orphan_pages"] == snapshot["links"]["orphan_pages"] == orphans["total"]
    assert browser.evaluate(OVERLAPS) == []
    assert browser.evaluate("getComputedStyle(document.querySelector('.vm-bars')).display") == "grid"  # CSS loaded
    base = browser.evaluate("location.origin") + "/"
    loaded = browser.evaluate("performance.getEntriesByType('resource').map(entry => entry.name)")
    assert [url for url in loaded if not url.startswith(base)] == []  # nothing from outside the site
    snapshot_href = browser.evaluate("document.querySelector('.vm-source a').href")
    assert snapshot_href == base + "vault-mcp/snapshot.json"
    assert browser.evaluate(f"fetch({json.dumps(snapshot_href)}).then(r => r.json())") == snapshot
    return found


def search_finds(browser: Browser, selector: str, results: str, words: str) -> list[str]:
    """Type into the theme's search box; the titles of the results that appear within 10 s."""
    return browser.evaluate(f"""(async () => {{
      const input = document.querySelector({json.dumps(selector)});
      input.focus();
      for (let tries = 0; tries < 100; tries++) {{
        input.value = {json.dumps(words)};
        input.dispatchEvent(new Event('input', {{bubbles: true}}));
        input.dispatchEvent(new KeyboardEvent('keyup', {{bubbles: true}}));
        await new Promise(r => setTimeout(r, 100));
        const found = [...document.querySelectorAll({json.dumps(results)})].map(el => el.textContent.trim());
        if (found.length) return found;
      }}
      return [];
    }})()""")


@pytest.fixture(scope="module")
def browser():
    chromium = Browser(find_chromium())
    yield chromium
    chromium.close()


def write_big_site(site) -> None:
    """20 top-level folders, 28 tags, changes over 70 months: long tails and many month labels."""
    site.write("index.md", f"---\nupdated: 2019-03-04\ntags: [{json.dumps(NASTY)}]\n---\n# Home\n")
    long_name = "a-folder-name-long-enough-to-need-an-ellipsis-in-a-narrow-column"
    for area in range(20):
        folder = long_name if area == 7 else f"area-{area:02d}" if area != 3 else "R&D"
        for n in range(area % 6 + 1):
            month = (area * 7 + n * 11) % 70
            tags = [f"topic-{(area + n) % 28:02d}", f"topic-{(area * 3) % 28:02d}"] + [NASTY] * (n == 0)
            sub = f"{folder}/part-{n % 2}" if n > 2 else folder
            site.write(
                f"{sub}/page-{n}.md",
                f"---\nupdated: {2019 + (2 + month) // 12}-{(2 + month) % 12 + 1:02d}-15\ntags: {json.dumps(tags)}\n"
                f"---\n# Page {area}.{n}\n\nText of page {n} in {folder}.\n",
            )


def test_the_stats_page_in_the_mkdocs_theme_shows_every_chart_nav_and_search_in_chromium(site, browser):
    write_big_site(site)
    mkdocs_theme(site)
    site.config["plugins"] = ["search", {"vault-mcp": {"modified_meta": "updated"}}]
    site.build()
    with serve_directory(site.site_dir) as base:
        browser.open(base + "stats/")
        found = check_page(browser, site)
        folders = found["charts"]["folders"]
        assert len(folders) == MAX_BARS and folders[-1]["other"] == 22  # of 20 folders, 15 subfolders and the root
        assert folders[-1]["label"] == "other (22 folders)"
        assert len(found["charts"]["tag:tags"]) == MAX_BARS
        assert NASTY in [bar["label"] for bar in found["charts"]["tag:tags"]]
        # The theme's header, navigation and working search.
        assert browser.evaluate("document.querySelector('.navbar .navbar-brand').textContent.trim()") == "Test site"
        assert (
            browser.evaluate("document.querySelectorAll('.navbar-nav .nav-link, .navbar-nav .dropdown-item').length")
            >= 20
        )
        assert browser.evaluate("document.querySelector('.bs-sidebar a[href=\"#changes-by-month\"]') !== null")
        assert "Site statistics" in search_finds(
            browser, "#mkdocs-search-query", "#mkdocs-search-results h3", "statistics"
        )
        browser.screenshot(OUT / "stats-mkdocs.png")

        browser.open(base + "stats/", width=420)  # a phone: fewer month labels, still no overlap
        assert browser.console_errors() == []
        assert browser.evaluate(OVERLAPS) == []
        browser.screenshot(OUT / "stats-mkdocs-narrow.png")


MATERIAL_PALETTE = [
    {
        "media": "(prefers-color-scheme: light)",
        "scheme": "default",
        "primary": "teal",
        "accent": "amber",
        "toggle": {"icon": "material/weather-night", "name": "Switch to dark mode"},
    },
    {
        "media": "(prefers-color-scheme: dark)",
        "scheme": "slate",
        "primary": "teal",
        "accent": "amber",
        "toggle": {"icon": "material/weather-sunny", "name": "Switch to light mode"},
    },
]

COLOURS = """(() => {
  const probe = document.createElement('span');
  probe.style.color = 'var(--md-typeset-a-color)';
  document.querySelector('.vm-stats').append(probe);
  const link = getComputedStyle(probe).color;
  probe.remove();
  return {scheme: document.body.dataset.mdColorScheme, link,
          bar: getComputedStyle(document.querySelector('.vm-bar rect')).fill,
          column: getComputedStyle(document.querySelector('.vm-plot rect')).fill,
          label: getComputedStyle(document.querySelector('.vm-axis-label')).fill,
          background: getComputedStyle(document.body).backgroundColor};
})()"""


def test_the_stats_page_in_material_follows_its_light_and_dark_palettes_in_chromium(site, browser):
    site.write("index.md", "---\nupdated: 2024-05-02\ntags: [intro]\n---\n# Home\n\nWelcome.\n")
    site.write("guide/install.md", "---\nupdated: 2024-06-10\ntags: [setup, intro]\n---\n# Install\n\nPip.\n")
    site.write("guide/use.md", "---\nupdated: 2024-08-20\ntags: [setup]\ncategories: [Howto]\n---\n# Use\n")
    site.write("blog/news.md", "---\nupdated: 2025-01-03\ncategories: [News]\n---\n# News\n")
    site.config.update(
        theme={"name": "material", "font": False, "palette": MATERIAL_PALETTE},
        nav=[{"Home": "index.md"}, {"Guide": ["guide/install.md", "guide/use.md"]}, {"News": "blog/news.md"}],
        plugins=["search", {"vault-mcp": {"modified_meta": "updated", "stats_page_in_nav": True}}],
    )
    site.build()
    colours = {}
    with serve_directory(site.site_dir) as base:
        for scheme, dark in (("light", False), ("dark", True)):
            browser.open(base + "stats/", dark=dark)
            check_page(browser, site)
            colours[scheme] = browser.evaluate(COLOURS)
            assert browser.evaluate("document.querySelector('.md-header__topic').textContent.trim()") == "Test site"
            nav = browser.evaluate(
                "[...document.querySelectorAll('.md-nav--primary > .md-nav__list > li')]"
                ".map(li => li.querySelector('a, label').textContent.trim())"
            )
            assert nav[-1] == "Site statistics"
            assert browser.evaluate(
                "document.querySelector('.md-nav--secondary a[href=\"#changes-by-month\"]') !== null"
            )
            browser.screenshot(OUT / f"stats-material-{scheme}.png")
        assert "Install" in search_finds(browser, ".md-search__input", ".md-search-result__item h1", "pip")
    assert (colours["light"]["scheme"], colours["dark"]["scheme"]) == ("default", "slate")
    for scheme in colours.values():  # bars in the palette's link colour, whatever the scheme
        assert scheme["bar"] == scheme["column"] == scheme["link"]
    for part in ("bar", "label", "background"):
        assert colours["light"][part] != colours["dark"][part], part


def test_example_site_shows_the_page_last_in_its_nav(tmp_path, monkeypatch):
    example = tmp_path / "example-site"
    shutil.copytree(ROOT / "example-site", example, ignore=shutil.ignore_patterns("site", ".cache"))
    monkeypatch.chdir(example)  # its snippets base_path is relative to the working directory
    build_from(example / "mkdocs.yml")
    site_dir = example / "site"
    assert '<div class="vm-stats">' in (site_dir / "stats" / "index.html").read_text(encoding="utf-8")
    home = (site_dir / "index.html").read_text(encoding="utf-8")
    pattern = r'<a href="([^"#][^"]*)" class="md-nav__link[^"]*">\s*<span class="md-ellipsis">\s*([^<]*?)\s*</span>'
    assert re.findall(pattern, home)[-1] == ("stats/", "Site statistics")  # the site's own nav, not the toc
    snapshot = json.loads((site_dir / "vault-mcp" / "snapshot.json").read_text(encoding="utf-8"))
    assert list(snapshot["by_tag"]) == ["tags", "categories"]
    assert not any(b["key"].startswith("drafts") for b in snapshot["by_folder"]["buckets"])
