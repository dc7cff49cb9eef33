"""Incremental indexing: a build writes only the pages that changed since the working index last held them, and
removes the pages it no longer has.

- Fingerprints. A page's fingerprint (fingerprints.page_fingerprint) covers everything its document is made of: the
  HTML, title, URL, front matter, modification time, its file (by size and modification time: the file is read
  only for a page written again), language, what it is a fallback of and its git history. A page whose
  fingerprint the index holds is not written again. What changes with every run though no source did is left out
  of it (fingerprints.stable_html): the addresses in Python object reprs that API reference generators print
  (`<Sentinel object at 0x7f…>`), and the trails of mkdocstrings-python's backlinks, of which only the pages they
  lead to count (a new reference from a page that already had one shows once this page changes otherwise).
- Late content. Some plugins complete a page after on_page_content (material/tags fills its tag listings in
  on_env), so what a reader sees is known only when the build commits. Such a page is indexed again then, and its
  fingerprint is `rendered/late`: the fingerprint of the page as on_page_content saw it and that of its final
  content. The next build recognises the page as unchanged from the first half and checks the second at commit.
- Removals. A page the build did not render is gone, unless `mkdocs build --dirty` kept it in the site without
  rendering it. With mkdocs-static-i18n each language's build removes only pages of its own language, and the
  last one of the run removes the pages of languages the site no longer builds.
- Damage. The index layer recovers from a damaged working index (IndexWriter.commit_beside); `last_writes` puts
  every page whose fingerprint the index does not hold, so after the writer started an empty index it writes
  every page of this build again, with no path of its own for that.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from mkdocs.structure.pages import Page

from ..index.write.working_index import CommitSettings
from ..index.write.writer import CommitWaiter, IndexWriter, stored_documents, worth_a_process
from ..page.fingerprints import fingerprint, page_fingerprint, stable_html
from ..page.model import IndexedFields, RenderedPage
from .file_statuses import FileStatuses
from .mkdocs_pages import source_version, with_source

# The one way the plugin hands pages to this module: a page MkDocs rendered, as its model without HTML, fingerprint
# and Markdown source (mkdocs_pages.rendered_page, with the build's options and git history).
PageModel = Callable[[Page], RenderedPage]

AUTOREF = "<autoref "  # an element mkdocs-autorefs replaces in every page's content at on_env
# A site with a page file larger than this is indexed on a thread: handed to the writer's process, the page's HTML
# and Markdown would be copied through the pipe into both processes, several times the page's size at once.
HUGE_PAGE_BYTES = 8_000_000


@dataclass
class TrackedPage:
    """One page as on_page_content saw it, kept until the commit checks whether a plugin changed it since."""

    page: Page
    html: str
    digest: str
    unchanged: bool  # its document in the index is kept as it was

    def final(self) -> tuple[str, str]:
        """The content a reader sees and its fingerprint, once every plugin is done with the page."""
        content = self.page.content
        if isinstance(content, str) and content is not self.html and content != self.html:
            return content, f"{self.digest}/{fingerprint(stable_html(content))}"
        return self.html, self.digest


class IncrementalBuild:
    """One build's indexing into its working index, in the writer's one transaction."""

    def __init__(
        self,
        path: Path,
        options_json: str,
        model_of: PageModel,
        *,
        indexed_fields: IndexedFields,
        pages: int,
        live_readers: bool,
        file_statuses: FileStatuses | None = None,
        largest_page: Callable[[], int] = lambda: 0,
    ) -> None:
        """`model_of`: a page's model; `indexed_fields`: the plugin option; `pages`: how many pages the build
        renders; `live_readers`: IndexWriter's; `file_statuses`: the pages' files' sizes and times, read beside a
        serve build; `largest_page`: the size of the largest page file (asked only when a process is in question).

        A process of its own writes the index when at least PAGES_FOR_A_PROCESS of the pages are not in it yet (a
        first build, new options) and a second CPU can run it: a rebuild that finds its pages indexed would only
        wait for the process to start; nor when a page is over HUGE_PAGE_BYTES."""
        # Asked again at the commit for a page whose content a plugin changed late, rather than kept for every
        # page: the build's own memory grows with the site by a path and a fingerprint a page.
        self.model_of = model_of
        self.indexed_fields = indexed_fields
        self.file_statuses = file_statuses
        # The working index is asked how many pages it holds only when the site alone would be worth a process.
        in_process = (
            worth_a_process(pages)
            and worth_a_process(pages - stored_documents(path, options_json))
            and largest_page() <= HUGE_PAGE_BYTES
        )
        self.writer = IndexWriter(path, options_json, in_process=in_process, live_readers=live_readers)
        self.rendered: dict[str, TrackedPage] = {}  # path -> what on_page_content saw
        self.removed = 0

    @property
    def unchanged(self) -> int:
        return sum(seen.unchanged for seen in self.rendered.values())

    @property
    def changed(self) -> int:
        return len(self.rendered) - self.unchanged

    def page_rendered(self, page: Page, html: str) -> None:
        """Write the page's document unless the index holds it as it is."""
        model = self.model_of(page)
        path = model.path
        stored = self.writer.fingerprints.get(path, "")
        digest = page_fingerprint(
            html,
            model.title,
            model.url,
            model.meta,
            model.modified,
            model.modified_source,
            source_version(page, self.file_statuses),
            model.language,
            model.fallback_of,
            model.history,
            known=stored,
        )
        unchanged = stored == digest or stored.startswith(digest + "/")  # the rest is checked at commit
        self.rendered[path] = TrackedPage(page, html, digest, unchanged)
        # mkdocs-autorefs (mkdocstrings' cross-references) turns its <autoref> elements into links at on_env: such
        # a page would be written twice, now and at commit (on MkDocs' docs, the longest pages). Not writing it now
        # leaves its fingerprint unknown to the writer, so the commit writes it.
        if not unchanged and AUTOREF not in html:
            self.writer.put(with_source(page, model, html, digest), self.indexed_fields)

    def commit(
        self,
        settings: CommitSettings,
        *,
        kept_unrendered: Iterable[str] = (),
        language: str | None = None,
        site_languages: set[str] | None = None,
    ) -> CommitWaiter:
        """Write the late content, remove the pages gone, commit with `settings`; return the function that waits for the commit and returns its build summary (IndexWriter.commit_beside).

        `kept_unrendered`: the paths of pages `--dirty` left in the site without rendering them. `language`: on a
        multilingual site, the language this build indexes (the others' pages stay); `site_languages`: every
        language the site builds, given by the last build of the run.
        """
        kept = list(kept_unrendered)

        def last_writes() -> None:
            self._write_final_content()
            self._remove_gone(kept, language, site_languages)

        return self.writer.commit_beside(last_writes, settings)

    def _write_final_content(self) -> None:
        for path, seen in self.rendered.items():
            content, digest = seen.final()
            if self.writer.fingerprints.get(path) != digest:
                seen.unchanged = False
                model = with_source(seen.page, self.model_of(seen.page), content, digest)
                self.writer.put(model, self.indexed_fields)

    def _remove_gone(self, kept: list[str], language: str | None, site_languages: set[str] | None) -> None:
        keep = set(self.rendered) | {path for path in kept if path in self.writer.fingerprints}
        if language is None:
            self.removed = self.writer.keep_only(keep)
            return
        # The other languages' pages were indexed by their own builds (or will be, later in this run).
        self.removed = self.writer.keep_only(keep, {language})
        if site_languages is not None:
            self.removed += self.writer.keep_languages(site_languages)

    def close(self) -> None:
        self.writer.close()
