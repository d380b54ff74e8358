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
    c.bash("git status --short", " M internal/settle/batcher.go\n M internal/settle/batcher_test.go")
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
        Label("edit", "batch := b.pending", False),
        Label("decision", "newBatcherWithClock", False),
        Label("edit", "clock.Advance(30 * time.Millisecond)", False),
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
    c.bash("heaptrack --version", "bash: heaptrack: command not found", error=True)
    c.bash(
        "sudo apt-get install -y heaptrack", "Reading package lists... Done\nSetting up heaptrack (1.5.0+dfsg1-2) ..."
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
        Label("failure", "heaptrack: command not found", True),
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
        "Also add a Sunset header on v1 responses so clients see the date. And a snapshot test proving v1 output didn't change. "
        "Add /v2/orders to openapi.yaml as well."
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
- "Also add a Sunset header on v1 responses so clients see the date. And a snapshot test proving v1 output didn't change...\"""",
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
        Label("edit", "Wed, 31 Mar 2027 23:59:59 GMT", False),
        Label("request", "a snapshot test proving v1 output didn't change", False),
        Label("request", "Add /v2/orders to openapi.yaml as well", True),
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
- "Good. Leave the fuzzy ones, I'll ping Agnieszka on Weblate...\"""",
        "- The user will handle the fuzzy entries with the translator.",
        "Reminder email tests pass; changes are uncommitted.",
        "Commit the catalogue and test changes.",
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
        Label("constraint", "Don't commit the .mo file", True),
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
    c.user(
        "Roll back first, then fix the manifest and we'll redeploy after lunch. Post in #deploys that checkout is back on 2.30.4."
    )
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
- "Roll back first, then fix the manifest and we'll redeploy after lunch...\"""",
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
        Label("request", "Post in #deploys that checkout is back on 2.30.4", True),
    ]
    return DevSession(c, summary, labels)


def split_full_name() -> DevSession:
    """SQL/Alembic: splitting customers.full_name into given and family names, in batches."""
    c = Conversation("/home/li/src/crm", "blind-split-full-name")
    c.user(
        "Write the migration that splits customers.full_name into given_name and family_name. The table has "
        "about 9 million rows in prod, so no single UPDATE over the whole table; batch it and make it resumable. "
        "Keep full_name for now, the reporting jobs still read it."
    )
    c.bash("git status", "On branch feat/split-names\nnothing to commit, working tree clean")
    c.bash(
        "ls migrations/versions | tail -3",
        "a03c55e1f7d2_add_consent_flags.py\nb7e21c9d04aa_customer_tags.py\n__pycache__",
    )
    c.bash(
        "alembic heads && alembic current",
        "b7e21c9d04aa (head)\nINFO  [alembic.runtime.migration] Context impl PostgreSQLImpl.\n"
        "INFO  [alembic.runtime.migration] Will assume transactional DDL.\nb7e21c9d04aa (head)",
    )
    c.bash(
        "psql crm_dev -c \"SELECT count(*), count(*) FILTER (WHERE full_name !~ ' ') AS one_word, "
        "count(*) FILTER (WHERE full_name ~ ',') AS with_comma FROM customers\"",
        "  count  | one_word | with_comma\n---------+----------+------------\n 412093 |     3871 |        958\n(1 row)",
    )
    c.say(
        "958 names in dev have a comma, like 'Nguyen, Thi Mai', which is family-name-first; and 3871 are a single word. "
        "Splitting on the last space would get the comma ones backwards, so those go family = before the comma. "
        "Single words go to given_name with family_name NULL rather than guessing."
    )
    c.user(
        "Agreed on NULL. For anything you can't parse confidently, also set name_needs_review = true so support can fix them. "
        "Only run it against crm_dev, staging's database is being restored this week."
    )
    c.tool(
        "Write",
        {
            "file_path": "/home/li/src/crm/migrations/versions/c41f0e7a9b12_split_full_name.py",
            "content": '"""split full_name\n\nRevision ID: c41f0e7a9b12\nRevises: b7e21c9d04aa\n"""\n'
            "from alembic import op\nimport sqlalchemy as sa\n\nrevision = 'c41f0e7a9b12'\ndown_revision = 'b7e21c9d04aa'\n"
            "BATCH = 20_000\n\n\ndef upgrade():\n"
            "    op.add_column('customers', sa.Column('given_name', sa.Text()))\n"
            "    op.add_column('customers', sa.Column('family_name', sa.Text()))\n"
            "    op.add_column('customers', sa.Column('name_needs_review', sa.Boolean(), server_default=sa.false(), nullable=False))\n"
            "    # the backfill runs in scripts/backfill_names.py, outside the migration's transaction\n",
        },
        "File created successfully at: /home/li/src/crm/migrations/versions/c41f0e7a9b12_split_full_name.py",
    )
    c.tool(
        "Write",
        {
            "file_path": "/home/li/src/crm/scripts/backfill_names.py",
            "content": "SQL = '''\nWITH batch AS (\n  SELECT id FROM customers\n  WHERE given_name IS NULL AND id > %(after)s\n  ORDER BY id LIMIT %(size)s\n)\n"
            "UPDATE customers c SET\n  given_name = CASE WHEN c.full_name ~ ',' THEN btrim(split_part(c.full_name, ',', 2))\n"
            "                    ELSE regexp_replace(c.full_name, '\\\\s+\\\\S+$', '') END,\n"
            "  family_name = CASE WHEN c.full_name ~ ',' THEN btrim(split_part(c.full_name, ',', 1))\n"
            "                     WHEN c.full_name ~ ' ' THEN substring(c.full_name from '(\\\\S+)$') END,\n"
            "  name_needs_review = c.full_name !~ ' ' OR c.full_name ~ ',.*,'\nFROM batch WHERE c.id = batch.id\nRETURNING c.id\n'''\n",
        },
        "File created successfully at: /home/li/src/crm/scripts/backfill_names.py",
    )
    c.bash(
        "alembic upgrade head && python scripts/backfill_names.py --dsn postgresql:///crm_dev --size 20000",
        "INFO  [alembic.runtime.migration] Running upgrade b7e21c9d04aa -> c41f0e7a9b12, split full_name\n"
        + _lines("batch {i}: 20000 rows, last id {i}98213", 3)
        + '\nTraceback (most recent call last):\n  File "/home/li/src/crm/scripts/backfill_names.py", line 41, in <module>\n'
        "psycopg.errors.QueryCanceled: canceling statement due to statement timeout",
        error=True,
    )
    c.say(
        "The batch after id 298213 hit the dev statement_timeout of 5s. The WHERE given_name IS NULL scan without "
        "an index gets slower as the table fills; I'll key the batches on id only and keep the last id in a "
        "progress table, which also makes it resumable."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/li/src/crm/scripts/backfill_names.py",
            "old_string": "  WHERE given_name IS NULL AND id > %(after)s",
            "new_string": "  WHERE id > %(after)s",
        },
        "The file /home/li/src/crm/scripts/backfill_names.py has been updated.",
    )
    c.bash(
        "python scripts/backfill_names.py --dsn postgresql:///crm_dev --size 20000 --resume",
        "resuming after id 298213 (from backfill_progress)\n"
        + _lines("batch {i}: 20000 rows", 6, 4)
        + "\nbatch 21: 12093 rows\ndone: 412093 rows in 48.6 s, 4829 flagged for review",
    )
    c.bash(
        "psql crm_dev -c \"SELECT full_name, given_name, family_name FROM customers WHERE full_name ~ ',' LIMIT 3\"",
        "    full_name     | given_name | family_name\n------------------+------------+-------------\n"
        " Nguyen, Thi Mai  | Thi Mai    | Nguyen\n O'Brien, Seán    | Seán       | O'Brien\n Smith, J.        | J.         | Smith\n(3 rows)",
    )
    summary = _summary(
        "Migration to split customers.full_name; batched, resumable backfill outside the migration.",
        """- Add a migration splitting customers.full_name into given_name and family_name.
- Prod has ~9M rows: no single full-table UPDATE; batch it and make it resumable.
- Keep full_name (reporting jobs still use it).
- Unparseable names: family_name NULL and name_needs_review = true.""",
        """- Alembic revisions; PostgreSQL regex functions (split_part, regexp_replace)
- Keyset pagination by id for batching; progress table for resume""",
        """- migrations/versions/c41f0e7a9b12_split_full_name.py: new revision on top of the previous head; adds given_name, family_name, name_needs_review.
- scripts/backfill_names.py: batched UPDATE; "Family, Given" names handled by splitting at the comma; single words go to given_name only.""",
        """- The backfill hit a statement timeout partway through (the given_name IS NULL filter got slower as rows filled). Fixed by paging on id only and storing the last id in a progress table; resumed successfully.""",
        """Comma-separated names are family-first, so splitting on the last space would reverse them. Full dev backfill completed; spot check of comma names looks right.""",
        """- "Write the migration that splits customers.full_name into given_name and family_name... about 9 million rows in prod, so no single UPDATE... batch it and make it resumable. Keep full_name for now, the reporting jobs still read it."
- "Agreed on NULL. For anything you can't parse confidently, also set name_needs_review = true so support can fix them...\"""",
        "- Plan the staging and prod backfill runs.",
        "Dev backfill finished and verified on sample rows.",
        "Prepare the staging run of the migration and backfill.",
    )
    labels = [
        Label("request", "splits customers.full_name into given_name and family_name", False),
        Label("constraint", "no single UPDATE over the whole table", False),
        Label("constraint", "Keep full_name for now", False),
        Label("identifier", "b7e21c9d04aa", True),
        Label("identifier", "c41f0e7a9b12", False),
        Label("measurement", "958", True),
        Label("measurement", "3871", True),
        Label("decision", "Single words go to given_name with family_name NULL", False),
        Label("constraint", "set name_needs_review = true", False),
        Label("constraint", "staging's database is being restored this week", True),
        Label("failure", "canceling statement due to statement timeout", False),
        Label("identifier", "298213", True),
        Label("edit", "WHERE id > %(after)s", False),
        Label("measurement", "48.6 s", True),
        Label("measurement", "4829 flagged for review", True),
        Label("file", "scripts/backfill_names.py", False),
    ]
    return DevSession(c, summary, labels)


def json_logging() -> DevSession:
    """Java/logback: JSON logs with a request id in MDC; a test broken by the encoder change."""
    c = Conversation("/home/pat/code/billing-service", "blind-json-logging")
    c.user(
        "Switch billing-service to JSON logs so Loki can parse them, and put the X-Request-Id header into every "
        "log line of the request. Local dev should keep the plain console pattern, only the prod profile gets JSON."
    )
    c.bash(
        "grep -n -A3 'logstash\\|logback' pom.xml",
        "87:    <dependency>\n88:      <groupId>net.logstash.logback</groupId>\n89:      <artifactId>logstash-logback-encoder</artifactId>\n"
        "90:      <version>7.4</version>",
    )
    c.tool(
        "Read",
        {"file_path": "/home/pat/code/billing-service/src/main/resources/logback-spring.xml"},
        '     1\t<configuration>\n     2\t  <appender name="CONSOLE" class="ch.qos.logback.core.ConsoleAppender">\n'
        "     3\t    <encoder><pattern>%d{HH:mm:ss.SSS} %-5level %logger{36} - %msg%n</pattern></encoder>\n     4\t  </appender>\n"
        '     5\t  <root level="INFO"><appender-ref ref="CONSOLE"/></root>\n     6\t</configuration>',
    )
    c.bash(
        "grep -rn 'profiles' src/main/resources/application-prod.yml deploy/helm/values-prod.yaml",
        "deploy/helm/values-prod.yaml:31:      SPRING_PROFILES_ACTIVE: prod,k8s",
    )
    c.tool(
        "Write",
        {
            "file_path": "/home/pat/code/billing-service/src/main/resources/logback-spring.xml",
            "content": '<configuration>\n  <springProfile name="!prod">\n    <appender name="CONSOLE" class="ch.qos.logback.core.ConsoleAppender">\n'
            "      <encoder><pattern>%d{HH:mm:ss.SSS} %-5level [%X{requestId}] %logger{36} - %msg%n</pattern></encoder>\n    </appender>\n"
            '    <root level="INFO"><appender-ref ref="CONSOLE"/></root>\n  </springProfile>\n  <springProfile name="prod">\n'
            '    <appender name="JSON" class="ch.qos.logback.core.ConsoleAppender">\n'
            '      <encoder class="net.logstash.logback.encoder.LogstashEncoder"><includeMdcKeyName>requestId</includeMdcKeyName></encoder>\n'
            '    </appender>\n    <root level="INFO"><appender-ref ref="JSON"/></root>\n  </springProfile>\n</configuration>\n',
        },
        "File created successfully at: /home/pat/code/billing-service/src/main/resources/logback-spring.xml",
    )
    c.tool(
        "Write",
        {
            "file_path": "/home/pat/code/billing-service/src/main/java/com/acme/billing/web/RequestIdFilter.java",
            "content": "package com.acme.billing.web;\n\n@Component\n@Order(Ordered.HIGHEST_PRECEDENCE)\npublic class RequestIdFilter extends OncePerRequestFilter {\n"
            "  @Override\n  protected void doFilterInternal(HttpServletRequest req, HttpServletResponse res, FilterChain chain) throws ServletException, IOException {\n"
            '    String id = Optional.ofNullable(req.getHeader("X-Request-Id")).filter(s -> s.matches("[A-Za-z0-9-]{1,64}")).orElseGet(() -> UUID.randomUUID().toString());\n'
            '    MDC.put("requestId", id);\n    try { chain.doFilter(req, res); } finally { MDC.remove("requestId"); }\n  }\n}\n',
        },
        "File created successfully at: /home/pat/code/billing-service/src/main/java/com/acme/billing/web/RequestIdFilter.java",
    )
    c.say(
        "The header comes from the client, so the filter only accepts up to 64 characters of letters, digits and dashes "
        "and otherwise makes a fresh UUID; a raw header in the logs would let anyone inject fake log fields. "
        "MDC.remove in finally because Tomcat reuses threads."
    )
    c.bash(
        "./mvnw -q test",
        "[ERROR] Tests run: 212, Failures: 1, Errors: 0, Skipped: 3\n"
        "[ERROR] Failures: \n[ERROR]   InvoiceAuditLogTest.logsInvoiceNumber:44 expected: <true> but was: <false>\n"
        "[ERROR] BUILD FAILURE",
        error=True,
    )
    c.bash(
        "sed -n 30,46p src/test/java/com/acme/billing/audit/InvoiceAuditLogTest.java",
        '    @Test\n    void logsInvoiceNumber() {\n        audit.record(invoice("INV-2026-00917"));\n'
        '        assertTrue(output.getOut().contains("invoice=INV-2026-00917"));\n    }',
    )
    c.say(
        "The test matches the console text, and the test profile is not prod, so the pattern changed only by the "
        "[%X{requestId}] part... the real cause is that the audit logger now prints `[] ` before the logger name. "
        "The assertion is on 'invoice=INV-2026-00917', which is still there; let me rerun it alone."
    )
    c.bash(
        "./mvnw -q test -Dtest=InvoiceAuditLogTest -Dspring.profiles.active=test",
        "[ERROR]   InvoiceAuditLogTest.logsInvoiceNumber:44 expected: <true> but was: <false>\n"
        "[INFO] captured: 10:14:03.221 INFO  [] c.a.b.audit.InvoiceAudit - invoice INV-2026-00917 recorded",
        error=True,
    )
    c.user(
        "Oh, that one was already broken on main, Priya changed the audit message last week. Fix the assertion to match the new message, don't change the message."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/pat/code/billing-service/src/test/java/com/acme/billing/audit/InvoiceAuditLogTest.java",
            "old_string": 'contains("invoice=INV-2026-00917")',
            "new_string": 'contains("invoice INV-2026-00917 recorded")',
        },
        "The file /home/pat/code/billing-service/src/test/java/com/acme/billing/audit/InvoiceAuditLogTest.java has been updated.",
    )
    c.bash(
        "git diff --stat",
        " src/main/resources/logback-spring.xml                         | 24 ++++++++++++++------\n src/test/java/com/acme/billing/audit/InvoiceAuditLogTest.java |  2 +-\n 2 files changed, 18 insertions(+), 8 deletions(-)",
    )
    c.bash("./mvnw -q test", "[INFO] Tests run: 212, Failures: 0, Errors: 0, Skipped: 3\n[INFO] BUILD SUCCESS")
    summary = _summary(
        "Structured logging for billing-service with a per-request id; one pre-existing test failure fixed.",
        """- Make billing-service log JSON (for Loki) with the X-Request-Id in every log line of a request.
- Only the prod profile should use JSON; local/dev keeps the plain console pattern.
- Fix the failing audit log test by updating the assertion (not the log message).""",
        """- logback springProfile blocks; logstash-logback-encoder LogstashEncoder; SLF4J MDC
- Servlet filter (OncePerRequestFilter) at highest precedence""",
        """- src/main/resources/logback-spring.xml: rewritten with a non-prod console appender (pattern now includes the request id) and a prod JSON appender including the requestId MDC key.
- web/RequestIdFilter.java (new): reads X-Request-Id into MDC, clears it in finally.
- audit/InvoiceAuditLogTest.java: assertion updated to the current audit message.""",
        """- InvoiceAuditLogTest.logsInvoiceNumber failed; it was already broken on main because the audit message changed. Assertion updated per the user.""",
        """The logstash encoder was already a dependency, so no new dependency was added. Full test suite passes.""",
        """- "Switch billing-service to JSON logs so Loki can parse them, and put the X-Request-Id header into every log line of the request. Local dev should keep the plain console pattern, only the prod profile gets JSON."
- "Oh, that one was already broken on main, Priya changed the audit message last week. Fix the assertion to match the new message, don't change the message.\"""",
        "- None stated.",
        "All 212 tests pass after the change.",
        "Offer to commit and open a PR.",
    )
    labels = [
        Label("request", "Switch billing-service to JSON logs so Loki can parse them", False),
        Label("constraint", "only the prod profile gets JSON", False),
        Label("identifier", "logstash-logback-encoder", False),
        Label("identifier", "7.4", True),
        Label("file", "src/main/resources/logback-spring.xml", False),
        Label("decision", "a raw header in the logs would let anyone inject fake log fields", True),
        Label("edit", "[A-Za-z0-9-]{1,64}", True),
        Label("failure", "InvoiceAuditLogTest.logsInvoiceNumber:44 expected: <true> but was: <false>", False),
        Label("constraint", "don't change the message", False),
        Label("edit", "invoice INV-2026-00917 recorded", True),
        Label("measurement", "Skipped: 3", True),
        Label("identifier", "SPRING_PROFILES_ACTIVE: prod,k8s", True),
        Label("decision", "because Tomcat reuses threads", True),
    ]
    return DevSession(c, summary, labels)


def dns_postmortem() -> DevSession:
    """Shell: an outage post-mortem written from logs; the timeline and numbers come from grep and awk."""
    c = Conversation("/home/sre/incidents", "blind-dns-postmortem")
    c.user(
        "Write the post-mortem for yesterday's API outage (INC-4471) in postmortems/2026-12-03-api-dns.md, "
        "from the logs in raw/. Blameless, no names of people, and every number in it must come from the logs, "
        "not from the Slack thread."
    )
    c.bash(
        "ls raw/ && wc -l raw/*",
        "coredns-0.log\ncoredns-1.log\ngateway-access.log.gz\nalerts.json\n"
        "   184220 raw/coredns-0.log\n   179904 raw/coredns-1.log\n       62 raw/alerts.json",
    )
    c.bash(
        "grep -m3 -n 'SERVFAIL\\|i/o timeout' raw/coredns-0.log",
        "88412:[ERROR] plugin/errors: 2 api.internal.example. A: read udp 10.0.4.12:51344->10.0.0.2:53: i/o timeout\n"
        '88413:[INFO] 10.0.7.31:40121 - 5521 "A IN api.internal.example. udp 38 false 512" SERVFAIL qr,rd 38 2.001s\n'
        "88419:[ERROR] plugin/errors: 2 payments.internal.example. A: read udp 10.0.4.12:51350->10.0.0.2:53: i/o timeout",
    )
    c.bash(
        'zcat raw/gateway-access.log.gz | awk \'$4>="[03/Dec/2026:14:02" && $4<"[03/Dec/2026:14:51"\' | '
        "awk '{n++; if ($9>=500) e++} END {printf \"%d requests, %d 5xx, %.1f%%\\n\", n, e, 100*e/n}'",
        "1284410 requests, 493213 5xx, 38.4%",
    )
    c.bash(
        "jq -r '.[] | [.startsAt, .labels.alertname] | @tsv' raw/alerts.json | head -4",
        "2026-12-03T14:02:40Z\tCoreDNSUpstreamTimeouts\n2026-12-03T14:04:10Z\tGatewayHigh5xx\n"
        "2026-12-03T14:19:55Z\tCoreDNSForwardHealthcheckFailed\n2026-12-03T14:51:02Z\tGatewayHigh5xx (resolved)",
    )
    c.bash(
        "grep -n 'forward' raw/coredns-0.log | grep -m2 'reload\\|Corefile'",
        "88390:[INFO] Reloading\n88391:[INFO] plugin/reload: Running configuration SHA512 = 3f1e...; forward . 10.0.0.2 (was: forward . /etc/resolv.conf)",
    )
    c.say(
        "The trigger was a Corefile change at 14:02 that forwarded to 10.0.0.2 only, instead of the node's resolv.conf; "
        "10.0.0.2 rate-limits per source IP, so under load it dropped queries and every lookup of api.internal "
        "waited 2 s and SERVFAILed. Impact from the gateway log: 49 minutes, 38.4% of requests 5xx."
    )
    c.user("Don't say rate-limits unless the logs show it. Do they? And put the alert timeline in as a table.")
    c.bash("grep -c 'REFUSED\\|rate' raw/coredns-0.log raw/coredns-1.log", "raw/coredns-0.log:0\nraw/coredns-1.log:0")
    c.say(
        "They don't: only timeouts. I'll write that the upstream timed out under the new forward config, and list the rate limit as a hypothesis to confirm with the network team."
    )
    c.tool(
        "Write",
        {
            "file_path": "/home/sre/incidents/postmortems/2026-12-03-api-dns.md",
            "content": "# INC-4471: API errors from DNS forward change (2026-12-03)\n\n## Impact\n"
            "From 14:02 to 14:51 UTC (49 minutes), 38.4% of gateway requests (493213 of 1284410) returned 5xx.\n\n"
            "## Trigger\nA Corefile change made CoreDNS forward to 10.0.0.2 only. Upstream queries timed out (i/o timeout, SERVFAIL after 2.001s).\n\n"
            "## Open question\nWhy 10.0.0.2 timed out: a per-source rate limit is suspected, not shown by the logs.\n\n"
            "## Action items\n- Canary Corefile changes on one CoreDNS replica.\n- Alert on SERVFAIL ratio, not only upstream timeouts.\n",
        },
        "File created successfully at: /home/sre/incidents/postmortems/2026-12-03-api-dns.md",
    )
    c.bash(
        "markdownlint postmortems/2026-12-03-api-dns.md",
        "postmortems/2026-12-03-api-dns.md:1 MD041/first-line-heading/first-line-h1 ...\n"
        "postmortems/2026-12-03-api-dns.md:12:81 MD013/line-length Line length [Expected: 80; Actual: 104]",
        error=True,
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/sre/incidents/postmortems/2026-12-03-api-dns.md",
            "old_string": "Upstream queries timed out (i/o timeout, SERVFAIL after 2.001s).",
            "new_string": "Upstream queries\ntimed out (i/o timeout, SERVFAIL after 2.001s).",
        },
        "The file /home/sre/incidents/postmortems/2026-12-03-api-dns.md has been updated.",
    )
    summary = _summary(
        "Post-mortem for a DNS-caused API outage, written from raw logs only.",
        """Write a blameless post-mortem for the previous day's API outage into postmortems/ from the raw logs, with no people's names and only numbers that the logs support (not Slack).""",
        """- CoreDNS forward plugin and Corefile reloads; SERVFAIL and upstream i/o timeouts
- Computing impact from gateway access logs with awk; alert timeline from alerts.json via jq""",
        """- postmortems/2026-12-03-api-dns.md (new): impact (49 min, 38.4% 5xx), trigger (Corefile forward change to a single upstream), open question, action items (canary Corefile changes; alert on SERVFAIL ratio).""",
        """- None of note.""",
        """The trigger was a CoreDNS config reload switching forwarding from resolv.conf to one upstream, which then timed out. The user asked not to claim rate limiting without evidence; the logs show no REFUSED/rate entries, so it is recorded as a hypothesis.""",
        """- "Write the post-mortem for yesterday's API outage (INC-4471) in postmortems/2026-12-03-api-dns.md, from the logs in raw/. Blameless, no names of people, and every number in it must come from the logs, not from the Slack thread."
- "Don't say rate-limits unless the logs show it. Do they?...\"""",
        "- Confirm the rate-limit hypothesis with the network team.",
        "Post-mortem draft written.",
        "Share the draft for review.",
    )
    labels = [
        Label("request", "Write the post-mortem for yesterday's API outage", False),
        Label("constraint", "Blameless, no names of people", False),
        Label("constraint", "every number in it must come from the logs", False),
        Label("measurement", "1284410 requests, 493213 5xx, 38.4%", False),
        Label("identifier", "10.0.0.2", True),
        Label("measurement", "2.001s", True),
        Label("identifier", "2026-12-03T14:02:40Z", True),
        Label("identifier", "CoreDNSUpstreamTimeouts", True),
        Label("constraint", "Don't say rate-limits unless the logs show it", False),
        Label("request", "put the alert timeline in as a table", True),
        Label("measurement", "raw/coredns-0.log:0", False),
        Label("file", "postmortems/2026-12-03-api-dns.md", False),
        Label("failure", "MD013/line-length", True),
        Label("decision", "Alert on SERVFAIL ratio, not only upstream timeouts", False),
        Label("identifier", "api.internal.example.", True),
    ]
    return DevSession(c, summary, labels)


def review_followups() -> DevSession:
    """Ruby/Rails: follow-ups from a PR review: an N+1, a rename, a rubocop failure, one pushback."""
    c = Conversation("/home/eli/dev/tutorbook", "blind-review-followups")
    c.user(
        "Address the review comments on PR #562 (lessons index). Ana's four comments: the N+1 on teachers, rename "
        "`lessons_for` to something clearer, move the time formatting into a helper, and add a request spec. "
        "Don't squash, she wants to see each change as its own commit."
    )
    c.bash(
        "bin/rails runner 'ActiveRecord::Base.logger = Logger.new($stdout); LessonsQuery.new(School.first).lessons_for(Date.current).each { |l| l.teacher.name }' 2>&1 | grep -c 'SELECT \"teachers\"'",
        "48",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/eli/dev/tutorbook/app/queries/lessons_query.rb",
            "old_string": "  def lessons_for(day)\n    @school.lessons.where(starts_at: day.all_day).order(:starts_at)",
            "new_string": "  def scheduled_on(day)\n    @school.lessons.includes(:teacher, :room).where(starts_at: day.all_day).order(:starts_at)",
        },
        "The file /home/eli/dev/tutorbook/app/queries/lessons_query.rb has been updated.",
    )
    c.tool(
        "Grep",
        {"pattern": "lessons_for", "path": ".", "output_mode": "files_with_matches"},
        "app/controllers/lessons_controller.rb\napp/views/lessons/index.html.erb\nspec/queries/lessons_query_spec.rb",
    )
    c.bash(
        "sed -i 's/lessons_for(/scheduled_on(/g' app/controllers/lessons_controller.rb app/views/lessons/index.html.erb spec/queries/lessons_query_spec.rb && git commit -qam 'Preload teachers and rooms; rename lessons_for to scheduled_on' && git log --oneline -1",
        "9e1d2f3 Preload teachers and rooms; rename lessons_for to scheduled_on",
    )
    c.bash(
        "bin/rails runner 'ActiveRecord::Base.logger = Logger.new($stdout); LessonsQuery.new(School.first).scheduled_on(Date.current).each { |l| l.teacher.name }' 2>&1 | grep -c 'SELECT \"teachers\"'",
        "1",
    )
    c.tool(
        "Write",
        {
            "file_path": "/home/eli/dev/tutorbook/app/helpers/lessons_helper.rb",
            "content": 'module LessonsHelper\n  def lesson_time_range(lesson)\n    "#{l(lesson.starts_at, format: :time_only)}–#{l(lesson.ends_at, format: :time_only)}"\n  end\nend\n',
        },
        "File created successfully at: /home/eli/dev/tutorbook/app/helpers/lessons_helper.rb",
    )
    c.bash(
        "bundle exec rubocop app/helpers app/queries",
        "Inspecting 2 files\nC.\n\nOffenses:\n\n"
        "app/helpers/lessons_helper.rb:1:1: C: Style/Documentation: Missing top-level documentation comment for module LessonsHelper.\n"
        "module LessonsHelper\n^^^^^^^^^^^^^^^^^^^^\n\n2 files inspected, 1 offense detected",
        error=True,
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/eli/dev/tutorbook/app/helpers/lessons_helper.rb",
            "old_string": "module LessonsHelper",
            "new_string": "# View helpers for the lessons pages: times shown in the school's locale.\nmodule LessonsHelper",
        },
        "The file /home/eli/dev/tutorbook/app/helpers/lessons_helper.rb has been updated.",
    )
    c.user(
        "About her comment on the request spec: she also suggested stubbing LessonsQuery in it. I disagree, the whole point is to catch the N+1 through the real query, so don't stub it."
    )
    c.tool(
        "Write",
        {
            "file_path": "/home/eli/dev/tutorbook/spec/requests/lessons_spec.rb",
            "content": "RSpec.describe 'Lessons index' do\n  it 'loads teachers in one query' do\n    create_list(:lesson, 5, school: school)\n"
            "    expect { get school_lessons_path(school) }.not_to exceed_query_limit(6)\n  end\nend\n",
        },
        "File created successfully at: /home/eli/dev/tutorbook/spec/requests/lessons_spec.rb",
    )
    c.bash(
        "bundle exec rspec spec/requests/lessons_spec.rb",
        "F\n\nFailures:\n\n  1) Lessons index loads teachers in one query\n     Failure/Error: expect { get school_lessons_path(school) }.not_to exceed_query_limit(6)\n"
        "     NoMethodError:\n       undefined method `exceed_query_limit' for #<RSpec::ExampleGroups::LessonsIndex>\n\n1 example, 1 failure",
        error=True,
    )
    c.bash("grep -rn 'db-query-matchers\\|query_limit' Gemfile spec/support", "")
    c.say(
        "No query-count matcher in the project. Rather than add a gem for one spec, I'll count queries with ActiveSupport::Notifications in a small spec/support helper."
    )
    c.bash(
        "bundle exec rspec spec/requests/lessons_spec.rb spec/queries && git log --oneline -4",
        "......\n\n6 examples, 0 failures\n"
        "b44c0a1 Request spec: lessons index query count\n7a0b9c8 Extract lesson_time_range helper\n9e1d2f3 Preload teachers and rooms; rename lessons_for to scheduled_on\n5c6d7e8 Lessons index",
    )
    summary = _summary(
        "PR review follow-ups on a Rails lessons index: N+1, rename, helper, request spec; separate commits.",
        """- Address the four review comments on the lessons index PR: fix the N+1 on teachers, rename the query method to something clearer, move time formatting into a helper, add a request spec.
- Do not stub the query object in the request spec (user disagrees with that part of the review).""",
        """- ActiveRecord includes/preloading; N+1 detection by counting queries
- Rails view helpers; RSpec request specs; rubocop""",
        """- app/queries/lessons_query.rb: method renamed to scheduled_on and preloads teacher and room; callers in the controller, view and spec updated.
- app/helpers/lessons_helper.rb (new): lesson_time_range.
- spec/requests/lessons_spec.rb (new): asserts the index stays under a query budget, using a small ActiveSupport::Notifications counter in spec/support.""",
        """- The request spec first used a matcher from a gem the project doesn't have; replaced with an in-house query counter rather than adding a dependency.""",
        """Teacher queries went from one per lesson to a single query after preloading.""",
        """- "Address the review comments on PR #562 (lessons index)... the N+1 on teachers, rename `lessons_for` to something clearer, move the time formatting into a helper, and add a request spec..."
- "About her comment on the request spec: she also suggested stubbing LessonsQuery in it. I disagree... so don't stub it.\"""",
        "- Push the commits and reply to the review comments.",
        "Three follow-up commits made; specs pass.",
        "Push the branch and reply to each review comment with its commit.",
    )
    labels = [
        Label("request", "Address the review comments on PR #562", False),
        Label("constraint", "Don't squash", True),
        Label("measurement", "48", True),
        Label("edit", "includes(:teacher, :room)", False),
        Label("identifier", "9e1d2f3", True),
        Label("identifier", "7a0b9c8", True),
        Label("identifier", "b44c0a1", True),
        Label("failure", "Style/Documentation: Missing top-level documentation comment", True),
        Label("constraint", "so don't stub it", False),
        Label("failure", "undefined method `exceed_query_limit'", False),
        Label("decision", "Rather than add a gem for one spec", False),
        Label("edit", "exceed_query_limit(6)", True),
        Label("file", "app/views/lessons/index.html.erb", False),
        Label("measurement", "6 examples, 0 failures", True),
    ]
    return DevSession(c, summary, labels)


def tokenizer_regression() -> DevSession:
    """Go: a 31% slowdown in the tokenizer benchmark between two tags; bisected to a regexp change."""
    c = Conversation("/home/ines/go/src/github.com/ines/querylang", "blind-tokenizer-regression")
    c.user(
        "BenchmarkParseLarge got a lot slower between v0.8.0 and v0.9.0. Find which commit and fix it without "
        "changing the parser's output. Use benchstat with at least 10 runs each, single numbers lie on this laptop."
    )
    c.bash(
        "git stash -q; for t in v0.8.0 v0.9.0; do git checkout -q $t && go test -run '^$' -bench ParseLarge -count 10 ./parse > /tmp/$t.txt; done; benchstat /tmp/v0.8.0.txt /tmp/v0.9.0.txt",
        "goos: linux\ngoarch: amd64\npkg: github.com/ines/querylang/parse\ncpu: 11th Gen Intel(R) Core(TM) i7-1165G7 @ 2.80GHz\n"
        "             │ /tmp/v0.8.0.txt │           /tmp/v0.9.0.txt            │\n"
        "             │     sec/op      │    sec/op     vs base                │\n"
        "ParseLarge-8       4.112m ± 2%   5.391m ± 3%  +31.10% (p=0.000 n=10)\n\n"
        "             │ /tmp/v0.8.0.txt │           /tmp/v0.9.0.txt            │\n"
        "             │      B/op       │     B/op      vs base                │\n"
        "ParseLarge-8      1.804Mi ± 0%   3.977Mi ± 0%  +120.45% (p=0.000 n=10)",
    )
    c.bash(
        "git log --oneline v0.8.0..v0.9.0 -- parse/ lex/",
        "d41c7e2 lex: accept unicode identifiers\n0aa93f1 parse: better error for unclosed paren\n"
        "6e2b8d0 lex: table-driven keyword lookup\nf3b1a54 parse: fuzz corpus from issue #77",
    )
    c.bash(
        "git bisect start v0.9.0 v0.8.0 -- parse/ lex/ && git bisect run sh -c 'go test -run ^$ -bench ParseLarge -count 5 ./parse | awk \"/ParseLarge/ {s+=\\$3} END {exit (s/5 > 4800000)}\"'",
        "running  'sh' '-c' ...\n6e2b8d0 is the first good commit\nd41c7e2 is the first bad commit\n"
        "commit d41c7e2\nAuthor: ines <ines@example.org>\n    lex: accept unicode identifiers\n\n lex/lexer.go | 9 +++++----\nbisect found first bad commit",
    )
    c.bash(
        "git show d41c7e2 -- lex/lexer.go | head -20",
        "-\tfor l.pos < len(l.src) && isIdentByte(l.src[l.pos]) {\n-\t\tl.pos++\n-\t}\n"
        "+\tloc := identRE.FindStringIndex(l.src[l.pos:])\n+\tl.pos += loc[1]\n"
        "+var identRE = regexp.MustCompile(`^[\\p{L}_][\\p{L}\\p{N}_]*`)",
    )
    c.tool(
        "Read",
        {"file_path": "/home/ines/go/src/github.com/ines/querylang/lex/keywords.go"},
        "     1\tpackage lex\n\n     3\t// keywords is looked up once per identifier; a map lookup, not the regression.\n"
        '     4\tvar keywords = map[string]Kind{\n     5\t\t"select": SELECT, "from": FROM, "where": WHERE,\n     6\t}',
    )
    c.say(
        "d41c7e2 replaced the byte loop with a regexp per identifier; FindStringIndex allocates and the regexp "
        "engine is slow for this. I'll keep unicode support with a rune loop: unicode.IsLetter / IsDigit, and an "
        "ASCII fast path so the common case costs what it did before."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/ines/go/src/github.com/ines/querylang/lex/lexer.go",
            "old_string": "\tloc := identRE.FindStringIndex(l.src[l.pos:])\n\tl.pos += loc[1]",
            "new_string": "\tfor l.pos < len(l.src) {\n\t\tif b := l.src[l.pos]; b < utf8.RuneSelf {\n\t\t\tif !isIdentByte(b) {\n\t\t\t\tbreak\n\t\t\t}\n\t\t\tl.pos++\n\t\t\tcontinue\n\t\t}\n"
            "\t\tr, size := utf8.DecodeRuneInString(l.src[l.pos:])\n\t\tif !unicode.IsLetter(r) && !unicode.IsDigit(r) {\n\t\t\tbreak\n\t\t}\n\t\tl.pos += size\n\t}",
        },
        "The file /home/ines/go/src/github.com/ines/querylang/lex/lexer.go has been updated.",
    )
    c.bash(
        "go test ./... 2>&1 | tail -4",
        "ok  \tgithub.com/ines/querylang/ast\t0.011s\n--- FAIL: TestLexUnicode (0.00s)\n"
        '    lexer_test.go:132: ident "é1": got "é1", want error "identifier cannot start with a digit"\n'
        "FAIL\tgithub.com/ines/querylang/lex\t0.019s",
        error=True,
    )
    c.say(
        'My loop accepted a digit right after a non-ASCII first letter check was skipped... no: the test is about "1é" style starts. The first rune must be a letter or underscore; I dropped that check. Restoring it before the loop.'
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/ines/go/src/github.com/ines/querylang/lex/lexer.go",
            "old_string": "\tfor l.pos < len(l.src) {\n\t\tif b := l.src[l.pos]; b < utf8.RuneSelf {",
            "new_string": "\tif first, _ := utf8.DecodeRuneInString(l.src[l.pos:]); first != '_' && !unicode.IsLetter(first) {\n\t\treturn l.errorf(\"identifier cannot start with %q\", first)\n\t}\n\tfor l.pos < len(l.src) {\n\t\tif b := l.src[l.pos]; b < utf8.RuneSelf {",
        },
        "The file /home/ines/go/src/github.com/ines/querylang/lex/lexer.go has been updated.",
    )
    c.bash(
        "go test ./... && go test -run '^$' -bench ParseLarge -count 10 ./parse > /tmp/fix.txt && benchstat /tmp/v0.8.0.txt /tmp/fix.txt",
        "ok  \tgithub.com/ines/querylang/ast\t0.010s\nok  \tgithub.com/ines/querylang/lex\t0.018s\nok  \tgithub.com/ines/querylang/parse\t0.402s\n"
        "             │ /tmp/v0.8.0.txt │             /tmp/fix.txt             │\n"
        "ParseLarge-8       4.112m ± 2%   4.187m ± 2%  +1.82% (p=0.043 n=10)\n"
        "ParseLarge-8      1.804Mi ± 0%   1.805Mi ± 0%  ~ (p=0.211 n=10)",
    )
    c.user("+1.8% is fine. Check the fuzz corpus still parses identically, that's the 'no output change' part.")
    c.bash(
        "go run ./cmd/astdump -dir parse/testdata/fuzz > /tmp/after.txt; git stash -q; git checkout -q v0.9.0; go run ./cmd/astdump -dir parse/testdata/fuzz > /tmp/before.txt; git checkout -q -; git stash pop -q; diff -q /tmp/before.txt /tmp/after.txt && wc -l /tmp/after.txt",
        "  2317 /tmp/after.txt",
    )
    summary = _summary(
        "Performance regression in the parser between two releases; bisected; lexer fixed.",
        """- Find the commit that made BenchmarkParseLarge slower between v0.8.0 and v0.9.0 and fix it without changing parser output.
- Measure with benchstat over at least 10 runs per side.
- Afterwards: confirm the fuzz corpus parses identically.""",
        """- Go benchmarks, benchstat, git bisect run with a threshold script
- regexp cost vs a rune loop with an ASCII fast path (utf8.RuneSelf, unicode.IsLetter)""",
        """- lex/lexer.go: the regexp-based identifier scan (introduced by the unicode identifiers commit) replaced by a rune loop with an ASCII fast path; first-rune check restored (letter or underscore).""",
        """- TestLexUnicode failed after the first rewrite because the first-character check was lost; restored.""",
        """v0.9.0 was about 31% slower with more than double the allocations. Bisect blamed the unicode identifiers commit (regexp per identifier). After the fix the benchmark is within ~2% of v0.8.0 and allocations are back to baseline. AST dumps of the fuzz corpus are identical before and after.""",
        """- "BenchmarkParseLarge got a lot slower between v0.8.0 and v0.9.0. Find which commit and fix it without changing the parser's output. Use benchstat with at least 10 runs each, single numbers lie on this laptop."
- "+1.8% is fine. Check the fuzz corpus still parses identically, that's the 'no output change' part.\"""",
        "- Commit the fix.",
        "Fix verified: benchmark back near baseline and output unchanged on the fuzz corpus.",
        "Commit the lexer change with the benchstat numbers in the message.",
    )
    labels = [
        Label("request", "Find which commit and fix it", False),
        Label("constraint", "without changing the parser's output", False),
        Label("constraint", "benchstat with at least 10 runs each", False),
        Label("measurement", "+31.10%", False),
        Label("measurement", "4.112m", True),
        Label("measurement", "5.391m", True),
        Label("measurement", "+120.45%", False),
        Label("identifier", "d41c7e2", True),
        Label("identifier", "6e2b8d0", True),
        Label("failure", "identifier cannot start with a digit", False),
        Label("edit", "utf8.DecodeRuneInString", False),
        Label("measurement", "+1.82%", False),
        Label("measurement", "2317", True),
        Label("file", "lex/lexer.go", False),
        Label("file", "lex/keywords.go", True),
    ]
    return DevSession(c, summary, labels)


def licence_audit() -> DevSession:
    """npm/TypeScript: a licence audit before a closed-source release; an AGPL package replaced."""
    c = Conversation("/home/tom/work/fieldapp", "blind-licence-audit")
    c.user(
        "Legal wants a licence audit of fieldapp's production dependencies before we ship the desktop build. "
        "Anything GPL, AGPL or without a licence is a blocker; LGPL is OK only if dynamically linked, flag it for "
        "legal rather than deciding. Write the result to docs/licences.md."
    )
    c.bash(
        "npx license-checker --production --summary",
        "├─ MIT: 612\n├─ ISC: 71\n├─ Apache-2.0: 38\n├─ BSD-3-Clause: 19\n├─ BSD-2-Clause: 11\n"
        "├─ AGPL-3.0-only: 1\n├─ LGPL-3.0-or-later: 1\n├─ UNLICENSED: 1\n├─ (MIT OR CC0-1.0): 3\n└─ BlueOak-1.0.0: 2",
    )
    c.bash(
        "npx license-checker --production --onlyAllow 'MIT;ISC;Apache-2.0;BSD-3-Clause;BSD-2-Clause;(MIT OR CC0-1.0);BlueOak-1.0.0'",
        'Package "pdf-stamp@2.3.1" is licensed under "AGPL-3.0-only" which is not permitted by the --onlyAllow flag. Exiting.',
        error=True,
    )
    c.bash(
        'npx license-checker --production --json | jq -r \'to_entries[] | select(.value.licenses | test("GPL|UNLICENSED")) | "\\(.key)\\t\\(.value.licenses)\\t\\(.value.repository // "-")"\'',
        "pdf-stamp@2.3.1\tAGPL-3.0-only\thttps://github.com/stampworks/pdf-stamp\n"
        "sharp-libvips-linux-x64@1.0.4\tLGPL-3.0-or-later\thttps://github.com/lovell/sharp-libvips\n"
        "@fieldapp/icons@0.4.0\tUNLICENSED\t-",
    )
    c.bash("npm ls pdf-stamp", "fieldapp@3.6.0 /home/tom/work/fieldapp\n└─┬ report-export@1.9.2\n  └── pdf-stamp@2.3.1")
    c.tool(
        "Grep",
        {"pattern": "stamp", "path": "node_modules/report-export/lib", "output_mode": "content", "-n": True},
        "node_modules/report-export/lib/pdf.js:3:const { stamp } = require('pdf-stamp');\n"
        "node_modules/report-export/lib/pdf.js:57:  if (opts.watermark) return stamp(doc, opts.watermark);",
    )
    c.say(
        "pdf-stamp is only reached through report-export's watermark option, and fieldapp never passes watermark "
        "(grep of src shows no 'watermark'). @fieldapp/icons is our own private package, UNLICENSED is correct for it. "
        "libvips is LGPL, loaded by sharp as a shared library."
    )
    c.user(
        "Even unused, the AGPL code ships in the bundle. Replace the watermark path or the package, don't just argue it's unused."
    )
    c.bash(
        "npm view report-export versions --json | tail -4 && npm view report-export@2.0.0 dependencies",
        "  \"1.9.2\",\n  \"2.0.0\"\n]\n{ 'pdf-lib': '^1.17.1', 'fast-csv': '^5.0.1' }",
    )
    c.bash(
        "npm install report-export@2.0.0 && npx tsc --noEmit",
        "changed 3 packages, removed 2 packages, and audited 761 packages in 4s\n"
        "src/export/report.ts(22,5): error TS2353: Object literal may only specify known properties, and 'paper' does not exist in type 'ExportOptions'.",
        error=True,
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/tom/work/fieldapp/src/export/report.ts",
            "old_string": "    paper: 'A4',",
            "new_string": "    pageSize: 'A4',",
        },
        "The file /home/tom/work/fieldapp/src/export/report.ts has been updated.",
    )
    c.bash(
        "npx tsc --noEmit && npx license-checker --production --summary | grep -i 'gpl\\|unlicensed'",
        "├─ LGPL-3.0-or-later: 1\n├─ UNLICENSED: 1",
    )
    c.tool(
        "Write",
        {
            "file_path": "/home/tom/work/fieldapp/docs/licences.md",
            "content": "# Production dependency licences (fieldapp 3.6.0)\n\n758 packages: MIT, ISC, Apache-2.0, BSD, BlueOak, CC0 dual.\n\n"
            "## Resolved\n- pdf-stamp 2.3.1 (AGPL-3.0-only), via report-export 1.9.2: removed by upgrading report-export to 2.0.0.\n\n"
            "## For legal\n- sharp-libvips-linux-x64 1.0.4 (LGPL-3.0-or-later): dynamically loaded shared library.\n\n"
            "## Internal\n- @fieldapp/icons 0.4.0: our own private package (UNLICENSED).\n",
        },
        "File created successfully at: /home/tom/work/fieldapp/docs/licences.md",
    )
    summary = _summary(
        "Licence audit of production npm dependencies; one AGPL package removed via an upgrade.",
        """- Audit the production dependencies' licences before the desktop release; GPL/AGPL/unlicensed are blockers; LGPL to be flagged for legal, not decided by us.
- Write results to docs/licences.md.
- The user rejected "it's unused" as an argument for the AGPL package: it ships in the bundle, so it must be removed or replaced.""",
        """- license-checker (--production, --onlyAllow, --json); npm ls / npm view
- LGPL dynamic linking vs bundling""",
        """- src/export/report.ts: option renamed for the report-export 2.x API.
- docs/licences.md (new): resolved AGPL item, the LGPL libvips item for legal, and our private icons package.""",
        """- license-checker --onlyAllow stopped on the AGPL package pdf-stamp.
- Upgrading report-export to 2.0.0 (which uses pdf-lib) dropped pdf-stamp, but broke a type: an export option was renamed; fixed.""",
        """pdf-stamp came in transitively through report-export's watermark feature. After the upgrade, only the LGPL libvips (for legal) and our own UNLICENSED package remain.""",
        """- "Legal wants a licence audit of fieldapp's production dependencies before we ship the desktop build. Anything GPL, AGPL or without a licence is a blocker; LGPL is OK only if dynamically linked, flag it for legal rather than deciding. Write the result to docs/licences.md."
- "Even unused, the AGPL code ships in the bundle. Replace the watermark path or the package, don't just argue it's unused.\"""",
        "- Legal to review the LGPL item.",
        "Audit written; type check passes after the upgrade.",
        "Run the export tests and the desktop build with report-export 2.0.0.",
    )
    labels = [
        Label("request", "licence audit of fieldapp's production dependencies", False),
        Label("constraint", "flag it for legal rather than deciding", False),
        Label("measurement", "MIT: 612", True),
        Label("failure", "not permitted by the --onlyAllow flag", False),
        Label("identifier", "pdf-stamp@2.3.1", False),
        Label("identifier", "sharp-libvips-linux-x64@1.0.4", False),
        Label("decision", "fieldapp never passes watermark", True),
        Label("constraint", "don't just argue it's unused", False),
        Label("identifier", "report-export@2.0.0", False),
        Label("failure", "'paper' does not exist in type 'ExportOptions'", False),
        Label("edit", "pageSize: 'A4'", True),
        Label("file", "docs/licences.md", False),
        Label("measurement", "audited 761 packages", True),
        Label("identifier", "fieldapp@3.6.0", True),
    ]
    return DevSession(c, summary, labels)


def release_2_4() -> DevSession:
    """Python: cutting release 2.4.0 of a library; twine check fails on the README; tag and upload."""
    c = Conversation("/home/zoe/src/tidyconf", "blind-release-2-4")
    c.user(
        "Cut tidyconf 2.4.0 today. Changelog from the merged PRs since 2.3.2, bump the version, tag, build and "
        "upload to PyPI. Upload to TestPyPI first and check the page renders before the real upload."
    )
    c.bash(
        "git describe --tags --abbrev=0 && git log --merges --oneline 2.3.2..HEAD",
        "2.3.2\nab12cd3 Merge pull request #214 from hana/toml-arrays\n"
        "9f8e7d6 Merge pull request #211 from zoe/drop-py38\ne5d4c3b Merge pull request #209 from rk/env-prefix\n"
        "7c6b5a4 Merge pull request #205 from dependabot/pip/pyyaml-6.0.2",
    )
    c.say(
        "#211 drops Python 3.8, which is a breaking change for some users; under semver it still fits a minor "
        "release for a library that documents its supported Pythons, but the changelog should call it out first."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/zoe/src/tidyconf/CHANGELOG.md",
            "old_string": "## 2.3.2 (2026-09-18)",
            "new_string": "## 2.4.0 (2026-12-04)\n\n**Python 3.8 is no longer supported** (#211).\n\n- TOML arrays of tables are merged like lists (#214).\n"
            "- `env_prefix` option for environment overrides (#209).\n- PyYAML 6.0.2 (#205).\n\n## 2.3.2 (2026-09-18)",
        },
        "The file /home/zoe/src/tidyconf/CHANGELOG.md has been updated.",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/zoe/src/tidyconf/src/tidyconf/__about__.py",
            "old_string": '__version__ = "2.3.2"',
            "new_string": '__version__ = "2.4.0"',
        },
        "The file /home/zoe/src/tidyconf/src/tidyconf/__about__.py has been updated.",
    )
    c.bash(
        "rm -rf dist && python -m build && twine check dist/*",
        "Successfully built tidyconf-2.4.0.tar.gz and tidyconf-2.4.0-py3-none-any.whl\n"
        "Checking dist/tidyconf-2.4.0-py3-none-any.whl: FAILED\nERROR    `long_description` has syntax errors in markup and would not be rendered on PyPI.\n"
        '         line 41: Error: Unknown directive type "code-block:".',
        error=True,
    )
    c.bash(
        "grep -n 'readme\\|content-type' pyproject.toml && sed -n 39,43p README.rst",
        '14:readme = "README.rst"\n.. code-block:: toml\n\n   [server]',
    )
    c.say(
        "README.rst line 41 has a directive PyPI's renderer accepts, so the error is odd... the line in the error says `code-block:` with a trailing colon: README has `.. code-block:: toml` fine at 39, the broken one must be elsewhere."
    )
    c.bash("grep -n 'code-block:[^:]' README.rst", "88:.. code-block: python")
    c.tool(
        "Edit",
        {
            "file_path": "/home/zoe/src/tidyconf/README.rst",
            "old_string": ".. code-block: python",
            "new_string": ".. code-block:: python",
        },
        "The file /home/zoe/src/tidyconf/README.rst has been updated.",
    )
    c.bash(
        "rm -rf dist && python -m build -q && twine check dist/* && twine upload -r testpypi dist/*",
        "Checking dist/tidyconf-2.4.0-py3-none-any.whl: PASSED\nChecking dist/tidyconf-2.4.0.tar.gz: PASSED\n"
        "Uploading distributions to https://test.pypi.org/legacy/\nView at:\nhttps://test.pypi.org/project/tidyconf/2.4.0/",
    )
    c.user("Page looks right. Go ahead: commit, tag, push, upload. Sign the tag.")
    c.bash(
        "git commit -qam 'Release 2.4.0' && git tag -s 2.4.0 -m 'tidyconf 2.4.0' && git push origin main 2.4.0",
        "error: gpg failed to sign the data\nerror: unable to sign the tag",
        error=True,
    )
    c.bash(
        "gpgconf --kill gpg-agent && export GPG_TTY=$(tty) && git tag -s 2.4.0 -m 'tidyconf 2.4.0' && git push origin main 2.4.0",
        "To github.com:zoe/tidyconf.git\n   ab12cd3..3e9f1b0  main -> main\n * [new tag]         2.4.0 -> 2.4.0",
    )
    c.bash(
        "twine upload dist/*",
        "Uploading distributions to https://upload.pypi.org/legacy/\nUploading tidyconf-2.4.0-py3-none-any.whl\n"
        "100% ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━ 21.4/21.4 kB\nUploading tidyconf-2.4.0.tar.gz\n"
        "100% ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━ 38.9/38.9 kB\n\nView at:\nhttps://pypi.org/project/tidyconf/2.4.0/",
    )
    summary = _summary(
        "Release of tidyconf 2.4.0: changelog, version bump, TestPyPI check, signed tag, PyPI upload.",
        """- Release tidyconf 2.4.0: changelog from merged PRs since 2.3.2, version bump, tag, build, upload.
- Upload to TestPyPI first and verify the page renders before the real PyPI upload.
- Sign the tag.""",
        """- python -m build, twine check/upload, TestPyPI
- reStructuredText directives; signed git tags with gpg""",
        """- CHANGELOG.md: 2.4.0 entry listing the four merged PRs, with the Python 3.8 removal called out first.
- src/tidyconf/__about__.py: version 2.4.0.
- README.rst: fixed a malformed code-block directive.""",
        """- twine check failed: README markup error (a `.. code-block:` missing one colon); fixed.
- Signing the tag failed with a gpg error; fixed by restarting gpg-agent and setting GPG_TTY.""",
        """Released successfully: TestPyPI page checked by the user, then tag pushed and both distributions uploaded to PyPI.""",
        """- "Cut tidyconf 2.4.0 today. Changelog from the merged PRs since 2.3.2, bump the version, tag, build and upload to PyPI. Upload to TestPyPI first and check the page renders before the real upload."
- "Page looks right. Go ahead: commit, tag, push, upload. Sign the tag.\"""",
        "- None.",
        "tidyconf 2.4.0 is on PyPI and the signed tag is pushed.",
        "Optionally draft the GitHub release notes from the changelog.",
    )
    labels = [
        Label("request", "Cut tidyconf 2.4.0 today", False),
        Label("constraint", "Upload to TestPyPI first", False),
        Label("identifier", "#211", True),
        Label("decision", "the changelog should call it out first", False),
        Label("failure", "Unknown directive type", False),
        Label("file", "README.rst", False),
        Label("failure", "gpg failed to sign the data", False),
        Label("identifier", "3e9f1b0", True),
        Label("identifier", "https://pypi.org/project/tidyconf/2.4.0/", True),
        Label("measurement", "21.4/21.4 kB", True),
        Label("edit", "`env_prefix` option for environment overrides", True),
        Label("constraint", "Sign the tag", False),
    ]
    return DevSession(c, summary, labels)


def bucket_lifecycle() -> DevSession:
    """Terraform: an S3 lifecycle rule for logs; the plan wants to replace the bucket; a state move."""
    c = Conversation("/home/raj/infra/live/prod/logging", "blind-bucket-lifecycle")
    c.user(
        "Add a lifecycle rule to the prod access-logs bucket: transition to Glacier Instant Retrieval after 30 days, "
        "expire after 400 days (audit needs 13 months). Never run apply yourself and never use -auto-approve; "
        "show me the plan and I'll apply."
    )
    c.tool(
        "Read",
        {"file_path": "/home/raj/infra/live/prod/logging/main.tf"},
        '     1\tmodule "access_logs" {\n     2\t  source = "../../../modules/log-bucket"\n     3\t  name   = "acme-prod-access-logs"\n     4\t}\n',
    )
    c.tool(
        "Read",
        {"file_path": "/home/raj/infra/modules/log-bucket/main.tf"},
        '     1\tresource "aws_s3_bucket" "this" {\n     2\t  bucket = var.name\n     3\t  lifecycle_rule {\n'
        "     4\t    enabled = false\n     5\t  }\n     6\t}\n",
    )
    c.say(
        "The module uses the inline lifecycle_rule block, deprecated since AWS provider v4. I'll use a separate "
        "aws_s3_bucket_lifecycle_configuration resource and remove the inline block, which is the supported way."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/raj/infra/modules/log-bucket/main.tf",
            "old_string": "  bucket = var.name\n  lifecycle_rule {\n    enabled = false\n  }\n}",
            "new_string": '  bucket = var.name\n}\n\nresource "aws_s3_bucket_lifecycle_configuration" "this" {\n  bucket = aws_s3_bucket.this.id\n  rule {\n    id     = "tiering"\n    status = "Enabled"\n    filter {}\n'
            '    transition {\n      days          = var.glacier_after_days\n      storage_class = "GLACIER_IR"\n    }\n    expiration {\n      days = var.expire_after_days\n    }\n  }\n}',
        },
        "The file /home/raj/infra/modules/log-bucket/main.tf has been updated.",
    )
    c.bash(
        "terraform plan -no-color 2>&1 | tail -15",
        'Error: Unsupported argument\n\n  on ../../../modules/log-bucket/main.tf line 15, in resource "aws_s3_bucket_lifecycle_configuration" "this":\n'
        '  15:       days          = var.glacier_after_days\n\nAn input variable with the name "glacier_after_days" has not been declared.',
        error=True,
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/raj/infra/modules/log-bucket/variables.tf",
            "old_string": 'variable "name" {\n  type = string\n}',
            "new_string": 'variable "name" {\n  type = string\n}\n\nvariable "glacier_after_days" {\n  type    = number\n  default = 30\n}\n\nvariable "expire_after_days" {\n  type    = number\n  default = 400\n}',
        },
        "The file /home/raj/infra/modules/log-bucket/variables.tf has been updated.",
    )
    c.bash(
        "terraform plan -no-color 2>&1 | grep -E '^  #|Plan:'",
        "  # module.access_logs.aws_s3_bucket.this will be updated in-place\n"
        "  # module.access_logs.aws_s3_bucket_lifecycle_configuration.this will be created\n"
        "  # module.app_logs.aws_s3_bucket.this will be updated in-place\n"
        "  # module.app_logs.aws_s3_bucket_lifecycle_configuration.this will be created\n"
        "Plan: 2 to add, 2 to change, 0 to destroy.",
    )
    c.say(
        "The module is shared: app_logs uses it too and would get the same 400-day expiry. app_logs holds debug "
        "logs that must go after 30 days under the privacy policy, so defaults that expire at 400 would keep them far "
        "too long. I'll make the lifecycle opt-in: count on a variable enable_tiering, false by default."
    )
    c.user("Yes, opt-in. And for app_logs don't add anything in this change, separate ticket INFRA-1290.")
    c.tool(
        "Edit",
        {
            "file_path": "/home/raj/infra/modules/log-bucket/main.tf",
            "old_string": 'resource "aws_s3_bucket_lifecycle_configuration" "this" {\n  bucket = aws_s3_bucket.this.id',
            "new_string": 'resource "aws_s3_bucket_lifecycle_configuration" "this" {\n  count  = var.enable_tiering ? 1 : 0\n  bucket = aws_s3_bucket.this.id',
        },
        "The file /home/raj/infra/modules/log-bucket/main.tf has been updated.",
    )
    c.bash("terraform fmt -check -recursive ../../../modules", "../../../modules/log-bucket/main.tf", error=True)
    c.bash("terraform fmt -recursive ../../../modules", "../../../modules/log-bucket/main.tf")
    c.bash(
        "terraform plan -no-color -out=tiering.tfplan 2>&1 | grep -E '^  #|Plan:|Saved'",
        "  # module.access_logs.aws_s3_bucket.this will be updated in-place\n"
        "  # module.access_logs.aws_s3_bucket_lifecycle_configuration.this[0] will be created\n"
        "  # module.app_logs.aws_s3_bucket.this will be updated in-place\n"
        "Plan: 1 to add, 2 to change, 0 to destroy.\nSaved the plan to: tiering.tfplan",
    )
    summary = _summary(
        "Terraform lifecycle rule for the prod access-logs bucket; shared module made opt-in.",
        """- Add a lifecycle rule to the prod access-logs bucket: move to Glacier Instant Retrieval after 30 days, expire after 400 days (audit retention of 13 months).
- Never apply and never use -auto-approve; produce a plan for the user to apply.
- The app logs bucket is out of scope for this change (separate ticket).""",
        """- AWS provider: inline lifecycle_rule (deprecated) vs aws_s3_bucket_lifecycle_configuration
- Terraform module variables, count for opt-in resources, saved plans""",
        """- modules/log-bucket/main.tf: inline lifecycle block removed; new lifecycle configuration resource (GLACIER_IR transition + expiration), created only when enable_tiering is true.
- modules/log-bucket/variables.tf: new variables for the transition and expiration days.""",
        """- plan failed on an undeclared variable; declared in variables.tf.""",
        """The module is shared by another bucket whose logs must be deleted much sooner, so the lifecycle is opt-in per bucket. Final plan: 1 to add, 2 to change, 0 to destroy, saved for the user.""",
        """- "Add a lifecycle rule to the prod access-logs bucket: transition to Glacier Instant Retrieval after 30 days, expire after 400 days (audit needs 13 months). Never run apply yourself and never use -auto-approve; show me the plan and I'll apply."
- "Yes, opt-in. And for app_logs don't add anything in this change, separate ticket INFRA-1290.\"""",
        "- Set enable_tiering = true for access_logs in live/prod/logging/main.tf (not yet done).",
        "A saved plan exists; the prod caller does not yet enable tiering.",
        "Add enable_tiering = true to the access_logs module call and re-plan for the user.",
    )
    labels = [
        Label("request", "transition to Glacier Instant Retrieval after 30 days", False),
        Label("constraint", "never use -auto-approve", False),
        Label("identifier", "acme-prod-access-logs", True),
        Label("decision", "deprecated since AWS provider v4", False),
        Label("failure", "has not been declared", False),
        Label("edit", "count  = var.enable_tiering ? 1 : 0", False),
        Label("measurement", "Plan: 2 to add, 2 to change, 0 to destroy.", True),
        Label("decision", "must go after 30 days under the privacy policy", True),
        Label("identifier", "INFRA-1290", False),
        Label("file", "modules/log-bucket/variables.tf", False),
        Label("identifier", "tiering.tfplan", True),
        Label("failure", "terraform fmt -check -recursive", True),
        Label("file", "live/prod/logging/main.tf", False),
    ]
    return DevSession(c, summary, labels)


def backup_cron() -> DevSession:
    """Shell: a nightly Postgres backup script that silently uploaded empty dumps; pipefail and a size check."""
    c = Conversation("/opt/ops/scripts", "blind-backup-cron")
    c.user(
        "Last night's restore drill found that pg_backup.sh has been uploading 20-byte files for a week. Fix the "
        "script so a failed dump fails the job and pages us. It runs under cron on db-backup-01 as user backup, "
        "keep it POSIX-ish bash, no Python on that box."
    )
    c.tool(
        "Read",
        {"file_path": "/opt/ops/scripts/pg_backup.sh"},
        "     1\t#!/bin/bash\n     2\tDB=${1:-app}\n     3\tOUT=/var/backups/pg/$DB-$(date +%F).sql.gz\n"
        '     4\tpg_dump -h db-primary -U backup "$DB" | gzip > "$OUT"\n'
        '     5\taws s3 cp "$OUT" s3://acme-db-backups/$DB/\n     6\techo done',
    )
    c.bash(
        "ls -l /var/backups/pg | tail -4 && sudo -u backup pg_dump -h db-primary -U backup app | head -c 200",
        "-rw-r--r-- 1 backup backup 20 Nov 30 02:00 app-2026-11-30.sql.gz\n-rw-r--r-- 1 backup backup 20 Dec  1 02:00 app-2026-12-01.sql.gz\n"
        "-rw-r--r-- 1 backup backup 20 Dec  2 02:00 app-2026-12-02.sql.gz\n-rw-r--r-- 1 backup backup 20 Dec  3 02:00 app-2026-12-03.sql.gz\n"
        "pg_dump: error: server version: 16.4; pg_dump version: 15.8\npg_dump: error: aborting because of server version mismatch",
        error=True,
    )
    c.say(
        "Two faults. The primary was upgraded to 16.4 on Nov 26 while this box still has pg_dump 15.8, so every dump "
        "aborts; and without pipefail the pipeline's status is gzip's, which succeeds on empty input, so the script "
        "uploads a 20-byte gzip of nothing and says done."
    )
    c.bash(
        "apt-cache policy postgresql-client-16 | head -3",
        "postgresql-client-16:\n  Installed: (none)\n  Candidate: 16.6-1.pgdg22.04+1",
    )
    c.user("Install client 16 yes. Keep the 15 client installed, the reporting replica is still on 15.")
    c.bash(
        "sudo apt-get install -y postgresql-client-16 && /usr/lib/postgresql/16/bin/pg_dump --version",
        "Setting up postgresql-client-16 (16.6-1.pgdg22.04+1) ...\npg_dump (PostgreSQL) 16.6",
    )
    c.tool(
        "Write",
        {
            "file_path": "/opt/ops/scripts/pg_backup.sh",
            "content": "#!/bin/bash\nset -euo pipefail\n\nDB=${1:-app}\nPG_BIN=/usr/lib/postgresql/16/bin\nMIN_BYTES=${MIN_BYTES:-1048576}\n"
            'OUT=/var/backups/pg/$DB-$(date +%F).sql.gz\n\nfail() {\n  logger -t pg_backup "FAILED: $*"\n'
            '  curl -fsS -m 10 -X POST "$PAGER_WEBHOOK" -d "pg_backup $DB failed: $*" || true\n  exit 1\n}\ntrap \'fail "line $LINENO"\' ERR\n\n'
            '"$PG_BIN/pg_dump" -h db-primary -U backup "$DB" | gzip > "$OUT"\n'
            'size=$(stat -c %s "$OUT")\n[ "$size" -ge "$MIN_BYTES" ] || fail "dump is only $size bytes"\n'
            'gzip -t "$OUT"\naws s3 cp --only-show-errors "$OUT" "s3://acme-db-backups/$DB/"\n',
        },
        "File created successfully at: /opt/ops/scripts/pg_backup.sh",
    )
    c.bash(
        "shellcheck pg_backup.sh",
        '\nIn pg_backup.sh line 11:\n  curl -fsS -m 10 -X POST "$PAGER_WEBHOOK" -d "pg_backup $DB failed: $*" || true\n'
        "                          ^------------^ SC2154 (warning): PAGER_WEBHOOK is referenced but not assigned.",
        error=True,
    )
    c.say(
        "PAGER_WEBHOOK comes from /etc/default/pg_backup, which cron's environment doesn't load; sourcing it at the top and failing clearly if it's missing."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/opt/ops/scripts/pg_backup.sh",
            "old_string": "set -euo pipefail\n",
            "new_string": 'set -euo pipefail\n# shellcheck source=/etc/default/pg_backup\n. /etc/default/pg_backup\n: "${PAGER_WEBHOOK:?set PAGER_WEBHOOK in /etc/default/pg_backup}"\n',
        },
        "The file /opt/ops/scripts/pg_backup.sh has been updated.",
    )
    c.bash(
        "shellcheck pg_backup.sh && sudo -u backup ./pg_backup.sh app && ls -l /var/backups/pg | tail -1",
        "-rw-r--r-- 1 backup backup 2871093342 Dec  4 11:47 app-2026-12-04.sql.gz",
    )
    c.bash(
        "sudo -u backup env MIN_BYTES=999999999999 ./pg_backup.sh app; echo exit=$?; journalctl -t pg_backup -n 1 --no-pager",
        "exit=1\nDec 04 11:52:10 db-backup-01 pg_backup[88102]: FAILED: dump is only 2871093342 bytes",
    )
    summary = _summary(
        "Backup script silently uploading empty dumps; pg_dump version mismatch plus missing pipefail.",
        """- Fix pg_backup.sh so a failed dump fails the cron job and pages the team (it had been uploading tiny empty files for a week).
- Constraints: runs under cron on the backup host as user backup; bash only, no Python.
- Install the PostgreSQL 16 client but keep the 15 client (the reporting replica is still on 15).""",
        """- bash set -euo pipefail, ERR trap; gzip of empty input succeeds
- pg_dump must be at least the server's major version""",
        """- /opt/ops/scripts/pg_backup.sh: rewritten with strict mode, the PG 16 binaries, a minimum-size check, gzip -t, a fail() that logs and calls the pager webhook (loaded from /etc/default/pg_backup).""",
        """- pg_dump aborted with a server version mismatch (server 16 vs client 15) after the primary's upgrade.
- shellcheck warned the webhook variable was unassigned; it is now sourced from the defaults file with a clear error if missing.""",
        """A fresh backup ran successfully at normal size, and a forced failure (raised minimum size) exits 1 and logs the failure.""",
        """- "Last night's restore drill found that pg_backup.sh has been uploading 20-byte files for a week. Fix the script so a failed dump fails the job and pages us... keep it POSIX-ish bash, no Python on that box."
- "Install client 16 yes. Keep the 15 client installed, the reporting replica is still on 15.\"""",
        "- Confirm the page actually arrives (webhook not observed end to end).",
        "Script fixed and tested manually on the backup host.",
        "Check that the pager received the forced-failure test alert.",
    )
    labels = [
        Label("request", "a failed dump fails the job and pages us", False),
        Label("constraint", "no Python on that box", False),
        Label("identifier", "db-backup-01", True),
        Label("failure", "aborting because of server version mismatch", False),
        Label("identifier", "Nov 26", True),
        Label("decision", "gzip's, which succeeds on empty input", False),
        Label("constraint", "Keep the 15 client installed", False),
        Label("identifier", "16.6-1.pgdg22.04+1", True),
        Label("edit", "MIN_BYTES=${MIN_BYTES:-1048576}", True),
        Label("failure", "SC2154", False),
        Label("measurement", "2871093342", True),
        Label("identifier", "s3://acme-db-backups/", True),
        Label("file", "/etc/default/pg_backup", False),
    ]
    return DevSession(c, summary, labels)


def excel_csv_export() -> DevSession:
    """Python: CSV export shows mojibake in Excel; BOM, delimiter by locale, and a formula-injection guard."""
    c = Conversation("/home/ana/code/timesheets", "blind-excel-csv-export")
    c.user(
        "Customers in Germany open the timesheet CSV export in Excel and see 'MÃ¼ller' instead of 'Müller', and "
        "everything lands in one column. Fix the export for Excel. Don't break the API consumers who parse it "
        "with pandas, they use the same endpoint with ?format=csv."
    )
    c.tool(
        "Read",
        {"file_path": "/home/ana/code/timesheets/app/exports/csv_export.py"},
        "     1\timport csv\n     2\timport io\n\n\n     5\tdef render(rows, columns):\n     6\t    buf = io.StringIO()\n"
        "     7\t    w = csv.writer(buf)\n     8\t    w.writerow([c.title for c in columns])\n"
        "     9\t    for r in rows:\n    10\t        w.writerow([c.value(r) for c in columns])\n    11\t    return buf.getvalue().encode('utf-8')",
    )
    c.say(
        "Excel guesses the code page unless the file starts with a UTF-8 BOM, and in a German locale it expects ';' "
        "as the delimiter because ',' is the decimal separator. Changing the default would break the pandas "
        "users, so I'll add a separate dialect: ?format=csv stays as is, ?format=excel-csv gets BOM and ';'."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/ana/code/timesheets/app/exports/csv_export.py",
            "old_string": "def render(rows, columns):\n    buf = io.StringIO()\n    w = csv.writer(buf)",
            "new_string": "def render(rows, columns, excel=False):\n    buf = io.StringIO()\n    w = csv.writer(buf, delimiter=';' if excel else ',')",
        },
        "The file /home/ana/code/timesheets/app/exports/csv_export.py has been updated.",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/ana/code/timesheets/app/exports/csv_export.py",
            "old_string": "    return buf.getvalue().encode('utf-8')",
            "new_string": "    return buf.getvalue().encode('utf-8-sig' if excel else 'utf-8')",
        },
        "The file /home/ana/code/timesheets/app/exports/csv_export.py has been updated.",
    )
    c.user(
        "While you're in there: security flagged that a project name like =HYPERLINK(...) runs as a formula in Excel. Fix that too, for the Excel format only."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/ana/code/timesheets/app/exports/csv_export.py",
            "old_string": "        w.writerow([c.value(r) for c in columns])",
            "new_string": "        w.writerow([_inert(c.value(r)) if excel else c.value(r) for c in columns])",
        },
        "The file /home/ana/code/timesheets/app/exports/csv_export.py has been updated.",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/ana/code/timesheets/app/exports/csv_export.py",
            "old_string": "def render(rows, columns, excel=False):",
            "new_string": "FORMULA_START = ('=', '+', '-', '@', '\\t', '\\r')\n\n\ndef _inert(value):\n    text = str(value)\n    return \"'\" + text if text.startswith(FORMULA_START) else value\n\n\ndef render(rows, columns, excel=False):",
        },
        "The file /home/ana/code/timesheets/app/exports/csv_export.py has been updated.",
    )
    c.bash(
        "python -m pytest tests/exports -q",
        "F....\n=================================== FAILURES ===================================\n"
        "____________________________ test_negative_hours_kept ____________________________\n"
        "    assert rows[3]['hours'] == '-1.5'\nE   AssertionError: assert \"'-1.5\" == '-1.5'\n"
        "1 failed, 4 passed in 0.41s",
        error=True,
    )
    c.say(
        "Negative numbers start with '-' and got the quote prefix. Corrections are logged as negative hours, so "
        "they matter. Only text cells can be formulas here: numbers come from the model as Decimal, so I'll guard str values only."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/ana/code/timesheets/app/exports/csv_export.py",
            "old_string": '    text = str(value)\n    return "\'" + text if text.startswith(FORMULA_START) else value',
            "new_string": '    if isinstance(value, str) and value.startswith(FORMULA_START):\n        return "\'" + value\n    return value',
        },
        "The file /home/ana/code/timesheets/app/exports/csv_export.py has been updated.",
    )
    c.bash("python -m pytest tests/exports -q", ".......\n7 passed in 0.39s")
    c.tool(
        "Edit",
        {
            "file_path": "/home/ana/code/timesheets/app/api/exports.py",
            "old_string": "FORMATS = {'csv': csv_export.render, 'xlsx': xlsx_export.render}",
            "new_string": "FORMATS = {\n    'csv': csv_export.render,\n    'excel-csv': partial(csv_export.render, excel=True),\n    'xlsx': xlsx_export.render,\n}",
        },
        "The file /home/ana/code/timesheets/app/api/exports.py has been updated.",
    )
    summary = _summary(
        "CSV export broken in German Excel; added an Excel-specific CSV format with BOM, semicolons and formula guarding.",
        """- Make the timesheet CSV export open correctly in Excel for German customers (umlauts garbled, all data in one column).
- Don't break API consumers that parse ?format=csv with pandas.
- Also neutralise formula injection (cells starting with = etc.), for the Excel format only.""",
        """- UTF-8 BOM (utf-8-sig) for Excel, ';' delimiter in locales with decimal commas
- CSV formula injection and the leading-apostrophe mitigation""",
        """- app/exports/csv_export.py: render() takes excel=False; in Excel mode it writes ';', encodes utf-8-sig and prefixes formula-like string cells with an apostrophe.
- app/api/exports.py: new 'excel-csv' format mapped to the Excel mode; 'csv' unchanged.""",
        """- A test failed because negative hours were being prefixed too; the guard now applies to string values only.""",
        """A separate format was chosen instead of changing the default, to keep existing CSV consumers working.""",
        """- "Customers in Germany open the timesheet CSV export in Excel and see 'MÃ¼ller' instead of 'Müller', and everything lands in one column. Fix the export for Excel. Don't break the API consumers who parse it with pandas, they use the same endpoint with ?format=csv."
- "While you're in there: security flagged that a project name like =HYPERLINK(...) runs as a formula in Excel. Fix that too, for the Excel format only.\"""",
        "- Point the UI's export button at the new format.",
        "Export tests pass; the new format is registered in the API.",
        "Update the frontend export link to use format=excel-csv.",
    )
    labels = [
        Label("request", "Fix the export for Excel", False),
        Label("constraint", "Don't break the API consumers who parse it with pandas", False),
        Label("decision", "?format=excel-csv gets BOM and ';'", False),
        Label("edit", "'utf-8-sig' if excel else 'utf-8'", False),
        Label("request", "Fix that too, for the Excel format only", False),
        Label("edit", "FORMULA_START = ('=', '+', '-', '@', '\\t', '\\r')", True),
        Label("failure", "assert \"'-1.5\" == '-1.5'", False),
        Label("decision", "Corrections are logged as negative hours", True),
        Label("measurement", "7 passed", True),
        Label("file", "app/api/exports.py", False),
        Label("identifier", "test_negative_hours_kept", True),
    ]
    return DevSession(c, summary, labels)


def double_cron() -> DevSession:
    """Go/Kubernetes: a nightly job ran twice after scaling to 3 replicas; leader election with a Lease."""
    c = Conversation("/home/sam/src/notifier", "blind-double-cron")
    c.user(
        "Since we scaled notifier to 3 replicas, customers get the weekly digest email three times. The digest job "
        "runs in-process on a cron schedule. Make it run once per schedule. No new infrastructure: no Redis, no "
        "separate CronJob, we only have the cluster's API."
    )
    c.tool(
        "Grep",
        {"pattern": "cron.New|AddFunc", "path": "cmd/notifier", "output_mode": "content", "-n": True},
        "cmd/notifier/main.go:58:\tc := cron.New(cron.WithLocation(time.UTC))\n"
        'cmd/notifier/main.go:59:\tc.AddFunc("0 7 * * MON", digest.SendWeekly(store, mailer))',
    )
    c.say(
        "client-go has leader election on a coordination.k8s.io Lease, which uses only the API server. Only the leader "
        "starts the cron scheduler; if it dies another replica takes over within the lease duration. I'll use "
        "LeaseDuration 30s, RenewDeadline 20s, RetryPeriod 5s, the client-go defaults' ratio."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/sam/src/notifier/cmd/notifier/main.go",
            "old_string": '\tc := cron.New(cron.WithLocation(time.UTC))\n\tc.AddFunc("0 7 * * MON", digest.SendWeekly(store, mailer))\n\tc.Start()',
            "new_string": '\tlock := &resourcelock.LeaseLock{\n\t\tLeaseMeta:  metav1.ObjectMeta{Name: "notifier-scheduler", Namespace: ns},\n\t\tClient:     kube.CoordinationV1(),\n\t\tLockConfig: resourcelock.ResourceLockConfig{Identity: podName},\n\t}\n'
            "\tgo leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{\n\t\tLock: lock, ReleaseOnCancel: true,\n\t\tLeaseDuration: 30 * time.Second, RenewDeadline: 20 * time.Second, RetryPeriod: 5 * time.Second,\n"
            '\t\tCallbacks: leaderelection.LeaderCallbacks{\n\t\t\tOnStartedLeading: func(ctx context.Context) { runScheduler(ctx, store, mailer) },\n\t\t\tOnStoppedLeading: func() { log.Info("scheduler: lost leadership") },\n\t\t},\n\t})',
        },
        "The file /home/sam/src/notifier/cmd/notifier/main.go has been updated.",
    )
    c.bash(
        "go build ./... && kubectl -n comms logs deploy/notifier --since=2m | grep -i lease",
        "E1204 11:20:04.118201       1 leaderelection.go:332] error retrieving resource lock comms/notifier-scheduler: "
        'leases.coordination.k8s.io "notifier-scheduler" is forbidden: User "system:serviceaccount:comms:notifier" '
        'cannot get resource "leases" in API group "coordination.k8s.io" in the namespace "comms"',
        error=True,
    )
    c.tool(
        "Write",
        {
            "file_path": "/home/sam/src/notifier/deploy/rbac-lease.yaml",
            "content": "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: notifier-lease\n  namespace: comms\nrules:\n"
            '  - apiGroups: ["coordination.k8s.io"]\n    resources: ["leases"]\n    resourceNames: ["notifier-scheduler"]\n    verbs: ["get", "update"]\n'
            '  - apiGroups: ["coordination.k8s.io"]\n    resources: ["leases"]\n    verbs: ["create"]\n---\n'
            "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: notifier-lease\n  namespace: comms\n"
            "subjects:\n  - kind: ServiceAccount\n    name: notifier\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: Role\n  name: notifier-lease\n",
        },
        "File created successfully at: /home/sam/src/notifier/deploy/rbac-lease.yaml",
    )
    c.say(
        "create can't be limited by resourceNames (the name isn't known at authorisation time), hence the separate rule."
    )
    c.bash(
        "kubectl apply -f deploy/rbac-lease.yaml && kubectl -n comms rollout restart deploy/notifier && sleep 40 && kubectl -n comms get lease notifier-scheduler -o jsonpath='{.spec.holderIdentity}'",
        "role.rbac.authorization.k8s.io/notifier-lease created\nrolebinding.rbac.authorization.k8s.io/notifier-lease created\n"
        "deployment.apps/notifier restarted\nnotifier-5b8c6f9d7-q7tln",
    )
    c.user(
        "Test the failover: kill the leader and tell me how long until someone else holds it. Staging only, obviously. "
        "And leave the replica count at 3, the HPA owns it."
    )
    c.bash(
        "kubectl config current-context && kubectl -n comms delete pod notifier-5b8c6f9d7-q7tln --grace-period=0 --force; "
        'start=$(date +%s); until h=$(kubectl -n comms get lease notifier-scheduler -o jsonpath=\'{.spec.holderIdentity}\') && [ "$h" != notifier-5b8c6f9d7-q7tln ]; do sleep 1; done; echo "$h after $(( $(date +%s) - start ))s"',
        "staging-eu1\nWarning: Immediate deletion does not wait for confirmation that the running resource has been terminated.\n"
        'pod "notifier-5b8c6f9d7-q7tln" force deleted\nnotifier-5b8c6f9d7-8mzxd after 33s',
    )
    c.say(
        "Failover took 33 s: with a forced kill the lease isn't released, so the next replica waits out the 30 s "
        "lease. A normal shutdown releases it at once because ReleaseOnCancel is on. A digest is weekly, so a "
        "gap of half a minute at 07:00 on Monday only delays it."
    )
    summary = _summary(
        "Duplicate weekly digests after scaling to 3 replicas; in-process cron now gated by Kubernetes Lease leader election.",
        """- Make the in-process weekly digest job run once per schedule although notifier runs 3 replicas.
- No new infrastructure (no Redis, no separate CronJob); only the Kubernetes API.
- Test failover by killing the leader, in staging only, and report the takeover time.""",
        """- client-go leaderelection with a coordination.k8s.io Lease; ReleaseOnCancel
- RBAC Role/RoleBinding for leases; resourceNames cannot restrict create""",
        """- cmd/notifier/main.go: the cron scheduler now starts only in OnStartedLeading of a Lease-based leader election (lease notifier-scheduler).
- deploy/rbac-lease.yaml (new): Role + RoleBinding letting the notifier service account get/update its lease and create leases.""",
        """- The pods could not read the lease (RBAC forbidden for the service account); fixed with the new Role/RoleBinding.""",
        """Leader election confirmed working in staging; after a forced kill of the leader another replica took over in about half a minute, which is fine for a weekly job. A graceful shutdown hands over immediately.""",
        """- "Since we scaled notifier to 3 replicas, customers get the weekly digest email three times... Make it run once per schedule. No new infrastructure: no Redis, no separate CronJob, we only have the cluster's API."
- "Test the failover: kill the leader and tell me how long until someone else holds it. Staging only, obviously...\"""",
        "- Roll out to production.",
        "Failover tested in staging.",
        "Ask whether to roll the change out to production.",
    )
    labels = [
        Label("request", "Make it run once per schedule", False),
        Label("constraint", "no Redis, no separate CronJob", False),
        Label("identifier", "0 7 * * MON", True),
        Label("decision", "LeaseDuration 30s, RenewDeadline 20s, RetryPeriod 5s", True),
        Label("failure", 'cannot get resource "leases" in API group "coordination.k8s.io"', False),
        Label("file", "deploy/rbac-lease.yaml", False),
        Label("decision", "create can't be limited by resourceNames", False),
        Label("constraint", "Staging only, obviously", False),
        Label("constraint", "leave the replica count at 3, the HPA owns it", True),
        Label("identifier", "staging-eu1", True),
        Label("measurement", "after 33s", False),
        Label("identifier", "notifier-5b8c6f9d7-8mzxd", True),
        Label("identifier", "notifier-scheduler", False),
    ]
    return DevSession(c, summary, labels)


def socket_listener_leak() -> DevSession:
    """TypeScript/Node: a websocket server's heap grows; listeners added per message never removed."""
    c = Conversation("/srv/app/live-scores", "blind-socket-listener-leak")
    c.user(
        "live-scores leaks: heap goes from ~180 MB to 1.5 GB over a match day and then the pod restarts. Find it. "
        "We're on Node 20, don't upgrade ws or node in this change, the upgrade is scheduled separately. "
        "And no heap snapshots on the prod pods, a snapshot freezes the process for seconds."
    )
    c.bash(
        "node --inspect=0.0.0.0:9229 dist/server.js & sleep 2; npx autocannon-ws --connections 500 --duration 300 ws://localhost:8080/feed; "
        "node scripts/heap-snapshot.js 9229 /tmp/after.heapsnapshot",
        "Debugger listening on ws://0.0.0.0:9229/6c1f2e9a-44b1-4d0f-9a55-0f2b8d1c7e30\n"
        "(node:41877) MaxListenersExceededWarning: Possible EventEmitter memory leak detected. 11 score listeners added to [MatchFeed]. Use emitter.setMaxListeners() to increase limit\n"
        "500 connections, 150000 messages in 300s\nheap snapshot written: /tmp/after.heapsnapshot (612 MB)",
    )
    c.bash(
        "node scripts/top-retainers.js /tmp/after.heapsnapshot | head -6",
        "Closure (onScore)            count 148211   retained 402.7 MB\n"
        "  retained by MatchFeed._events.score (Array)\nObject (Subscription)        count 148209   retained 51.3 MB\n"
        "string                       count  90322   retained 20.0 MB",
    )
    c.tool(
        "Grep",
        {"pattern": "on\\('score'", "path": "src", "output_mode": "content", "-n": True, "-B": 3},
        "src/ws/handlers.ts-41-  socket.on('message', (raw) => {\nsrc/ws/handlers.ts-42-    const msg = parse(raw);\n"
        "src/ws/handlers.ts-43-    if (msg.type !== 'subscribe') return;\nsrc/ws/handlers.ts:44:    feed.on('score', function onScore(s) { if (s.matchId === msg.matchId) socket.send(JSON.stringify(s)); });",
    )
    c.say(
        "Every subscribe message adds a listener to the shared MatchFeed and nothing removes it on close, so each "
        "listener keeps its socket and closure alive forever. Clients resubscribe on every reconnect, which on "
        "mobile is often. I'll keep one listener per socket per match and remove them all on 'close'."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/srv/app/live-scores/src/ws/handlers.ts",
            "old_string": "    feed.on('score', function onScore(s) { if (s.matchId === msg.matchId) socket.send(JSON.stringify(s)); });",
            "new_string": "    if (listeners.has(msg.matchId)) return;\n    const onScore = (s: Score) => { if (s.matchId === msg.matchId) socket.send(JSON.stringify(s)); };\n"
            "    listeners.set(msg.matchId, onScore);\n    feed.on('score', onScore);",
        },
        "The file /srv/app/live-scores/src/ws/handlers.ts has been updated.",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/srv/app/live-scores/src/ws/handlers.ts",
            "old_string": "  socket.on('message', (raw) => {",
            "new_string": "  const listeners = new Map<string, (s: Score) => void>();\n  socket.on('close', () => {\n    for (const l of listeners.values()) feed.off('score', l);\n    listeners.clear();\n  });\n  socket.on('message', (raw) => {",
        },
        "The file /srv/app/live-scores/src/ws/handlers.ts has been updated.",
    )
    c.bash(
        "npx tsc -p . && npx vitest run src/ws",
        " ✓ src/ws/handlers.test.ts (9 tests) 112ms\n ✗ src/ws/feed.test.ts > unsubscribe stops delivery\n"
        '   → expected "send" to be called 1 times, but got 2 times\n\n Test Files  1 failed | 1 passed (2)\n      Tests  1 failed | 14 passed (15)',
        error=True,
    )
    c.say(
        "The client protocol also has an 'unsubscribe' message that the old code ignored; the test expected it to work. Handling it: remove that match's listener."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/srv/app/live-scores/src/ws/handlers.ts",
            "old_string": "    if (msg.type !== 'subscribe') return;",
            "new_string": "    if (msg.type === 'unsubscribe') {\n      const l = listeners.get(msg.matchId);\n      if (l) feed.off('score', l);\n      listeners.delete(msg.matchId);\n      return;\n    }\n    if (msg.type !== 'subscribe') return;",
        },
        "The file /srv/app/live-scores/src/ws/handlers.ts has been updated.",
    )
    c.bash(
        "npx vitest run src/ws && node scripts/soak.js --connections 500 --reconnect-every 20s --duration 600",
        " Test Files  2 passed (2)\n      Tests  15 passed (15)\n"
        + _lines("t={i}0s heapUsed=19{i} MB listeners=500", 6)
        + "\nsoak done: heapUsed start 183 MB, end 197 MB, max listeners 512",
    )
    summary = _summary(
        "Node websocket service memory leak: per-message event listeners never removed; fixed with per-socket bookkeeping.",
        """- Find the memory leak in live-scores (heap grows over a match day until the pod restarts).
- Constraint: stay on the current Node and ws versions; upgrades are separate.""",
        """- EventEmitter listener leaks, MaxListenersExceededWarning
- Heap snapshots and retainer analysis""",
        """- src/ws/handlers.ts: one score listener per socket per match kept in a Map; all removed on socket close; 'unsubscribe' messages now remove that match's listener.""",
        """- A feed test failed (unsubscribe still delivered); the old handler ignored unsubscribe; now handled.""",
        """The heap snapshot showed the onScore closures retained by the shared MatchFeed's score listener array. A 10-minute soak with frequent reconnects now stays flat.""",
        """- "live-scores leaks: heap goes from ~180 MB to 1.5 GB over a match day and then the pod restarts. Find it. We're on Node 20, don't upgrade ws or node in this change, the upgrade is scheduled separately...\"""",
        "- Deploy and watch memory on the next match day.",
        "Fix done; all ws tests pass; soak test flat.",
        "Commit and deploy the fix.",
    )
    labels = [
        Label("request", "Find it", False),
        Label("constraint", "don't upgrade ws or node in this change", False),
        Label("constraint", "no heap snapshots on the prod pods", True),
        Label("failure", "MaxListenersExceededWarning", False),
        Label("measurement", "148211", True),
        Label("measurement", "402.7 MB", True),
        Label("file", "src/ws/handlers.ts", False),
        Label("decision", "Clients resubscribe on every reconnect", True),
        Label("edit", "feed.off('score', l)", False),
        Label("failure", 'expected "send" to be called 1 times, but got 2 times', False),
        Label("measurement", "heapUsed start 183 MB, end 197 MB", False),
        Label("measurement", "15 passed", True),
    ]
    return DevSession(c, summary, labels)


def revenue_fanout() -> DevSession:
    """SQL: a monthly revenue report overstated by a join fan-out through discounts; window functions."""
    c = Conversation("/home/nora/analytics/dbt", "blind-revenue-fanout")
    c.user(
        "Finance says November revenue in the dashboard is 1.94M but Stripe says 1.71M. The model is "
        "models/marts/monthly_revenue.sql. Find the difference. Don't change the numbers of closed months before "
        "November without telling me first, they're already reported to the board."
    )
    c.tool(
        "Read",
        {"file_path": "/home/nora/analytics/dbt/models/marts/monthly_revenue.sql"},
        "     1\tselect\n     2\t  date_trunc('month', o.paid_at) as month,\n     3\t  sum(oi.amount_cents) / 100.0 as revenue\n"
        "     4\tfrom {{ ref('orders') }} o\n     5\tjoin {{ ref('order_items') }} oi on oi.order_id = o.id\n"
        "     6\tleft join {{ ref('order_discounts') }} d on d.order_id = o.id\n     7\twhere o.status = 'paid'\n     8\tgroup by 1",
    )
    c.bash(
        "dbt show --inline \"select count(*) as orders, count(distinct order_id) as distinct_orders from {{ ref('order_discounts') }} where created_at >= '2026-11-01'\"",
        "| orders | distinct_orders |\n| ------ | --------------- |\n|   4182 |            2977 |",
    )
    c.say(
        "order_discounts has more than one row per order since the stacked-coupons launch (4182 rows for 2977 "
        "orders in November), so the left join repeats every item row once per discount. The discount join isn't "
        "even used in the select: it's left over from an older version."
    )
    c.bash(
        "dbt show --inline \"select date_trunc('month', paid_at) m, sum(amount_cents)/100.0 r from {{ ref('orders') }} o join {{ ref('order_items') }} oi on oi.order_id=o.id where status='paid' and paid_at >= '2026-08-01' group by 1 order by 1\"",
        "| m          | r          |\n| ---------- | ---------- |\n| 2026-08-01 | 1502118.40 |\n| 2026-09-01 | 1588720.15 |\n"
        "| 2026-10-01 | 1655093.70 |\n| 2026-11-01 | 1713406.85 |",
    )
    c.bash(
        "dbt show --select monthly_revenue --limit 4 --order-by 'month desc'",
        "| month      | revenue    |\n| ---------- | ---------- |\n| 2026-11-01 | 1942551.10 |\n| 2026-10-01 | 1689302.55 |\n"
        "| 2026-09-01 | 1588720.15 |\n| 2026-08-01 | 1502118.40 |",
        error=False,
    )
    c.say(
        "Without the join, November is 1713406.85, matching Stripe's 1.71M. But October also changes: 1689302.55 "
        "reported vs 1655093.70 correct, because stacked coupons launched on Oct 20. September and earlier are unchanged."
    )
    c.user(
        "OK, October was reported to the board. Fix the model anyway, and write me a short note with the October delta I can send to the CFO."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/nora/analytics/dbt/models/marts/monthly_revenue.sql",
            "old_string": "join {{ ref('order_items') }} oi on oi.order_id = o.id\nleft join {{ ref('order_discounts') }} d on d.order_id = o.id",
            "new_string": "join {{ ref('order_items') }} oi on oi.order_id = o.id",
        },
        "The file /home/nora/analytics/dbt/models/marts/monthly_revenue.sql has been updated.",
    )
    c.tool(
        "Write",
        {
            "file_path": "/home/nora/analytics/dbt/tests/assert_revenue_one_row_per_item.sql",
            "content": "-- fails if the revenue model ever counts an order item twice\nselect oi.id from {{ ref('order_items') }} oi\n"
            "join {{ ref('orders') }} o on o.id = oi.order_id where o.status = 'paid'\ngroup by oi.id having count(*) > 1\n",
        },
        "File created successfully at: /home/nora/analytics/dbt/tests/assert_revenue_one_row_per_item.sql",
    )
    c.bash(
        "dbt build --select monthly_revenue+",
        "12:31:05  1 of 3 START sql table model marts.monthly_revenue ...... [RUN]\n"
        "12:31:09  1 of 3 OK created sql table model marts.monthly_revenue ... [SELECT 41 in 3.92s]\n"
        "12:31:09  2 of 3 START test assert_revenue_one_row_per_item ........ [RUN]\n"
        "12:31:10  2 of 3 PASS assert_revenue_one_row_per_item .............. [PASS in 0.88s]\n"
        "12:31:10  3 of 3 START test not_null_monthly_revenue_month ......... [RUN]\n"
        "12:31:10  3 of 3 ERROR not_null_monthly_revenue_month .............. [ERROR in 0.21s]\n"
        'Database Error in test not_null_monthly_revenue_month (models/marts/schema.yml)\n  column "month" does not exist',
        error=True,
    )
    c.bash(
        "grep -n -B2 -A4 'monthly_revenue' models/marts/schema.yml",
        "14:  - name: monthly_revenue\n15:    columns:\n16:      - name: revenue_month\n17:        tests: [not_null, unique]",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/nora/analytics/dbt/models/marts/schema.yml",
            "old_string": "      - name: revenue_month",
            "new_string": "      - name: month",
        },
        "The file /home/nora/analytics/dbt/models/marts/schema.yml has been updated.",
    )
    c.bash("dbt build --select monthly_revenue+", "12:33:40  Done. PASS=4 WARN=0 ERROR=0 SKIP=0 TOTAL=4")
    summary = _summary(
        "Monthly revenue overstated vs Stripe; a join fan-out through order_discounts; model fixed, October affected.",
        """- Explain why the dashboard's November revenue (~1.94M) exceeds Stripe's (~1.71M) in the monthly revenue dbt model.
- Do not change closed months before November without telling the user first (already reported to the board).
- After learning October is affected: fix the model anyway and draft a short note for the CFO with the October difference.""",
        """- Join fan-out from a one-to-many join; dbt singular tests; dbt show / build""",
        """- models/marts/monthly_revenue.sql: removed the unused join to order_discounts.
- models/marts/schema.yml: column name in the tests corrected to match the model.""",
        """- order_discounts now has multiple rows per order (stacked coupons), so the join multiplied item rows.
- A schema test referenced a column that doesn't exist; renamed in schema.yml.""",
        """November corrected revenue matches Stripe. October was also inflated since stacked coupons launched in late October; earlier months are unchanged.""",
        """- "Finance says November revenue in the dashboard is 1.94M but Stripe says 1.71M... Find the difference. Don't change the numbers of closed months before November without telling me first, they're already reported to the board."
- "OK, October was reported to the board. Fix the model anyway, and write me a short note with the October delta I can send to the CFO.\"""",
        "- Write the CFO note with the October delta.",
        "Model fixed and all dbt tests pass.",
        "Draft the note for the CFO.",
    )
    labels = [
        Label("request", "Find the difference", False),
        Label(
            "constraint", "Don't change the numbers of closed months before November without telling me first", False
        ),
        Label("file", "models/marts/monthly_revenue.sql", False),
        Label("measurement", "4182", True),
        Label("measurement", "2977", True),
        Label("measurement", "1713406.85", False),
        Label("measurement", "1689302.55", True),
        Label("measurement", "1655093.70", True),
        Label("identifier", "Oct 20", True),
        Label("failure", 'column "month" does not exist', False),
        Label("edit", "- name: month", False),
        Label("request", "write me a short note with the October delta", False),
        Label("measurement", "PASS=4", True),
        Label("file", "tests/assert_revenue_one_row_per_item.sql", True),
    ]
    return DevSession(c, summary, labels)


def arm64_release_build() -> DevSession:
    """Rust/shell: adding an aarch64 Linux build to the release workflow; a string of failed commands."""
    c = Conversation("/home/yuki/src/logtail", "blind-arm64-release-build")
    c.user(
        "Users on Graviton want a binary. Add aarch64-unknown-linux-gnu to the release build. It must still link "
        "against glibc 2.28 or older, our oldest supported distro is RHEL 8. Try it locally before touching the workflow."
    )
    c.bash(
        "rustup target add aarch64-unknown-linux-gnu",
        "info: downloading component 'rust-std' for 'aarch64-unknown-linux-gnu'\ninfo: installing component 'rust-std' for 'aarch64-unknown-linux-gnu'",
    )
    c.bash(
        "cargo build --release --target aarch64-unknown-linux-gnu 2>&1 | tail -6",
        "error: linking with `cc` failed: exit status: 1\n  |\n  = note: /usr/bin/ld: target/aarch64-unknown-linux-gnu/release/deps/logtail-3b1f.o: "
        'error adding symbols: file in wrong format\n          collect2: error: ld returned 1 exit status\n\nerror: could not compile `logtail` (bin "logtail") due to 1 previous error',
        error=True,
    )
    c.bash("aarch64-linux-gnu-gcc --version", "bash: aarch64-linux-gnu-gcc: command not found", error=True)
    c.say(
        "Installing a cross gcc would link against this machine's glibc 2.39, which breaks the RHEL 8 requirement. "
        "cargo-zigbuild can target an explicit glibc version (the .2.28 suffix), so I'll use that instead."
    )
    c.bash(
        "cargo install --locked cargo-zigbuild && pip install ziglang==0.13.0",
        "  Installed package `cargo-zigbuild v0.19.7` (executable `cargo-zigbuild`)\nSuccessfully installed ziglang-0.13.0",
    )
    c.bash(
        "cargo zigbuild --release --target aarch64-unknown-linux-gnu.2.28 2>&1 | tail -8",
        "  cargo:warning=openssl-sys: Could not find directory of OpenSSL installation\n"
        "  --- stderr\n  thread 'main' panicked at openssl-sys-0.9.103/build/find_normal.rs:190:5:\n"
        "  Could not find directory of OpenSSL installation, and this `-sys` crate cannot proceed without this knowledge.\n"
        "error: failed to run custom build command for `openssl-sys v0.9.103`",
        error=True,
    )
    c.bash(
        "cargo tree -i openssl-sys -e normal | head -5",
        "openssl-sys v0.9.103\n└── openssl v0.10.66\n    └── native-tls v0.2.12\n        └── reqwest v0.12.7\n            └── logtail v1.8.1",
    )
    c.user("Don't vendor OpenSSL, security won't sign off on shipping our own OpenSSL. Can reqwest use rustls?")
    c.tool(
        "Edit",
        {
            "file_path": "/home/yuki/src/logtail/Cargo.toml",
            "old_string": 'reqwest = { version = "0.12", features = ["json"] }',
            "new_string": 'reqwest = { version = "0.12", default-features = false, features = ["json", "rustls-tls-native-roots"] }',
        },
        "The file /home/yuki/src/logtail/Cargo.toml has been updated.",
    )
    c.bash(
        "cargo zigbuild --release --target aarch64-unknown-linux-gnu.2.28 2>&1 | tail -2 && file target/aarch64-unknown-linux-gnu/release/logtail && "
        "objdump -T target/aarch64-unknown-linux-gnu/release/logtail | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1",
        "    Finished `release` profile [optimized] target(s) in 2m 41s\n"
        "target/aarch64-unknown-linux-gnu/release/logtail: ELF 64-bit LSB pie executable, ARM aarch64, version 1 (SYSV), dynamically linked, interpreter /lib/ld-linux-aarch64.so.1, for GNU/Linux 3.7.0, stripped\n"
        "GLIBC_2.28",
    )
    c.bash(
        "docker run --rm --platform linux/arm64 -v $PWD/target/aarch64-unknown-linux-gnu/release:/b rockylinux:8 /b/logtail --version",
        "logtail 1.8.1",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/yuki/src/logtail/.github/workflows/release.yml",
            "old_string": "        target: [x86_64-unknown-linux-gnu]",
            "new_string": "        target: [x86_64-unknown-linux-gnu.2.28, aarch64-unknown-linux-gnu.2.28]",
        },
        "The file /home/yuki/src/logtail/.github/workflows/release.yml has been updated.",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/yuki/src/logtail/.github/workflows/release.yml",
            "old_string": "      - run: cargo build --release --target ${{ matrix.target }}",
            "new_string": "      - run: pip install ziglang==0.13.0 && cargo install --locked cargo-zigbuild@0.19.7\n      - run: cargo zigbuild --release --target ${{ matrix.target }}",
        },
        "The file /home/yuki/src/logtail/.github/workflows/release.yml has been updated.",
    )
    c.bash(
        "actionlint .github/workflows/release.yml",
        '.github/workflows/release.yml:41:52: property "target" is not defined in object type {os: string} [expression]\n   |\n41 |         path: target/${{ matrix.target }}/release/logtail',
        error=True,
    )
    c.say(
        "The upload step is in a second job without the matrix; and the path must drop the .2.28 suffix since cargo's output directory doesn't have it. Moving the upload into the build job with a trimmed path."
    )
    summary = _summary(
        "Adding an arm64 Linux release binary for logtail while keeping glibc compatibility with RHEL 8.",
        """- Add an aarch64 Linux target to logtail's release build for Graviton users.
- Binaries must work with glibc 2.28 (RHEL 8).
- Try locally before editing the workflow.
- Don't vendor OpenSSL (security won't approve); switch reqwest to rustls.""",
        """- Cross compilation with cargo-zigbuild and a glibc version suffix on the target
- reqwest TLS backends (native-tls/OpenSSL vs rustls)
- GitHub Actions matrix; actionlint""",
        """- Cargo.toml: reqwest without default features, using rustls with native roots.
- .github/workflows/release.yml: matrix now builds x86_64 and aarch64 with the glibc 2.28 suffix via cargo-zigbuild (pinned zig and zigbuild versions).""",
        """- Plain cargo build for aarch64 failed at link time (wrong-format object with the host linker); no cross gcc installed.
- openssl-sys could not find OpenSSL when cross-building; resolved by moving reqwest to rustls.
- actionlint: the upload step references matrix.target in a job without the matrix (being fixed).""",
        """A cross gcc would link against the host's newer glibc, so zigbuild was chosen to pin glibc. The aarch64 binary's highest glibc symbol is 2.28 and it runs in a Rocky Linux 8 arm64 container.""",
        """- "Users on Graviton want a binary. Add aarch64-unknown-linux-gnu to the release build. It must still link against glibc 2.28 or older, our oldest supported distro is RHEL 8. Try it locally before touching the workflow."
- "Don't vendor OpenSSL, security won't sign off on shipping our own OpenSSL. Can reqwest use rustls?\"""",
        "- Fix the workflow's upload step.",
        "Was fixing the actionlint error in release.yml: moving the upload into the build job with a path without the glibc suffix.",
        "Finish the upload step change and re-run actionlint.",
    )
    labels = [
        Label("request", "Add aarch64-unknown-linux-gnu to the release build", False),
        Label("constraint", "glibc 2.28 or older", False),
        Label("failure", "error adding symbols: file in wrong format", False),
        Label("failure", "aarch64-linux-gnu-gcc: command not found", False),
        Label("identifier", "glibc 2.39", True),
        Label("identifier", "cargo-zigbuild v0.19.7", True),
        Label("failure", "Could not find directory of OpenSSL installation", False),
        Label("identifier", "native-tls v0.2.12", False),
        Label("constraint", "Don't vendor OpenSSL", False),
        Label("edit", "rustls-tls-native-roots", False),
        Label("measurement", "2m 41s", True),
        Label("identifier", "logtail 1.8.1", True),
        Label("failure", 'property "target" is not defined in object type', False),
    ]
    return DevSession(c, summary, labels)


def open_redirect() -> DevSession:
    """Python/Django: an open redirect in the login `next` parameter, reported by a researcher."""
    c = Conversation("/home/omar/src/clinicbook", "blind-open-redirect")
    c.user(
        "Security report SR-118: /accounts/login/?next=//evil.example redirects off-site after login. Fix it and "
        "add tests. Keep it quiet: no mention of 'open redirect' in the commit message until the advisory is out."
    )
    c.tool(
        "Grep",
        {"pattern": "next", "path": "clinicbook/accounts/views.py", "output_mode": "content", "-n": True},
        "clinicbook/accounts/views.py:31:        nxt = request.GET.get('next', '/')\n"
        "clinicbook/accounts/views.py:32:        if nxt.startswith('/'):\n"
        "clinicbook/accounts/views.py:33:            return redirect(nxt)",
    )
    c.say(
        "startswith('/') accepts '//evil.example', which browsers read as a scheme-relative URL to another host, "
        "and also '/\\\\evil.example' in some browsers. Django has url_has_allowed_host_and_scheme for exactly this; "
        "I'll use it with require_https since the site is HTTPS only."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/omar/src/clinicbook/clinicbook/accounts/views.py",
            "old_string": "        if nxt.startswith('/'):\n            return redirect(nxt)",
            "new_string": "        if url_has_allowed_host_and_scheme(nxt, allowed_hosts={request.get_host()}, require_https=True):\n            return redirect(nxt)\n        return redirect('/')",
        },
        "The file /home/omar/src/clinicbook/clinicbook/accounts/views.py has been updated.",
    )
    c.bash(
        "ruff check clinicbook/accounts/views.py",
        "clinicbook/accounts/views.py:32:12: F821 Undefined name `url_has_allowed_host_and_scheme`\nFound 1 error.",
        error=True,
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/omar/src/clinicbook/clinicbook/accounts/views.py",
            "old_string": "from django.shortcuts import redirect, render",
            "new_string": "from django.shortcuts import redirect, render\nfrom django.utils.http import url_has_allowed_host_and_scheme",
        },
        "The file /home/omar/src/clinicbook/clinicbook/accounts/views.py has been updated.",
    )
    c.bash(
        "python -m pytest clinicbook/accounts -q",
        "..........F\n_______________ test_login_redirects_to_next ________________\n"
        "E   AssertionError: '/' != '/appointments/?day=2026-12-04'\n1 failed, 10 passed in 2.77s",
        error=True,
    )
    c.say(
        "The test client uses http, so require_https rejects every next. request.is_secure() is the right input: "
        "in prod it's True behind the proxy because SECURE_PROXY_SSL_HEADER is set."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/omar/src/clinicbook/clinicbook/accounts/views.py",
            "old_string": "require_https=True)",
            "new_string": "require_https=request.is_secure())",
        },
        "The file /home/omar/src/clinicbook/clinicbook/accounts/views.py has been updated.",
    )
    c.tool(
        "Write",
        {
            "file_path": "/home/omar/src/clinicbook/clinicbook/accounts/tests/test_login_next.py",
            "content": "import pytest\n\nOFFSITE = ['//evil.example', '/\\\\evil.example', 'https://evil.example/x', 'javascript:alert(1)', '\\\\\\\\evil.example']\n\n\n"
            "@pytest.mark.parametrize('nxt', OFFSITE)\ndef test_offsite_next_goes_home(client, user, nxt):\n"
            "    response = client.post(f'/accounts/login/?next={nxt}', {'username': user.username, 'password': 'pw'})\n"
            "    assert response.url == '/'\n",
        },
        "File created successfully at: /home/omar/src/clinicbook/clinicbook/accounts/tests/test_login_next.py",
    )
    c.bash("python -m pytest clinicbook/accounts -q", "................\n16 passed in 2.91s")
    c.tool(
        "Grep",
        {"pattern": "redirect\\(request\\.(GET|POST)", "path": "clinicbook", "output_mode": "content", "-n": True},
        "clinicbook/billing/views.py:88:    return redirect(request.GET.get('return_to', '/billing/'))",
    )
    c.user(
        "Same bug in billing, fix it the same way. Then commit, message something neutral like 'accounts, billing: validate redirect targets'."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/omar/src/clinicbook/clinicbook/billing/views.py",
            "old_string": "    return redirect(request.GET.get('return_to', '/billing/'))",
            "new_string": "    target = request.GET.get('return_to', '/billing/')\n    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}, require_https=request.is_secure()):\n        target = '/billing/'\n    return redirect(target)",
        },
        "The file /home/omar/src/clinicbook/clinicbook/billing/views.py has been updated.",
    )
    c.bash(
        "python -m pytest clinicbook -q -x 2>&1 | tail -1 && git commit -qam 'accounts, billing: validate redirect targets' && git log --oneline -1",
        "214 passed, 3 skipped in 41.08s\nd7c3a90 accounts, billing: validate redirect targets",
    )
    summary = _summary(
        "Security fix for unsafe post-login redirects (SR-118) in accounts and billing; tests added; neutral commit message.",
        """- Fix the redirect issue reported in SR-118 (login `next` parameter allowing off-site redirects) and add tests.
- Don't mention the vulnerability type in the commit message until the advisory is published.
- Apply the same fix to billing's `return_to`, then commit with a neutral message.""",
        """- Django url_has_allowed_host_and_scheme; scheme-relative URLs; request.is_secure() behind a proxy""",
        """- clinicbook/accounts/views.py: `next` validated with url_has_allowed_host_and_scheme (allowed host = request host, https required when the request is secure); falls back to '/'.
- clinicbook/billing/views.py: same validation for return_to, falling back to '/billing/'.
- accounts/tests/test_login_next.py (new): parametrised off-site targets must redirect home.""",
        """- Requiring HTTPS unconditionally broke the existing redirect test (test client is http); now uses request.is_secure().""",
        """The old check only tested for a leading slash, which accepts scheme-relative URLs. A grep found the same pattern in billing. The full suite passes.""",
        """- "Security report SR-118: /accounts/login/?next=//evil.example redirects off-site after login. Fix it and add tests. Keep it quiet: no mention of 'open redirect' in the commit message until the advisory is out."
- "Same bug in billing, fix it the same way. Then commit, message something neutral like 'accounts, billing: validate redirect targets'.\"""",
        "- None.",
        "Fix committed for both views.",
        "Tell the user the commit is ready for the advisory process.",
    )
    labels = [
        Label("request", "Fix it and add tests", False),
        Label("constraint", "no mention of 'open redirect' in the commit message", False),
        Label("decision", "site is HTTPS only", True),
        Label("failure", "AssertionError: '/' != '/appointments/?day=2026-12-04'", False),
        Label("decision", "SECURE_PROXY_SSL_HEADER is set", True),
        Label("edit", "require_https=request.is_secure()", False),
        Label("edit", "javascript:alert(1)", True),
        Label("file", "clinicbook/billing/views.py", False),
        Label("measurement", "214 passed, 3 skipped", True),
        Label("identifier", "d7c3a90", True),
        Label("identifier", "SR-118", False),
        Label("failure", "F821 Undefined name `url_has_allowed_host_and_scheme`", True),
    ]
    return DevSession(c, summary, labels)


SESSIONS = (
    flaky_batcher,
    arc_cycle_leak,
    orders_api_v2,
    polish_plurals,
    checkout_rollout,
    split_full_name,
    json_logging,
    dns_postmortem,
    review_followups,
    tokenizer_regression,
    licence_audit,
    release_2_4,
    bucket_lifecycle,
    backup_cron,
    excel_csv_export,
    double_cron,
    socket_listener_leak,
    revenue_fanout,
    arm64_release_build,
    open_redirect,
)
