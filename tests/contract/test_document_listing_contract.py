"""Every MetadataStore lists a library page alike (find_documents): a case-insensitive name
filter over name and path, sorting by date, name, size and type both ways, offset paging,
and the total of matches, on SQLite and on DynamoDB (moto)."""

from __future__ import annotations

from datetime import timedelta

from bunko.domain import utcnow
from bunko.domain.document_query import DocumentQuery
from tests.contract.documents import OTHER_WS, WS, make_doc

# name, size, mime; added a second apart in this order
FILES = [
    ("Report.pdf", 300, "application/pdf"),
    ("notes/alpha.md", 50, "text/markdown"),
    ("年次報告.txt", 1000, "text/plain"),
    ("beta report.docx", 20, "application/vnd.openxmlformats-officedocument"),
    ("Zeta.txt", 700, "text/plain"),
]


def add_files(store) -> None:
    base = utcnow()
    for i, (path, size, mime) in enumerate(FILES):
        doc = make_doc(path, size=size)
        doc.mime = mime
        doc.created_at = base + timedelta(seconds=i)
        store.add_document(doc)
    store.add_document(make_doc("report-of-another.txt", workspace_id=OTHER_WS))


def names(store, query: DocumentQuery, *, limit: int = 50, offset: int = 0) -> list[str]:
    return [d.path for d in store.find_documents(WS, query, limit=limit, offset=offset).documents]


def test_default_is_newest_first_with_the_total(metadata_store):
    add_files(metadata_store)
    page = metadata_store.find_documents(WS, DocumentQuery(), limit=2)
    assert [d.path for d in page.documents] == ["Zeta.txt", "beta report.docx"]
    assert page.total == 5
    assert names(metadata_store, DocumentQuery(), limit=2, offset=4) == ["Report.pdf"]
    oldest = names(metadata_store, DocumentQuery(descending=False), limit=2)
    assert oldest == ["Report.pdf", "notes/alpha.md"]
    past = metadata_store.find_documents(WS, DocumentQuery(), limit=5, offset=9)
    assert past.documents == [] and past.total == 5


def test_sorts_by_name_size_and_type(metadata_store):
    add_files(metadata_store)
    by_name = names(metadata_store, DocumentQuery(sort="name", descending=False))
    # case-insensitive: alpha, beta, Report, Zeta, then the Japanese name
    assert by_name == [
        "notes/alpha.md",
        "beta report.docx",
        "Report.pdf",
        "Zeta.txt",
        "年次報告.txt",
    ]
    assert names(metadata_store, DocumentQuery(sort="name")) == by_name[::-1]
    by_size = names(metadata_store, DocumentQuery(sort="size"))
    assert by_size == [
        "年次報告.txt",
        "Zeta.txt",
        "Report.pdf",
        "notes/alpha.md",
        "beta report.docx",
    ]
    by_type = names(metadata_store, DocumentQuery(sort="type", descending=False))
    assert by_type == [
        "Report.pdf", "beta report.docx", "notes/alpha.md", "Zeta.txt", "年次報告.txt",
    ]  # fmt: skip
    second = names(metadata_store, DocumentQuery(sort="name", descending=False), limit=2, offset=2)
    assert second == ["Report.pdf", "Zeta.txt"]


def test_filters_by_name_in_any_case_and_counts_the_matches(metadata_store):
    add_files(metadata_store)
    found = metadata_store.find_documents(WS, DocumentQuery(name="REPORT", sort="name",
                                                            descending=False), limit=1)  # fmt: skip
    assert [d.path for d in found.documents] == ["beta report.docx"]
    assert found.total == 2  # never another workspace's "report-of-another.txt"
    assert names(metadata_store, DocumentQuery(name="報告")) == ["年次報告.txt"]
    assert names(metadata_store, DocumentQuery(name="notes/")) == ["notes/alpha.md"]
    none = metadata_store.find_documents(WS, DocumentQuery(name="nothing like it"), limit=5)
    assert none.documents == [] and none.total == 0
    # a filtered page holds whole documents, every field
    doc = metadata_store.find_documents(WS, DocumentQuery(name="zeta"), limit=5).documents[0]
    assert doc == metadata_store.get_document(WS, doc.id)


def test_an_empty_filter_is_no_filter(metadata_store):
    add_files(metadata_store)
    assert metadata_store.find_documents(WS, DocumentQuery(name="  "), limit=50).total == 5


def test_a_name_filter_pages_with_its_total_and_follows_renames_and_deletes(metadata_store):
    """The filter matches the stored name and path as they are now: a renamed or moved file
    is found by its new name only, a deleted one no more, in every order and on every page."""
    store = metadata_store
    add_files(store)
    base = utcnow()
    for i in range(7):  # seven more reports, a second apart after the five files
        doc = make_doc(f"reports/週報-{i}.md", size=10 * i)
        doc.created_at = base + timedelta(seconds=10 + i)
        store.add_document(doc)
    query = DocumentQuery(name="週報")
    pages = [store.find_documents(WS, query, limit=3, offset=o) for o in (0, 3, 6, 9)]
    assert [p.total for p in pages] == [7, 7, 7, 7]
    assert [d.path for p in pages for d in p.documents] == [
        f"reports/週報-{i}.md" for i in range(6, -1, -1)
    ]
    assert names(store, DocumentQuery(name="REPORTS/", sort="size", descending=False),
                 limit=2, offset=1) == ["reports/週報-1.md", "reports/週報-2.md"]  # fmt: skip

    zeta = store.find_documents(WS, DocumentQuery(name="zeta"), limit=5).documents[0]
    zeta.path, zeta.name = "archive/Omega.txt", "Omega.txt"
    store.save_document(zeta)
    assert store.find_documents(WS, DocumentQuery(name="zeta"), limit=5).total == 0
    assert names(store, DocumentQuery(name="OMEGA")) == ["archive/Omega.txt"]
    assert names(store, DocumentQuery(name="archive/")) == ["archive/Omega.txt"]
    renamed = store.find_documents(WS, DocumentQuery(name="年次"), limit=5).documents[0]
    renamed.name = "Annual.txt"  # a name apart from its path: both are matched
    store.save_document(renamed)
    assert names(store, DocumentQuery(name="annual")) == ["年次報告.txt"]
    assert names(store, DocumentQuery(name="年次")) == ["年次報告.txt"]
    grown = store.find_documents(WS, DocumentQuery(name="週報-0"), limit=5).documents[0]
    grown.size, grown.mime = 5000, "text/x-grown"  # a new revision of another size and type
    store.save_document(grown)
    assert names(store, DocumentQuery(name="週報", sort="size"), limit=1) == ["reports/週報-0.md"]
    assert names(store, DocumentQuery(name="週報-0", sort="type")) == ["reports/週報-0.md"]
    assert store.find_documents(WS, DocumentQuery(name="週報-0"), limit=1).documents == [
        store.get_document(WS, grown.id)
    ]

    for doc in store.find_documents(WS, DocumentQuery(name="週報-"), limit=3).documents:
        assert store.delete_document(WS, doc.id)
    left = store.find_documents(WS, DocumentQuery(name="週報"), limit=10)
    assert left.total == 4
    assert [d.path for d in left.documents] == [f"reports/週報-{i}.md" for i in range(3, -1, -1)]
    everything = store.find_documents(WS, DocumentQuery(sort="name"), limit=50)
    assert everything.total == 9 == store.count_documents(WS)
    other = store.find_documents(OTHER_WS, DocumentQuery(name="REPORT"), limit=5)
    assert [d.path for d in other.documents] == ["report-of-another.txt"] and other.total == 1
