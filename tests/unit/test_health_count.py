"""GET /health is public: its document count is read at most every COUNT_MAX_AGE seconds per
process (on AWS a DynamoDB query), however often it is called."""

from __future__ import annotations

from bunko.http.routes.health import RecentValue


def test_the_count_is_read_again_only_once_it_is_older_than_its_age():
    now = [1000.0]
    reads = []

    def count() -> int:
        reads.append(now[0])
        return len(reads)

    class Services:  # weakly referable, as the app's services are
        pass

    recent, services = RecentValue(max_age=30, clock=lambda: now[0]), Services()
    assert [recent.get(services, count) for _ in range(50)] == [1] * 50
    now[0] += 29
    assert recent.get(services, count) == 1
    now[0] += 2
    assert recent.get(services, count) == 2
    assert len(reads) == 2
    # another app in the process (another set of services) counts its own documents
    other = Services()
    assert recent.get(other, count) == 3


def test_a_new_key_at_a_dead_keys_address_reads_its_own_count():
    class Services:
        pass

    recent = RecentValue(max_age=30, clock=lambda: 0.0)
    first = Services()
    assert recent.get(first, lambda: 7) == 7
    del first
    second = Services()
    # CPython often reuses the address (id-only caching would answer 7 here)
    assert recent.get(second, lambda: 0) == 0
