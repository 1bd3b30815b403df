"""GET /knowledge-bases for a library of hundreds of files, over a real server: `q` (a part
of the name, any case), `sort` (date, name, size, type), `order`, `limit` and `offset`, the
total in X-Total-Count on every page; without parameters the same array as ever, newest
first; bad parameters answer 400; another user's files never count."""

from __future__ import annotations

import pytest

from tests.e2e.rest_harness import assert_error

FILES = [  # name, body, content type; uploaded in this order
    ("Report.pdf.txt", b"a" * 300, "text/plain"),
    ("alpha.md", b"b" * 50, "text/markdown"),
    ("年次報告.txt", b"c" * 1000, "text/plain"),
    ("beta report.csv", b"x,y\n1,2\n", "text/csv"),
]


@pytest.fixture(scope="module")
def lister(rest):
    user = rest.new_user()
    for name, body, kind in FILES:
        response = user.client.post("/upload", files={"file": (name, body, kind)})
        assert response.status_code == 201, response.text
    other = rest.new_user()
    other.client.post("/upload", files={"file": ("report of another.txt", b"z", "text/plain")})
    return user


def listed(lister, **params) -> tuple[list[str], int]:
    response = lister.client.get("/knowledge-bases", params=params)
    assert response.status_code == 200, response.text
    return [f["originalName"] for f in response.json()], int(response.headers["x-total-count"])


def test_without_parameters_the_same_list_newest_first(lister):
    response = lister.client.get("/knowledge-bases")
    body = response.json()
    assert isinstance(body, list) and len(body) == 4
    assert [f["originalName"] for f in body] == [n for n, _, _ in FILES][::-1]
    assert set(body[0]) >= {"id", "name", "originalName", "size", "mimetype", "status", "createdAt"}
    assert response.headers["x-total-count"] == "4"


def test_search_by_name_in_any_case_with_the_total(lister):
    assert listed(lister, q="REPORT", sort="name") == (["beta report.csv", "Report.pdf.txt"], 2)
    assert listed(lister, q="報告") == (["年次報告.txt"], 1)
    assert listed(lister, q="nothing like it") == ([], 0)


def test_sort_order_and_pages(lister):
    by_name = ["alpha.md", "beta report.csv", "Report.pdf.txt", "年次報告.txt"]
    assert listed(lister, sort="name") == (by_name, 4)  # name: A→Z unless order says
    assert listed(lister, sort="name", order="desc")[0] == by_name[::-1]
    assert listed(lister, sort="size")[0][:2] == ["年次報告.txt", "Report.pdf.txt"]  # largest first
    assert listed(lister, sort="date", order="asc")[0] == [n for n, _, _ in FILES]
    assert listed(lister, sort="type")[0][0] == "beta report.csv"  # text/csv first
    assert listed(lister, sort="name", limit=2, offset=2) == (by_name[2:], 4)
    assert listed(lister, sort="name", limit=2, offset=4) == ([], 4)


@pytest.mark.parametrize(
    "params",
    [{"sort": "colour"}, {"order": "sideways"}, {"limit": 0}, {"offset": -1}, {"q": "x" * 201}],
)
def test_bad_parameters_are_400(lister, params):
    assert_error(lister.client.get("/knowledge-bases", params=params), 400)
