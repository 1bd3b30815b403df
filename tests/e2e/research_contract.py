"""The sosoapi `research_corpora_get` contract (shared/seeds/sosoapi-research-corpora-get-
mcp-tool.txt), its JSON Schemas copied by hand from the page, independently of the package's
copy, so a drift in either is caught; and a validator with format checking on."""

from __future__ import annotations

import json
from typing import Any

from jsonschema import Draft7Validator, FormatChecker

# The page's "Teljes JSON Schema" blocks, verbatim.
SEED_INPUT: dict[str, Any] = json.loads(r"""
{
  "type": "object",
  "properties": {
    "workspace_id": {
      "type": "string",
      "format": "uuid"
    },
    "id": {
      "type": "string",
      "format": "uuid"
    },
    "revision": {
      "type": "integer",
      "exclusiveMinimum": 0,
      "maximum": 9007199254740991
    }
  },
  "required": [
    "workspace_id",
    "id"
  ],
  "additionalProperties": false
}
""")

SEED_OUTPUT: dict[str, Any] = json.loads(r"""
{
  "type": "object",
  "properties": {
    "snapshot": {
      "type": "object",
      "properties": {
        "id": {
          "type": "string",
          "format": "uuid"
        },
        "workspace_id": {
          "type": "string",
          "format": "uuid"
        },
        "project_id": {
          "type": "string",
          "format": "uuid"
        },
        "project_revision": {
          "type": "integer",
          "exclusiveMinimum": 0,
          "maximum": 9007199254740991
        },
        "evidence": {
          "maxItems": 500,
          "type": "array",
          "items": {
            "type": "object",
            "properties": {
              "evidence_id": {
                "type": "string",
                "format": "uuid"
              },
              "revision": {
                "type": "integer",
                "exclusiveMinimum": 0,
                "maximum": 9007199254740991
              }
            },
            "required": [
              "evidence_id",
              "revision"
            ],
            "additionalProperties": false
          }
        },
        "sealed_at": {
          "type": "string",
          "pattern": "^(?:(?:\\d\\d[2468][048]|\\d\\d[13579][26]|\\d\\d0[48]|[02468][048]00|[13579][26]00)-02-29|\\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|(?:02)-(?:0[1-9]|1\\d|2[0-8])))T(?:(?:[01]\\d|2[0-3]):[0-5]\\d(?::[0-5]\\d(?:\\.\\d+)?)?(?:Z|([+-](?:[01]\\d|2[0-3]):[0-5]\\d)))$",
          "format": "date-time"
        },
        "coverage": {
          "type": "string",
          "enum": [
            "supplied_set",
            "bounded_sample",
            "partial"
          ]
        },
        "missing_sources": {
          "maxItems": 20,
          "type": "array",
          "items": {
            "type": "string",
            "minLength": 1,
            "maxLength": 100
          }
        },
        "method_version": {
          "type": "string",
          "const": "research-corpus/v1"
        }
      },
      "required": [
        "id",
        "workspace_id",
        "project_id",
        "project_revision",
        "evidence",
        "sealed_at",
        "coverage",
        "missing_sources",
        "method_version"
      ],
      "additionalProperties": false
    }
  },
  "required": [
    "snapshot"
  ],
  "$schema": "http://json-schema.org/draft-07/schema#",
  "additionalProperties": false
}
""")

# Profiles: full; transports: stdio, http; and the page's annotations.
SEED_ANNOTATIONS = {
    "readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": True,
}  # fmt: skip


def validate_snapshot(structured: Any) -> None:
    """Raise unless `structured` satisfies the page's output schema, formats included
    (uuid, date-time) as well as the sealed_at pattern."""
    validator = Draft7Validator(SEED_OUTPUT, format_checker=FormatChecker())
    errors = sorted(validator.iter_errors(structured), key=str)
    assert not errors, [e.message for e in errors]


# Bunko's research tools, their hints (readOnly, destructive, idempotent, openWorld), and the
# ones the core profile lists (read tools only; research_corpora_get is `full` as the page says).
RESEARCH_HINTS = {
    "research_projects_create": (False, False, False, False),
    "research_projects_list": (True, False, True, False),
    "research_projects_delete": (False, True, True, False),
    "research_evidence_add": (False, False, True, False),
    "research_evidence_remove": (False, True, True, False),
    "research_corpora_seal": (False, False, True, False),
    "research_corpora_get": (True, False, True, True),
    "research_corpora_list": (True, False, True, False),
    "research_corpora_search": (True, False, True, True),
}
RESEARCH_TOOLS = frozenset(RESEARCH_HINTS)
RESEARCH_CORE_TOOLS = frozenset(
    {"research_projects_list", "research_corpora_list", "research_corpora_search"}
)
