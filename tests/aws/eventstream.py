"""AWS event-stream messages encoded as the wire format botocore parses
(application/vnd.amazon.eventstream: prelude, headers, payload, CRC32s)."""

from __future__ import annotations

import binascii
import json
import struct

STRING = 7  # the header value type for a UTF-8 string


def _header(name: str, value: str) -> bytes:
    key, text = name.encode(), value.encode()
    return struct.pack("!B", len(key)) + key + struct.pack("!BH", STRING, len(text)) + text


def message(headers: dict[str, str], payload: dict) -> bytes:
    encoded = b"".join(_header(k, v) for k, v in headers.items())
    body = json.dumps(payload).encode()
    prelude = struct.pack("!II", 12 + len(encoded) + len(body) + 4, len(encoded))
    prelude += struct.pack("!I", binascii.crc32(prelude))
    whole = prelude + encoded + body
    return whole + struct.pack("!I", binascii.crc32(whole))


def event(event_type: str, payload: dict) -> bytes:
    return message(
        {
            ":event-type": event_type,
            ":content-type": "application/json",
            ":message-type": "event",
        },
        payload,
    )


def exception(exception_type: str, text: str) -> bytes:
    return message(
        {
            ":exception-type": exception_type,
            ":content-type": "application/json",
            ":message-type": "exception",
        },
        {"message": text},
    )


def converse_stream(*texts: str) -> bytes:
    """A ConverseStream answer streaming `texts` as content deltas."""
    return b"".join(
        [
            event("messageStart", {"role": "assistant"}),
            *(
                event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": t}})
                for t in texts
            ),
            event("contentBlockStop", {"contentBlockIndex": 0}),
            event("messageStop", {"stopReason": "end_turn"}),
        ]
    )
