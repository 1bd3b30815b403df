"""What every wing checks the same way: names a person may type, request sizes, rate buckets."""

from bunko.services.bounds.bill import Bill
from bunko.services.bounds.request_limits import (
    HISTORY_TURNS,
    MESSAGE_CHARS,
    QUERY_CHARS,
    RESULTS,
    SEARCHED_CHARS,
    TURN_CHARS,
    check_history,
)
from bunko.services.bounds.text_safety import check_name
from bunko.services.bounds.token_bucket import TokenBucket

__all__ = [
    "HISTORY_TURNS",
    "MESSAGE_CHARS",
    "QUERY_CHARS",
    "RESULTS",
    "SEARCHED_CHARS",
    "TURN_CHARS",
    "Bill",
    "TokenBucket",
    "check_history",
    "check_name",
]
