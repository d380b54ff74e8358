"""A small development set for "what compaction dropped" (restore/dropped.py): three sessions
written by hand in Claude Code's transcript shape, as real sessions go (a rounding bug hunt, a CI
failure with locale files, a slow query), each with a summary written the way Claude Code's
compaction prompt writes it (nine numbered sections, requests in the model's words, paths
shortened, facts merged) and its facts labelled by hand: dropped by the summary, or kept by it
in other words. Each class of the issue's misses and noise (#41) is in at least one of them.

The held-out evaluation set lives elsewhere (tests/dropped_eval/); this one is what the rule was
developed against, so it shows the rule does what it was written to do, no more."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Label:
    kind: str
    says: str  # a part of the fact's text that names it
    dropped: bool  # True: the summary lost it; False: the summary keeps it (in some words)


@dataclass
class Conversation:
    """Entries in Claude Code's transcript shape."""

    cwd: str
    name: str
    entries: list[dict] = field(default_factory=list)

    def _entry(self, kind: str, message: dict) -> None:
        turn = len(self.entries) + 1
        self.entries.append(
            {
                "type": kind,
                "uuid": f"{self.name}-{turn}",
                "sessionId": self.name,
                "timestamp": f"2026-11-30T09:{turn // 60 % 60:02d}:{turn % 60:02d}Z",
                "cwd": self.cwd,
                "message": message,
            }
        )

    def user(self, text: str) -> None:
        self._entry("user", {"role": "user", "content": text})

    def say(self, text: str) -> None:
        turn = len(self.entries) + 1
        self._entry(
            "assistant",
            {"id": f"msg_{self.name}_{turn}", "role": "assistant", "content": [{"type": "text", "text": text}]},
        )

    def tool(self, name: str, arguments: dict, result: str, error: bool = False) -> None:
        call = f"toolu_{self.name}_{len(self.entries) + 1}"
        self._entry(
            "assistant",
            {
                "id": f"msg_{call}",
                "role": "assistant",
                "content": [{"type": "tool_use", "id": call, "name": name, "input": arguments}],
            },
        )
        block: dict = {"type": "tool_result", "tool_use_id": call, "content": result}
        if error:
            block["is_error"] = True
        self._entry("user", {"role": "user", "content": [block]})

    def bash(self, command: str, output: str, error: bool = False) -> None:
        self.tool("Bash", {"command": command, "description": "run"}, output, error)


@dataclass
class DevSession:
    conversation: Conversation
    summary: str
    labels: list[Label]


def rounding() -> DevSession:
    """A bug hunt in a billing service: a regression found in `git log`, fixed by an edit, with
    the user's reason in prose."""
    c = Conversation("/home/ana/billing", "dev-rounding")
    c.user(
        "Invoices for March are off by a cent on some lines. Can you find out why the totals "
        "changed after last week's deploy and fix it?"
    )
    c.bash(
        "cd /home/ana/billing && git log --oneline -5 -- billing/money.py",
        "9c41e7a Use Decimal.quantize for invoice totals\n51d0b2f Format currency per locale\n"
        "e2a9f03 Add VAT breakdown\n7b3c9d1 Initial money helpers\n0a1b2c3 Bootstrap",
    )
    c.tool(
        "Read",
        {"file_path": "/home/ana/billing/billing/money.py"},
        "     1\u2192import os.path\n     2\u2192from decimal import Decimal, ROUND_HALF_UP\n",
    )
    c.say(
        "Line 214 of billing/money.py calls `quantize` with ROUND_HALF_UP; os.path is imported "
        "but unused. The regression came with 9c41e7a, deployed on 2026-11-23. A line of "
        "84.1499999 now rounds to 84.15 where it used to give 84.14. That is 1284 / 12000 = 10.7% "
        "of the lines."
    )
    c.user(
        "Round per step because finance's spreadsheet does it that way. Never change the "
        "rounding of the VAT lines in billing/vat.py."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/ana/billing/billing/money.py",
            "old_string": "    return amount.quantize(CENT, rounding=ROUND_HALF_UP)",
            "new_string": "    return amount.quantize(CENT, rounding=ROUND_HALF_EVEN)",
        },
        "The file /home/ana/billing/billing/money.py has been updated.",
    )
    c.bash("ls -l billing", "total 24\n-rw-r--r-- 1 ana ana 4410 Nov 30 09:12 money.py")
    c.bash(
        "python -m pytest tests/test_money.py -q 2>&1 | tail -3",
        "........................................\n40 passed in 0.83s",
    )
    c.bash(
        "python scripts/recheck_invoices.py --month 2026-03",
        "checked 12000 lines\nflagged 1284 rows with a one-cent difference",
    )
    c.bash("git commit -am 'Round half even per step'", "[main 4f5e6d7] Round half even per step\n 1 file changed")
    summary = """This session is being continued from a previous conversation that ran out of context.

1. Primary Request and Intent:
   The user asked to find why March invoice totals changed after last week's deploy and to fix the one-cent differences.

2. Key Technical Concepts:
   - Decimal quantize and rounding modes

3. Files and Code Sections:
   - billing/money.py: the quantize call now rounds half even.

4. Errors and fixes:
   - None beyond the rounding regression.

5. Problem Solving:
   The regression came from commit 9c41e7a. A value of 84.14999… was rounded up to 84.15.

6. All user messages:
   - "Invoices for March are off by a cent on some lines. Can you find out why … and fix it?"
   - The user wants rounding at each step, matching finance's spreadsheet.

7. Pending Tasks:
   - None.

8. Current Work:
   Tests pass (40 passed).

9. Optional Next Step:
   Ask the user to review the change.
"""
    labels = [
        Label("request", "Invoices for March are off by a cent", dropped=False),  # elision
        Label("decision", "Round per step because finance", dropped=False),  # restated
        Label("constraint", "Never change the rounding of the VAT lines", dropped=True),
        Label("identifier", "4f5e6d7", dropped=True),  # the commit just made
        Label("identifier", "9c41e7a", dropped=False),
        Label("measurement", "flagged 1284 rows", dropped=True),
        Label("measurement", "40 passed", dropped=False),
        Label("edit", "ROUND_HALF_UP", dropped=True),  # the summary says "half even", not the change
        Label("number", "84.1499999", dropped=False),  # "84.14999…"
        Label("file edited", "billing/money.py", dropped=False),
        Label("path", "billing/vat.py", dropped=False),  # shown inside the constraint, not again
        # noise: none of these is a fact
        Label("path", "os.path", dropped=False),
        Label("number", "214", dropped=False),  # a line number
        Label("number", "2026", dropped=False),  # a date's year
        Label("number", "12000", dropped=False),  # hand arithmetic
        Label("command", "ls -l", dropped=False),
    ]
    return DevSession(c, summary, labels)


def locales() -> DevSession:
    """A CI failure: the Erlang toolchain missing, locale files edited, a report module read."""
    c = Conversation("/home/li/portal", "dev-locales")
    c.user("CI fails on the Elixir job since this morning; please get it green again.")
    c.bash("docker compose ps", "NAME   IMAGE   STATUS\nweb    portal  Up 2 hours")
    c.bash("mix test", "Exit code 127\nbash: erl: command not found", error=True)
    c.say("The runner image lost Erlang: `erl` is not on PATH, so `mix` cannot start.")
    c.tool("Read", {"file_path": "/home/li/portal/services/reports.py"}, "def monthly(): ...")
    c.tool("Read", {"file_path": "/home/li/portal/api/reports.py"}, "from services import reports")
    for language, word in (("en", "Report"), ("de", "Bericht"), ("fr", "Rapport"), ("es", "Informe")):
        c.tool(
            "Edit",
            {
                "file_path": f"/home/li/portal/locales/{language}/reports.json",
                "old_string": f'"title": "{word}s"',
                "new_string": f'"title": "{word}"',
            },
            "updated",
        )
    c.bash("docker compose logs web", "web  | started")
    c.bash("docker compose logs web", "web  | started")
    c.bash("alembic heads", "ae1027a6acf4 (head)")
    c.user("Keep the Dockerfile on the slim image, we pay for the bytes.")
    summary = """1. Primary Request and Intent:
   Get the failing Elixir CI job green again.

2. Key Technical Concepts:
   - Erlang/OTP on the CI runner image

3. Files and Code Sections:
   - api/reports.py (read)
   - locale files (en/de/fr reports.json): title made singular

4. Errors and fixes:
   - `mix test` failed: the runner had no Erlang (command not found).

5. Problem Solving:
   Erlang has to be installed in the runner image.

6. All user messages:
   - CI fails on the Elixir job; get it green.
   - The Dockerfile must stay on the slim base image (cost of bytes).

7. Pending Tasks:
   - Install Erlang in the CI image.

8. Current Work:
   Locale titles fixed.

9. Optional Next Step:
   Rebuild the runner image.
"""
    labels = [
        Label("request", "CI fails on the Elixir job", dropped=False),
        Label("failed command", "mix test", dropped=False),  # "command not found" kept
        Label("file read", "services/reports.py", dropped=True),  # api/reports.py is another file
        Label("file read", "api/reports.py", dropped=False),
        Label("file edited", "locales/es/reports.json", dropped=True),
        Label("file edited", "locales/en/reports.json", dropped=False),
        Label("file edited", "locales/fr/reports.json", dropped=False),
        Label("identifier", "ae1027a6acf4", dropped=True),  # the migration head
        Label("constraint", "Keep the Dockerfile on the slim image", dropped=False),  # restated
        Label("command", "docker compose ps", dropped=False),  # routine
        Label("command", "docker compose logs", dropped=False),  # routine
    ]
    return DevSession(c, summary, labels)


def slow_query() -> DevSession:
    """A performance investigation: timings and counts in tool output, a constraint with decimals."""
    c = Conversation("/srv/shop", "dev-query")
    c.user(
        "The orders report takes ages. Find out why and speed it up, but only touch "
        "reports/orders.py and never touch the schema."
    )
    c.bash(
        "psql shop -c 'EXPLAIN ANALYZE SELECT * FROM orders WHERE placed_at > now() - interval 30 day'",
        "Seq Scan on orders  (cost=0.00..18334.00 rows=410000 width=64)\nPlanning Time: 0.211 ms\n"
        "Execution Time: 2874.552 ms",
    )
    c.bash("wc -l reports/orders.py", "641 reports/orders.py")
    c.say("The report filters in Python instead of SQL, so every row is loaded; see r.text and request.user usage.")
    c.user("Show the margin as 87.30 instead of 84.15 for the sample order in the docs.")
    c.tool(
        "Edit",
        {
            "file_path": "/srv/shop/reports/orders.py",
            "old_string": "rows = [o for o in Order.objects.all() if o.placed_at > since]",
            "new_string": "rows = Order.objects.filter(placed_at__gt=since)",
        },
        "updated",
    )
    c.bash(
        "psql shop -c 'EXPLAIN ANALYZE SELECT * FROM orders WHERE placed_at > now() - interval 30 day'",
        "Index Scan using orders_placed_at_idx on orders\nPlanning Time: 0.198 ms\nExecution Time: 41.870 ms",
    )
    c.say("Printing \\x1b[0m and \\033[1m codes came from the old progress bar.")
    summary = """1. Primary Request and Intent:
   Speed up the slow orders report; changes limited to "reports/orders.py … never touch the schema".

2. Key Technical Concepts:
   - Filtering in SQL rather than in Python

3. Files and Code Sections:
   - reports/orders.py (about 640 lines): the filter moved into the ORM query (`Order.objects.filter(placed_at__gt=since)`).

4. Errors and fixes:
   - None.

5. Problem Solving:
   The query went from about 2.9 s to 41.87 ms.

6. All user messages:
   - Speed up the orders report, only in reports/orders.py, never touching the schema.

7. Pending Tasks:
   - None.

8. Current Work:
   Done.

9. Optional Next Step:
   None.
"""
    labels = [
        Label("constraint", "never touch the schema", dropped=False),  # quoted with an elision
        Label("constraint", "87.30 instead of 84.15", dropped=True),  # whole, not cut at the decimal point
        Label("measurement", "Execution Time: 41.870 ms", dropped=False),
        Label("number", "641", dropped=False),  # wc -l output; "about 640"
        Label("edit", "Order.objects.filter", dropped=False),
        Label("decision", "filters in Python instead of SQL", dropped=False),  # "in SQL rather than in Python"
        Label("path", "r.text", dropped=False),  # code, not a path
        Label("path", "request.user", dropped=False),
        Label("number", "033", dropped=False),  # an escape sequence
    ]
    return DevSession(c, summary, labels)


SESSIONS = (rounding, locales, slow_query)
