"""A small company library, written for the tests of issue 45 (points 4 and 5): a handbook
in Markdown with a boilerplate line, an incident runbook whose rules are Markdown list
items, offices as JSON, travel rules as CSV, and a Japanese handbook."""

from __future__ import annotations

import json

import httpx

from tests.e2e.rest_harness import wait_until_done

HANDBOOK = """# Employee handbook

## Onboarding

Onboarding starts on the first Monday of the month. On Friday your buddy shows you around \
the office.
New hires and their team work together on a starter project in the first week.

## Sick days

You have ten paid sick days a year. Tell your manager before 10:00 on the day.

This section was last reviewed on 2026-01-15.
"""

RUNBOOK = """# Incident runbook

This section was last reviewed by the SRE team on 2026-03-01.

## Severity levels

- **SEV3**: A minor bug with a workaround. Open a ticket; no page is needed, even if a SEV1 \
responder is online.
- **SEV2**: A degraded service for some customers. Notify the on-call engineer in the \
`#incidents` channel.
- **SEV1**: A full outage for all customers. Page the incident commander at once and open a \
bridge call within 15 minutes.

## After an incident

Write a postmortem within five working days.
"""

OFFICES = {
    "office_locations": [
        {"city": "Tokyo", "desks": 80, "pets_allowed": False},
        {"city": "Osaka", "desks": 24, "manager": "Ken Sato"},
    ]
}

TRAVEL = "Destination,Per diem (USD),Approval\nDomestic,60,Manager\nInternational,120,Director\n"

HANDBOOK_JA = """# 就業規則

## 有給休暇

有給休暇は入社6か月後に10日付与されます。申請は前日までに上長へ提出してください。

最終更新日：2026年2月1日
"""

FILES: dict[str, tuple[bytes, str]] = {
    "handbook.md": (HANDBOOK.encode(), "text/markdown"),
    "runbook.md": (RUNBOOK.encode(), "text/markdown"),
    "offices.json": (json.dumps(OFFICES, indent=2).encode(), "application/json"),
    "travel.csv": (TRAVEL.encode(), "text/csv"),
    "就業規則.md": (HANDBOOK_JA.encode(), "text/markdown"),
}


def upload_company_files(client: httpx.Client) -> None:
    for name, (data, mime) in FILES.items():
        response = client.post("/upload", files={"file": (name, data, mime)})
        assert response.status_code == 201, response.text
        assert wait_until_done(client, response.json()["id"])["status"] == "completed"
