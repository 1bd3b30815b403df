"""moto's server as a browser meets S3: `python -m tests.e2e.moto_cors_server PORT`.

Run in its own process with MOTO_DISABLE_GLOBAL_CORS=true (moto reads it when its settings
are imported): without moto's blanket CORS, S3 answers a preflight by the bucket's CORS rules.
moto checks the origin and method but sends a rule's AllowedHeaders back as written, and a
browser takes no pattern there (`x-amz-meta-*` allows no header), while S3 checks each
requested header against the rule's patterns (one `*` each) and answers with the requested
headers it allows (docs.aws.amazon.com/AmazonS3/latest/userguide/cors.html). This does the
same, so a browser test fails exactly when the bucket's rule leaves out a header Bunko signs.
"""

from __future__ import annotations

import fnmatch
import sys

from moto import server
from moto.s3.exceptions import AccessForbidden
from moto.s3.responses import S3Response
from moto.s3.utils import cors_matches_origin

_moto_preflight = S3Response._set_cors_headers_options


def _allowed(header: str, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatchcase(header.lower(), p.lower()) for p in patterns)


def _preflight(self, headers, bucket) -> None:
    _moto_preflight(self, headers, bucket)
    requested = [
        h.strip() for h in (headers.get("Access-Control-Request-Headers") or "").split(",")
    ]
    requested = [h for h in requested if h]
    rules = [
        r for r in bucket.cors if cors_matches_origin(headers.get("Origin"), r.allowed_origins)
    ]
    patterns = [p for r in rules for p in (r.allowed_headers or [])]
    refused = [h for h in requested if not _allowed(h, patterns)]
    if refused:
        raise AccessForbidden(
            f"CORSResponse: this CORS request is not allowed: headers {refused} are not in"
            " the bucket's AllowedHeaders"
        )
    if requested:
        self.response_headers["Access-Control-Allow-Headers"] = ", ".join(requested)
    else:
        self.response_headers.pop("Access-Control-Allow-Headers", None)


if __name__ == "__main__":
    S3Response._set_cors_headers_options = _preflight
    server.main(["-H", "127.0.0.1", "-p", sys.argv[1]])
