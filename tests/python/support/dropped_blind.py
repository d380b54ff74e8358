"""Blind labelled sessions for "what compaction dropped" (#41, #46), written without reading the
rule (restore/dropped.py, restore/brief.py, ops/addendum.py) or any other labelled set: realistic
Claude Code sessions in the transcript shape of support/dropped_dev.py (Go, Rust, TypeScript,
Python, Java, Ruby, SQL, shell, Terraform; a flaky test, a memory leak, API versioning, i18n, a
rollout, a data migration, a logging change, a post-mortem, review follow-ups, a performance
regression, a licence audit, a release, ...), each with a summary written the way a strong model
writes Claude Code's nine-section compaction summary (restated, paths shortened, facts merged,
some left out), and its facts labelled by hand before anything scored them: dropped by the
summary, or kept by it in some words. A dropped label's words never appear in its summary.

Scored as the development set is, by the lead only: `scripts/bench_dropped.py --blind`."""

from __future__ import annotations

from support.dropped_dev import Conversation, DevSession, Label

# What a user would want back, as the blind set labels it (dropped_dev.label_class keeps them as they are).
CLASSES = ("request", "constraint", "decision", "identifier", "measurement", "file", "edit", "failure")


def _lines(template: str, count: int, start: int = 0) -> str:
    return "\n".join(template.format(i=i) for i in range(start, start + count))


def _summary(analysis: str, *sections: str) -> str:
    titles = (
        "Primary Request and Intent",
        "Key Technical Concepts",
        "Files and Code Sections",
        "Errors and fixes",
        "Problem Solving",
        "All user messages",
        "Pending Tasks",
        "Current Work",
        "Optional Next Step",
    )
    body = "\n\n".join(f"{n}. {title}:\n{text.strip()}" for n, (title, text) in enumerate(zip(titles, sections), 1))
    return f"Analysis:\n{analysis.strip()}\n\nSummary:\n{body}\n"


def flaky_batcher() -> DevSession:
    """Go: a flaky batcher test caused by a data race in Flush and a real ticker; fake clock."""
    c = Conversation("/home/mira/ledger", "blind-flaky-batcher")
    c.user(
        "TestSettlementBatcher is flaky in CI, fails maybe 1 in 20 runs. Find out why and fix it. "
        "Don't just bump the timeout, I want the real cause. And don't touch the public Batcher API, "
        "the payouts and reconciliation teams import it."
    )
    c.bash(
        "go test ./internal/settle/ -run TestSettlementBatcher -count=200 2>&1 | grep -c '^--- FAIL'",
        "13",
    )
    c.bash(
        "go test -race ./internal/settle/ -run TestSettlementBatcher -count=50",
        "==================\nWARNING: DATA RACE\nRead at 0x00c0001a40f8 by goroutine 23:\n"
        "  github.com/mira/ledger/internal/settle.(*Batcher).Flush()\n"
        "      /home/mira/ledger/internal/settle/batcher.go:88 +0x64\n"
        "  github.com/mira/ledger/internal/settle.(*Batcher).loop()\n"
        "      /home/mira/ledger/internal/settle/batcher.go:71 +0x1b0\n\n"
        "Previous write at 0x00c0001a40f8 by goroutine 19:\n"
        "  github.com/mira/ledger/internal/settle.(*Batcher).Add()\n"
        "      /home/mira/ledger/internal/settle/batcher.go:54 +0x11c\n"
        "  github.com/mira/ledger/internal/settle.TestSettlementBatcher()\n"
        "      /home/mira/ledger/internal/settle/batcher_test.go:47 +0x2d0\n"
        "==================\n--- FAIL: TestSettlementBatcher (0.05s)\n"
        "    testing.go:1398: race detected during execution of test\n"
        "    batcher_test.go:61: flushed 2 batches, want 3\nFAIL\n"
        "FAIL\tgithub.com/mira/ledger/internal/settle\t3.871s\nFAIL",
        error=True,
    )
    c.tool(
        "Read",
        {"file_path": "/home/mira/ledger/internal/settle/batcher.go"},
        "    40\tfunc (b *Batcher) Add(s Settlement) {\n    41\t\tb.mu.Lock()\n"
        + _lines("    {i}\t\t// validation elided in this excerpt", 12, 42)
        + "\n    54\t\tb.pending = append(b.pending, s)\n    55\t\tb.mu.Unlock()\n    56\t}\n"
        "    66\tfunc (b *Batcher) loop() {\n    67\t\tt := time.NewTicker(b.every)\n"
        "    71\t\t\tb.Flush()\n    85\tfunc (b *Batcher) Flush() {\n"
        "    86\t\tif len(b.pending) == 0 {\n    87\t\t\treturn\n    88\t\t}\n"
        "    89\t\tb.mu.Lock()\n    90\t\tb.out <- b.pending\n    91\t\tb.pending = nil\n    92\t\tb.mu.Unlock()\n    93\t}",
    )
    c.say(
        "Found it. Flush reads b.pending before it takes b.mu, so the ticker goroutine races with Add. "
        "On top of that the test waits on a real 10ms ticker with time.Sleep, so whether the third "
        "batch is out before the assertion depends on the scheduler; a longer timeout would only hide it."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/mira/ledger/internal/settle/batcher.go",
            "old_string": "\tif len(b.pending) == 0 {\n\t\treturn\n\t}\n\tb.mu.Lock()\n\tb.out <- b.pending\n\tb.pending = nil\n\tb.mu.Unlock()",
            "new_string": "\tb.mu.Lock()\n\tbatch := b.pending\n\tb.pending = nil\n\tb.mu.Unlock()\n\tif len(batch) == 0 {\n\t\treturn\n\t}\n\tb.out <- batch",
        },
        "The file /home/mira/ledger/internal/settle/batcher.go has been updated.",
    )
    c.user("Can the test use a fake clock instead of sleeping? I think clockwork is already in go.mod.")
    c.bash("grep clockwork go.mod", "\tgithub.com/jonboulle/clockwork v0.4.0")
    c.say(
        "It is. NewBatcher's signature stays as it is because other teams call it; I'll add an unexported "
        "newBatcherWithClock that NewBatcher calls with clockwork.NewRealClock(), and the test uses the fake one."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/mira/ledger/internal/settle/batcher_test.go",
            "old_string": "\tb := NewBatcher(out, 10*time.Millisecond)\n\tfeed(b, 9)\n\ttime.Sleep(35 * time.Millisecond)",
            "new_string": "\tclock := clockwork.NewFakeClock()\n\tb := newBatcherWithClock(clock, out, 10*time.Millisecond)\n\tfeed(b, 9)\n\tclock.BlockUntil(1)\n\tclock.Advance(30 * time.Millisecond)",
        },
        "The file /home/mira/ledger/internal/settle/batcher_test.go has been updated.",
    )
    c.bash(
        "go test -race ./internal/settle/ -count=500",
        "ok  \tgithub.com/mira/ledger/internal/settle\t21.730s",
    )
    c.bash(
        'git commit -am "settle: take the lock before reading pending in Flush; fake clock in batcher test"',
        "[fix/flaky-batcher 4be0c7a] settle: take the lock before reading pending in Flush; fake clock in batcher test\n"
        " 2 files changed, 31 insertions(+), 14 deletions(-)",
    )
    c.user("Nice. Open a PR against main, say it fixes LED-2291.")
    c.bash(
        'gh pr create --base main --title "Fix flaky TestSettlementBatcher" --body "Fixes LED-2291"',
        "aborted: you must first push the current branch to a remote, or use the --head flag",
        error=True,
    )
    c.bash(
        'git push -u origin fix/flaky-batcher && gh pr create --base main --title "Fix flaky TestSettlementBatcher" --body "Fixes LED-2291"',
        "branch 'fix/flaky-batcher' set up to track 'origin/fix/flaky-batcher'.\nhttps://github.com/mira/ledger/pull/1187",
    )
    summary = _summary(
        "The user asked for the root cause of a flaky Go test; I found a data race and a sleep-based test.",
        """- Find and fix the real cause of the flaky TestSettlementBatcher (fails ~1 in 20 in CI); the user explicitly does not want a longer timeout.
- Keep the public Batcher API unchanged (other teams import it).
- Later: use a fake clock in the test, then open a PR referencing LED-2291.""",
        """- Go race detector, mutex-protected slices, time.Ticker
- jonboulle/clockwork fake clock (already a dependency)""",
        """- internal/settle/batcher.go: Flush now takes b.mu, swaps out the pending slice, unlocks, then sends; added unexported newBatcherWithClock used by NewBatcher.
- internal/settle/batcher_test.go: sleeps replaced by the fake clock (BlockUntil + Advance).""",
        """- `go test -race` reported a DATA RACE between Flush (reading pending without the lock) and Add. Fixed by locking before the read.
- The test depended on real ticker timing; fixed with the fake clock.""",
        """Root cause was two-fold: unsynchronised read of pending in Flush, and a test that relied on scheduling. After the fix the race-enabled suite passed 500 runs.""",
        """- "TestSettlementBatcher is flaky in CI... Find out why and fix it. Don't just bump the timeout... don't touch the public Batcher API"
- "Can the test use a fake clock instead of sleeping?..."
- "Nice. Open a PR against main, say it fixes LED-2291.\"""",
        "- None beyond review of the PR.",
        "The fix is committed on fix/flaky-batcher and PR #1187 is open against main, referencing LED-2291.",
        "Wait for CI on PR #1187 and address review comments if any.",
    )
    labels = [
        Label("request", "Find out why and fix it", False),
        Label("constraint", "Don't just bump the timeout", False),
        Label("constraint", "don't touch the public Batcher API", False),
        Label("measurement", "13", True),
        Label("failure", "WARNING: DATA RACE", False),
        Label("file", "internal/settle/batcher.go", False),
        Label("edit", "batch := b.pending", True),
        Label("decision", "newBatcherWithClock", False),
        Label("edit", "clock.Advance(30 * time.Millisecond)", True),
        Label("identifier", "github.com/jonboulle/clockwork v0.4.0", True),
        Label("measurement", "21.730s", True),
        Label("identifier", "4be0c7a", True),
        Label("failure", "you must first push the current branch to a remote", True),
        Label("identifier", "LED-2291", False),
        Label("identifier", "https://github.com/mira/ledger/pull/1187", False),
    ]
    return DevSession(c, summary, labels)


def arc_cycle_leak() -> DevSession:
    """Rust: a gateway's memory grows ~40 MB/hour; an Arc cycle between session and subscription."""
    c = Conversation("/srv/src/pushgate", "blind-arc-cycle-leak")
    c.user(
        "pushgate's RSS climbs about 40 MB an hour in prod until the OOM killer gets it, roughly every "
        "two days. Find the leak. We can't run heaptrack in prod, reproduce it locally with the load script."
    )
    c.bash(
        "cargo build --release && ./scripts/load.sh --clients 2000 --minutes 10 & sleep 600; ps -o rss= -p $(pgrep pushgate)",
        "    Finished `release` profile [optimized] target(s) in 1m 12s\nload.sh: 2000 clients, churn 15%/min\n"
        + _lines("t={i}m connected=2000 subscribed=6000 reconnects=300", 10)
        + "\n412736",
    )
    c.bash(
        "heaptrack ./target/release/pushgate --config dev.toml",
        'heaptrack output will be written to "/srv/src/pushgate/heaptrack.pushgate.88213.zst"\n'
        "starting application, this might take some time...\nheaptrack stats:\n"
        "\tallocations:          \t18422051\n\tleaked allocations:   \t301877\n\ttemporary allocations:\t2210934\n"
        "Heaptrack finished! Now run the following to investigate the data:\n\n"
        '  heaptrack --analyze "/srv/src/pushgate/heaptrack.pushgate.88213.zst"',
    )
    c.bash(
        "heaptrack_print heaptrack.pushgate.88213.zst | sed -n '/MOST MEMORY LEAKED/,/^$/p' | head -20",
        "MOST MEMORY LEAKED\n187.44MB leaked over 300112 calls from\n"
        "  alloc::sync::Arc<T>::new\n    at src/session.rs:112\n  pushgate::session::Session::subscribe\n"
        "    at src/session.rs:140\n  pushgate::hub::Hub::on_connect\n    at src/hub.rs:77",
    )
    c.tool(
        "Read",
        {"file_path": "/srv/src/pushgate/src/session.rs", "offset": 100, "limit": 50},
        "   100\tpub struct Subscription {\n   101\t    topic: Topic,\n   102\t    session: Arc<Session>,\n   103\t}\n"
        + _lines("   {i}\t", 8, 104)
        + "\n   112\t        let sub = Arc::new(Subscription { topic, session: Arc::clone(self) });\n"
        "   113\t        self.subs.lock().push(Arc::clone(&sub));",
    )
    c.say(
        "Each Session holds its Subscriptions and each Subscription holds an Arc back to its Session, so "
        "when a client disconnects neither count drops to zero: a reference cycle. The back-pointer only "
        "needs to reach the session while it is alive, so it should be a Weak."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/srv/src/pushgate/src/session.rs",
            "old_string": "    session: Arc<Session>,",
            "new_string": "    session: Weak<Session>,",
        },
        "The file /srv/src/pushgate/src/session.rs has been updated.",
    )
    c.bash(
        "cargo build --release",
        "error[E0308]: mismatched types\n   --> src/session.rs:112:62\n    |\n"
        "112 |         let sub = Arc::new(Subscription { topic, session: Arc::clone(self) });\n"
        "    |                                                              ^^^^^^^^^^^^^^^^ expected `Weak<Session>`, found `Arc<Session>`\n"
        'error: could not compile `pushgate` (bin "pushgate") due to 3 previous errors',
        error=True,
    )
    c.tool(
        "Edit",
        {
            "file_path": "/srv/src/pushgate/src/session.rs",
            "old_string": "session: Arc::clone(self) }",
            "new_string": "session: Arc::downgrade(self) }",
        },
        "The file /srv/src/pushgate/src/session.rs has been updated.",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/srv/src/pushgate/src/hub.rs",
            "old_string": "        sub.session.send(msg.clone());",
            "new_string": "        if let Some(session) = sub.session.upgrade() {\n            session.send(msg.clone());\n        }",
        },
        "The file /srv/src/pushgate/src/hub.rs has been updated.",
    )
    c.user(
        "While you're at it, log at debug when a send is dropped because the session is gone, not warn, it'll be noisy."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/srv/src/pushgate/src/hub.rs",
            "old_string": "            session.send(msg.clone());\n        }",
            "new_string": '            session.send(msg.clone());\n        } else {\n            tracing::debug!(topic = %sub.topic, "session gone, message dropped");\n        }',
        },
        "The file /srv/src/pushgate/src/hub.rs has been updated.",
    )
    c.bash(
        "cargo build --release && ./scripts/load.sh --clients 2000 --minutes 10 & sleep 600; ps -o rss= -p $(pgrep pushgate)",
        "    Finished `release` profile [optimized] target(s) in 58.02s\n"
        + _lines("t={i}m connected=2000 subscribed=6000 reconnects=300", 10)
        + "\n96204",
    )
    c.bash(
        "cargo test 2>&1 | tail -3",
        "test result: ok. 64 passed; 0 failed; 2 ignored; 0 measured; 0 filtered out; finished in 1.88s",
    )
    summary = _summary(
        "Memory leak hunt in a Rust push gateway; heaptrack pointed at Subscription creation; an Arc cycle.",
        """The user reported pushgate's memory growing steadily in production until OOM-killed every couple of days, and asked me to find the leak by reproducing it locally with the load script (no profiling in prod).""",
        """- Rust Arc/Weak reference counting, reference cycles
- heaptrack for leak analysis
- tracing log levels""",
        """- src/session.rs: `Subscription.session` changed from a strong Arc to a Weak back-pointer; created with Arc::downgrade.
- src/hub.rs: fan-out upgrades the Weak before sending and logs at debug when the session is gone.""",
        """- Build failed after the type change (mismatched types, expected Weak found Arc); fixed by downgrading at construction.""",
        """heaptrack showed the leaked allocations originate in Session::subscribe. Cause: Session -> Subscription -> Session strong cycle, so disconnected sessions were never freed. After the fix, the 10-minute load run ended with RSS far lower than before and tests pass.""",
        """- "pushgate's RSS climbs about 40 MB an hour in prod until the OOM killer gets it... Find the leak. We can't run heaptrack in prod, reproduce it locally with the load script."
- "While you're at it, log at debug when a send is dropped because the session is gone, not warn, it'll be noisy.\"""",
        "- Commit the fix and possibly add a regression test for session drop.",
        "Leak fixed and verified under the load script; all cargo tests green. Nothing committed yet.",
        "Ask the user whether to commit and add a test asserting a Session is dropped after disconnect.",
    )
    labels = [
        Label("request", "Find the leak", False),
        Label("constraint", "We can't run heaptrack in prod", False),
        Label("measurement", "40 MB an hour", False),
        Label("measurement", "412736", True),
        Label("measurement", "96204", True),
        Label("measurement", "301877", True),
        Label("measurement", "187.44MB", True),
        Label("file", "src/session.rs", False),
        Label("edit", "session: Weak<Session>", False),
        Label("failure", "expected `Weak<Session>`, found `Arc<Session>`", False),
        Label("decision", "should be a Weak", False),
        Label("constraint", "log at debug when a send is dropped", False),
        Label("identifier", "heaptrack.pushgate.88213.zst", True),
        Label("measurement", "64 passed", True),
    ]
    return DevSession(c, summary, labels)


def orders_api_v2() -> DevSession:
    """TypeScript: an /v2 orders API with a breaking money format while /v1 keeps working."""
    c = Conversation("/Users/dana/work/storefront-api", "blind-orders-api-v2")
    c.user(
        "We need a v2 of GET /orders where amounts are integer minor units (cents) instead of decimal "
        "strings. v1 has to keep working unchanged until 2027-03-31 because the iOS app 4.x can't be "
        "force-updated. Versioning by URL prefix, not by header, the CDN can't vary on headers."
    )
    c.tool(
        "Grep",
        {"pattern": "router\\.get\\('/orders", "path": "src", "output_mode": "content", "-n": True},
        "src/routes/orders.ts:14:router.get('/orders', auth, async (req, res) => {\n"
        "src/routes/orders.ts:41:router.get('/orders/:id', auth, async (req, res) => {",
    )
    c.tool(
        "Read",
        {"file_path": "/Users/dana/work/storefront-api/src/routes/orders.ts"},
        "     1\timport { Router } from 'express';\n     2\timport { auth } from '../middleware/auth';\n"
        "     3\timport { listOrders, getOrder } from '../services/orders';\n     4\timport { toDecimalString } from '../money';\n"
        + _lines("     {i}\t", 9, 5)
        + "\n    14\trouter.get('/orders', auth, async (req, res) => {\n"
        "    15\t  const orders = await listOrders(req.user.id, { limit: Number(req.query.limit ?? 50) });\n"
        "    16\t  res.json(orders.map((o) => ({ ...o, total: toDecimalString(o.totalMinor, o.currency) })));\n    17\t});",
    )
    c.say(
        "I'll split the serialisation out of the route: a v1 serializer that keeps the decimal strings byte for byte, "
        "and a v2 serializer with totalMinor and currency. Both routers share listOrders, so the query stays one."
    )
    c.tool(
        "Write",
        {
            "file_path": "/Users/dana/work/storefront-api/src/serializers/order.ts",
            "content": "import { toDecimalString } from '../money';\nimport type { Order } from '../services/orders';\n\n"
            "export const orderV1 = (o: Order) => ({ ...o, total: toDecimalString(o.totalMinor, o.currency) });\n\n"
            "export const orderV2 = (o: Order) => ({ id: o.id, status: o.status, totalMinor: o.totalMinor, currency: o.currency, placedAt: o.placedAt });\n",
        },
        "File created successfully at: /Users/dana/work/storefront-api/src/serializers/order.ts",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/Users/dana/work/storefront-api/src/app.ts",
            "old_string": "app.use('/', ordersRouter);",
            "new_string": "app.use('/', ordersRouter); // v1, unprefixed: kept until 2027-03-31\napp.use('/v2', ordersV2Router);",
        },
        "The file /Users/dana/work/storefront-api/src/app.ts has been updated.",
    )
    c.bash(
        "npx tsc --noEmit",
        "src/routes/ordersV2.ts(9,39): error TS2339: Property 'placedAt' does not exist on type 'Order'.\n\nFound 1 error in src/routes/ordersV2.ts:9",
        error=True,
    )
    c.bash("grep -n 'createdAt\\|placed' src/services/orders.ts", "12:  createdAt: Date;")
    c.tool(
        "Edit",
        {
            "file_path": "/Users/dana/work/storefront-api/src/serializers/order.ts",
            "old_string": "placedAt: o.placedAt",
            "new_string": "placedAt: o.createdAt.toISOString()",
        },
        "The file /Users/dana/work/storefront-api/src/serializers/order.ts has been updated.",
    )
    c.user(
        "Also add a Sunset header on v1 responses so clients see the date. And a snapshot test proving v1 output didn't change."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/Users/dana/work/storefront-api/src/routes/orders.ts",
            "old_string": "router.get('/orders', auth, async (req, res) => {",
            "new_string": "router.get('/orders', auth, async (req, res) => {\n  res.set('Sunset', 'Wed, 31 Mar 2027 23:59:59 GMT');",
        },
        "The file /Users/dana/work/storefront-api/src/routes/orders.ts has been updated.",
    )
    c.bash(
        "npx jest src/routes --ci",
        "PASS src/routes/orders.v1.snapshot.test.ts\nPASS src/routes/ordersV2.test.ts\nPASS src/routes/orders.test.ts\n\n"
        "Test Suites: 3 passed, 3 total\nTests:       27 passed, 27 total\nSnapshots:   4 passed, 4 total\nTime:        6.214 s",
    )
    summary = _summary(
        "API versioning for the orders endpoint; v1 must remain unchanged; URL-prefix versioning.",
        """- Add a v2 GET /orders returning amounts as integer minor units instead of decimal strings.
- Keep v1 byte-for-byte unchanged until the end of March 2027 (old iOS app versions can't be forced to update).
- Version by URL prefix (/v2), not headers, because of the CDN.
- Add a Sunset header on v1 and a snapshot test proving v1 output is unchanged.""",
        """- Express routers, serializer functions per API version
- Sunset HTTP header (RFC 8594)
- Jest snapshot tests""",
        """- src/serializers/order.ts (new): orderV1 (decimal total) and orderV2 (totalMinor + currency + placedAt from createdAt).
- src/app.ts: mounts the v2 router under /v2; v1 stays unprefixed.
- src/routes/orders.ts: sets the Sunset header on v1.""",
        """- tsc: 'placedAt' does not exist on Order; the model field is createdAt, mapped in the serializer.""",
        """Shared the listOrders query between versions; serialisation split per version.""",
        """- "We need a v2 of GET /orders where amounts are integer minor units (cents)... v1 has to keep working unchanged until 2027-03-31... Versioning by URL prefix, not by header..."
- "Also add a Sunset header on v1 responses so clients see the date. And a snapshot test proving v1 output didn't change.\"""",
        "- GET /orders/:id v2 equivalent was not mentioned; may be needed.",
        "All route test suites pass including the v1 snapshot test.",
        "Ask whether /orders/:id also needs a v2 variant.",
    )
    labels = [
        Label("request", "integer minor units (cents) instead of decimal strings", False),
        Label("constraint", "v1 has to keep working unchanged until 2027-03-31", False),
        Label("constraint", "the CDN can't vary on headers", False),
        Label("file", "src/routes/orders.ts", False),
        Label("file", "src/serializers/order.ts", False),
        Label("decision", "Both routers share listOrders", False),
        Label("failure", "Property 'placedAt' does not exist on type 'Order'", False),
        Label("edit", "o.createdAt.toISOString()", False),
        Label("edit", "Wed, 31 Mar 2027 23:59:59 GMT", True),
        Label("request", "a snapshot test proving v1 output didn't change", False),
        Label("measurement", "27 passed", True),
        Label("file", "src/routes/ordersV2.ts", True),
        Label("identifier", "ordersV2Router", True),
    ]
    return DevSession(c, summary, labels)


def polish_plurals() -> DevSession:
    """Python/Django: Polish plural forms wrong in the invoice emails; msgfmt rejects the catalogue."""
    c = Conversation("/home/kuba/proj/fakturka", "blind-polish-plurals")
    c.user(
        "Polish customers get '5 faktura' in the reminder email, should be '5 faktur'. Fix the plurals for pl. "
        "Translations come from Weblate, so don't hand-edit msgstr lines for other languages, only pl."
    )
    c.tool(
        "Grep",
        {"pattern": "faktur", "path": "locale/pl/LC_MESSAGES/django.po", "output_mode": "content", "-n": True, "-C": 2},
        '412-#: billing/emails.py:88\n413-msgid "%(count)s invoice"\n414-msgid_plural "%(count)s invoices"\n'
        '415:msgstr[0] "%(count)s faktura"\n416:msgstr[1] "%(count)s faktura"',
    )
    c.bash(
        "head -20 locale/pl/LC_MESSAGES/django.po",
        '# Polish translation for fakturka.\nmsgid ""\nmsgstr ""\n"Project-Id-Version: fakturka 3.2\\n"\n'
        '"Language: pl\\n"\n"MIME-Version: 1.0\\n"\n"Content-Type: text/plain; charset=UTF-8\\n"\n'
        '"Plural-Forms: nplurals=2; plural=(n != 1);\\n"',
    )
    c.say(
        "Two problems. The header says nplurals=2, which is the English rule; Polish has three forms "
        "(1 faktura, 2-4 faktury, 5+ faktur). And the catalogue only has two msgstr entries, both 'faktura'."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/kuba/proj/fakturka/locale/pl/LC_MESSAGES/django.po",
            "old_string": '"Plural-Forms: nplurals=2; plural=(n != 1);\\n"',
            "new_string": '"Plural-Forms: nplurals=3; plural=(n==1 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);\\n"',
        },
        "The file /home/kuba/proj/fakturka/locale/pl/LC_MESSAGES/django.po has been updated.",
    )
    c.bash(
        "msgfmt --check -o /dev/null locale/pl/LC_MESSAGES/django.po",
        "locale/pl/LC_MESSAGES/django.po:415: nplurals = 3...\n"
        "locale/pl/LC_MESSAGES/django.po:413: ...but some messages have only 2 plural forms\n"
        "msgfmt: found 37 fatal errors",
        error=True,
    )
    c.say(
        "37 entries in pl have only two forms. I'll fill msgstr[2] for the invoice one properly and, for the "
        "other 36, copy msgstr[1] into msgstr[2] and mark them fuzzy so the Polish translators on Weblate review "
        "them, rather than inventing Polish."
    )
    c.bash(
        "python scripts/po_add_plural_form.py locale/pl/LC_MESSAGES/django.po --copy-from 1 --fuzzy",
        "updated 37 entries, marked 36 fuzzy (1 already translated by hand)",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/kuba/proj/fakturka/locale/pl/LC_MESSAGES/django.po",
            "old_string": 'msgstr[1] "%(count)s faktura"\nmsgstr[2] "%(count)s faktura"',
            "new_string": 'msgstr[1] "%(count)s faktury"\nmsgstr[2] "%(count)s faktur"',
        },
        "The file /home/kuba/proj/fakturka/locale/pl/LC_MESSAGES/django.po has been updated.",
    )
    c.bash(
        "msgfmt --check --statistics -o /dev/null locale/pl/LC_MESSAGES/django.po",
        "1184 translated messages, 36 fuzzy translations.",
    )
    c.bash(
        "python manage.py compilemessages -l pl && python -m pytest billing/tests/test_reminder_email.py -q",
        "processing file django.po in /home/kuba/proj/fakturka/locale/pl/LC_MESSAGES\n"
        "FAILED billing/tests/test_reminder_email.py::test_plural_pl[22] - AssertionError: assert '22 faktur' == '22 faktury'\n"
        "1 failed, 5 passed in 0.93s",
        error=True,
    )
    c.say(
        "The test's expectation for 22 was wrong, not the rule: 22 takes 'faktury' (n%10 is 2 and n%100 is 22, outside 12-14). Fixing the test table."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/kuba/proj/fakturka/billing/tests/test_reminder_email.py",
            "old_string": "(22, '22 faktur'),",
            "new_string": "(22, '22 faktury'),\n    (12, '12 faktur'),",
        },
        "The file /home/kuba/proj/fakturka/billing/tests/test_reminder_email.py has been updated.",
    )
    c.bash("python -m pytest billing/tests/test_reminder_email.py -q", "7 passed in 0.88s")
    c.user("Good. Leave the fuzzy ones, I'll ping Agnieszka on Weblate. Don't commit the .mo file, CI builds it.")
    summary = _summary(
        "Polish plural forms broken in reminder emails; header rule and catalogue entries fixed.",
        """Fix Polish pluralisation of the invoice count in reminder emails ("5 faktura" should be "5 faktur"). Only the pl catalogue may be edited by hand; other languages come from Weblate.""",
        """- gettext Plural-Forms headers; Polish needs three forms
- msgfmt --check, Django compilemessages
- fuzzy entries for translator review""",
        """- locale/pl/LC_MESSAGES/django.po: Plural-Forms changed to the three-form Polish rule; invoice entry now faktura / faktury / faktur; the remaining entries got a third form copied from the second and marked fuzzy.
- billing/tests/test_reminder_email.py: corrected expectations.""",
        """- msgfmt rejected the catalogue after the header change because many entries had only two plural forms; fixed with the helper script (copy + fuzzy).
- One test expectation was wrong and was corrected.""",
        """Root cause: the pl catalogue used the English plural rule. Decided not to invent Polish translations for the other entries; they are left fuzzy for the translators.""",
        """- "Polish customers get '5 faktura' in the reminder email, should be '5 faktur'. Fix the plurals for pl. Translations come from Weblate, so don't hand-edit msgstr lines for other languages, only pl."
- "Good. Leave the fuzzy ones, I'll ping Agnieszka on Weblate. Don't commit the .mo file, CI builds it.\"""",
        "- The user will handle the fuzzy entries with the translator.",
        "Reminder email tests pass; changes are uncommitted.",
        "Commit the .po and test changes (without the compiled .mo).",
    )
    labels = [
        Label("request", "Fix the plurals for pl", False),
        Label("constraint", "don't hand-edit msgstr lines for other languages", False),
        Label("identifier", "nplurals=2; plural=(n != 1)", False),
        Label("edit", "nplurals=3", False),
        Label("failure", "some messages have only 2 plural forms", False),
        Label("measurement", "37 fatal errors", True),
        Label("decision", "mark them fuzzy so the Polish translators on Weblate review them", False),
        Label("measurement", "1184 translated messages", True),
        Label("failure", "assert '22 faktur' == '22 faktury'", False),
        Label("edit", "(12, '12 faktur')", True),
        Label("file", "billing/tests/test_reminder_email.py", False),
        Label("identifier", "scripts/po_add_plural_form.py", True),
        Label("constraint", "Don't commit the .mo file", False),
    ]
    return DevSession(c, summary, labels)


def checkout_rollout() -> DevSession:
    """Kubernetes: a stuck rollout of checkout; readiness probe on the wrong port; rollback then fix."""
    c = Conversation("/home/ops/deploy/k8s", "blind-checkout-rollout")
    c.user(
        "The checkout rollout to prod has been stuck for 20 minutes. Figure out what's wrong. Don't delete "
        "any pods by hand, and if you need to roll back use kubectl rollout undo, nothing else."
    )
    c.bash(
        "kubectl -n shop rollout status deploy/checkout --timeout=10s",
        'Waiting for deployment "checkout" rollout to finish: 1 out of 6 new replicas have been updated...\n'
        "error: timed out waiting for the condition",
        error=True,
    )
    c.bash(
        "kubectl -n shop get pods -l app=checkout",
        "NAME                        READY   STATUS    RESTARTS   AGE\n"
        + _lines("checkout-6d9f8b7c4-x{i}q2k   1/1     Running   0          3d", 6)
        + "\ncheckout-7f5c9d8b6-wp4rz    0/1     Running   0          21m",
    )
    c.bash(
        "kubectl -n shop describe pod checkout-7f5c9d8b6-wp4rz | tail -8",
        "Events:\n  Type     Reason     Age                  From     Message\n  ----     ------     ----                 ----     -------\n"
        '  Normal   Pulled     21m                  kubelet  Container image "registry.internal/shop/checkout:2.31.0" already present on machine\n'
        '  Warning  Unhealthy  77s (x126 over 21m)  kubelet  Readiness probe failed: Get "http://10.42.3.17:8080/healthz": dial tcp 10.42.3.17:8080: connect: connection refused',
    )
    c.bash(
        "kubectl -n shop logs checkout-7f5c9d8b6-wp4rz | head -5",
        "2026-12-04T10:02:11Z INFO  config loaded env=prod\n2026-12-04T10:02:11Z INFO  http server listening addr=:8081\n"
        "2026-12-04T10:02:11Z INFO  metrics listening addr=:9090",
    )
    c.say(
        "2.31.0 listens on 8081 (the release notes moved it to free 8080 for the sidecar) but the probe still "
        "points at 8080, so the new pod never becomes ready and maxUnavailable=0 keeps the rollout waiting. "
        "Prod traffic is still on the old 2.30.4 pods, so nothing is down."
    )
    c.user("Roll back first, then fix the manifest and we'll redeploy after lunch.")
    c.bash(
        "kubectl -n shop rollout undo deploy/checkout && kubectl -n shop rollout status deploy/checkout",
        'deployment.apps/checkout rolled back\ndeployment "checkout" successfully rolled out',
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/ops/deploy/k8s/shop/checkout/deployment.yaml",
            "old_string": "          readinessProbe:\n            httpGet:\n              path: /healthz\n              port: 8080",
            "new_string": "          readinessProbe:\n            httpGet:\n              path: /healthz\n              port: http",
        },
        "The file /home/ops/deploy/k8s/shop/checkout/deployment.yaml has been updated.",
    )
    c.say(
        "Pointing the probe at the named port 'http' so the next port change only touches containerPort. Setting containerPort to 8081 too."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/ops/deploy/k8s/shop/checkout/deployment.yaml",
            "old_string": "            - name: http\n              containerPort: 8080",
            "new_string": "            - name: http\n              containerPort: 8081",
        },
        "The file /home/ops/deploy/k8s/shop/checkout/deployment.yaml has been updated.",
    )
    c.bash(
        "kubectl apply --dry-run=server -f shop/checkout/",
        'deployment.apps/checkout configured (server dry run)\nThe Service "checkout" is invalid: spec.ports[0].targetPort: Invalid value: "8080": must be a named port that exists',
        error=True,
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/ops/deploy/k8s/shop/checkout/service.yaml",
            "old_string": "      targetPort: 8080",
            "new_string": "      targetPort: http",
        },
        "The file /home/ops/deploy/k8s/shop/checkout/service.yaml has been updated.",
    )
    c.bash(
        "kubectl apply --dry-run=server -f shop/checkout/",
        "deployment.apps/checkout configured (server dry run)\nservice/checkout configured (server dry run)",
    )
    summary = _summary(
        "Stuck checkout rollout; readiness probe pointed at the old port; rolled back; manifests fixed.",
        """- Diagnose the checkout deployment rollout stuck in prod.
- Constraints: no manual pod deletion; roll back only via `kubectl rollout undo`.
- Then: roll back, fix the manifests, redeploy later (after lunch).""",
        """- Kubernetes rolling updates with maxUnavailable=0, readiness probes, named container ports""",
        """- k8s/shop/checkout/deployment.yaml: readiness probe now uses the named port `http`; containerPort updated to the new port.
- k8s/shop/checkout/service.yaml: targetPort uses the named port.""",
        """- rollout status timed out: only 1 of 6 replicas updated.
- New pod never became ready: readiness probe got connection refused on 8080 because the new version listens on 8081.
- Server-side dry run rejected the Service targetPort; switched it to the named port.""",
        """The new image moved its HTTP port; the probe and service still used the old one. Old pods kept serving so there was no outage. Rolled back with rollout undo.""",
        """- "The checkout rollout to prod has been stuck for 20 minutes. Figure out what's wrong. Don't delete any pods by hand, and if you need to roll back use kubectl rollout undo, nothing else."
- "Roll back first, then fix the manifest and we'll redeploy after lunch.\"""",
        "- Redeploy the new version with the fixed manifests after lunch.",
        "Rollback done; manifest fixes pass a server-side dry run; not applied yet.",
        "When the user is back, apply the manifests and watch the rollout.",
    )
    labels = [
        Label("request", "Figure out what's wrong", False),
        Label("constraint", "Don't delete any pods by hand", False),
        Label("constraint", "use kubectl rollout undo, nothing else", False),
        Label("failure", "1 out of 6 new replicas have been updated", False),
        Label("identifier", "checkout-7f5c9d8b6-wp4rz", True),
        Label("identifier", "registry.internal/shop/checkout:2.31.0", True),
        Label("identifier", "2.30.4", True),
        Label("failure", "Readiness probe failed", False),
        Label("decision", "so the next port change only touches containerPort", True),
        Label("edit", "containerPort: 8081", False),
        Label("failure", "must be a named port that exists", False),
        Label("file", "shop/checkout/service.yaml", False),
        Label("request", "Roll back first", False),
    ]
    return DevSession(c, summary, labels)


SESSIONS = (flaky_batcher, arc_cycle_leak, orders_api_v2, polish_plurals, checkout_rollout)
