"""domain/metadata/: values in canonical form, number terms that sort as the numbers do,
date text that sorts as time does, and range bounds that include and exclude exactly."""

from __future__ import annotations

import random

import pytest

from bunko.domain.metadata import (
    check_metadata,
    matches,
    number_term,
    parse_filter,
    shown,
    summarise,
    terms_of,
)
from bunko.errors import ValidationError


def test_number_terms_sort_as_the_numbers_do():
    rng = random.Random(7)
    numbers = [0.0, -0.0, 1.0, -1.0, 1e-300, -1e-300, 1e300, -1e300, 2.5, -2.5, 2**53, 0.1]
    numbers += [rng.uniform(-1e6, 1e6) for _ in range(500)]
    by_term = sorted(numbers, key=lambda n: number_term("k", n))
    assert by_term == sorted(numbers)
    assert number_term("k", -0.0) == number_term("k", 0.0)


def test_values_are_kept_in_canonical_form():
    kept = check_metadata(
        {
            "year": 2024,
            "ratio": 0.5,
            "day": "2024-05-01",
            "at": "2024-05-01T09:30:00+09:00",
            "naive": "2024-05-01T09:30:00",
            "tags": ["b", "a", "b", " c "],
            "部署": " 法務 ",
            "not-a-date": "2024-13-45",
        }
    )
    assert kept == {
        "year": 2024.0,
        "ratio": 0.5,
        "day": "2024-05-01",
        "at": "2024-05-01T00:30:00Z",
        "naive": "2024-05-01T09:30:00Z",
        "tags": ["b", "a", "c"],
        "部署": "法務",
        "not-a-date": "2024-13-45",
    }
    assert shown(kept)["year"] == 2024 and isinstance(shown(kept)["year"], int)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"gt": 10}, [11, 20]),
        ({"gte": 10}, [10, 11, 20]),
        ({"lt": 10}, [-5, 9.5]),
        ({"lte": 10}, [-5, 9.5, 10]),
        ({"gt": 9.5, "lt": 20}, [10, 11]),
    ],
)
def test_range_bounds_include_and_exclude_exactly(raw, expected):
    values = [-5, 9.5, 10, 11, 20]
    flt = parse_filter({"range": {"key": "n", **raw}})
    assert [v for v in values if matches(flt, terms_of({"n": float(v)}))] == expected
    assert not matches(flt, terms_of({"n": "10"}))  # text is not a number


def test_date_ranges_compare_times_across_zones():
    flt = parse_filter({"range": {"key": "at", "gte": "2024-05-01T00:00:00+09:00"}})
    assert matches(flt, terms_of(check_metadata({"at": "2024-04-30T15:00:00Z"})))
    assert not matches(flt, terms_of(check_metadata({"at": "2024-04-30T14:59:59Z"})))


def test_a_date_without_a_time_stands_for_its_whole_day():
    def passes(bounds: dict, value: str) -> bool:
        flt = parse_filter({"range": {"key": "at", **bounds}})
        return matches(flt, terms_of(check_metadata({"at": value})))

    assert passes({"lte": "2024-05-31"}, "2024-05-31T23:59:59Z")
    assert passes({"lte": "2024-05-31"}, "2024-05-31")
    assert not passes({"lte": "2024-05-31"}, "2024-06-01")
    assert not passes({"gt": "2024-05-31"}, "2024-05-31T10:00:00Z")
    assert passes({"gt": "2024-05-31"}, "2024-06-01T00:00:00Z")
    assert passes({"gte": "2024-05-01", "lt": "2024-06-01"}, "2024-05-31T10:00:00Z")
    assert not passes({"lt": "2024-06-01"}, "2024-06-01T00:00:00Z")
    assert not passes({"lte": "2024-05-31T00:00:00Z"}, "2024-05-31T10:00:00Z")  # a time: exact


def test_a_string_bound_does_not_reach_into_the_next_key():
    flt = parse_filter({"range": {"key": "a", "gte": "m"}})
    assert matches(flt, terms_of({"a": "z"}))
    assert not matches(flt, terms_of({"ab": "z"}))  # key "ab" shares a's first letter
    assert not matches(flt, terms_of({"a": "b"}))


def test_summary_of_keys():
    keys = summarise([{"t": "x", "n": 1.0}, {"t": ["x", "y"]}, {"d": "2024-01-01"}])
    assert keys == [
        {"key": "d", "types": ["date"], "values": ["2024-01-01"]},
        {"key": "n", "types": ["number"], "values": []},
        {"key": "t", "types": ["list", "string"], "values": ["x", "y"]},
    ]


@pytest.mark.parametrize(
    "raw",
    [
        {"a": float("inf")},
        {"a": "x\x00y"},
        {"a\x1fb": "x"},
        {"": "x"},
        {"-a": "x"},
        {"a": []},
        {"a": ["x"] * 33},
        {"a": "   "},
        {f"k{i}": [f"{j}" + "語" * 250 for j in range(4)] for i in range(8)},  # 24 KB as UTF-8
    ],
)
def test_values_and_keys_that_are_refused(raw):
    with pytest.raises(ValidationError):
        check_metadata(raw)
