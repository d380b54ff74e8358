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


# --- round 2 (#41): five more sessions, labelled before the rule ran on them ------------------


def _lines(template: str, count: int) -> str:
    return "\n".join(template.format(i=i) for i in range(count))


def worker_race() -> DevSession:
    """A Go service: a flaky test that is a data race, reasons said in prose, a benchmark."""
    c = Conversation("/home/sam/ingest", "dev-race")
    c.user(
        "TestPoolDrain fails maybe one run in ten on CI, never locally. Can you look at "
        "internal/pool/pool.go and figure out what's going on?"
    )
    c.bash(
        "go test ./internal/pool/ -run TestPoolDrain -count=50",
        _lines("=== RUN   TestPoolDrain\n--- PASS: TestPoolDrain (0.0{i}s)", 9)
        + "\n--- FAIL: TestPoolDrain (0.04s)\n    pool_test.go:88: drained 499 jobs, want 500\nFAIL\n"
        "FAIL\tgithub.com/acme/ingest/internal/pool\t2.113s",
        error=True,
    )
    c.tool("Read", {"file_path": "/home/sam/ingest/internal/pool/pool.go"}, "package pool\n\ntype Pool struct {\n")
    c.bash(
        "go test -race ./internal/pool/ -run TestPoolDrain -count=5",
        "==================\nWARNING: DATA RACE\nWrite at 0x00c0001a4018 by goroutine 23:\n"
        "  github.com/acme/ingest/internal/pool.(*Pool).finish()\n      /home/sam/ingest/internal/pool/pool.go:142 +0x64\n"
        "Previous read at 0x00c0001a4018 by goroutine 9:\n  github.com/acme/ingest/internal/pool.(*Pool).Drain()\n"
        "      /home/sam/ingest/internal/pool/pool.go:97 +0x1c8\n==================\n"
        "--- FAIL: TestPoolDrain (0.31s)\n    testing.go:1465: race detected during execution of test\nFAIL",
        error=True,
    )
    c.say(
        "Found it. `Drain` reads `p.pending` without holding the lock while `finish` decrements it "
        "from the worker goroutines, so Drain can return while the last job is still being counted. "
        "I'll guard `pending` with the existing `p.mu` rather than switching to a channel, since "
        "Drain is called once per shutdown and a mutex keeps the change to a few lines."
    )
    c.user("Sounds good. I'd rather not pull in errgroup for this, we keep go.mod minimal.")
    c.tool(
        "Edit",
        {
            "file_path": "/home/sam/ingest/internal/pool/pool.go",
            "old_string": "\tfor p.pending > 0 {\n\t\truntime.Gosched()\n\t}",
            "new_string": "\tp.mu.Lock()\n\tfor p.pending > 0 {\n\t\tp.cond.Wait()\n\t}\n\tp.mu.Unlock()",
        },
        "The file /home/sam/ingest/internal/pool/pool.go has been updated.",
    )
    c.bash("gofmt -l ./internal/", "")
    c.bash(
        "go test -race ./internal/pool/ -count=200",
        "ok  \tgithub.com/acme/ingest/internal/pool\t38.402s",
    )
    c.bash(
        "go test ./internal/pool/ -bench=BenchmarkSubmit -run=^$ -benchmem",
        "goos: linux\ngoarch: amd64\nBenchmarkSubmit-8   \t 1843210\t       651.2 ns/op\t      48 B/op\t       1 allocs/op\n"
        "PASS\nok  \tgithub.com/acme/ingest/internal/pool\t2.071s",
    )
    c.say("Submit costs 651 ns/op after the change, the same as before within noise.")
    c.bash(
        "git commit -am 'pool: guard pending with mu in Drain'",
        "[fix/pool-race 3b8e1f0] pool: guard pending with mu in Drain\n 1 file changed, 4 insertions(+), 2 deletions(-)",
    )
    summary = """This session is being continued from a previous conversation that ran out of context.

1. Primary Request and Intent:
   The user asked to investigate why TestPoolDrain fails intermittently on CI (about 1 in 10 runs) but not locally.

2. Key Technical Concepts:
   - Go race detector
   - sync.Mutex and sync.Cond

3. Files and Code Sections:
   - internal/pool/pool.go: Drain now waits on a condition variable while holding p.mu instead of spinning with runtime.Gosched.

4. Errors and fixes:
   - The race detector reported a data race between Pool.finish and Pool.Drain on the pending counter. Fixed by locking.

5. Problem Solving:
   Root cause: Drain read the pending counter without the lock. The fix was verified with 200 race-enabled runs.

6. All user messages:
   - Asked to look into the flaky TestPoolDrain in internal/pool/pool.go.
   - Agreed with the approach; prefers not to add errgroup as a dependency.

7. Pending Tasks:
   - None.

8. Current Work:
   The fix is committed on branch fix/pool-race.

9. Optional Next Step:
   Open a pull request.
"""
    labels = [
        Label("request", "TestPoolDrain fails maybe one run in ten", dropped=False),
        Label("failed command", "-run TestPoolDrain -count=50", dropped=True),  # 499 of 500: the symptom's figures
        Label("measurement", "drained 499 jobs, want 500", dropped=True),
        Label("failed command", "go test -race", dropped=False),  # the race is in the summary
        Label("decision", "rather than switching to a channel", dropped=True),  # the reason: once per shutdown
        Label("decision", "I'd rather not pull in errgroup", dropped=False),
        Label("constraint", "we keep go.mod minimal", dropped=False),
        Label("edit", "p.cond.Wait()", dropped=False),
        Label("file edited", "internal/pool/pool.go", dropped=False),
        Label("measurement", "651.2 ns/op", dropped=True),
        Label("measurement", "-count=200", dropped=False),  # "200 race-enabled runs"
        Label("identifier", "3b8e1f0", dropped=True),
        # noise
        Label("command", "gofmt -l", dropped=False),
        Label("number", "0x00c0001a4018", dropped=False),
        Label("number", "142", dropped=False),
        Label("name", "runtime.Gosched", dropped=False),
    ]
    return DevSession(c, summary, labels)


def date_picker() -> DevSession:
    """A TypeScript front end: a timezone bug, a failing jest run with a long output, the user's
    browser constraint, a library chosen after reading the bundle."""
    c = Conversation("/Users/mia/web", "dev-dates")
    c.user(
        "Users in Auckland see the booking date one day early in the date picker. Fix it, "
        "and please add a test that pins TZ so it can't come back."
    )
    c.tool("Read", {"file_path": "/Users/mia/web/src/components/DatePicker.tsx"}, "export function DatePicker() {}")
    c.tool("Read", {"file_path": "/Users/mia/web/src/lib/dates.ts"}, "export const toDay = (d: Date) => ...")
    c.say(
        "The bug is in `toDay` in src/lib/dates.ts: it calls `toISOString().slice(0, 10)`, which "
        "converts to UTC first, so any zone ahead of UTC gets the previous day before midday."
    )
    c.bash('grep -rn "toISOString().slice" src | wc -l', "7")
    c.bash("cat package.json | grep -A3 date-fns", '    "date-fns": "^2.30.0",\n    "date-fns-tz": "^2.0.0",')
    c.say(
        "date-fns-tz is already a dependency and in the bundle, so I'll use its `formatInTimeZone` "
        "instead of adding luxon, which would add about 70 kB."
    )
    c.user("We still support Safari 15, so nothing from Temporal or Intl.DurationFormat.")
    c.tool(
        "Edit",
        {
            "file_path": "/Users/mia/web/src/lib/dates.ts",
            "old_string": "export const toDay = (d: Date) => d.toISOString().slice(0, 10);",
            "new_string": "export const toDay = (d: Date, tz = userZone()) => formatInTimeZone(d, tz, 'yyyy-MM-dd');",
        },
        "The file /Users/mia/web/src/lib/dates.ts has been updated.",
    )
    c.tool(
        "Write",
        {
            "file_path": "/Users/mia/web/src/lib/dates.test.ts",
            "content": "process.env.TZ = 'Pacific/Auckland';\ntest('toDay keeps the local day', () => {});\n",
        },
        "File created successfully at: /Users/mia/web/src/lib/dates.test.ts",
    )
    c.bash(
        "npx jest src/lib",
        _lines(" PASS  src/lib/format{i}.test.ts", 30)
        + "\n FAIL  src/lib/dates.test.ts\n  ● toDay keeps the local day\n\n"
        '    expect(received).toBe(expected)\n\n    Expected: "2026-03-14"\n    Received: "2026-03-13"\n\n'
        "Tests:       1 failed, 211 passed, 212 total\nTime:        9.84 s",
        error=True,
    )
    c.say(
        "The test fails because jest's config sets `TZ=UTC` in globalSetup, which runs after the "
        "module-level assignment; I'll set the zone through the `tz` argument instead of the environment."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/Users/mia/web/src/lib/dates.test.ts",
            "old_string": "process.env.TZ = 'Pacific/Auckland';",
            "new_string": "const tz = 'Pacific/Auckland';",
        },
        "The file /Users/mia/web/src/lib/dates.test.ts has been updated.",
    )
    c.bash("npx jest src/lib", "Tests:       212 passed, 212 total\nTime:        9.12 s")
    c.bash(
        "npm run build 2>&1 | tail -4", "dist/assets/index-4f2a91.js   412.71 kB │ gzip: 131.02 kB\n✓ built in 6.31s"
    )
    summary = """This session is being continued from a previous conversation that ran out of context.

1. Primary Request and Intent:
   Fix the date picker showing the booking date a day early for users in Auckland (time zones ahead of UTC), and add a regression test with a fixed time zone.

2. Key Technical Concepts:
   - toISOString converts to UTC
   - date-fns-tz formatInTimeZone

3. Files and Code Sections:
   - src/lib/dates.ts: `toDay` now formats with `formatInTimeZone(d, tz, 'yyyy-MM-dd')`, taking an optional tz.
   - src/lib/dates.test.ts: new test for Pacific/Auckland.

4. Errors and fixes:
   - The new test first failed (got 2026-03-13, expected 2026-03-14) because jest's global setup forces TZ=UTC; the test now passes the zone as an argument.

5. Problem Solving:
   Used date-fns-tz, already a dependency, rather than a new date library.

6. All user messages:
   - Reported the Auckland off-by-one-day bug and asked for a fix plus a test that pins the time zone.
   - Safari 15 must stay supported, so no Temporal or Intl.DurationFormat.

7. Pending Tasks:
   - Six other places still use toISOString().slice.

8. Current Work:
   All 212 tests pass and the build succeeds.

9. Optional Next Step:
   Ask whether to fix the other call sites.
"""
    labels = [
        Label("request", "Users in Auckland see the booking date one day early", dropped=False),
        Label("decision", "converts to UTC first", dropped=False),  # the cause, kept in other words
        Label("decision", "instead of adding luxon, which would add about 70 kB", dropped=True),  # the reason's figure
        Label("constraint", "We still support Safari 15", dropped=False),
        Label("edit", "formatInTimeZone(d, tz, 'yyyy-MM-dd')", dropped=False),
        Label("file edited", "src/lib/dates.test.ts", dropped=False),
        Label("failed command", "npx jest src/lib", dropped=False),
        Label("decision", "globalSetup", dropped=False),  # the reason the test failed: kept
        Label("measurement", "412.71 kB", dropped=True),
        Label("file read", "src/components/DatePicker.tsx", dropped=True),
        # noise
        Label("command", "cat package.json", dropped=False),
        Label("number", "2.30.0", dropped=False),
        Label("name", "toISOString", dropped=False),
        Label("measurement", "9.12 s", dropped=False),
    ]
    return DevSession(c, summary, labels)


def borrow_checker() -> DevSession:
    """A Rust CLI: a borrow error, clippy, the user's MSRV, a criterion benchmark."""
    c = Conversation("/home/ola/dedupe", "dev-borrow")
    c.user(
        "Add a --follow-symlinks flag to the scan command. Keep the MSRV at 1.70, some of our "
        "users are on Debian stable."
    )
    c.tool("Read", {"file_path": "/home/ola/dedupe/src/scan.rs"}, "pub fn scan(root: &Path, opts: &Opts)")
    c.tool(
        "Edit",
        {
            "file_path": "/home/ola/dedupe/src/cli.rs",
            "old_string": "    #[arg(long)]\n    pub hidden: bool,",
            "new_string": "    #[arg(long)]\n    pub hidden: bool,\n    #[arg(long)]\n    pub follow_symlinks: bool,",
        },
        "The file /home/ola/dedupe/src/cli.rs has been updated.",
    )
    c.bash(
        "cargo build",
        "   Compiling dedupe v0.4.2 (/home/ola/dedupe)\nerror[E0502]: cannot borrow `seen` as mutable because "
        "it is also borrowed as immutable\n   --> src/scan.rs:57:13\n    |\n55  |         let first = seen.get(&key);\n"
        "    |                     ---- immutable borrow occurs here\n57  |             seen.insert(key, path);\n"
        'error: could not compile `dedupe` (bin "dedupe") due to 1 previous error',
        error=True,
    )
    c.say(
        "The loop holds a reference from `seen.get` while inserting. I'll switch to the entry API "
        "so there's a single lookup per file; cloning the PathBuf would also work but costs an "
        "allocation per file on trees with millions of entries."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/ola/dedupe/src/scan.rs",
            "old_string": "let first = seen.get(&key);",
            "new_string": "match seen.entry(key) {",
        },
        "The file /home/ola/dedupe/src/scan.rs has been updated.",
    )
    c.bash(
        "cargo build 2>&1 | tail -2",
        "   Compiling dedupe v0.4.2 (/home/ola/dedupe)\n    Finished dev [unoptimized + debuginfo] target(s) in 4.21s",
    )
    c.bash(
        "cargo clippy -- -D warnings",
        "warning: this `if` has identical blocks\n  --> src/scan.rs:71:9\nerror: could not compile `dedupe` due to 1 previous error",
        error=True,
    )
    c.user("Don't touch the clippy config to silence it, fix the code.")
    c.tool(
        "Edit",
        {
            "file_path": "/home/ola/dedupe/src/scan.rs",
            "old_string": "if meta.is_symlink() { visit(path) } else { visit(path) }",
            "new_string": "visit(path)",
        },
        "The file /home/ola/dedupe/src/scan.rs has been updated.",
    )
    c.bash(
        "cargo +1.70 check",
        "    Checking dedupe v0.4.2 (/home/ola/dedupe)\n    Finished dev [unoptimized + debuginfo] target(s) in 7.88s",
    )
    c.bash(
        "cargo bench --bench scan -- --save-baseline symlinks",
        "scan/10k_files          time:   [18.214 ms 18.390 ms 18.571 ms]\n"
        "                        change: [-3.1102% -1.9876% -0.8410%] (p = 0.00 < 0.05)\n"
        "                        Performance has improved.",
    )
    c.bash("git status --short", " M src/cli.rs\n M src/scan.rs")
    summary = """This session is being continued from a previous conversation that ran out of context.

1. Primary Request and Intent:
   Add a --follow-symlinks option to the scan subcommand while keeping the minimum supported Rust version at 1.70 (users on Debian stable).

2. Key Technical Concepts:
   - clap derive arguments
   - HashMap entry API and borrow rules

3. Files and Code Sections:
   - src/cli.rs: new `follow_symlinks: bool` flag.
   - src/scan.rs: uses `seen.entry(key)` instead of get-then-insert; removed an if with identical branches.

4. Errors and fixes:
   - E0502 borrow error in src/scan.rs, fixed with the entry API.
   - clippy flagged identical if blocks; the code was fixed rather than the lint config.

5. Problem Solving:
   Checked that the crate builds with Rust 1.70. Benchmark shows no regression (about 18.4 ms for 10k files, ~2% faster).

6. All user messages:
   - Add --follow-symlinks to scan; keep MSRV 1.70 because of Debian stable users.
   - Do not change clippy settings to silence the warning; fix the code.

7. Pending Tasks:
   - Commit the changes.

8. Current Work:
   Changes are in the working tree, not committed.

9. Optional Next Step:
   Commit and update the CHANGELOG.
"""
    labels = [
        Label("request", "Add a --follow-symlinks flag", dropped=False),
        Label("constraint", "Keep the MSRV at 1.70", dropped=False),
        Label("failed command", "cargo build", dropped=False),  # E0502 kept
        Label("decision", "cloning the PathBuf would also work but costs an allocation", dropped=True),
        Label("constraint", "Don't touch the clippy config", dropped=False),
        Label("failed command", "cargo clippy", dropped=False),
        Label("edit", "seen.entry(key)", dropped=False),
        Label("edit", "pub follow_symlinks: bool", dropped=False),
        Label("measurement", "18.390 ms", dropped=False),  # "about 18.4 ms"
        Label("command", "--save-baseline symlinks", dropped=True),  # a baseline named for the next comparison
        Label("file read", "src/scan.rs", dropped=False),
        # noise
        Label("command", "git status --short", dropped=False),
        Label("number", "0.4.2", dropped=False),
        Label("measurement", "4.21s", dropped=False),
        Label("measurement", "7.88s", dropped=False),
    ]
    return DevSession(c, summary, labels)


def region_column() -> DevSession:
    """A Django migration: a non-null column on a big table, the user's reason in prose, a
    failed migrate, a backfill measured, the migration made."""
    c = Conversation("/srv/app", "dev-region")
    c.user(
        "We need a region field on Customer, required, defaulting from the billing address country. "
        "Don't backfill inside the migration, because customers has about 30M rows and the ALTER "
        "would hold the lock for minutes."
    )
    c.tool("Read", {"file_path": "/srv/app/customers/models.py"}, "class Customer(models.Model):\n    name = ...")
    c.tool(
        "Edit",
        {
            "file_path": "/srv/app/customers/models.py",
            "old_string": "    name = models.CharField(max_length=200)",
            "new_string": "    name = models.CharField(max_length=200)\n    region = models.CharField(max_length=8, null=True)",
        },
        "The file /srv/app/customers/models.py has been updated.",
    )
    c.bash(
        "python manage.py makemigrations customers",
        "Migrations for 'customers':\n  customers/migrations/0042_customer_region.py\n    - Add field region to customer",
    )
    c.say(
        "I made the column nullable for now: we'll keep it nullable for one release so that the old "
        "workers, which don't know the field, can still insert customers; the NOT NULL comes in a "
        "second migration once the backfill has run."
    )
    c.bash(
        "python manage.py migrate customers --database staging",
        "Operations to perform:\n  Target specific migration: 0042_customer_region, from customers\nRunning migrations:\n"
        'Traceback (most recent call last):\n  File "/srv/app/.venv/lib/python3.12/site-packages/django/db/backends/utils.py", line 105, in _execute\n'
        'django.db.utils.ProgrammingError: relation "customers_customer" does not exist',
        error=True,
    )
    c.bash(
        "python manage.py showmigrations customers | tail -3",
        " [X] 0040_customer_vat_id\n [X] 0041_auto_20261102\n [ ] 0042_customer_region",
    )
    c.say("Staging's search_path points at the old schema; the settings for staging set `OPTIONS` wrongly.")
    c.user("Ignore staging, Priya is rebuilding it this week. Test against the local copy.")
    c.bash("python manage.py migrate customers", "Applying customers.0042_customer_region... OK")
    c.tool(
        "Write",
        {
            "file_path": "/srv/app/customers/management/commands/backfill_region.py",
            "content": "BATCH = 10_000\nclass Command(BaseCommand):\n    def handle(self, *a, **k):\n        ...\n",
        },
        "File created successfully at: /srv/app/customers/management/commands/backfill_region.py",
    )
    c.bash(
        "python manage.py backfill_region --batch 10000",
        _lines("batch {i}: 10000 rows", 12) + "\nupdated 1,204,331 rows in 184.2 s (0 without a billing country)",
    )
    c.say("The backfill ran in batches of 10,000 with a commit per batch, so no lock is held for long.")
    summary = """This session is being continued from a previous conversation that ran out of context.

1. Primary Request and Intent:
   Add a required region field to Customer, defaulting from the billing address country, without backfilling in the migration (the customers table is very large).

2. Key Technical Concepts:
   - Django migrations, nullable-then-not-null pattern
   - Batched backfill via a management command

3. Files and Code Sections:
   - customers/models.py: `region = models.CharField(max_length=8, null=True)`.
   - customers/migrations/0042_customer_region.py: adds the field.
   - customers/management/commands/backfill_region.py: batched backfill, 10,000 rows per batch.

4. Errors and fixes:
   - Migrating staging failed (relation "customers_customer" does not exist) due to staging's schema settings.

5. Problem Solving:
   The column is nullable for now; NOT NULL will follow in a later migration after the backfill.

6. All user messages:
   - Add a required region field defaulting from billing country; don't backfill inside the migration because of the table's size and locking.
   - Ignore staging (being rebuilt); test locally.

7. Pending Tasks:
   - Second migration to make region NOT NULL.

8. Current Work:
   Backfill ran locally.

9. Optional Next Step:
   Write the NOT NULL migration.
"""
    labels = [
        Label("request", "We need a region field on Customer", dropped=False),
        Label("constraint", "Don't backfill inside the migration", dropped=False),
        Label("decision", "we'll keep it nullable for one release so that the old workers", dropped=True),  # the reason
        Label("identifier", "0042_customer_region", dropped=False),
        Label("failed command", "migrate customers --database staging", dropped=False),
        Label("constraint", "Ignore staging, Priya is rebuilding it", dropped=False),
        Label("measurement", "updated 1,204,331 rows in 184.2 s", dropped=True),
        Label("edit", "max_length=8, null=True", dropped=False),
        Label("file edited", "backfill_region.py", dropped=False),
        Label("identifier", "0041_auto_20261102", dropped=True),  # the previous migration
        # noise
        Label("command", "showmigrations", dropped=False),
        Label("number", "105", dropped=False),
        Label("name", "search_path", dropped=False),
        Label("path", "python3.12/site-packages", dropped=False),
    ]
    return DevSession(c, summary, labels)


def ci_cache() -> DevSession:
    """Terraform and GitHub Actions: a plan, a failed apply, a bucket renamed for a reason, many
    routine commands."""
    c = Conversation("/home/dev/infra", "dev-cache")
    c.user(
        "The CI build takes 14 minutes, most of it docker layers. Set up a remote BuildKit cache in "
        "S3. Since the runners are ephemeral, don't rely on the local layer cache."
    )
    c.bash("ls", "README.md\nmodules\nenvs\n.github")
    c.bash("cat .github/workflows/build.yml", "jobs:\n  build:\n    runs-on: ubuntu-latest\n")
    c.tool("Read", {"file_path": "/home/dev/infra/modules/ci/main.tf"}, 'resource "aws_s3_bucket" "artifacts" {}')
    c.tool(
        "Edit",
        {
            "file_path": "/home/dev/infra/modules/ci/main.tf",
            "old_string": 'resource "aws_s3_bucket" "artifacts" {',
            "new_string": 'resource "aws_s3_bucket" "buildkit_cache" {\n  bucket = "acme-ci-cache"\n}\n\nresource "aws_s3_bucket" "artifacts" {',
        },
        "The file /home/dev/infra/modules/ci/main.tf has been updated.",
    )
    c.bash(
        "cd envs/prod && terraform init -upgrade",
        "Initializing the backend...\nTerraform has been successfully initialized!",
    )
    c.bash(
        "cd envs/prod && terraform plan -out plan.bin",
        _lines("  # module.ci.aws_s3_bucket_policy.p{i} will be read during apply", 20)
        + "\nPlan: 3 to add, 1 to change, 0 to destroy.",
    )
    c.bash(
        "cd envs/prod && terraform apply plan.bin",
        "module.ci.aws_s3_bucket.buildkit_cache: Creating...\n╷\n│ Error: creating S3 Bucket (acme-ci-cache): "
        "BucketAlreadyExists: The requested bucket name is not available.\n╵",
        error=True,
    )
    c.say(
        "The name acme-ci-cache is taken, by the data team's account according to the bucket "
        "policy search. I'll rename ours to acme-ci-cache-eu1 rather than importing the old one, "
        "because importing would put another team's bucket under our state."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/dev/infra/modules/ci/main.tf",
            "old_string": '  bucket = "acme-ci-cache"',
            "new_string": '  bucket = "acme-ci-cache-eu1"',
        },
        "The file /home/dev/infra/modules/ci/main.tf has been updated.",
    )
    c.bash(
        "cd envs/prod && terraform plan -out plan.bin && terraform apply plan.bin",
        "Plan: 3 to add, 1 to change, 0 to destroy.\nApply complete! Resources: 3 added, 1 changed, 0 destroyed.",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/dev/infra/.github/workflows/build.yml",
            "old_string": "          push: true",
            "new_string": "          push: true\n          cache-from: type=s3,region=eu-west-1,bucket=acme-ci-cache-eu1\n"
            "          cache-to: type=s3,region=eu-west-1,bucket=acme-ci-cache-eu1,mode=max",
        },
        "The file /home/dev/infra/.github/workflows/build.yml has been updated.",
    )
    c.bash("gh run watch 8812345678 --exit-status", "✓ build in 3m41s")
    c.user("Nice. Use mode=max only on main, PR builds should only read the cache.")
    summary = """This session is being continued from a previous conversation that ran out of context.

1. Primary Request and Intent:
   Speed up the 14-minute CI build by adding a remote BuildKit layer cache in S3, not relying on the runners' local cache since they are ephemeral.

2. Key Technical Concepts:
   - BuildKit s3 cache backend (cache-from / cache-to)
   - Terraform module for CI resources

3. Files and Code Sections:
   - modules/ci/main.tf: new aws_s3_bucket "buildkit_cache" named acme-ci-cache-eu1.
   - .github/workflows/build.yml: cache-from/cache-to with the s3 backend in eu-west-1, mode=max.

4. Errors and fixes:
   - terraform apply failed because the bucket name acme-ci-cache already exists (owned by another team); renamed the bucket.

5. Problem Solving:
   Applied in prod (3 added, 1 changed). The next CI run took under 4 minutes.

6. All user messages:
   - Asked for a remote BuildKit cache in S3 because CI takes 14 minutes; runners are ephemeral.
   - Use mode=max only on main; PR builds should only read the cache.

7. Pending Tasks:
   - Restrict cache-to with mode=max to the main branch.

8. Current Work:
   The workflow writes the cache on every build.

9. Optional Next Step:
   Add a condition on github.ref for cache-to.
"""
    labels = [
        Label("request", "The CI build takes 14 minutes", dropped=False),
        Label("constraint", "don't rely on the local layer cache", dropped=False),
        Label("failed command", "terraform apply plan.bin", dropped=False),
        Label("decision", "importing would put another team's bucket under our state", dropped=True),
        Label("edit", "acme-ci-cache-eu1", dropped=False),
        Label("measurement", "Plan: 3 to add, 1 to change", dropped=False),
        Label("measurement", "3m41s", dropped=False),  # "under 4 minutes"
        Label("identifier", "8812345678", dropped=True),  # the run that proved it
        Label("constraint", "Use mode=max only on main", dropped=False),
        Label("file read", "modules/ci/main.tf", dropped=False),
        # noise
        Label("command", "terraform init -upgrade", dropped=False),
        Label("command", "cat .github/workflows/build.yml", dropped=False),
        Label("name", "buildkit_cache", dropped=False),
        Label("path", "plan.bin", dropped=False),
    ]
    return DevSession(c, summary, labels)


SESSIONS = (rounding, locales, slow_query, worker_race, date_picker, borrow_checker, region_column, ci_cache)

# A label's class, as #41 counts recall: what the user would want back.
CLASSES = {"failed command": "failure", "error": "failure", "file edited": "file", "file read": "file"}
# Labels of these kinds that the summary "keeps" are things no one would miss (a routine command,
# a line number): an item naming only them is noise.
NOISE_KINDS = ("command", "name", "number", "path", "url")


def label_class(label: Label) -> str:
    if not label.dropped and label.kind in NOISE_KINDS:
        return "noise"
    return CLASSES.get(label.kind, label.kind)


def names(fact, label: Label) -> bool:
    """Whether a listed fact names a labelled one: the label's words, whole, in its text or detail."""
    from precompact.restore.dropped import normalised

    shown = f" {normalised(fact.text + ' ' + (fact.detail or ''))} "
    return f" {normalised(label.says)} " in shown


@dataclass
class Score:
    right: int = 0  # listed items that name a dropped fact
    wrong: int = 0  # listed items that name only kept facts
    noise: int = 0  # listed items that name no labelled fact, or only noise
    found: dict[str, int] = field(default_factory=dict)  # class -> dropped facts listed
    dropped: dict[str, int] = field(default_factory=dict)  # class -> dropped facts labelled
    by_kind: dict[str, list[int]] = field(default_factory=dict)  # listed kind -> [right, listed]
    # confidence ("dropped", "possibly dropped") -> [right, listed]: whether a user can rely on "dropped"
    by_confidence: dict[str, list[int]] = field(default_factory=dict)
    missed: list[tuple[str, Label]] = field(default_factory=list)
    unwanted: list[tuple[str, object]] = field(default_factory=list)

    def add(self, session: str, listed: list, labels: list[Label]) -> None:
        for fact in listed:
            named = [label for label in labels if names(fact, label)]
            tally = self.by_kind.setdefault(fact.kind, [0, 0])
            sure = self.by_confidence.setdefault(fact.confidence, [0, 0])
            tally[1] += 1
            sure[1] += 1
            if any(label.dropped for label in named):
                self.right += 1
                tally[0] += 1
                sure[0] += 1
            else:
                if any(label_class(label) != "noise" for label in named):
                    self.wrong += 1
                else:
                    self.noise += 1
                self.unwanted.append((session, fact))
        for label in labels:
            if label.dropped:
                kind = label_class(label)
                self.dropped[kind] = self.dropped.get(kind, 0) + 1
                if any(names(fact, label) for fact in listed):
                    self.found[kind] = self.found.get(kind, 0) + 1
                else:
                    self.missed.append((session, label))

    @property
    def precision(self) -> float:
        return self.right / max(self.right + self.wrong + self.noise, 1)

    @property
    def recall(self) -> float:
        return sum(self.found.values()) / max(sum(self.dropped.values()), 1)


# A summary that keeps nothing: scored against it, the rule lists every fact it extracts, so its
# recall is the ceiling that extraction puts on the rule's recall whatever the matching does.
SAYS_NOTHING = "1. Primary Request and Intent:\n   (nothing)\n"


def score(sessions=None, *, ceiling: bool = False) -> Score:
    """The rule's score on the development sessions (with `ceiling`, against a summary that says nothing)."""
    from precompact.restore import dropped

    result = Score()
    for make in sessions or SESSIONS:
        made = make()
        summary = SAYS_NOTHING if ceiling else made.summary
        listed, _ = dropped.dropped_facts(made.conversation.entries, dropped.Summary(summary, made.conversation.cwd))
        result.add(make.__name__, listed, made.labels)
    return result
