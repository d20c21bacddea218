"""The built-in sample for `fused-memory demo`: ~50 memories of one user's working life, with
people, projects, preferences, dated events and an identifier, plus a few explicit relations, and
queries of each kind the ensemble is built for. Dates are relative to a fixed "today" so the
demo's temporal answers never drift."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from .types import Memory, MemoryType

__all__ = ["DEMO_NOW", "DEMO_NAMESPACE", "demo_memories", "DEMO_RELATIONS", "DEMO_QUERIES"]

DEMO_NOW = datetime(2026, 3, 20, 17, 0, tzinfo=timezone.utc)  # a Friday
DEMO_NAMESPACE = "demo"

F, P, E, N = MemoryType.FACT, MemoryType.PREFERENCE, MemoryType.EVENT, MemoryType.ENTITY

# (text, type or None to let ingest classify, days before DEMO_NOW for events, predicate)
_ROWS: list[tuple[str, MemoryType | None, float | None, str | None]] = [
    ("My employee badge ID is E-47821.", F, None, "badge ID is E-47821"),
    ("The VPN token for the staging cluster rotates every 30 days.", F, None, None),
    ("Ticket JIRA-9921 tracks the flaky checkout test in the payments service.", F, None,
     "JIRA-9921 is the flaky checkout test"),
    ("The payments service runs version v2.3.1 in production.", F, None, "payments service version is v2.3.1"),
    ("Sarah Chen leads the platform team in the Berlin office.", F, None, None),
    ("Tom Becker is a backend engineer on the platform team.", N, None, None),
    ("Priya Nair is the product manager for Project Kestrel.", N, None, None),
    ("Project Kestrel is the rewrite of the billing system in Rust.", N, None, None),
    ("The Berlin office is at Torstrasse 49, on the fourth floor.", F, None, None),
    ("Kestrel's request timeout is configured to 45 seconds in production.", F, None, "Kestrel timeout is 45 seconds"),
    ("The London office moved to Kings Cross in 2025.", F, None, None),
    ("Our on-call rotation changes every Monday at 10:00.", F, None, None),
    ("My manager is Sarah Chen.", F, None, None),
    ("Marco Rossi runs the data platform and owns the analytics warehouse.", N, None, None),
    ("The analytics warehouse is on Snowflake, region eu-central-1.", F, None, None),
    ("I prefer dark mode in every editor and terminal.", P, None, None),
    ("I like my coffee black, no sugar.", P, None, None),
    ("I want meeting notes sent as bullet points, never as long prose.", P, None, None),
    ("My default code review setting is to request changes only for correctness issues.", P, None, None),
    ("I prefer async standups over video calls.", P, None, None),
    ("For Kestrel I prefer a 30 second timeout during load tests.", P, None, None),
    ("I hate being scheduled for meetings before 9 am.", P, None, None),
    ("My preferred language for tooling scripts is Python.", P, None, None),
    ("I want to be notified on Slack, not by email, when a deploy fails.", P, None, None),
    ("Met with Sarah Chen to discuss the Berlin office expansion plans.", E, 4, None),
    ("Told Sarah that the Berlin office needs two more desks for the Kestrel team.", E, 5, None),
    ("Deployed Kestrel v0.9 to staging; the migration took 12 minutes.", E, 1, None),
    ("Went to the dentist for a check-up.", E, 3, None),
    ("Had lunch with Tom Becker at the Vietnamese place near the office.", E, 2, None),
    ("Priya presented the Kestrel roadmap to leadership.", E, 9, None),
    ("Fixed JIRA-9921 by pinning the test clock.", E, 12, None),
    ("Flew to London for the quarterly planning offsite.", E, 40, None),
    ("Marco migrated the analytics warehouse to the new cluster.", E, 65, None),
    ("Signed the lease extension for the Berlin office.", E, 110, None),
    ("Celebrated Tom's promotion to senior engineer.", E, 150, None),
    ("Interviewed a candidate for the platform team with Sarah.", E, 11, None),
    ("Reviewed the Kestrel load test results with Priya: p99 was 180 ms.", E, 6, None),
    ("Ran the fire drill at the Berlin office.", E, 33, None),
    ("Paid the conference registration for RustConf.", E, 75, None),
    ("Sarah approved my vacation for the first week of May.", E, 8, None),
    ("Tom reported a memory leak in the payments service.", E, 15, None),
    ("I started learning Go in the evenings.", E, 20, None),
    ("Cancelled the weekly sync with Marco because of the offsite.", E, 41, None),
    ("The team agreed to freeze Kestrel features until the billing migration is done.", E, 7, None),
    ("Gave a talk on score-weighted rank fusion at the Berlin tech meetup.", E, 26, None),
    ("Alice from security asked for the badge audit by Friday.", E, 10, None),
    ("Lena Fischer joined the platform team as a site reliability engineer.", E, 18, None),
    ("The staging database password is rotated by the security team.", F, None, None),
    ("Kestrel uses PostgreSQL 16 with logical replication to the warehouse.", F, None, None),
    ("My favourite restaurant in Berlin is Cocolo Ramen.", P, None, None),
]


def demo_memories(namespace: str = DEMO_NAMESPACE) -> list[Memory]:
    out = []
    for i, (text, mtype, days, predicate) in enumerate(_ROWS):
        when = DEMO_NOW - timedelta(days=days, hours=i % 7) if days is not None else None
        out.append(Memory(text=text, namespace=namespace, type=mtype, id=f"demo-{i:02d}", predicate=predicate,
                          event_at=when, session_id="demo-session"))
    return out


#: (src, rel, dst, kind, confidence)
DEMO_RELATIONS: list[tuple[str, str, str, str, float]] = [
    ("Tom Becker", "reports_to", "Sarah Chen", "structural", 0.95),
    ("Lena Fischer", "reports_to", "Sarah Chen", "structural", 0.9),
    ("Priya Nair", "works_on", "Project Kestrel", "structural", 0.9),
    ("Tom Becker", "works_on", "Project Kestrel", "structural", 0.8),
    ("Sarah Chen", "works_in", "Berlin", "structural", 0.9),
]

DEMO_QUERIES: list[str] = [
    "what's my badge ID?",
    "what did I tell Sarah about the Berlin office last week?",
    "who reports to Sarah?",
    "what's my setting for the Kestrel project timeout?",
    "what did I do yesterday?",
    "how do I like my meeting notes?",
    "when did we fix JIRA-9921?",
]
