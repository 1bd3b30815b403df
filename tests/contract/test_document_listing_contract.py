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
