"""Fresh labelled sessions for "what compaction dropped" (#41), written without reading the rule
(restore/dropped.py) or the held-out set: realistic Claude Code sessions in the transcript shape
of support/dropped_dev.py (varied languages and tasks, long tool outputs, failed commands, edits,
reasons said in prose, routine commands and noise), each with a summary written the way a strong
model writes Claude Code's nine-section compaction summary, and its facts labelled by hand before
anything scored them: dropped by the summary, or kept by it in some words.

Scored as the development set is: `scripts/bench_dropped.py --fresh`."""

from __future__ import annotations

from support.dropped_dev import Conversation, DevSession, Label


def _lines(template: str, count: int, start: int = 0) -> str:
    return "\n".join(template.format(i=i) for i in range(start, start + count))


def empty_cart() -> DevSession:
    """Go: a 500 on an empty cart found with `git bisect`, fixed in the handler; the user's reason
    for 200 over 204 in prose."""
    c = Conversation("/home/rui/shop", "fresh-empty-cart")
    c.user(
        "Since v2.14 the checkout service returns 500 when the cart is empty. It used to return "
        "an empty list. Find the commit that broke it and fix it please."
    )
    c.bash("git status", "On branch main\nYour branch is up to date with 'origin/main'.\n\nnothing to commit")
    c.bash(
        "git log --oneline v2.13.0..v2.14.0 | wc -l && git log --oneline v2.13.0..v2.14.0 | head -20",
        "37\n"
        "c0ffee1 Bump golang.org/x/net to v0.31.0\n"
        "8d2e4b7 cart: return typed errors from Load\n"
        "a71f3c9 cart: drop legacy session fallback\n"
        "5e9d0aa metrics: add checkout_latency histogram\n"
        "41bb2c0 Merge pull request #882 from ops/dashboards\n"
        "9f8e7d6 cart: lazy-load line items\n"
        "3a2b1c0 docs: checkout sequence diagram\n"
        "e4d5c6b handlers: use errors.Is for not-found\n"
        "77aa11b ci: cache go build\n"
        "b2c3d4e pricing: round per currency minor unit\n"
        "0d9c8b7 cart: split repository interface\n"
        "f1e2d3c tracing: span per handler\n"
        "6b5a4c3 deps: testify v1.9.0\n"
        "19283ab handlers: validate cart id\n"
        "aa00bb1 Merge pull request #871 from rui/pricing\n"
        "c1d2e3f cart: context timeouts\n"
        "2f3e4d5 chore: gofumpt\n"
        "8a9b0c1 handlers: json errors\n"
        "4d4d4d4 cart: index on customer_id\n"
        "5f6a7b8 release: v2.13.1",
    )
    c.bash(
        "go test ./internal/handlers/ -run TestCheckoutEmptyCart -v",
        "=== RUN   TestCheckoutEmptyCart\n    checkout_test.go:88: got status 500, want 200\n"
        "--- FAIL: TestCheckoutEmptyCart (0.01s)\nFAIL\nFAIL\tgithub.com/rui/shop/internal/handlers\t0.214s",
        error=True,
    )
    c.say("The regression test I added fails on main as expected. I'll bisect between v2.13.0 and v2.14.0.")
    c.bash(
        "git bisect start v2.14.0 v2.13.0 && git bisect run go test ./internal/handlers/ -run TestCheckoutEmptyCart",
        "Bisecting: 18 revisions left to test after this (roughly 4 steps)\n"
        "[0d9c8b7] cart: split repository interface\n"
        "ok  \tgithub.com/rui/shop/internal/handlers\t0.198s\n"
        "Bisecting: 9 revisions left to test after this (roughly 3 steps)\n"
        "[9f8e7d6] cart: lazy-load line items\n"
        "--- FAIL: TestCheckoutEmptyCart (0.01s)\n"
        "Bisecting: 4 revisions left to test after this (roughly 2 steps)\n"
        "[e4d5c6b] handlers: use errors.Is for not-found\n"
        "ok  \tgithub.com/rui/shop/internal/handlers\t0.201s\n"
        "Bisecting: 1 revision left to test after this (roughly 1 step)\n"
        "[3a2b1c0] docs: checkout sequence diagram\n"
        "ok  \tgithub.com/rui/shop/internal/handlers\t0.188s\n"
        "9f8e7d6 is the first bad commit\n"
        "commit 9f8e7d6a04c2b1f3e5d7c9a8b6f4e2d0c1a3b5d7\n"
        "Author: Mia Koch <mia@shop.example>\nDate:   Tue Nov 17 14:02:11 2026 +0100\n\n"
        "    cart: lazy-load line items\n\n internal/cart/repository.go | 41 ++++++++++++++-------\n"
        " 1 file changed, 28 insertions(+), 13 deletions(-)\nbisect found first bad commit",
    )
    c.bash(
        "git bisect reset",
        "Previous HEAD position was 3a2b1c0 docs: checkout sequence diagram\nSwitched to branch 'main'",
    )
    c.bash(
        "git show 9f8e7d6 -- internal/cart/repository.go | head -60",
        "@@ -52,19 +52,34 @@ func (r *pgRepository) Load(ctx context.Context, id string) (*Cart, error) {\n"
        "-\titems, err := r.items(ctx, id)\n-\tif err != nil {\n-\t\treturn nil, err\n-\t}\n"
        "-\tcart.Items = items\n+\tcart.loadItems = func() ([]Item, error) { return r.items(ctx, id) }\n"
        "+\treturn cart, nil\n",
    )
    c.tool(
        "Read",
        {"file_path": "/home/rui/shop/internal/cart/cart.go"},
        '    1\tpackage cart\n    2\t\n    3\timport "errors"\n    4\t\n'
        "    5\t// ErrNoItems is returned by Items when the cart has none.\n"
        '    6\tvar ErrNoItems = errors.New("cart: no items")\n'
        + _lines("    {i}\t// ...", 30, 7)
        + "\n   37\tfunc (c *Cart) Items() ([]Item, error) {\n   38\t\titems, err := c.loadItems()\n"
        "   39\t\tif err == nil && len(items) == 0 {\n   40\t\t\treturn nil, ErrNoItems\n   41\t\t}\n",
    )
    c.say(
        "Found it. Since 9f8e7d6 (Mia's lazy-load change) `Cart.Items()` returns `ErrNoItems` for an "
        "empty cart, and `handlers/checkout.go` treats any error from Items as a 500. Before, Load "
        "returned the items directly and an empty slice was fine. I can either handle ErrNoItems in "
        "the handler or stop returning it from Items. Do you want 200 with `[]` or 204?"
    )
    c.user(
        "200 with an empty items array, not 204, because the iOS app's JSON parser crashes on an "
        "empty body. And keep ErrNoItems, the pricing job relies on it."
    )
    c.tool(
        "Read",
        {"file_path": "/home/rui/shop/internal/handlers/checkout.go"},
        _lines("   {i}\t// handler", 20, 40) + "\n   61\titems, err := cart.Items()\n   62\tif err != nil {\n"
        '   63\t\thttp.Error(w, "internal error", http.StatusInternalServerError)\n   64\t\treturn\n   65\t}\n',
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/rui/shop/internal/handlers/checkout.go",
            "old_string": "\titems, err := cart.Items()\n\tif err != nil {",
            "new_string": "\titems, err := cart.Items()\n\tif errors.Is(err, cart.ErrNoItems) {\n"
            "\t\titems, err = []cart.Item{}, nil\n\t}\n\tif err != nil {",
        },
        "The file /home/rui/shop/internal/handlers/checkout.go has been updated successfully.",
    )
    c.bash(
        "go build ./...",
        "# github.com/rui/shop/internal/handlers\ninternal/handlers/checkout.go:62:5: undefined: errors\n",
        error=True,
    )
    c.say("Missing import; `checkout.go` did not import `errors` yet.")
    c.tool(
        "Edit",
        {
            "file_path": "/home/rui/shop/internal/handlers/checkout.go",
            "old_string": 'import (\n\t"encoding/json"',
            "new_string": 'import (\n\t"encoding/json"\n\t"errors"',
        },
        "The file /home/rui/shop/internal/handlers/checkout.go has been updated successfully.",
    )
    c.bash(
        "go test ./internal/... 2>&1 | tail -12",
        "ok  \tgithub.com/rui/shop/internal/cart\t0.412s\n"
        "ok  \tgithub.com/rui/shop/internal/handlers\t0.233s\n"
        "ok  \tgithub.com/rui/shop/internal/pricing\t1.087s\n"
        "?   \tgithub.com/rui/shop/internal/tracing\t[no test files]\n"
        "ok  \tgithub.com/rui/shop/internal/metrics\t0.051s",
    )
    c.bash("golangci-lint run ./internal/handlers/", "bash: golangci-lint: command not found", error=True)
    c.bash("go vet ./internal/handlers/", "")
    c.bash(
        "curl -s -w '\\n%{http_code}\\n' -X POST localhost:8080/v1/checkout -d '{\"cart_id\":\"c-empty-001\"}'",
        '{"items":[],"total":"0.00","currency":"EUR"}\n200',
    )
    c.say('An empty cart now gets 200 with `"items":[]` on the local server (port 8080).')
    c.bash(
        "git add -A && git commit -m 'handlers: empty cart is 200 with no items (regression from 9f8e7d6)'",
        "[main 2b7c4e1] handlers: empty cart is 200 with no items (regression from 9f8e7d6)\n"
        " 2 files changed, 31 insertions(+), 1 deletion(-)",
    )
    c.user("Thanks. Can you also add a line to CHANGELOG.md under Unreleased?")
    c.tool(
        "Read",
        {"file_path": "/home/rui/shop/CHANGELOG.md"},
        "# Changelog\n\n## Unreleased\n\n## v2.14.0\n- cart: lazy-load line items\n",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/rui/shop/CHANGELOG.md",
            "old_string": "## Unreleased\n",
            "new_string": "## Unreleased\n- checkout: an empty cart returns 200 with an empty items list again\n",
        },
        "The file /home/rui/shop/CHANGELOG.md has been updated successfully.",
    )
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
The user reported a regression in the checkout service and asked me to bisect and fix it, then to add a changelog entry.

Summary:
1. Primary Request and Intent:
   The user reported that since v2.14 the checkout service returns 500 for an empty cart instead of an empty list, and asked me to find the breaking commit and fix it. Later they asked for a CHANGELOG entry under Unreleased.

2. Key Technical Concepts:
   - git bisect run with a Go regression test
   - Lazy loading of cart line items via a closure
   - Sentinel errors and errors.Is in Go

3. Files and Code Sections:
   - internal/cart/repository.go: since the lazy-load change, Load no longer fetches items eagerly.
   - internal/cart/cart.go: Items() returns ErrNoItems when the cart is empty.
   - internal/handlers/checkout.go: now treats ErrNoItems as an empty list instead of a 500:
     ```go
     items, err := cart.Items()
     if errors.Is(err, cart.ErrNoItems) {
         items, err = []cart.Item{}, nil
     }
     ```
     Also added the "errors" import.
   - internal/handlers/checkout_test.go: added TestCheckoutEmptyCart.
   - CHANGELOG.md: added an Unreleased entry.

4. Errors and fixes:
   - Build error "undefined: errors" after the first edit: fixed by adding the import.

5. Problem Solving:
   Bisect identified the lazy-load line items commit (9f8e7d6) as the first bad commit. The handler converted any error from Items() into a 500, and the new code returns ErrNoItems for empty carts. Fixed in the handler; all internal packages pass, go vet is clean, and a local curl returns 200 with an empty items array.

6. All user messages:
   - "Since v2.14 the checkout service returns 500 when the cart is empty. … Find the commit that broke it and fix it please."
   - User wants 200 with an empty items array rather than 204, and to keep ErrNoItems since the pricing job relies on it.
   - "Thanks. Can you also add a line to CHANGELOG.md under Unreleased?"

7. Pending Tasks:
   - None.

8. Current Work:
   Just added the CHANGELOG.md entry under Unreleased describing the fix.

9. Optional Next Step:
   Confirm with the user whether to open a PR for the fix.
"""
    labels = [
        Label("request", "Since v2.14 the checkout service returns 500", dropped=False),  # quoted with an elision
        Label("request", "add a line to CHANGELOG.md under Unreleased", dropped=False),
        Label("decision", "200 with an empty items array, not 204", dropped=False),
        Label("decision", "because the iOS app's JSON parser crashes on an empty body", dropped=True),
        Label("constraint", "keep ErrNoItems", dropped=False),
        Label("identifier", "9f8e7d6", dropped=False),
        Label("identifier", "2b7c4e1", dropped=True),  # the fix's commit
        Label("failed command", "golangci-lint", dropped=True),  # not installed: the summary says only go vet
        Label("error", "undefined: errors", dropped=False),
        Label("failed command", "go test ./internal/handlers/ -run TestCheckoutEmptyCart -v", dropped=True),
        Label("error", "got status 500, want 200", dropped=False),  # the symptom, in the request
        Label("file edited", "internal/handlers/checkout.go", dropped=False),
        Label("file edited", "CHANGELOG.md", dropped=False),
        Label("file read", "internal/cart/cart.go", dropped=False),
        Label("edit", "errors.Is(err, cart.ErrNoItems)", dropped=False),
        Label("edit", "an empty cart returns 200 with an empty items list again", dropped=True),
        Label("name", "Mia Koch", dropped=True),  # who wrote the breaking change
        # noise
        Label("command", "git status", dropped=False),
        Label("command", "git bisect reset", dropped=False),
        Label("number", "8080", dropped=False),
        Label("number", "2026", dropped=False),
        Label("path", "checkout_test.go:88", dropped=False),
    ]
    return DevSession(c, summary, labels)


def flaky_retry() -> DevSession:
    """TypeScript: a flaky Vitest test of a retry helper, reproduced by repetition, caused by real
    timers and jitter; the user's preference (fix the cause, no longer timeout) in prose."""
    c = Conversation("/home/sam/web-sdk", "fresh-flaky-retry")
    c.user(
        "retry.test.ts fails maybe one run in ten on CI (the 'gives up after maxAttempts' case). "
        "Please find out why. Don't just raise the timeout, I want the cause fixed."
    )
    c.bash("ls", "README.md\nnode_modules\npackage.json\npnpm-lock.yaml\nsrc\ntsconfig.json\nvitest.config.ts")
    c.bash("pnpm vitest run src/retry.test.ts", "bash: pnpm: command not found", error=True)
    c.bash("corepack enable && pnpm --version", "9.12.3")
    c.bash(
        'for i in $(seq 1 30); do pnpm vitest run src/retry.test.ts --reporter=dot >/dev/null 2>&1 || echo "run $i failed"; done',
        "run 4 failed\nrun 17 failed\nrun 23 failed",
    )
    c.say("3 failures in 30 runs locally, so about 10% as on CI. Let me look at one failing run in full.")
    c.bash(
        "pnpm vitest run src/retry.test.ts",
        " RUN  v2.1.4 /home/sam/web-sdk\n\n"
        " \u276f src/retry.test.ts (6 tests | 1 failed) 5063ms\n"
        "   \u2713 retry > returns the first success\n"
        "   \u2713 retry > retries on 503\n"
        "   \u00d7 retry > gives up after maxAttempts 5012ms\n"
        "     \u2192 Test timed out in 5000ms.\n"
        "   \u2713 retry > does not retry on 400\n"
        "   \u2713 retry > honours Retry-After\n"
        "   \u2713 retry > aborts on signal\n\n"
        " Test Files  1 failed (1)\n      Tests  1 failed | 5 passed (6)\n   Duration  5.41s",
        error=True,
    )
    c.tool(
        "Read",
        {"file_path": "/home/sam/web-sdk/src/retry.ts"},
        "     1\texport interface RetryOptions {\n     2\t  maxAttempts?: number; // default 5\n"
        "     3\t  baseDelayMs?: number; // default 200\n     4\t  jitter?: number; // default 0.5\n     5\t}\n"
        + _lines("     {i}\t", 12, 6)
        + "\n    18\tconst delay = base * 2 ** attempt * (1 + Math.random() * jitter);\n"
        "    19\tawait new Promise((r) => setTimeout(r, delay));\n",
    )
    c.tool(
        "Read",
        {"file_path": "/home/sam/web-sdk/src/retry.test.ts"},
        "    41\tit('gives up after maxAttempts', async () => {\n"
        "    42\t  const fetcher = vi.fn().mockResolvedValue(new Response(null, { status: 503 }));\n"
        "    43\t  await expect(retry(fetcher, { maxAttempts: 5 })).rejects.toThrow(RetryExhausted);\n"
        "    44\t  expect(fetcher).toHaveBeenCalledTimes(5);\n    45\t});\n",
    )
    c.say(
        "With the defaults the four waits are 200, 400, 800 and 1600 ms times (1 + random * 0.5), so "
        "between 3000 and 4500 ms of real sleeping, plus the worker's overhead. On a slow CI runner "
        "the upper end crosses Vitest's 5000 ms test timeout. The test runs on real timers, so it is "
        "flaky by construction: it depends on Math.random and the machine's speed."
    )
    c.bash(
        'grep -rn "useFakeTimers\\|Math.random" src/ | head',
        "src/retry.ts:18:const delay = base * 2 ** attempt * (1 + Math.random() * jitter);\n"
        "src/backoff.test.ts:7:  vi.useFakeTimers();\nsrc/poll.test.ts:12:  vi.useFakeTimers({ toFake: ['setTimeout'] });",
    )
    c.say(
        "The other timing tests (backoff.test.ts, poll.test.ts) already use fake timers. I'll do the "
        "same here, and inject the random source so the jitter is deterministic in tests, rather "
        "than stubbing Math.random globally, which leaks into other tests in the same worker."
    )
    c.user("ok, but keep the public RetryOptions type unchanged, it's in our published d.ts.")
    c.say("Understood: I'll add the random source as an internal parameter, not to RetryOptions.")
    c.tool(
        "Edit",
        {
            "file_path": "/home/sam/web-sdk/src/retry.ts",
            "old_string": "export async function retry<T>(fn: () => Promise<Response>, options: RetryOptions = {})",
            "new_string": "export async function retry<T>(\n  fn: () => Promise<Response>,\n"
            "  options: RetryOptions = {},\n  random: () => number = Math.random,\n)",
        },
        "The file /home/sam/web-sdk/src/retry.ts has been updated successfully.",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/sam/web-sdk/src/retry.ts",
            "old_string": "(1 + Math.random() * jitter)",
            "new_string": "(1 + random() * jitter)",
        },
        "The file /home/sam/web-sdk/src/retry.ts has been updated successfully.",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/sam/web-sdk/src/retry.test.ts",
            "old_string": "  await expect(retry(fetcher, { maxAttempts: 5 })).rejects.toThrow(RetryExhausted);",
            "new_string": "  vi.useFakeTimers();\n  const done = expect(retry(fetcher, { maxAttempts: 5 }, () => 1)).rejects"
            ".toThrow(RetryExhausted);\n  await vi.runAllTimersAsync();\n  await done;\n  vi.useRealTimers();",
        },
        "The file /home/sam/web-sdk/src/retry.test.ts has been updated successfully.",
    )
    c.bash(
        "pnpm tsc --noEmit",
        "src/retry.ts(12,26): error TS6133: 'T' is declared but its value is never read.",
        error=True,
    )
    c.say(
        "That warning predates my change (the generic was unused before too) but noUnusedParameters makes it an error now that the signature moved. Removing the unused `<T>`."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/sam/web-sdk/src/retry.ts",
            "old_string": "export async function retry<T>(",
            "new_string": "export async function retry(",
        },
        "The file /home/sam/web-sdk/src/retry.ts has been updated successfully.",
    )
    c.bash("pnpm tsc --noEmit", "")
    c.bash(
        'for i in $(seq 1 200); do pnpm vitest run src/retry.test.ts --reporter=dot >/dev/null 2>&1 || echo "run $i failed"; done; echo done',
        "done",
    )
    c.bash(
        "pnpm vitest run src/retry.test.ts",
        " \u2713 src/retry.test.ts (6 tests) 41ms\n\n Test Files  1 passed (1)\n      Tests  6 passed (6)\n   Duration  612ms",
    )
    c.say("0 failures in 200 runs, and the file now takes 41 ms instead of about 5 s.")
    c.bash(
        "pnpm api-extractor run --local 2>&1 | tail -4",
        "Analysis will use the bundled TypeScript version 5.4.2\n"
        "Warning: You have changed the public API signature for this project. Updating etc/web-sdk.api.md\n"
        "API Extractor completed with warnings",
    )
    c.say(
        "api-extractor flags a public signature change: the extra `random` parameter is visible on the "
        "exported `retry` function even though RetryOptions is unchanged."
    )
    c.user(
        "Hmm. Then don't export it with the extra param. Wrap it: keep retry(fn, options) public and "
        "move the implementation to an internal retryWith(fn, options, random)."
    )
    c.tool(
        "Write",
        {
            "file_path": "/home/sam/web-sdk/src/retry.ts",
            "content": "export interface RetryOptions {\n  maxAttempts?: number; // default 5\n  baseDelayMs?: number; // default 200\n"
            "  jitter?: number; // default 0.5\n}\n\n/** @internal */\nexport async function retryWith(fn, options, random) { /* ... */ }\n\n"
            "export function retry(fn: () => Promise<Response>, options: RetryOptions = {}) {\n"
            "  return retryWith(fn, options, Math.random);\n}\n",
        },
        "The file /home/sam/web-sdk/src/retry.ts has been overwritten successfully.",
    )
    c.bash(
        "pnpm api-extractor run --local 2>&1 | tail -2 && git diff --stat etc/",
        "API Extractor completed successfully\n",
    )
    c.bash(
        "pnpm vitest run 2>&1 | tail -4",
        " Test Files  23 passed (23)\n      Tests  187 passed (187)\n   Start at  10:42:07\n   Duration  9.83s",
    )
    c.bash("git status --short", " M src/retry.test.ts\n M src/retry.ts")
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
The conversation was about a flaky retry test in a TypeScript SDK; the user asked for the root cause, not a longer timeout.

Summary:
1. Primary Request and Intent:
   Fix the flaky "gives up after maxAttempts" case in retry.test.ts, which fails roughly one run in ten on CI, by finding and fixing the root cause rather than raising the timeout. The public RetryOptions type must stay unchanged because it is part of the published type definitions.

2. Key Technical Concepts:
   - Vitest fake timers (vi.useFakeTimers, vi.runAllTimersAsync)
   - Exponential backoff with random jitter
   - api-extractor public API report
   - Dependency injection of a random source for determinism

3. Files and Code Sections:
   - src/retry.ts: backoff delay used Math.random() jitter with real setTimeout. Now split into an internal retryWith(fn, options, random) and a public retry(fn, options) that passes Math.random.
   - src/retry.test.ts: the maxAttempts test now uses fake timers and a fixed random source:
     ```ts
     vi.useFakeTimers();
     const done = expect(retry(fetcher, { maxAttempts: 5 }, () => 1)).rejects.toThrow(RetryExhausted);
     await vi.runAllTimersAsync();
     ```

4. Errors and fixes:
   - pnpm was not available until corepack was enabled.
   - The maxAttempts test timed out at Vitest's 5000 ms limit because real backoff sleeps add up to several seconds on slow runners.
   - tsc complained about an unused generic parameter on retry; removed it.
   - api-extractor reported a public signature change after adding the random parameter; resolved by moving it to an internal function.

5. Problem Solving:
   Reproduced the flake locally by running the file repeatedly (a few failures out of 30). After switching to fake timers and a deterministic random source there were no failures over 200 runs and the file runs in tens of milliseconds. The full suite passes.

6. All user messages:
   - "retry.test.ts fails maybe one run in ten on CI … Please find out why. Don't just raise the timeout, I want the cause fixed."
   - "ok, but keep the public RetryOptions type unchanged, it's in our published d.ts."
   - The user asked not to export the extra parameter and to wrap it: keep retry(fn, options) public and move the implementation into an internal retryWith(fn, options, random).

7. Pending Tasks:
   - None explicitly; changes are uncommitted.

8. Current Work:
   Rewrote src/retry.ts with the internal retryWith and the public wrapper; api-extractor now completes successfully and the full Vitest suite passes.

9. Optional Next Step:
   Update the test to call retryWith (it still passes a third argument to retry) and ask the user whether to commit.
"""
    labels = [
        Label("request", "retry.test.ts fails maybe one run in ten on CI", dropped=False),
        Label("constraint", "Don't just raise the timeout", dropped=False),
        Label("constraint", "keep the public RetryOptions type unchanged", dropped=False),
        Label("request", "move the implementation to an internal retryWith", dropped=False),
        Label("decision", "rather than stubbing Math.random globally", dropped=True),  # and its reason
        Label("failed command", "pnpm vitest run src/retry.test.ts", dropped=False),  # the timeout is kept
        Label("error", "pnpm: command not found", dropped=False),  # "not available until corepack"
        Label("error", "error TS6133", dropped=False),
        Label("error", "noUnusedParameters", dropped=True),  # why the unused generic became an error
        Label("measurement", "3 failures in 30 runs", dropped=False),  # "a few failures out of 30"
        Label("measurement", "41 ms instead of about 5 s", dropped=False),  # "tens of milliseconds"
        Label("measurement", "0 failures in 200 runs", dropped=False),
        Label("measurement", "187 passed", dropped=True),
        Label("measurement", "3000 and 4500 ms", dropped=True),  # how long the real sleeps add up to
        Label("file read", "src/retry.ts", dropped=False),
        Label("file edited", "src/retry.test.ts", dropped=False),
        Label("edit", "(1 + random() * jitter)", dropped=False),
        Label("number", "default 200", dropped=True),  # baseDelayMs's default, read in the file
        Label("file read", "src/poll.test.ts", dropped=True),  # the precedent for fake timers
        Label("error", "You have changed the public API signature", dropped=False),
        # noise
        Label("command", "ls", dropped=False),
        Label("command", "git status --short", dropped=False),
        Label("number", "10:42:07", dropped=False),
        Label("number", "9.12.3", dropped=False),
        Label("name", "Math.random", dropped=False),
    ]
    return DevSession(c, summary, labels)


def axum_upgrade() -> DevSession:
    """Rust: a dependency upgrade (axum 0.6 to 0.7) with the changelog read for a changed default,
    compile errors fixed across files, and the user's reason for not going to 0.8."""
    c = Conversation("/home/jo/tilehub", "fresh-axum-upgrade")
    c.user(
        "Upgrade axum to 0.7 (and hyper 1) in tilehub-server. Stay on 0.7.x, not 0.8, because "
        "tower-sessions 0.12 doesn't support 0.8 yet and we need it for the admin UI."
    )
    c.bash(
        "cargo tree -i axum --depth 1",
        "axum v0.6.20\n\u251c\u2500\u2500 tilehub-server v0.9.3 (/home/jo/tilehub/server)\n"
        "\u2514\u2500\u2500 tower-sessions-core v0.9.1",
    )
    c.bash(
        "cargo upgrade -p axum@0.7 -p hyper@1",
        "error: no such command: `upgrade`\n\n\tView all installed commands with `cargo --list`",
        error=True,
    )
    c.say("cargo-edit is not installed; I'll edit Cargo.toml directly.")
    c.tool(
        "Read",
        {"file_path": "/home/jo/tilehub/server/Cargo.toml"},
        '[package]\nname = "tilehub-server"\nversion = "0.9.3"\nedition = "2021"\n\n[dependencies]\n'
        'axum = { version = "0.6.20", features = ["multipart", "macros"] }\nhyper = { version = "0.14", features = ["full"] }\n'
        'tower-http = { version = "0.4", features = ["trace", "cors"] }\ntower-sessions = "0.9"\n'
        'tower-sessions-memory-store = "0.9"\ntokio = { version = "1.38", features = ["full"] }\n',
    )
    c.bash(
        "curl -s https://raw.githubusercontent.com/tokio-rs/axum/axum-v0.7.5/axum/CHANGELOG.md | sed -n '/# 0.7.0/,/# 0.6.20/p' | head -80",
        "# 0.7.0 (27. November, 2023)\n\n"
        "- **breaking:** Update public dependencies. axum now requires hyper 1.0, http 1.0, http-body 1.0\n"
        "- **breaking:** `axum::Server` has been removed. Use `axum::serve(listener, router)` instead\n"
        "- **breaking:** `axum::body::Body` is now its own type, `hyper::Body` is gone\n"
        "- **breaking:** `DefaultBodyLimit` now applies to `Bytes`, `String`, `Json` and `Form` as well; "
        "the default limit is 2 MB\n"
        "- **breaking:** Removed `axum::extract::BodyStream`, use `Body::into_data_stream`\n"
        "- **breaking:** `RequestExt` and `RequestPartsExt` no longer take `&mut self` for state\n"
        "- **added:** `axum::serve` supports graceful shutdown via `with_graceful_shutdown`\n"
        + _lines("- **fixed:** minor fix {i}", 25)
        + "\n# 0.6.20 (03. August, 2023)",
    )
    c.say(
        "Relevant for us: `axum::Server` is gone (we use it in main.rs), `hyper::Body` is gone, "
        "`BodyStream` is gone, and the 2 MB `DefaultBodyLimit` now also applies to `Bytes`. Our "
        "tile upload handler takes `Bytes`, and tiles can be up to 8 MB, so uploads would start "
        "failing with 413 without an explicit limit."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/jo/tilehub/server/Cargo.toml",
            "old_string": 'axum = { version = "0.6.20", features = ["multipart", "macros"] }\nhyper = { version = "0.14", features = ["full"] }\n'
            'tower-http = { version = "0.4", features = ["trace", "cors"] }\ntower-sessions = "0.9"',
            "new_string": 'axum = { version = "0.7.5", features = ["multipart", "macros"] }\nhyper = { version = "1", features = ["full"] }\n'
            'tower-http = { version = "0.5", features = ["trace", "cors"] }\ntower-sessions = "0.12"',
        },
        "The file /home/jo/tilehub/server/Cargo.toml has been updated successfully.",
    )
    c.bash(
        "cargo build 2>&1 | grep -E '^(error|warning: unused)' -A4 | head -60",
        "error[E0433]: failed to resolve: could not find `Server` in `axum`\n"
        "  --> server/src/main.rs:41:11\n   |\n41 |     axum::Server::bind(&addr)\n   |           ^^^^^^ could not find `Server` in `axum`\n"
        "error[E0412]: cannot find type `Body` in crate `hyper`\n"
        "  --> server/src/routes/tiles.rs:12:35\n   |\n12 | async fn proxy(req: Request<hyper::Body>) -> Response {\n"
        "error[E0432]: unresolved import `axum::extract::BodyStream`\n"
        "  --> server/src/routes/export.rs:3:5\n   |\n3 | use axum::extract::BodyStream;\n"
        "error[E0599]: no method named `into_make_service_with_connect_info` found for struct `Router<AppState>`\n"
        "  --> server/src/main.rs:43:20\n"
        'error: could not compile `tilehub-server` (bin "tilehub-server") due to 4 previous errors',
        error=True,
    )
    c.tool(
        "Read",
        {"file_path": "/home/jo/tilehub/server/src/main.rs"},
        _lines("{i:>4}\t// setup", 38, 1)
        + '\n  39\tlet addr = SocketAddr::from(([0, 0, 0, 0], config.port));\n  40\ttracing::info!(%addr, "listening");\n  41\taxum::Server::bind(&addr)\n  42\t    .serve(app\n  43\t        .into_make_service_with_connect_info::<SocketAddr>())\n  44\t    .with_graceful_shutdown(shutdown_signal())\n  45\t    .await?;\n',
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/jo/tilehub/server/src/main.rs",
            "old_string": "axum::Server::bind(&addr)\n    .serve(app\n        .into_make_service_with_connect_info::<SocketAddr>())\n"
            "    .with_graceful_shutdown(shutdown_signal())\n    .await?;",
            "new_string": "let listener = tokio::net::TcpListener::bind(addr).await?;\naxum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>())\n"
            "    .with_graceful_shutdown(shutdown_signal())\n    .await?;",
        },
        "The file /home/jo/tilehub/server/src/main.rs has been updated successfully.",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/jo/tilehub/server/src/routes/tiles.rs",
            "old_string": "async fn proxy(req: Request<hyper::Body>) -> Response {",
            "new_string": "async fn proxy(req: Request<axum::body::Body>) -> Response {",
        },
        "The file /home/jo/tilehub/server/src/routes/tiles.rs has been updated successfully.",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/jo/tilehub/server/src/routes/export.rs",
            "old_string": "use axum::extract::BodyStream;",
            "new_string": "use axum::body::Body;",
        },
        "The file /home/jo/tilehub/server/src/routes/export.rs has been updated successfully.",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/jo/tilehub/server/src/routes/export.rs",
            "old_string": "async fn import(mut stream: BodyStream) -> Result<StatusCode, AppError> {\n    while let Some(chunk) = stream.next().await {",
            "new_string": "async fn import(body: Body) -> Result<StatusCode, AppError> {\n    let mut stream = body.into_data_stream();\n    while let Some(chunk) = stream.next().await {",
        },
        "The file /home/jo/tilehub/server/src/routes/export.rs has been updated successfully.",
    )
    c.bash(
        "cargo build 2>&1 | tail -15",
        "error[E0277]: the trait bound `fn(State<AppState>, Session) -> impl Future<Output = Html<String>> {admin_index}: Handler<_, _>` is not satisfied\n"
        '  --> server/src/routes/admin.rs:22:30\n   |\n22 |         .route("/admin", get(admin_index))\n'
        "   = help: the trait `Handler<T, S>` is implemented for `Layered<L, H, T, S>`\n"
        "note: required by a bound in `axum::routing::get`\n"
        'error: could not compile `tilehub-server` (bin "tilehub-server") due to 1 previous error',
        error=True,
    )
    c.bash(
        "cargo tree -i tower-sessions-core | head -5",
        "tower-sessions-core v0.12.3\n\u251c\u2500\u2500 tower-sessions v0.12.3\n\u2502   \u2514\u2500\u2500 tilehub-server v0.9.3\n"
        "\u2514\u2500\u2500 tower-sessions-memory-store v0.9.1\n    \u2514\u2500\u2500 tilehub-server v0.9.3",
    )
    c.say(
        "Two versions of tower-sessions-core are in the tree: tower-sessions-memory-store is still on "
        "0.9.1, so `Session` in admin.rs comes from the old core and does not implement the 0.7 "
        "extractor traits. The memory store moved into tower-sessions itself in 0.12."
    )
    c.bash(
        "grep -rn memory_store server/src",
        "server/src/main.rs:18:use tower_sessions_memory_store::MemoryStore;\nserver/src/main.rs:57:    let store = MemoryStore::default();",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/jo/tilehub/server/src/main.rs",
            "old_string": "use tower_sessions_memory_store::MemoryStore;",
            "new_string": "use tower_sessions::MemoryStore;",
        },
        "The file /home/jo/tilehub/server/src/main.rs has been updated successfully.",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/jo/tilehub/server/Cargo.toml",
            "old_string": 'tower-sessions-memory-store = "0.9"\n',
            "new_string": "",
        },
        "The file /home/jo/tilehub/server/Cargo.toml has been updated successfully.",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/jo/tilehub/server/src/routes/tiles.rs",
            "old_string": '        .route("/tiles/:z/:x/:y", put(upload_tile))',
            "new_string": '        .route("/tiles/:z/:x/:y", put(upload_tile))\n        .layer(DefaultBodyLimit::max(8 * 1024 * 1024))',
        },
        "The file /home/jo/tilehub/server/src/routes/tiles.rs has been updated successfully.",
    )
    c.bash(
        "cargo build 2>&1 | tail -3",
        "   Compiling tilehub-server v0.9.3 (/home/jo/tilehub/server)\n    Finished `dev` profile [unoptimized + debuginfo] target(s) in 48.71s",
    )
    c.bash(
        "cargo test 2>&1 | grep -E '^test result|FAILED|panicked'",
        "test result: ok. 64 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 2.31s\n"
        "test result: ok. 11 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.88s",
    )
    c.bash(
        "head -c 7000000 /dev/urandom > /tmp/t.bin && curl -s -o /dev/null -w '%{http_code}\\n' -X PUT --data-binary @/tmp/t.bin localhost:3000/tiles/12/2048/1361",
        "201",
    )
    c.bash("cargo tree -d | grep -c '^[a-z]'", "9")
    c.say("A 7 MB tile upload is accepted (201). Duplicate crates in the tree went from 14 before the upgrade to 9.")
    c.bash("cargo audit", "error: no such command: `audit`", error=True)
    c.user("fine, skip audit, CI runs it. commit it")
    c.bash(
        "git add -A && git commit -qm 'server: axum 0.7, hyper 1, tower-sessions 0.12' && git log --oneline -1",
        "e8a41d2 server: axum 0.7, hyper 1, tower-sessions 0.12",
    )
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
Chronologically: the user asked for an axum upgrade, I read the changelog, fixed compile errors, resolved a tower-sessions version conflict, and committed.

Summary:
1. Primary Request and Intent:
   Upgrade tilehub-server from axum 0.6 to axum 0.7 together with hyper 1, staying on the 0.7.x line rather than 0.8 (tower-sessions compatibility).

2. Key Technical Concepts:
   - axum 0.7 breaking changes: axum::serve replaces axum::Server, axum::body::Body replaces hyper::Body, BodyStream removed in favour of Body::into_data_stream
   - DefaultBodyLimit now also applies to Bytes extractors
   - Duplicate crate versions in the dependency graph (cargo tree)

3. Files and Code Sections:
   - server/Cargo.toml: axum 0.7.5, hyper 1, tower-http 0.5, tower-sessions 0.12; removed tower-sessions-memory-store.
   - server/src/main.rs: switched to a tokio TcpListener with axum::serve and graceful shutdown; MemoryStore now imported from tower_sessions.
   - server/src/routes/tiles.rs: proxy takes Request<axum::body::Body>; tile upload route has an explicit DefaultBodyLimit.
   - server/src/routes/export.rs: import handler takes Body and uses into_data_stream().

4. Errors and fixes:
   - cargo upgrade unavailable (cargo-edit not installed): edited Cargo.toml by hand.
   - E0433/E0412/E0432/E0599 after the bump: fixed per the changelog.
   - E0277 Handler trait not satisfied for admin_index: caused by two versions of tower-sessions-core; fixed by using the MemoryStore built into tower-sessions 0.12.

5. Problem Solving:
   The build and all tests pass (64 and 11 tests). A large tile upload is accepted after setting the body limit. Fewer duplicate crates remain in the tree.

6. All user messages:
   - The user asked to upgrade axum to 0.7 and hyper 1, staying on 0.7.x because tower-sessions 0.12 does not support 0.8 and the admin UI needs it.
   - "fine, skip audit, CI runs it. commit it"

7. Pending Tasks:
   - None.

8. Current Work:
   Committed the upgrade on the current branch.

9. Optional Next Step:
   None; wait for CI.
"""
    labels = [
        Label("request", "Upgrade axum to 0.7 (and hyper 1) in tilehub-server", dropped=False),
        Label("constraint", "Stay on 0.7.x, not 0.8", dropped=False),
        Label("decision", "because tower-sessions 0.12 doesn't support 0.8 yet", dropped=False),
        Label("decision", "skip audit, CI runs it", dropped=False),  # quoted in the messages
        Label("number", "the default limit is 2 MB", dropped=True),  # the changelog's default, read
        Label("decision", "tiles can be up to 8 MB", dropped=True),  # why the explicit limit
        Label("edit", "DefaultBodyLimit::max(8 * 1024 * 1024)", dropped=True),  # "an explicit DefaultBodyLimit"
        Label("edit", "axum::serve(listener", dropped=False),
        Label("edit", "tower_sessions_memory_store::MemoryStore", dropped=False),
        Label("identifier", "e8a41d2", dropped=True),
        Label("measurement", "14 before the upgrade to 9", dropped=True),  # "fewer duplicate crates"
        Label("measurement", "64 passed", dropped=False),
        Label("measurement", "48.71s", dropped=True),  # the build's time
        Label("failed command", "cargo audit", dropped=True),  # not installed, left to CI
        Label("failed command", "cargo upgrade", dropped=False),
        Label("error", "E0277", dropped=False),
        Label("error", "tower-sessions-memory-store is still on 0.9.1", dropped=False),  # "two versions of core"
        Label("file edited", "server/src/routes/export.rs", dropped=False),
        # noise
        Label("number", "3000", dropped=False),  # a port
        Label("number", "2048", dropped=False),  # a tile coordinate
        Label("number", "2023", dropped=False),
        Label("url", "https://raw.githubusercontent.com/tokio-rs/axum/axum-v0.7.5/axum/CHANGELOG.md", dropped=False),
    ]
    return DevSession(c, summary, labels)


def orders_latency() -> DevSession:
    """Kotlin/Spring: a slow endpoint timed, an N+1 query found in Hibernate's SQL log, fixed with
    a fetch join; the user's reason against a cache in prose."""
    c = Conversation("/home/priya/orders-service", "fresh-orders-latency")
    c.user(
        "GET /api/customers/{id}/orders got slow, p95 is around 1.8 s in Grafana since we added "
        "line items to the response. Can you find where the time goes and get it under 200 ms?"
    )
    c.bash("./gradlew bootRun --args='--spring.profiles.active=local' > /tmp/boot.log 2>&1 &", "")
    c.bash(
        "sleep 25; tail -3 /tmp/boot.log",
        "2026-12-01 10:14:02.331  INFO 48211 --- [main] o.s.b.w.e.tomcat.TomcatWebServer : Tomcat started on port 8081 (http)\n2026-12-01 10:14:02.349  INFO 48211 --- [main] c.a.orders.OrdersApplicationKt : Started OrdersApplicationKt in 21.604 seconds",
    )
    c.bash(
        "for i in 1 2 3 4 5; do curl -s -o /dev/null -w '%{time_total}\\n' localhost:8081/api/customers/C-10442/orders; done",
        "2.114503\n1.702118\n1.688930\n1.731402\n1.699875",
    )
    c.say(
        "Locally about 1.7 s per call once warm (the first is 2.1 s). Customer C-10442 has 200 orders. Let me turn on SQL logging."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/priya/orders-service/src/main/resources/application-local.yml",
            "old_string": "  jpa:\n    show-sql: false",
            "new_string": "  jpa:\n    show-sql: true\n    properties:\n      hibernate.generate_statistics: true",
        },
        "The file /home/priya/orders-service/src/main/resources/application-local.yml has been updated successfully.",
    )
    c.bash(
        "kill %1; ./gradlew bootRun --args='--spring.profiles.active=local' > /tmp/boot.log 2>&1 & sleep 25; curl -s -o /dev/null localhost:8081/api/customers/C-10442/orders; grep -c 'select' /tmp/boot.log",
        "201",
    )
    c.bash(
        "grep -A12 'Session Metrics' /tmp/boot.log | tail -12",
        "    1204331 nanoseconds spent acquiring 1 JDBC connections;\n    0 nanoseconds spent releasing 0 JDBC connections;\n"
        "    8810022 nanoseconds spent preparing 201 JDBC statements;\n    1493877105 nanoseconds spent executing 201 JDBC statements;\n"
        "    0 nanoseconds spent executing 0 JDBC batches;\n    0 nanoseconds spent performing 0 L2C puts;",
    )
    c.bash(
        "grep 'select' /tmp/boot.log | sort | uniq -c | sort -rn | head -3",
        "    200 Hibernate: select li1_0.order_id,li1_0.id,li1_0.sku,li1_0.quantity,li1_0.unit_price from line_item li1_0 where li1_0.order_id=?\n"
        "      1 Hibernate: select o1_0.id,o1_0.customer_id,o1_0.created_at,o1_0.status from orders o1_0 where o1_0.customer_id=? order by o1_0.created_at desc",
    )
    c.say(
        "Classic N+1: one query for the orders, then 200 separate `line_item` queries, about 1.49 s of the time in JDBC."
    )
    c.tool(
        "Read",
        {"file_path": "/home/priya/orders-service/src/main/kotlin/com/acme/orders/OrderRepository.kt"},
        "package com.acme.orders\n\ninterface OrderRepository : JpaRepository<Order, UUID> {\n"
        "    fun findByCustomerIdOrderByCreatedAtDesc(customerId: String): List<Order>\n}\n",
    )
    c.tool(
        "Read",
        {"file_path": "/home/priya/orders-service/src/main/kotlin/com/acme/orders/Order.kt"},
        '@Entity\n@Table(name = "orders")\nclass Order(\n    @Id val id: UUID,\n    val customerId: String,\n'
        '    @OneToMany(mappedBy = "order", fetch = FetchType.LAZY)\n    val lineItems: MutableList<LineItem> = mutableListOf(),\n'
        '    @Column(name = "status") @Enumerated(EnumType.STRING) val status: OrderStatus = OrderStatus.OPEN,\n)\n',
    )
    c.say(
        "I could add a Caffeine cache in front of this endpoint, or fix the query with a fetch join. "
        "The fetch join fixes the cause; a cache would only hide it."
    )
    c.user(
        "No cache. Last year a cached price list served stale prices for a day because invalidation "
        "missed a code path, and finance made us take it out. Fix the query."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/priya/orders-service/src/main/kotlin/com/acme/orders/OrderRepository.kt",
            "old_string": "    fun findByCustomerIdOrderByCreatedAtDesc(customerId: String): List<Order>",
            "new_string": '    @Query("select distinct o from Order o left join fetch o.lineItems where o.customerId = :customerId order by o.createdAt desc")\n'
            "    fun findWithLineItems(customerId: String): List<Order>",
        },
        "The file /home/priya/orders-service/src/main/kotlin/com/acme/orders/OrderRepository.kt has been updated successfully.",
    )
    c.bash(
        "grep -rn 'findByCustomerIdOrderByCreatedAtDesc' src/",
        "src/main/kotlin/com/acme/orders/OrderService.kt:31:        val orders = repository.findByCustomerIdOrderByCreatedAtDesc(customerId)\n"
        "src/main/kotlin/com/acme/orders/export/CsvExport.kt:58:        repository.findByCustomerIdOrderByCreatedAtDesc(id).forEach { write(it) }\n"
        'src/test/kotlin/com/acme/orders/OrderServiceTest.kt:77:        every { repository.findByCustomerIdOrderByCreatedAtDesc("C-1") } returns listOf(order)',
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/priya/orders-service/src/main/kotlin/com/acme/orders/OrderService.kt",
            "old_string": "        val orders = repository.findByCustomerIdOrderByCreatedAtDesc(customerId)",
            "new_string": "        val orders = repository.findWithLineItems(customerId)",
        },
        "The file /home/priya/orders-service/src/main/kotlin/com/acme/orders/OrderService.kt has been updated successfully.",
    )
    c.say(
        "CsvExport.kt also calls the old finder; it only writes order headers, so it does not touch lineItems and has no N+1. I'll leave it, and keep the old finder for it."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/priya/orders-service/src/test/kotlin/com/acme/orders/OrderServiceTest.kt",
            "old_string": 'every { repository.findByCustomerIdOrderByCreatedAtDesc("C-1") } returns listOf(order)',
            "new_string": 'every { repository.findWithLineItems("C-1") } returns listOf(order)',
        },
        "The file /home/priya/orders-service/src/test/kotlin/com/acme/orders/OrderServiceTest.kt has been updated successfully.",
    )
    c.bash(
        "./gradlew test 2>&1 | tail -8",
        "> Task :test\n\nOrderRepositoryIT > findWithLineItems returns orders newest first FAILED\n"
        "    org.opentest4j.AssertionFailedError: expected: <[O-3, O-2, O-1]> but was: <[O-3, O-3, O-2, O-1, O-1]>\n\n"
        "47 tests completed, 1 failed\n\nFAILURE: Build failed with an exception.",
        error=True,
    )
    c.say(
        "The integration test shows duplicated orders: with Hibernate 6 `distinct` in JPQL no longer "
        "deduplicates the root entities when the query also has `order by` on a joined fetch in this "
        "version. I'll return a `Set` projection... actually simpler: use an @EntityGraph on the "
        "derived query, which Hibernate deduplicates itself."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/priya/orders-service/src/main/kotlin/com/acme/orders/OrderRepository.kt",
            "old_string": '    @Query("select distinct o from Order o left join fetch o.lineItems where o.customerId = :customerId order by o.createdAt desc")\n'
            "    fun findWithLineItems(customerId: String): List<Order>",
            "new_string": '    @EntityGraph(attributePaths = ["lineItems"])\n'
            "    fun findWithLineItemsByCustomerIdOrderByCreatedAtDesc(customerId: String): List<Order>",
        },
        "The file /home/priya/orders-service/src/main/kotlin/com/acme/orders/OrderRepository.kt has been updated successfully.",
    )
    c.bash(
        "sed -i 's/findWithLineItems(/findWithLineItemsByCustomerIdOrderByCreatedAtDesc(/' src/main/kotlin/com/acme/orders/OrderService.kt src/test/kotlin/com/acme/orders/OrderServiceTest.kt src/test/kotlin/com/acme/orders/OrderRepositoryIT.kt",
        "",
    )
    c.bash("./gradlew test 2>&1 | tail -3", "BUILD SUCCESSFUL in 1m 12s\n9 actionable tasks: 3 executed, 6 up-to-date")
    c.bash(
        "kill %1; ./gradlew bootRun --args='--spring.profiles.active=local' > /tmp/boot.log 2>&1 & sleep 25; "
        "for i in 1 2 3 4 5; do curl -s -o /dev/null -w '%{time_total}\\n' localhost:8081/api/customers/C-10442/orders; done; grep -c 'select' /tmp/boot.log",
        "0.311207\n0.094412\n0.088163\n0.091730\n0.087554\n5",
    )
    c.say("Now 1 query per request (5 for 5 calls), and about 90 ms warm instead of 1.7 s.")
    c.bash(
        "which async-profiler || ls ~/tools",
        "ls: cannot access '/home/priya/tools': No such file or directory",
        error=True,
    )
    c.user("good enough, no need to profile further. revert the show-sql change and commit")
    c.tool(
        "Edit",
        {
            "file_path": "/home/priya/orders-service/src/main/resources/application-local.yml",
            "old_string": "  jpa:\n    show-sql: true\n    properties:\n      hibernate.generate_statistics: true",
            "new_string": "  jpa:\n    show-sql: false",
        },
        "The file /home/priya/orders-service/src/main/resources/application-local.yml has been updated successfully.",
    )
    c.bash(
        "git status --short",
        " M src/main/kotlin/com/acme/orders/OrderRepository.kt\n M src/main/kotlin/com/acme/orders/OrderService.kt\n M src/test/kotlin/com/acme/orders/OrderRepositoryIT.kt\n M src/test/kotlin/com/acme/orders/OrderServiceTest.kt",
    )
    c.bash(
        "git commit -qam 'orders: fetch line items with an entity graph (N+1, 1.7 s -> 90 ms)' && git rev-parse --short HEAD",
        "5d1c0fa",
    )
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
The user asked to investigate a slow orders endpoint. I measured it, found an N+1 query, fixed it without caching per the user's instruction, and committed.

Summary:
1. Primary Request and Intent:
   The user reported that GET /api/customers/{id}/orders became slow (p95 about 1.8 s) after line items were added to the response and asked to find the cause and bring it under 200 ms.

2. Key Technical Concepts:
   - N+1 queries with lazy @OneToMany in Hibernate/JPA
   - Fetch joins vs @EntityGraph; duplicate root entities with join fetch in Hibernate 6
   - Hibernate statistics and show-sql for diagnosis

3. Files and Code Sections:
   - OrderRepository.kt: added an @EntityGraph(attributePaths = ["lineItems"]) finder, findWithLineItemsByCustomerIdOrderByCreatedAtDesc; the old finder stays for the CSV export.
   - OrderService.kt: uses the new finder.
   - OrderServiceTest.kt, OrderRepositoryIT.kt: updated to the new finder name.
   - application-local.yml: show-sql and statistics were enabled temporarily and then reverted.

4. Errors and fixes:
   - The first fix (JPQL "select distinct … left join fetch") returned duplicated orders in OrderRepositoryIT; replaced with an entity graph.

5. Problem Solving:
   Hibernate logged about 200 line_item queries per request (one per order) on top of the orders query; JDBC execution took most of the ~1.7 s. With the entity graph there is a single query and the endpoint takes about 90 ms warm locally.

6. All user messages:
   - "GET /api/customers/{id}/orders got slow, p95 is around 1.8 s … Can you find where the time goes and get it under 200 ms?"
   - The user rejected adding a cache and asked to fix the query instead.
   - "good enough, no need to profile further. revert the show-sql change and commit"

7. Pending Tasks:
   - None.

8. Current Work:
   Reverted the logging config and committed the fix.

9. Optional Next Step:
   Check p95 in Grafana after the next deploy.
"""
    labels = [
        Label("request", "get it under 200 ms", dropped=False),
        Label("constraint", "No cache", dropped=False),
        Label("decision", "invalidation missed a code path", dropped=True),  # the reason against a cache
        Label("request", "revert the show-sql change and commit", dropped=False),
        Label("measurement", "1.702118", dropped=False),  # "~1.7 s"
        Label("measurement", "201", dropped=False),  # "about 200 line_item queries … on top of the orders query"
        Label("measurement", "1493877105 nanoseconds", dropped=False),  # "most of the ~1.7 s"
        Label("measurement", "0.088163", dropped=False),  # "about 90 ms"
        Label("measurement", "Started OrdersApplicationKt in 21.604 seconds", dropped=True),
        Label("identifier", "5d1c0fa", dropped=True),
        Label("identifier", "C-10442", dropped=True),  # the customer used to reproduce
        Label("error", "expected: <[O-3, O-2, O-1]> but was: <[O-3, O-3, O-2, O-1, O-1]>", dropped=False),
        Label("measurement", "47 tests completed, 1 failed", dropped=True),
        Label("edit", '@EntityGraph(attributePaths = ["lineItems"])', dropped=False),
        Label(
            "file read", "src/main/kotlin/com/acme/orders/Order.kt", dropped=True
        ),  # lineItems is LAZY, status defaults to OPEN
        Label("decision", "it only writes order headers", dropped=True),  # why CsvExport keeps the old finder
        Label("file edited", "src/main/kotlin/com/acme/orders/OrderRepository.kt", dropped=False),
        Label("failed command", "which async-profiler", dropped=True),
        # noise
        Label("number", "8081", dropped=False),
        Label("number", "48211", dropped=False),  # a pid
        Label("command", "git status --short", dropped=False),
        Label("path", "/tmp/boot.log", dropped=False),
    ]
    return DevSession(c, summary, labels)


def email_backfill() -> DevSession:
    """SQL/Postgres: a data migration with counts (emails lower-cased, duplicates found), batched
    because of replica lag, the duplicates left for support, a failed tool and the previous
    migration version read from the history table."""
    c = Conversation("/home/olu/accounts-db", "fresh-email-backfill")
    c.user(
        "We need a unique index on lower(email) in the users table so people can't sign up twice "
        "with different casing. Write the Flyway migration and check it against staging first."
    )
    c.bash(
        "ls db/migration | tail -4",
        "V38__add_marketing_opt_in.sql\nV39__drop_legacy_tokens.sql\nV40__orgs_soft_delete.sql\nV41__users_last_seen_idx.sql",
    )
    c.bash("flyway -configFiles=conf/staging.conf info", "bash: flyway: command not found", error=True)
    c.bash(
        "psql \"$STAGING_URL\" -c 'select version, description, installed_on, success from flyway_schema_history order by installed_rank desc limit 3'",
        " version |      description       |        installed_on        | success \n"
        "---------+------------------------+----------------------------+---------\n"
        " 41      | users last seen idx    | 2026-11-24 16:02:51.90412  | t\n"
        " 40      | orgs soft delete       | 2026-11-10 09:44:13.118734 | t\n"
        " 39      | drop legacy tokens     | 2026-10-29 11:20:40.55201  | t\n(3 rows)",
    )
    c.say("Staging is at V41, so the new migration is V42. Let me count what the index would hit.")
    c.bash(
        'psql "$STAGING_URL" -c "select count(*) as users, count(*) filter (where email <> lower(email)) as mixed_case from users"',
        " users  | mixed_case \n--------+------------\n 48213  |       3112\n(1 row)",
    )
    c.bash(
        'psql "$STAGING_URL" -c "select lower(email), count(*) from users group by 1 having count(*) > 1 order by 2 desc limit 10"',
        "           lower            | count \n----------------------------+-------\n"
        " m.schmidt@web.example      |     3\n"
        " anna.k@mail.example        |     2\n" + _lines(" user{i}@corp.example          |     2", 8) + "\n(10 rows)",
    )
    c.bash(
        'psql "$STAGING_URL" -Atc "select count(*) from (select lower(email) from users group by 1 having count(*) > 1) d"',
        "37",
    )
    c.say(
        "3112 of 48213 users have mixed-case emails, and 37 lower-cased emails belong to more than one "
        "account (one of them to three). A unique index would fail on those 37. Options: merge the "
        "accounts automatically, or leave them and create the index only after they are resolved."
    )
    c.user(
        "Don't merge anything automatically. Support has to contact those people first, some of them "
        "are different people sharing a family address. Export the duplicates to a CSV for support, "
        "and make the migration fail loudly if duplicates exist rather than skipping them."
    )
    c.bash(
        'psql "$STAGING_URL" -c "\\copy (select u.id, u.email, u.created_at, u.last_seen_at from users u '
        "where lower(u.email) in (select lower(email) from users group by 1 having count(*) > 1) order by lower(u.email), u.created_at) "
        "to 'reports/duplicate_emails_staging.csv' csv header\"",
        "COPY 75",
    )
    c.say("75 accounts across the 37 addresses, written to reports/duplicate_emails_staging.csv.")
    c.user(
        "Also the backfill of lower-case emails must run in batches of 5000, since the replica lags "
        "and the reporting dashboards read from it. Last time a single UPDATE put it 40 minutes behind."
    )
    c.tool(
        "Write",
        {
            "file_path": "/home/olu/accounts-db/db/migration/V42__users_email_lower_unique.sql",
            "content": "-- Fails on purpose if two accounts share an email up to case: support resolves them first.\n"
            "DO $$\nBEGIN\n  IF EXISTS (SELECT 1 FROM users GROUP BY lower(email) HAVING count(*) > 1) THEN\n"
            "    RAISE EXCEPTION 'duplicate emails up to case: resolve them before V42';\n  END IF;\nEND $$;\n\n"
            "CREATE UNIQUE INDEX CONCURRENTLY users_email_lower_key ON users (lower(email));\n",
        },
        "File created successfully at: /home/olu/accounts-db/db/migration/V42__users_email_lower_unique.sql",
    )
    c.tool(
        "Write",
        {
            "file_path": "/home/olu/accounts-db/scripts/backfill_email_lower.sql",
            "content": "-- Run with psql; commits after each batch of 5000 so the replica keeps up.\n"
            "UPDATE users SET email = lower(email)\nWHERE id IN (SELECT id FROM users WHERE email <> lower(email) LIMIT 5000);\n\\watch 2\n",
        },
        "File created successfully at: /home/olu/accounts-db/scripts/backfill_email_lower.sql",
    )
    c.bash(
        "docker run --rm -v $PWD/db:/flyway/sql flyway/flyway:10 -url=$STAGING_JDBC -user=migrator -password=*** migrate",
        "Flyway OSS Edition 10.21.0 by Redgate\nDatabase: jdbc:postgresql://staging-db:5432/accounts (PostgreSQL 15.6)\n"
        'Successfully validated 42 migrations (execution time 00:00.061s)\nCurrent version of schema "public": 41\n'
        'Migrating schema "public" to version "42 - users email lower unique"\n'
        "ERROR: Migration V42__users_email_lower_unique.sql failed\n------------------------------------------------\n"
        "SQL State  : 25001\nError Code : 0\nMessage    : ERROR: CREATE INDEX CONCURRENTLY cannot run inside a transaction block\n"
        "Location   : db/migration/V42__users_email_lower_unique.sql (/flyway/sql/migration/V42__users_email_lower_unique.sql)\n"
        "Line       : 9",
        error=True,
    )
    c.say(
        "Flyway runs each migration in a transaction by default, and CONCURRENTLY is not allowed in one. "
        "Flyway 10 supports a per-script config file to turn that off, so I'll add "
        "V42__users_email_lower_unique.sql.conf with executeInTransaction=false."
    )
    c.tool(
        "Write",
        {
            "file_path": "/home/olu/accounts-db/db/migration/V42__users_email_lower_unique.sql.conf",
            "content": "executeInTransaction=false\n",
        },
        "File created successfully at: /home/olu/accounts-db/db/migration/V42__users_email_lower_unique.sql.conf",
    )
    c.bash(
        "docker run --rm -v $PWD/db:/flyway/sql flyway/flyway:10 -url=$STAGING_JDBC -user=migrator -password=*** migrate 2>&1 | tail -4",
        'Migrating schema "public" to version "42 - users email lower unique"\n'
        "ERROR: Migration V42__users_email_lower_unique.sql failed\n"
        "Message    : ERROR: duplicate emails up to case: resolve them before V42\n  Where: PL/pgSQL function inline_code_block line 4 at RAISE",
        error=True,
    )
    c.say("Good: with the 37 duplicates still on staging it refuses, as you asked. Now the backfill.")
    c.bash(
        'psql "$STAGING_URL" -Atc "select now() - pg_last_xact_replay_timestamp()" -h staging-replica',
        "00:00:02.418",
    )
    c.bash(
        "timeout 300 psql \"$STAGING_URL\" -f scripts/backfill_email_lower.sql | grep -c 'UPDATE 5000'; "
        'psql "$STAGING_URL" -Atc "select count(*) from users where email <> lower(email)"',
        "0\n3112",
    )
    c.say(
        "The batch loop did nothing: `\\watch` re-runs the last query, which after `\\watch` is empty in a -f script. I'll use a DO loop with COMMIT instead."
    )
    c.tool(
        "Write",
        {
            "file_path": "/home/olu/accounts-db/scripts/backfill_email_lower.sql",
            "content": "-- Commits after each batch of 5000 so the replica keeps up (reporting reads from it).\n"
            "DO $$\nDECLARE n integer;\nBEGIN\n  LOOP\n    UPDATE users SET email = lower(email)\n"
            "    WHERE id IN (SELECT id FROM users WHERE email <> lower(email) LIMIT 5000);\n"
            "    GET DIAGNOSTICS n = ROW_COUNT;\n    EXIT WHEN n = 0;\n    COMMIT;\n    PERFORM pg_sleep(1);\n  END LOOP;\nEND $$;\n",
        },
        "The file /home/olu/accounts-db/scripts/backfill_email_lower.sql has been overwritten successfully.",
    )
    c.bash(
        'time psql "$STAGING_URL" -f scripts/backfill_email_lower.sql',
        'ERROR:  duplicate key value violates unique constraint "users_email_key"\n'
        'DETAIL:  Key (email)=(anna.k@mail.example) already exists.\nCONTEXT:  SQL statement "UPDATE users SET email = lower(email) ..."\n\n'
        "real\t0m3.914s",
        error=True,
    )
    c.say(
        "The existing case-sensitive unique constraint users_email_key blocks lower-casing a duplicate "
        "(Anna.K@ vs anna.k@). The backfill has to skip the 75 duplicate accounts until support resolves them."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/olu/accounts-db/scripts/backfill_email_lower.sql",
            "old_string": "    WHERE id IN (SELECT id FROM users WHERE email <> lower(email) LIMIT 5000);",
            "new_string": "    WHERE id IN (SELECT id FROM users WHERE email <> lower(email)\n"
            "                 AND lower(email) NOT IN (SELECT lower(email) FROM users GROUP BY 1 HAVING count(*) > 1)\n"
            "                 LIMIT 5000);",
        },
        "The file /home/olu/accounts-db/scripts/backfill_email_lower.sql has been updated successfully.",
    )
    c.bash(
        'time psql "$STAGING_URL" -f scripts/backfill_email_lower.sql && psql "$STAGING_URL" -Atc "select count(*) from users where email <> lower(email)"',
        "DO\n\nreal\t0m6.102s\n41",
    )
    c.bash(
        'psql "$STAGING_URL" -Atc "select now() - pg_last_xact_replay_timestamp()" -h staging-replica', "00:00:03.051"
    )
    c.say(
        "3071 rows lower-cased in about 6 s; 41 mixed-case rows remain, all among the duplicate accounts. Replica lag stayed around 3 s."
    )
    c.bash(
        "git status --short",
        "?? db/migration/V42__users_email_lower_unique.sql\n?? db/migration/V42__users_email_lower_unique.sql.conf\n?? reports/\n?? scripts/backfill_email_lower.sql",
    )
    c.user("Don't commit the CSV, it has personal data. Commit the rest.")
    c.bash(
        "echo 'reports/' >> .gitignore && git add .gitignore db scripts && git commit -qm 'V42: unique lower(email), batched backfill' && git log --oneline -1",
        "a09be3f V42: unique lower(email), batched backfill",
    )
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
The user wanted a case-insensitive unique index on users.email via a Flyway migration, verified on staging. Duplicates were found, handled per the user's instructions, and a batched backfill was written.

Summary:
1. Primary Request and Intent:
   Add a unique index on lower(email) to the users table so the same person cannot sign up twice with different casing, as a Flyway migration checked against staging first. The user does not want automatic merging of duplicate accounts (support must contact them; some are different people sharing an address), wants the duplicates exported to a CSV for support, and wants the migration to fail loudly when duplicates exist. The lower-case backfill must run in batches of 5000 because of replica lag. The CSV must not be committed.

2. Key Technical Concepts:
   - Functional unique index on lower(email), CREATE INDEX CONCURRENTLY
   - Flyway per-script configuration (executeInTransaction=false)
   - Batched updates with COMMIT inside a DO block (PostgreSQL 11+ procedures/DO)
   - Replica lag via pg_last_xact_replay_timestamp()

3. Files and Code Sections:
   - db/migration/V42__users_email_lower_unique.sql: raises an exception if duplicate emails up to case exist, then creates users_email_lower_key concurrently.
   - db/migration/V42__users_email_lower_unique.sql.conf: executeInTransaction=false.
   - scripts/backfill_email_lower.sql: DO loop lower-casing emails 5000 rows at a time with COMMIT and a 1 s sleep, skipping emails that are duplicates up to case.
   - reports/duplicate_emails_staging.csv: export of the duplicate accounts for support (gitignored).

4. Errors and fixes:
   - flyway CLI not installed: used the flyway/flyway:10 Docker image.
   - "CREATE INDEX CONCURRENTLY cannot run inside a transaction block": added the .conf file.
   - The first backfill using \\watch did nothing; replaced with a DO loop.
   - Backfill hit the existing case-sensitive unique constraint users_email_key on a duplicate; the backfill now skips duplicate emails.

5. Problem Solving:
   On staging there are about 48k users, roughly 3.1k with mixed-case emails, and 37 emails shared by more than one account (75 accounts). The migration correctly refuses while duplicates remain. The backfill updated about 3,070 rows in ~6 seconds; the remaining mixed-case rows are all duplicates. Replica lag stayed at a few seconds.

6. All user messages:
   - "We need a unique index on lower(email) in the users table so people can't sign up twice with different casing. Write the Flyway migration and check it against staging first."
   - "Don't merge anything automatically. Support has to contact those people first, … Export the duplicates to a CSV for support, and make the migration fail loudly if duplicates exist rather than skipping them."
   - The user asked that the backfill run in batches of 5000 since the replica lags and reporting dashboards read from it.
   - "Don't commit the CSV, it has personal data. Commit the rest."

7. Pending Tasks:
   - Support to resolve the duplicate accounts before V42 can be applied.

8. Current Work:
   Committed the migration, its .conf, the backfill script and the .gitignore entry.

9. Optional Next Step:
   Share the CSV with support.
"""
    labels = [
        Label("request", "unique index on lower(email) in the users table", dropped=False),
        Label("constraint", "Don't merge anything automatically", dropped=False),
        Label("constraint", "batches of 5000", dropped=False),
        Label("decision", "since the replica lags and the reporting dashboards read from it", dropped=False),
        Label("measurement", "a single UPDATE put it 40 minutes behind", dropped=True),
        Label("constraint", "Don't commit the CSV", dropped=False),
        Label("identifier", "V41", dropped=True),  # the previous migration, read on staging
        Label("identifier", "a09be3f", dropped=True),
        Label("measurement", "3112", dropped=False),  # "roughly 3.1k"
        Label("measurement", "37", dropped=False),
        Label("measurement", "COPY 75", dropped=False),
        Label("measurement", "41 mixed-case rows remain", dropped=True),  # the summary says "the remaining"
        Label("measurement", "00:00:03.051", dropped=False),  # "a few seconds"
        Label("failed command", "flyway -configFiles=conf/staging.conf info", dropped=False),
        Label("error", "CREATE INDEX CONCURRENTLY cannot run inside a transaction block", dropped=False),
        Label("error", "Key (email)=(anna.k@mail.example) already exists", dropped=True),  # which account
        Label("identifier", "m.schmidt@web.example", dropped=True),  # the address on three accounts
        Label("edit", "executeInTransaction=false", dropped=False),
        Label("file edited", "scripts/backfill_email_lower.sql", dropped=False),
        Label("edit", "pg_sleep(1)", dropped=False),
        # noise
        Label("number", "2026", dropped=False),
        Label("number", "5432", dropped=False),
        Label("command", "git status --short", dropped=False),
    ]
    return DevSession(c, summary, labels)


def invoice_idor() -> DevSession:
    """Ruby/Rails: a security fix (an IDOR on invoice downloads from a pentest ticket), other
    controllers found with grep, a 404-not-403 decision with its reason, Brakeman before and after,
    and a part of the code the user rules out."""
    c = Conversation("/home/kat/billing-portal", "fresh-invoice-idor")
    c.user(
        "Pentest finding SEC-219: any logged-in user can download any invoice PDF by changing the id "
        "in /invoices/:id/pdf. Fix it, and check whether other controllers have the same problem. "
        "Don't touch app/controllers/api/v1, partners pin that API and it goes away on Jan 31."
    )
    c.bash("git status", "On branch main\nnothing to commit, working tree clean")
    c.tool(
        "Read",
        {"file_path": "/home/kat/billing-portal/app/controllers/invoices_controller.rb"},
        "     1\tclass InvoicesController < ApplicationController\n     2\t  before_action :authenticate_user!\n\n"
        "     4\t  def show\n     5\t    @invoice = current_account.invoices.find(params[:id])\n     6\t  end\n\n"
        "     8\t  def pdf\n     9\t    invoice = Invoice.find(params[:id])\n"
        '    10\t    send_data InvoicePdf.new(invoice).render, filename: "#{invoice.number}.pdf"\n    11\t  end\nend\n',
    )
    c.say("`show` scopes to `current_account.invoices`, but `pdf` uses a bare `Invoice.find`, so any id works.")
    c.bash(
        "grep -rn '\\.find(params\\[:id\\])\\|find_by(id: params' app/controllers | grep -v 'current_account\\.'",
        "app/controllers/invoices_controller.rb:9:    invoice = Invoice.find(params[:id])\n"
        "app/controllers/credit_notes_controller.rb:14:    @note = CreditNote.find(params[:id])\n"
        "app/controllers/payments_controller.rb:22:    payment = Payment.find_by(id: params[:payment_id])\n"
        "app/controllers/admin/accounts_controller.rb:8:    @account = Account.find(params[:id])\n"
        "app/controllers/api/v1/invoices_controller.rb:17:    @invoice = Invoice.find(params[:id])\n"
        "app/controllers/api/v1/receipts_controller.rb:11:    @receipt = Receipt.find(params[:id])",
    )
    c.tool(
        "Read",
        {"file_path": "/home/kat/billing-portal/app/controllers/admin/accounts_controller.rb"},
        "class Admin::AccountsController < Admin::BaseController\n  # Admin::BaseController requires role :staff\n  def show\n    @account = Account.find(params[:id])\n  end\nend\n",
    )
    c.say(
        "Six hits. Admin::AccountsController is behind Admin::BaseController (staff only), so that is "
        "intended. The two api/v1 ones are out of scope as you said. That leaves invoices#pdf, "
        "credit_notes#show and payments (payment_id)."
    )
    c.bash(
        "bundle exec brakeman -q --no-pager -w2 2>&1 | tail -30",
        "== Brakeman Report ==\n\nApplication Path: /home/kat/billing-portal\nRails Version: 7.1.3.4\nBrakeman Version: 6.2.1\n"
        "Scan Date: 2026-12-02 15:31:07 +0100\nDuration: 4.82 seconds\nChecks Run: 77\n\n== Overview ==\n\nControllers: 31\nModels: 44\nTemplates: 96\n"
        "Errors: 0\nSecurity Warnings: 5\n\n== Warning Types ==\n\nUnscoped Find: 5\n\n== Warnings ==\n\n"
        "Confidence: Weak\nCategory: Unscoped Find\nCheck: UnscopedFind\nMessage: Unscoped call to `Invoice#find`\n"
        "Code: Invoice.find(params[:id])\nFile: app/controllers/invoices_controller.rb\nLine: 9\n\n"
        "Confidence: Weak\nCategory: Unscoped Find\nMessage: Unscoped call to `CreditNote#find`\nFile: app/controllers/credit_notes_controller.rb\nLine: 14\n\n"
        "Confidence: Weak\nCategory: Unscoped Find\nMessage: Unscoped call to `Payment#find_by`\nFile: app/controllers/payments_controller.rb\nLine: 22\n"
        "...(2 more in app/controllers/api/v1)",
    )
    c.say("Brakeman agrees: 5 Unscoped Find warnings, 2 of them in api/v1.")
    c.say(
        "For the fix: `current_account.invoices.find` raises RecordNotFound, which Rails turns into a "
        "404. Alternatively we could check ownership and return 403. Which do you prefer?"
    )
    c.user("404. A 403 tells an attacker the invoice id exists, and invoice numbers are sequential.")
    c.tool(
        "Edit",
        {
            "file_path": "/home/kat/billing-portal/app/controllers/invoices_controller.rb",
            "old_string": "    invoice = Invoice.find(params[:id])",
            "new_string": "    invoice = current_account.invoices.find(params[:id])",
        },
        "The file /home/kat/billing-portal/app/controllers/invoices_controller.rb has been updated successfully.",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/kat/billing-portal/app/controllers/credit_notes_controller.rb",
            "old_string": "    @note = CreditNote.find(params[:id])",
            "new_string": "    @note = current_account.credit_notes.find(params[:id])",
        },
        "The file /home/kat/billing-portal/app/controllers/credit_notes_controller.rb has been updated successfully.",
    )
    c.tool(
        "Read",
        {"file_path": "/home/kat/billing-portal/app/models/account.rb"},
        "class Account < ApplicationRecord\n  has_many :invoices\n  has_many :credit_notes\n  has_many :subscriptions\n"
        "  has_many :payments, through: :invoices\nend\n",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/kat/billing-portal/app/controllers/payments_controller.rb",
            "old_string": "    payment = Payment.find_by(id: params[:payment_id])",
            "new_string": "    payment = current_account.payments.find_by(id: params[:payment_id])",
        },
        "The file /home/kat/billing-portal/app/controllers/payments_controller.rb has been updated successfully.",
    )
    c.tool(
        "Write",
        {
            "file_path": "/home/kat/billing-portal/spec/requests/cross_account_access_spec.rb",
            "content": 'require "rails_helper"\n\nRSpec.describe "cross-account access", type: :request do\n'
            "  let(:mine) { create(:account) }\n  let(:theirs) { create(:account) }\n  before { sign_in create(:user, account: mine) }\n\n"
            '  it "returns 404 for another account\'s invoice pdf" do\n    get "/invoices/#{create(:invoice, account: theirs).id}/pdf"\n'
            "    expect(response).to have_http_status(:not_found)\n  end\n\n"
            '  it "returns 404 for another account\'s credit note" do\n    get "/credit_notes/#{create(:credit_note, account: theirs).id}"\n'
            "    expect(response).to have_http_status(:not_found)\n  end\n\n"
            '  it "returns 404 for another account\'s payment receipt" do\n    get "/payments/receipt?payment_id=#{create(:payment, account: theirs).id}"\n'
            "    expect(response).to have_http_status(:not_found)\n  end\nend\n",
        },
        "File created successfully at: /home/kat/billing-portal/spec/requests/cross_account_access_spec.rb",
    )
    c.bash(
        "bundle exec rspec spec/requests/cross_account_access_spec.rb",
        "..F\n\nFailures:\n\n  1) cross-account access returns 404 for another account's payment receipt\n"
        "     Failure/Error: expect(response).to have_http_status(:not_found)\n"
        "       expected the response to have status code :not_found (404) but it was :ok (200)\n"
        "     # ./spec/requests/cross_account_access_spec.rb:21:in `block (2 levels) in <top (required)>'\n\n"
        "Finished in 1.93 seconds (files took 3.41 seconds to load)\n3 examples, 1 failure",
        error=True,
    )
    c.tool(
        "Read",
        {"file_path": "/home/kat/billing-portal/app/controllers/payments_controller.rb"},
        "    20\t  def receipt\n    21\t    payment = current_account.payments.find_by(id: params[:payment_id])\n"
        "    22\t    payment ||= Payment.new(amount: 0)\n    23\t    render :receipt, locals: { payment: payment }\n    24\t  end\n",
    )
    c.say(
        "`find_by` returns nil instead of raising, and line 22 then renders an empty receipt with 200. "
        "Switching to `find` so a foreign id gets a 404 like the others; the empty-receipt fallback "
        "only existed for the nil case."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/kat/billing-portal/app/controllers/payments_controller.rb",
            "old_string": "    payment = current_account.payments.find_by(id: params[:payment_id])\n    payment ||= Payment.new(amount: 0)",
            "new_string": "    payment = current_account.payments.find(params[:payment_id])",
        },
        "The file /home/kat/billing-portal/app/controllers/payments_controller.rb has been updated successfully.",
    )
    c.bash(
        "bundle exec rspec spec/requests/cross_account_access_spec.rb",
        "...\n\nFinished in 1.71 seconds (files took 3.2 seconds to load)\n3 examples, 0 failures",
    )
    c.bash(
        "bundle exec rspec 2>&1 | tail -4",
        "Finished in 2 minutes 3.4 seconds (files took 3.3 seconds to load)\n1412 examples, 0 failures, 6 pending\n\n"
        "Randomized with seed 40917",
    )
    c.bash(
        "bundle exec brakeman -q --no-pager -w2 2>&1 | grep -A3 'Warning Types'",
        "== Warning Types ==\n\nUnscoped Find: 2",
    )
    c.bash(
        "bundle exec bundle-audit check --update",
        "bundler: command not found: bundle-audit\nInstall missing gem executables with `bundle install`",
        error=True,
    )
    c.user("leave bundle-audit, commit with the ticket id in the message")
    c.bash(
        "git add -A && git commit -qm 'SEC-219: scope invoice pdf, credit notes and payment receipts to the current account' && git log --oneline -1",
        "7c2d9e0 SEC-219: scope invoice pdf, credit notes and payment receipts to the current account",
    )
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
The user asked me to fix a pentest finding (an insecure direct object reference on invoice PDFs) and to look for the same issue elsewhere, excluding the legacy API controllers.

Summary:
1. Primary Request and Intent:
   Fix pentest finding SEC-219 (any logged-in user could download any invoice PDF by changing the id) and check other controllers for the same problem, without touching app/controllers/api/v1 (pinned by partners, being removed at the end of January). Commit with the ticket id in the message.

2. Key Technical Concepts:
   - Insecure direct object reference (IDOR); scoping finds through current_account associations
   - Brakeman UnscopedFind check
   - find vs find_by (RecordNotFound → 404 vs nil)

3. Files and Code Sections:
   - app/controllers/invoices_controller.rb: pdf now uses current_account.invoices.find.
   - app/controllers/credit_notes_controller.rb: show uses current_account.credit_notes.find.
   - app/controllers/payments_controller.rb: receipt uses current_account.payments.find (previously find_by with a fallback to an empty Payment, which returned 200).
   - spec/requests/cross_account_access_spec.rb: new request specs asserting 404 for another account's invoice pdf, credit note and payment receipt.

4. Errors and fixes:
   - The payment receipt spec got 200 instead of 404 because find_by returned nil and the action rendered an empty receipt; switched to find.
   - bundle-audit is not installed; the user said to leave it.

5. Problem Solving:
   A grep for unscoped finds found six occurrences; the admin accounts controller is staff-only and api/v1 is out of scope, leaving three to fix. Brakeman's Unscoped Find warnings dropped to the two in api/v1. The full RSpec suite passes. The user chose 404 over 403 so as not to reveal which invoice ids exist.

6. All user messages:
   - "Pentest finding SEC-219: any logged-in user can download any invoice PDF by changing the id in /invoices/:id/pdf. Fix it, and check whether other controllers have the same problem. Don't touch app/controllers/api/v1, …"
   - "404. A 403 tells an attacker the invoice id exists, …"
   - "leave bundle-audit, commit with the ticket id in the message"

7. Pending Tasks:
   - None.

8. Current Work:
   Committed the fix with SEC-219 in the message.

9. Optional Next Step:
   None unless the user wants the api/v1 controllers addressed after January.
"""
    labels = [
        Label("request", "Pentest finding SEC-219", dropped=False),
        Label("constraint", "Don't touch app/controllers/api/v1", dropped=False),
        Label("decision", "partners pin that API and it goes away on Jan 31", dropped=False),  # "end of January"
        Label("decision", "A 403 tells an attacker the invoice id exists", dropped=False),
        Label("decision", "invoice numbers are sequential", dropped=True),  # cut by the elision
        Label("decision", "Admin::BaseController (staff only)", dropped=False),
        Label("request", "commit with the ticket id in the message", dropped=False),
        Label("identifier", "7c2d9e0", dropped=True),
        Label("measurement", "Security Warnings: 5", dropped=True),  # the summary gives only the after
        Label("measurement", "Unscoped Find: 2", dropped=False),
        Label("measurement", "1412 examples, 0 failures, 6 pending", dropped=True),  # "the full suite passes"
        Label(
            "error", "expected the response to have status code :not_found (404) but it was :ok (200)", dropped=False
        ),
        Label("failed command", "bundle-audit", dropped=False),
        Label("file read", "app/models/account.rb", dropped=True),  # payments come through invoices
        Label("file edited", "app/controllers/payments_controller.rb", dropped=False),
        Label("edit", "Payment.new(amount: 0)", dropped=False),  # "a fallback to an empty Payment"
        Label("file edited", "spec/requests/cross_account_access_spec.rb", dropped=False),
        Label("path", "app/controllers/api/v1/receipts_controller.rb", dropped=True),  # left unscoped, for after Jan 31
        # noise
        Label("command", "git status", dropped=False),
        Label("number", "40917", dropped=False),  # the random seed
        Label("number", "4.82 seconds", dropped=False),
        Label("path", "spec/requests/cross_account_access_spec.rb:21", dropped=False),
    ]
    return DevSession(c, summary, labels)


def split_utils() -> DevSession:
    """Python: a refactor across files (a 900-line utils module split in three), imports rewritten
    from a long `grep -n`, a circular import on the way, and the user's reason for a shim."""
    c = Conversation("/home/nils/ledgerly", "fresh-split-utils")
    c.user(
        "ledgerly/utils.py has become a dumping ground. Split it into ledgerly/text.py, "
        "ledgerly/dates.py and ledgerly/money.py and update all imports. Keep the function names "
        "exactly as they are."
    )
    c.bash("wc -l ledgerly/utils.py && grep -c '^def ' ledgerly/utils.py", "911 ledgerly/utils.py\n58")
    c.bash(
        "grep -n '^def ' ledgerly/utils.py",
        "\n".join(
            f"{line}:def {name}("
            for line, name in (
                (14, "slugify"),
                (31, "strip_accents"),
                (48, "truncate_words"),
                (77, "parse_iso_date"),
                (102, "month_bounds"),
                (131, "business_days_between"),
                (170, "to_cents"),
                (188, "from_cents"),
                (205, "format_money"),
                (241, "split_evenly"),
                (276, "normalise_iban"),
                (301, "quarter_of"),
            )
        )
        + "\n"
        + _lines("{i}:def helper_{i}(", 46, 320),
    )
    c.bash(
        "grep -rn 'from ledgerly.utils import\\|from ledgerly import utils\\|import ledgerly.utils' --include=*.py . | wc -l",
        "64",
    )
    c.bash(
        "grep -rln 'ledgerly.utils\\|from ledgerly import utils' --include=*.py . | grep -v '^./ledgerly/utils.py'",
        "\n".join(
            f"./{path}"
            for path in (
                "ledgerly/invoices.py",
                "ledgerly/reports/monthly.py",
                "ledgerly/reports/vat.py",
                "ledgerly/api/views.py",
                "ledgerly/api/serializers.py",
                "ledgerly/importers/csv_bank.py",
                "ledgerly/importers/camt053.py",
                "ledgerly/payouts.py",
                "ledgerly/cli.py",
                "tests/test_utils.py",
                "tests/test_invoices.py",
                "tests/test_reports.py",
                "notebooks/helpers.py",
            )
        ),
    )
    c.say("911 lines, 58 functions, imported in 64 places across 13 files. Note notebooks/helpers.py imports it too.")
    c.user(
        "Yes, the data team's notebooks import from ledgerly.utils directly and I can't update those. "
        "So leave ledgerly/utils.py as a thin re-export that warns, until we cut 3.0. Don't edit the "
        "notebooks folder."
    )
    c.tool(
        "Write",
        {
            "file_path": "/home/nils/ledgerly/ledgerly/money.py",
            "content": '"""Amounts in cents and their formatting."""\n\nfrom decimal import Decimal\n\n'
            "def to_cents(amount): ...\ndef from_cents(cents): ...\ndef format_money(cents, currency='EUR', locale='de_DE'): ...\n"
            "def split_evenly(cents, parts): ...\ndef normalise_iban(iban): ...\n",
        },
        "File created successfully at: /home/nils/ledgerly/ledgerly/money.py",
    )
    c.tool(
        "Write",
        {
            "file_path": "/home/nils/ledgerly/ledgerly/dates.py",
            "content": '"""Calendar helpers."""\n\nfrom ledgerly.money import to_cents\n\n'
            "def parse_iso_date(text): ...\ndef month_bounds(day): ...\ndef business_days_between(a, b): ...\ndef quarter_of(day): ...\n",
        },
        "File created successfully at: /home/nils/ledgerly/ledgerly/dates.py",
    )
    c.tool(
        "Write",
        {
            "file_path": "/home/nils/ledgerly/ledgerly/text.py",
            "content": '"""Text helpers."""\n\nimport unicodedata\n\ndef slugify(text): ...\ndef strip_accents(text): ...\ndef truncate_words(text, n): ...\n',
        },
        "File created successfully at: /home/nils/ledgerly/ledgerly/text.py",
    )
    c.bash("python -c 'import ledgerly.invoices'", "")
    c.bash(
        "python scripts/rewrite_imports.py --from ledgerly.utils --map scripts/utils_map.json --exclude notebooks",
        "python: can't open file '/home/nils/ledgerly/scripts/rewrite_imports.py': [Errno 2] No such file or directory",
        error=True,
    )
    c.say(
        "There is no rewrite script in this repo; I'll use a small libcst codemod instead of sed, since several files import five or more names on one line."
    )
    c.bash("python -m libcst.tool --help | head -2", "/usr/bin/python: No module named libcst", error=True)
    c.bash(
        "pip install -q libcst==1.5.0 && python -m libcst.tool --help | head -1",
        "usage: libcst.tool [-h] [--version] {print,codemod,list,initialize} ...",
    )
    c.bash(
        "python -m libcst.tool codemod rename_utils.RenameUtilsImports ledgerly tests 2>&1 | tail -4",
        "Finished codemodding 61 files!\n - Transformed 12 files successfully.\n - Skipped 49 files.\n - Failed to codemod 0 files.\n - 0 warnings were generated.",
    )
    c.bash(
        "python -m pytest -q -x 2>&1 | tail -15",
        "ImportError while loading conftest '/home/nils/ledgerly/tests/conftest.py'.\n"
        "tests/conftest.py:4: in <module>\n    from ledgerly.invoices import Invoice\n"
        "ledgerly/invoices.py:3: in <module>\n    from ledgerly.dates import month_bounds\n"
        "ledgerly/dates.py:3: in <module>\n    from ledgerly.money import to_cents\n"
        "ledgerly/money.py:5: in <module>\n    from ledgerly.invoices import Invoice\n"
        "E   ImportError: cannot import name 'Invoice' from partially initialized module 'ledgerly.invoices' "
        "(most likely due to a circular import) (/home/nils/ledgerly/ledgerly/invoices.py)",
        error=True,
    )
    c.say(
        "Circular import: money.py picked up `from ledgerly.invoices import Invoice` (split_evenly used it "
        "only in a type annotation), and dates.py imports money for nothing: the to_cents import in my "
        "dates.py is a leftover. Removing both; the annotation goes under TYPE_CHECKING."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/nils/ledgerly/ledgerly/money.py",
            "old_string": "from ledgerly.invoices import Invoice\n",
            "new_string": "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from ledgerly.invoices import Invoice\n",
        },
        "The file /home/nils/ledgerly/ledgerly/money.py has been updated successfully.",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/nils/ledgerly/ledgerly/dates.py",
            "old_string": "from ledgerly.money import to_cents\n\n",
            "new_string": "",
        },
        "The file /home/nils/ledgerly/ledgerly/dates.py has been updated successfully.",
    )
    c.tool(
        "Write",
        {
            "file_path": "/home/nils/ledgerly/ledgerly/utils.py",
            "content": '"""Deprecated: import from ledgerly.text, ledgerly.dates or ledgerly.money. Kept until 3.0 for the notebooks."""\n\n'
            "import warnings\n\nfrom ledgerly.dates import *  # noqa: F403\nfrom ledgerly.money import *  # noqa: F403\nfrom ledgerly.text import *  # noqa: F403\n\n"
            'warnings.warn("ledgerly.utils is deprecated; it goes away in 3.0", DeprecationWarning, stacklevel=2)\n',
        },
        "The file /home/nils/ledgerly/ledgerly/utils.py has been overwritten successfully.",
    )
    c.bash(
        "python -m pytest -q 2>&1 | tail -6",
        "FAILED tests/test_utils.py::test_helpers_are_private - AssertionError: assert 'helper_331' not in dir(ledgerly.utils)\n"
        "=================== 1 failed, 611 passed, 3 warnings in 38.42s ===================",
        error=True,
    )
    c.tool(
        "Read",
        {"file_path": "/home/nils/ledgerly/tests/test_utils.py"},
        "def test_helpers_are_private():\n    # helpers starting with helper_ are internal and must not be re-exported\n"
        "    assert 'helper_331' not in dir(ledgerly.utils)\n",
    )
    c.say(
        "The star imports re-export everything. I'll give each new module an `__all__` with only the 12 public names."
    )
    for module, names in (
        ("text", '"slugify", "strip_accents", "truncate_words"'),
        ("dates", '"parse_iso_date", "month_bounds", "business_days_between", "quarter_of"'),
        ("money", '"to_cents", "from_cents", "format_money", "split_evenly", "normalise_iban"'),
    ):
        c.tool(
            "Edit",
            {
                "file_path": f"/home/nils/ledgerly/ledgerly/{module}.py",
                "old_string": '"""\n\n',
                "new_string": f'"""\n\n__all__ = [{names}]\n\n',
            },
            f"The file /home/nils/ledgerly/ledgerly/{module}.py has been updated successfully.",
        )
    c.bash(
        "python - <<'EOF'\nfor m in ('text', 'dates', 'money'):\n    print(m, len(__import__('ledgerly.' + m, fromlist=['x']).__all__))\nEOF",
        "text 3\ndates 4\nmoney 5",
    )
    c.bash(
        "python -m pytest -q 2>&1 | tail -2 && ruff check ledgerly tests && mypy ledgerly | tail -1",
        "612 passed, 3 warnings in 37.90s\nAll checks passed!\nSuccess: no issues found in 41 source files",
    )
    c.bash("git diff --stat | tail -1", " 17 files changed, 402 insertions(+), 871 deletions(-)")
    c.bash("git status --short notebooks/", "")
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
The user asked to split a large utils module into three modules and update all imports while keeping function names; they later asked for a deprecation shim and not to touch the notebooks.

Summary:
1. Primary Request and Intent:
   Split ledgerly/utils.py into ledgerly/text.py, ledgerly/dates.py and ledgerly/money.py, update all imports, and keep every function name unchanged. ledgerly/utils.py stays as a thin re-export that emits a DeprecationWarning until 3.0, because the data team's notebooks import it; the notebooks folder must not be edited.

2. Key Technical Concepts:
   - Module split with a backwards-compatible re-export shim
   - libcst codemod for rewriting imports
   - Circular imports and TYPE_CHECKING-only imports
   - __all__ to control star re-exports

3. Files and Code Sections:
   - ledgerly/text.py: slugify, strip_accents, truncate_words.
   - ledgerly/dates.py: parse_iso_date, month_bounds, business_days_between, quarter_of.
   - ledgerly/money.py: to_cents, from_cents, format_money, split_evenly, normalise_iban; the Invoice import is under TYPE_CHECKING.
   - ledgerly/utils.py: now only star-imports the three modules and warns.
   - Importers across ledgerly/ and tests/ rewritten by the codemod.

4. Errors and fixes:
   - Circular import between invoices, dates and money: moved the Invoice import under TYPE_CHECKING and removed an unused import in dates.py.
   - tests/test_utils.py::test_helpers_are_private failed because the star imports re-exported internal helpers; added __all__ to each new module.
   - libcst was not installed; installed it.

5. Problem Solving:
   The original module had about 900 lines and 58 functions, imported in around 60 places. After the split the full test suite passes (612 tests), ruff and mypy are clean, and notebooks/ is untouched.

6. All user messages:
   - "ledgerly/utils.py has become a dumping ground. Split it into ledgerly/text.py, ledgerly/dates.py and ledgerly/money.py and update all imports. Keep the function names exactly as they are."
   - The user explained that the data team's notebooks import ledgerly.utils directly, asked to keep it as a warning re-export until 3.0, and not to edit the notebooks folder.

7. Pending Tasks:
   - Commit the refactor (not yet committed).

8. Current Work:
   Verified tests, lint and types after adding __all__ to the new modules.

9. Optional Next Step:
   Ask whether to commit.
"""
    labels = [
        Label("request", "Split it into ledgerly/text.py, ledgerly/dates.py and ledgerly/money.py", dropped=False),
        Label("constraint", "Keep the function names exactly as they are", dropped=False),
        Label("constraint", "Don't edit the notebooks folder", dropped=False),
        Label("decision", "the data team's notebooks import from ledgerly.utils directly", dropped=False),
        Label("decision", "several files import five or more names on one line", dropped=True),  # why libcst over sed
        Label("measurement", "911", dropped=False),  # "about 900 lines"
        Label("measurement", "64", dropped=False),  # "around 60 places"
        Label("measurement", "Transformed 12 files successfully", dropped=True),
        Label("measurement", "17 files changed, 402 insertions(+), 871 deletions(-)", dropped=True),
        Label("measurement", "612 passed", dropped=False),
        Label("failed command", "python scripts/rewrite_imports.py", dropped=True),  # no such script
        Label("error", "No module named libcst", dropped=False),
        Label("number", "libcst==1.5.0", dropped=True),  # the version installed
        Label("error", "most likely due to a circular import", dropped=False),
        Label("error", "split_evenly used it only in a type annotation", dropped=True),  # the cycle's cause
        Label("file read", "tests/test_utils.py", dropped=False),
        Label("edit", "__all__ = [", dropped=False),
        Label("file edited", "ledgerly/utils.py", dropped=False),
        Label("path", "notebooks/helpers.py", dropped=True),  # the notebook module that imports utils (grep)
        # noise
        Label("number", "helper_331", dropped=False),
        Label("number", "38.42s", dropped=False),
        Label("command", "git status --short notebooks/", dropped=False),
    ]
    return DevSession(c, summary, labels)


def gcc14_ci() -> DevSession:
    """C++/CMake: a CI failure after the runner image moved to GCC 14 (-Werror on a new warning),
    read from the job log, reproduced in a container, fixed at the cause; the user's rule on
    -Werror and the runner's release note read for the key fact."""
    c = Conversation("/home/ada/quill", "fresh-gcc14-ci")
    c.user("The Linux CI job has been red since Monday and nobody changed the code. Can you take a look?")
    c.bash(
        "gh run list --workflow ci.yml --limit 6",
        "STATUS  TITLE                                  WORKFLOW  BRANCH  EVENT  ID           ELAPSED  AGE\n"
        "X       docs: fix typo in CONTRIBUTING         ci        main    push   11923847561  4m12s    3h\n"
        "X       Merge pull request #412 from ada/lz    ci        main    push   11921004398  4m30s    1d\n"
        "X       bench: add 4 KiB block case            ci        main    push   11913377120  4m02s    3d\n"
        "\u2713       huffman: table-driven decode           ci        main    push   11898812004  6m55s    5d\n"
        "\u2713       ci: pin actions by sha                 ci        main    push   11897650233  7m10s    5d\n"
        "\u2713       release 1.8.0                          ci        main    push   11880091245  7m01s    8d",
    )
    c.bash(
        "gh run view 11923847561 --log-failed | tail -40",
        "build (ubuntu-24.04)\tBuild\t-- The CXX compiler identification is GNU 14.2.0\n"
        "build (ubuntu-24.04)\tBuild\t-- Detecting CXX compiler ABI info - done\n"
        + "\n".join(
            f"build (ubuntu-24.04)\tBuild\t[ {p:>2}%] Building CXX object src/CMakeFiles/quill.dir/{f}.cpp.o"
            for p, f in ((12, "io/file"), (18, "io/mmap"), (25, "codec/lz"), (31, "codec/crc32"))
        )
        + "\nbuild (ubuntu-24.04)\tBuild\t[ 37%] Building CXX object src/CMakeFiles/quill.dir/codec/huffman.cpp.o\n"
        "build (ubuntu-24.04)\tBuild\t/home/runner/work/quill/quill/src/codec/huffman.cpp: In member function 'size_t quill::HuffmanDecoder::decode(std::span<const uint8_t>, std::span<uint8_t>)':\n"
        "build (ubuntu-24.04)\tBuild\t/home/runner/work/quill/quill/src/codec/huffman.cpp:212:24: error: 'symbol' may be used uninitialized [-Werror=maybe-uninitialized]\n"
        "build (ubuntu-24.04)\tBuild\t  212 |         out[written++] = symbol;\n"
        "build (ubuntu-24.04)\tBuild\t      |                        ^~~~~~\n"
        "build (ubuntu-24.04)\tBuild\t/home/runner/work/quill/quill/src/codec/huffman.cpp:188:17: note: 'symbol' was declared here\n"
        "build (ubuntu-24.04)\tBuild\tcc1plus: all warnings being treated as errors\n"
        "build (ubuntu-24.04)\tBuild\tgmake[2]: *** [src/CMakeFiles/quill.dir/build.make:132: src/CMakeFiles/quill.dir/codec/huffman.cpp.o] Error 1\n"
        "build (ubuntu-24.04)\tBuild\tgmake: *** [Makefile:146: all] Error 2\n"
        "build (ubuntu-24.04)\tBuild\t##[error]Process completed with exit code 2.",
    )
    c.bash(
        "gh run view 11898812004 --log | grep 'compiler identification'",
        "build (ubuntu-24.04)\tBuild\t-- The CXX compiler identification is GNU 13.2.0",
    )
    c.say(
        "The last green run used GCC 13.2, the failing ones GCC 14.2: the ubuntu-24.04 runner image "
        "changed its default compiler, and GCC 14 warns about `symbol` in huffman.cpp:212, which "
        "-Werror turns into an error."
    )
    c.bash(
        'curl -s https://api.github.com/repos/actions/runner-images/releases | jq -r \'.[] | select(.tag_name | startswith("ubuntu24")) | .tag_name + "  " + (.body | split("\\n") | map(select(test("gcc|GNU C"; "i"))) | join(" | "))\' | head -3',
        "ubuntu24/20261130.1  - Default GCC changed from 13 to 14 (gcc-14 14.2.0); gcc-13 remains installed | GNU C++ 14.2.0\n"
        "ubuntu24/20261123.2  GNU C++ 13.2.0\nubuntu24/20261116.1  GNU C++ 13.2.0",
    )
    c.bash("g++-14 --version", "bash: g++-14: command not found", error=True)
    c.bash(
        "docker run --rm -v $PWD:/src -w /src gcc:14.2 bash -c 'cmake -S . -B /tmp/b -DQUILL_WERROR=ON >/dev/null && cmake --build /tmp/b -j4 2>&1 | grep -E \"error|warning\"'",
        "/src/src/codec/huffman.cpp:212:24: error: 'symbol' may be used uninitialized [-Werror=maybe-uninitialized]\ncc1plus: all warnings being treated as errors",
        error=True,
    )
    c.say(
        "Reproduced locally in gcc:14.2. The quick fixes would be pinning CC=gcc-13 in the workflow or adding -Wno-maybe-uninitialized."
    )
    c.user(
        "Neither. We keep -Werror on everywhere and we build with whatever the runner's default is, "
        "because that's what our downstream packagers use. Fix the code if the warning is real."
    )
    c.tool(
        "Read",
        {"file_path": "/home/ada/quill/src/codec/huffman.cpp"},
        "   184\tsize_t HuffmanDecoder::decode(std::span<const uint8_t> in, std::span<uint8_t> out) {\n"
        "   185\t  BitReader bits(in);\n   186\t  size_t written = 0;\n   187\t  while (written < out.size() && bits.remaining() > 0) {\n"
        "   188\t    uint8_t symbol;\n   189\t    uint32_t code = bits.peek(table_.max_length);\n"
        "   190\t    const Entry& e = table_.lookup(code);\n   191\t    switch (e.kind) {\n"
        "   192\t      case Entry::Kind::Literal:\n   193\t        symbol = e.symbol;\n   194\t        bits.skip(e.length);\n   195\t        break;\n"
        "   196\t      case Entry::Kind::Subtable:\n   197\t        symbol = decode_subtable(bits, e);\n   198\t        break;\n"
        '   199\t      case Entry::Kind::Invalid:\n   200\t        throw DecodeError("invalid prefix", bits.position());\n'
        "   201\t    }\n" + _lines("   {i}\t    // stats", 10, 202) + "\n   212\t        out[written++] = symbol;\n",
    )
    c.say(
        "The warning is real in a narrow sense: `e.kind` is an enum class with three values and every "
        "case either sets `symbol` or throws, but a corrupted table could hold a value outside the enum, "
        "and then `symbol` is read uninitialised. Adding a default that throws makes that explicit, "
        "rather than initialising `symbol` to 0, which would silently emit zero bytes."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/ada/quill/src/codec/huffman.cpp",
            "old_string": '      case Entry::Kind::Invalid:\n        throw DecodeError("invalid prefix", bits.position());\n    }',
            "new_string": '      case Entry::Kind::Invalid:\n      default:\n        throw DecodeError("invalid prefix", bits.position());\n    }',
        },
        "The file /home/ada/quill/src/codec/huffman.cpp has been updated successfully.",
    )
    c.bash(
        "docker run --rm -v $PWD:/src -w /src gcc:14.2 bash -c 'cmake -S . -B /tmp/b -DQUILL_WERROR=ON >/dev/null && cmake --build /tmp/b -j4 2>&1 | grep -cE \"error|warning\"; ctest --test-dir /tmp/b 2>&1 | tail -3'",
        "0\n100% tests passed, 0 tests failed out of 143\n\nTotal Test time (real) =  18.27 sec",
    )
    c.bash("clang-tidy -p build src/codec/huffman.cpp", "bash: clang-tidy: command not found", error=True)
    c.bash(
        "docker run --rm -v $PWD:/src -w /src gcc:13.2 bash -c 'cmake -S . -B /tmp/b -DQUILL_WERROR=ON >/dev/null && cmake --build /tmp/b -j4 2>&1 | grep -cE \"error|warning\"'",
        "0",
    )
    c.say("Clean on GCC 13.2 and 14.2 with -Werror, 143/143 tests pass on 14.2.")
    c.bash(
        "./build/bench/quill_bench --filter huffman_decode --repetitions 5 2>&1 | tail -3",
        "huffman_decode/64KiB_mean     41.2 us   41.1 us   5  1.52 GB/s\n"
        "huffman_decode/64KiB_stddev   0.31 us   0.30 us   5\nhuffman_decode/4KiB_mean      2.71 us   2.70 us   5  1.45 GB/s",
    )
    c.user("Is that slower than before?")
    c.bash(
        "git stash -q && cmake --build build -j4 >/dev/null && ./build/bench/quill_bench --filter huffman_decode/64KiB --repetitions 5 2>&1 | grep mean; git stash pop -q",
        "huffman_decode/64KiB_mean     41.0 us   40.9 us   5  1.53 GB/s",
    )
    c.say("No: 41.0 us before and 41.2 us after on 64 KiB, within the noise (stddev 0.31 us).")
    c.user("Great, commit it. Mention the runner image change in the message.")
    c.bash(
        "git commit -qam 'huffman: throw on an out-of-range entry kind (GCC 14 maybe-uninitialized; runner image ubuntu24/20261130.1 switched to GCC 14)' && git log --oneline -1",
        "3e7f1a2 huffman: throw on an out-of-range entry kind (GCC 14 maybe-uninitialized; runner image ubuntu24/20261130.1 switched to GCC 14)",
    )
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
The user asked why Linux CI had been failing since Monday without code changes. The cause was a compiler change on the runner; the code was fixed instead of relaxing warnings.

Summary:
1. Primary Request and Intent:
   Find out why the Linux CI job has been failing since Monday even though nobody changed the code, and fix it. The user does not want to pin the compiler or disable the warning: -Werror stays on everywhere and builds use the runner's default compiler (what downstream packagers use); fix the code if the warning is real. Then commit, mentioning the runner image change.

2. Key Technical Concepts:
   - GitHub Actions runner image updates changing the default GCC (13 → 14)
   - -Werror=maybe-uninitialized in GCC 14
   - enum class switch without a default and out-of-range values

3. Files and Code Sections:
   - src/codec/huffman.cpp: in HuffmanDecoder::decode, the Invalid case now shares a `default:` that throws DecodeError, so `symbol` is always set or the function throws:
     ```cpp
     case Entry::Kind::Invalid:
     default:
       throw DecodeError("invalid prefix", bits.position());
     ```

4. Errors and fixes:
   - CI: "'symbol' may be used uninitialized [-Werror=maybe-uninitialized]" at huffman.cpp:212 with GCC 14.2; fixed with the throwing default.
   - g++-14 and clang-tidy are not installed locally; reproduced and verified in gcc:14.2 and gcc:13.2 Docker images.

5. Problem Solving:
   The last green run used GCC 13.2 and the failing runs GCC 14.2, after a runner image update changed the default GCC. The fix builds cleanly with both compilers with -Werror and all tests pass on 14.2. A benchmark showed no measurable change in huffman decode speed.

6. All user messages:
   - "The Linux CI job has been red since Monday and nobody changed the code. Can you take a look?"
   - The user rejected pinning gcc-13 or disabling the warning: keep -Werror everywhere and build with the runner's default compiler, because downstream packagers do; fix the code if the warning is real.
   - "Is that slower than before?"
   - "Great, commit it. Mention the runner image change in the message."

7. Pending Tasks:
   - None.

8. Current Work:
   Committed the fix with a message mentioning the runner image change.

9. Optional Next Step:
   Push and confirm that CI is green.
"""
    labels = [
        Label("request", "The Linux CI job has been red since Monday", dropped=False),
        Label("constraint", "We keep -Werror on everywhere", dropped=False),
        Label("decision", "because that's what our downstream packagers use", dropped=False),
        Label("request", "Mention the runner image change in the message", dropped=False),
        Label("decision", "rather than initialising `symbol` to 0, which would silently emit zero bytes", dropped=True),
        Label("identifier", "11923847561", dropped=True),  # the failing run
        Label("identifier", "11898812004", dropped=True),  # the last green run
        Label("identifier", "ubuntu24/20261130.1", dropped=True),  # the image that switched to GCC 14
        Label("identifier", "3e7f1a2", dropped=True),
        Label("error", "'symbol' may be used uninitialized", dropped=False),
        Label("failed command", "clang-tidy", dropped=False),
        Label("failed command", "g++-14", dropped=False),
        Label("measurement", "100% tests passed, 0 tests failed out of 143", dropped=True),  # "all tests pass"
        Label("measurement", "41.0 us before and 41.2 us after", dropped=True),  # "no measurable change"
        Label("file edited", "src/codec/huffman.cpp", dropped=False),
        Label("edit", "default:", dropped=False),
        Label("identifier", "GNU 13.2.0", dropped=False),  # the last green run's compiler
        # noise
        Label("number", "212", dropped=False),
        Label("number", "188", dropped=False),
        Label("number", "1.52 GB/s", dropped=False),
        Label("command", "gh run list --workflow ci.yml --limit 6", dropped=False),
    ]
    return DevSession(c, summary, labels)


def installer_docs() -> DevSession:
    """Shell/docs: documenting an installer's options from the script itself (defaults read in
    it), the user's style preferences with their reasons, a missing linter, broken links found."""
    c = Conversation("/home/tove/kiln", "fresh-installer-docs")
    c.user(
        "The README's install section is out of date. Please document every option of "
        "scripts/install.sh properly, in docs/install.md, and link it from the README."
    )
    c.bash(
        "ls docs scripts",
        "docs:\narchitecture.md\nconfiguration.md\nfaq.md\n\nscripts:\ninstall.sh\nrelease.sh\nuninstall.sh",
    )
    c.tool(
        "Read",
        {"file_path": "/home/tove/kiln/scripts/install.sh"},
        "     1\t#!/bin/sh\n     2\t# kiln installer. POSIX sh: it must run under dash.\n     3\tset -eu\n\n"
        '     5\tPREFIX="${KILN_PREFIX:-$HOME/.local}"\n     6\tCHANNEL="${KILN_CHANNEL:-stable}"\n'
        '     7\tVERIFY=1\n     8\tMODIFY_PATH="${KILN_NO_MODIFY_PATH:+0}"\n     9\tMODIFY_PATH="${MODIFY_PATH:-1}"\n\n'
        '    11\twhile [ $# -gt 0 ]; do\n    12\t  case "$1" in\n'
        '    13\t    --prefix) PREFIX="$2"; shift 2 ;;\n    14\t    --channel) CHANNEL="$2"; shift 2 ;;  # stable | beta | nightly\n'
        '    15\t    --version) VERSION="$2"; shift 2 ;;\n    16\t    --no-verify) VERIFY=0; shift ;;\n'
        "    17\t    --no-modify-path) MODIFY_PATH=0; shift ;;\n    18\t    -y|--yes) ASSUME_YES=1; shift ;;\n"
        '    19\t    *) echo "install.sh: unknown option $1" >&2; exit 64 ;;\n    20\t  esac\n    21\tdone\n'
        + _lines("    {i}\t", 30, 22)
        + "\n    52\t# checksums are signed with the release key; --no-verify skips minisign, not the sha256\n"
        '    53\tif [ "$VERIFY" = 1 ]; then minisign -Vm "$archive" -P "$KILN_PUBKEY"; fi\n'
        '    54\tsha256sum -c "$archive.sha256"\n',
    )
    c.say(
        "Six options (--prefix, --channel, --version, --no-verify, --no-modify-path, -y/--yes) and three "
        "environment variables (KILN_PREFIX, KILN_CHANNEL, KILN_NO_MODIFY_PATH). The default prefix is "
        "$HOME/.local, not /usr/local as the README says. Unknown options exit with 64. Note that "
        "--no-verify skips only the minisign signature check; the sha256 check always runs."
    )
    c.tool(
        "Read",
        {"file_path": "/home/tove/kiln/README.md"},
        "# kiln\n\n"
        + _lines("line {i}", 20, 3)
        + "\n## Install\n\n```bash\ncurl -fsSL https://get.kiln.dev | sudo bash\n```\n\n"
        "Installs to /usr/local/bin. See [configuration](docs/configuration.md) and the [FAQ](docs/FAQ.md).\n",
    )
    c.user(
        "Two things about style. Use sh, not bash, in every example, because the installer has to "
        "work under dash on Debian and people copy the examples. And never pipe into sudo: show "
        "download, inspect, then run."
    )
    c.tool(
        "Write",
        {
            "file_path": "/home/tove/kiln/docs/install.md",
            "content": "# Installing kiln\n\n```sh\ncurl -fsSLo install.sh https://get.kiln.dev\nless install.sh   # read it first\nsh install.sh\n```\n\n"
            "By default kiln goes to `$HOME/.local/bin`; no root needed.\n\n## Options\n\n"
            "| Option | Environment | Default | Meaning |\n|---|---|---|---|\n"
            "| `--prefix DIR` | `KILN_PREFIX` | `$HOME/.local` | install under DIR/bin |\n"
            "| `--channel NAME` | `KILN_CHANNEL` | `stable` | `stable`, `beta` or `nightly` |\n"
            "| `--version X.Y.Z` | | latest on the channel | a fixed version |\n"
            "| `--no-verify` | | off | skip the minisign signature check (the sha256 check always runs) |\n"
            "| `--no-modify-path` | `KILN_NO_MODIFY_PATH` | off | do not add the bin directory to PATH |\n"
            "| `-y`, `--yes` | | off | do not ask for confirmation |\n\n"
            "An unknown option stops the installer with exit code 64.\n",
        },
        "File created successfully at: /home/tove/kiln/docs/install.md",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/tove/kiln/README.md",
            "old_string": "```bash\ncurl -fsSL https://get.kiln.dev | sudo bash\n```\n\nInstalls to /usr/local/bin.",
            "new_string": "```sh\ncurl -fsSLo install.sh https://get.kiln.dev\nless install.sh\nsh install.sh\n```\n\n"
            "Installs to `$HOME/.local/bin`; every option is in [docs/install.md](docs/install.md).",
        },
        "The file /home/tove/kiln/README.md has been updated successfully.",
    )
    c.bash("markdownlint docs/install.md README.md", "bash: markdownlint: command not found", error=True)
    c.bash(
        "npx --yes markdownlint-cli@0.42.0 docs/install.md README.md",
        "README.md:24 MD040/fenced-code-language Fenced code blocks should have a language specified\n"
        "docs/install.md:12:81 MD013/line-length Line length [Expected: 80; Actual: 96]",
        error=True,
    )
    c.bash(
        "grep -n 'line_length\\|MD013' .markdownlint.json",
        '.markdownlint.json:3:  "MD013": { "line_length": 100, "tables": false }',
    )
    c.say(
        "The repo config allows 100 columns and exempts tables, but npx ran from the docs folder's "
        "parent without picking it up? No: it did pick README.md up from the root. The table line is "
        "exempt; MD013 fired on line 12 which is the long prose line. Wrapping it."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/tove/kiln/docs/install.md",
            "old_string": "By default kiln goes to `$HOME/.local/bin`; no root needed.",
            "new_string": "By default kiln goes to `$HOME/.local/bin`;\nno root needed.",
        },
        "The file /home/tove/kiln/docs/install.md has been updated successfully.",
    )
    c.tool(
        "Read",
        {"file_path": "/home/tove/kiln/README.md"},
        "    22\t## Building from source\n    23\t\n    24\t```\n    25\tmake && make install\n    26\t```\n",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/tove/kiln/README.md",
            "old_string": "```\nmake && make install\n```",
            "new_string": "```sh\nmake && make install\n```",
        },
        "The file /home/tove/kiln/README.md has been updated successfully.",
    )
    c.bash("npx --yes markdownlint-cli@0.42.0 docs/install.md README.md && echo clean", "clean")
    c.bash(
        "npx --yes lychee@0.15.1 --offline README.md docs/*.md 2>&1 | tail -6",
        "\u2717 [ERR] file:///home/tove/kiln/docs/FAQ.md | Cannot find file\n"
        "\u2717 [ERR] file:///home/tove/kiln/docs/upgrading.md | Cannot find file\n\n"
        "\U0001f50d 31 Total \u2705 29 OK \U0001f6ab 2 Errors",
        error=True,
    )
    c.bash(
        "grep -rn 'upgrading.md' docs README.md",
        "docs/configuration.md:88:See [upgrading](upgrading.md) before moving between channels.",
    )
    c.say(
        "Two broken links: README points at docs/FAQ.md but the file is docs/faq.md (case matters on Linux), and docs/configuration.md links upgrading.md, which does not exist."
    )
    c.user("Fix the FAQ case. For upgrading.md, just drop the sentence, we never wrote that page.")
    c.tool(
        "Edit",
        {"file_path": "/home/tove/kiln/README.md", "old_string": "(docs/FAQ.md)", "new_string": "(docs/faq.md)"},
        "The file /home/tove/kiln/README.md has been updated successfully.",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/tove/kiln/docs/configuration.md",
            "old_string": "See [upgrading](upgrading.md) before moving between channels.\n",
            "new_string": "",
        },
        "The file /home/tove/kiln/docs/configuration.md has been updated successfully.",
    )
    c.bash(
        "npx --yes lychee@0.15.1 --offline README.md docs/*.md 2>&1 | tail -1",
        "\U0001f50d 30 Total \u2705 30 OK \U0001f6ab 0 Errors",
    )
    c.bash("sh -n scripts/install.sh && dash -n scripts/install.sh && echo ok", "ok")
    c.bash(
        "git diff --stat",
        " README.md             | 10 +++++++---\n docs/configuration.md |  2 --\n docs/install.md       | 25 +++++++++++++++++++++++++\n 3 files changed, 32 insertions(+), 5 deletions(-)",
    )
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
Documentation work: the user asked for full documentation of the installer's options and gave style rules; I wrote docs/install.md, updated the README, linted and fixed links.

Summary:
1. Primary Request and Intent:
   Document every option of scripts/install.sh in a new docs/install.md and link it from the README, whose install section was out of date. Style: examples use sh rather than bash (the installer must work under dash), and never pipe into sudo; show download, inspect, run.

2. Key Technical Concepts:
   - POSIX sh / dash compatibility
   - markdownlint rules MD040 and MD013; lychee offline link checking

3. Files and Code Sections:
   - scripts/install.sh (read): options --prefix, --channel (stable/beta/nightly), --version, --no-verify, --no-modify-path, -y/--yes; environment variables KILN_PREFIX, KILN_CHANNEL, KILN_NO_MODIFY_PATH.
   - docs/install.md (new): download/inspect/run example and an options table with defaults.
   - README.md: new install snippet, link to docs/install.md, a language on the build code block, FAQ link fixed.
   - docs/configuration.md: removed the sentence linking the nonexistent upgrading page.

4. Errors and fixes:
   - markdownlint not installed; ran it via npx. It flagged a code block without a language in the README and a long line in docs/install.md; both fixed.
   - lychee found two broken links (the FAQ link's case and upgrading.md); fixed as the user asked.

5. Problem Solving:
   The README claimed /usr/local/bin; the actual default prefix is under the user's home directory. Lint and link checks are now clean, and install.sh parses under sh and dash.

6. All user messages:
   - "The README's install section is out of date. Please document every option of scripts/install.sh properly, in docs/install.md, and link it from the README."
   - Style: "Use sh, not bash, in every example, because the installer has to work under dash on Debian and people copy the examples. And never pipe into sudo: show download, inspect, then run."
   - "Fix the FAQ case. For upgrading.md, just drop the sentence, we never wrote that page."

7. Pending Tasks:
   - Changes are not committed yet.

8. Current Work:
   Verified the docs with markdownlint and lychee; git diff shows README.md, docs/configuration.md and docs/install.md changed.

9. Optional Next Step:
   Ask the user to review and whether to commit.
"""
    labels = [
        Label("request", "document every option of scripts/install.sh properly", dropped=False),
        Label("constraint", "Use sh, not bash, in every example", dropped=False),
        Label("decision", "because the installer has to work under dash on Debian", dropped=False),
        Label("constraint", "never pipe into sudo", dropped=False),
        Label("request", "just drop the sentence, we never wrote that page", dropped=False),
        Label("number", "$HOME/.local", dropped=True),  # the default prefix: "under the user's home"
        Label("number", "exit 64", dropped=True),  # an unknown option's exit code, read in the script
        Label("file read", "--no-verify skips minisign, not the sha256", dropped=True),  # the script's key fact
        Label("name", "MD013", dropped=False),
        Label("number", '"line_length": 100', dropped=True),  # the repo's limit, read in its config
        Label("failed command", "markdownlint docs/install.md README.md", dropped=False),
        Label("error", "docs/FAQ.md | Cannot find file", dropped=False),
        Label("measurement", "30 Total", dropped=True),  # links checked, all OK: "now clean"
        Label("file edited", "docs/configuration.md", dropped=False),
        Label("file edited", "docs/install.md", dropped=False),
        Label("edit", "(docs/faq.md)", dropped=True),  # "FAQ link fixed": not which way
        Label("name", "markdownlint-cli@0.42.0", dropped=True),  # the pinned version used through npx
        # noise
        Label("command", "ls docs scripts", dropped=False),
        Label("command", "git diff --stat", dropped=False),
        Label("number", "88", dropped=False),
        Label("url", "https://get.kiln.dev", dropped=False),
    ]
    return DevSession(c, summary, labels)


def oom_incident() -> DevSession:
    """Node/Kubernetes: an incident read from logs (502s, pods OOMKilled), the cause in an
    unbounded cache from a release, a hotfix with limits, the user's reason against a rollback."""
    c = Conversation("/home/mo/checkout-api", "fresh-oom-incident")
    c.user(
        "INCIDENT: checkout-api in prod is throwing 502s since about 14:05 UTC. I'm incident "
        "commander, you're on investigation. Read-only on prod unless I say so."
    )
    c.bash(
        "kubectl -n checkout get pods -l app=checkout-api -o wide",
        "NAME                            READY   STATUS             RESTARTS      AGE   IP            NODE\n"
        "checkout-api-7f9c6d5b8-2xkqp    0/1     CrashLoopBackOff   7 (41s ago)   52m   10.42.3.17    pool-b-3\n"
        "checkout-api-7f9c6d5b8-8mzlw    1/1     Running            6 (3m ago)    52m   10.42.1.88    pool-b-1\n"
        "checkout-api-7f9c6d5b8-kq4rt    1/1     Running            7 (9m ago)    52m   10.42.2.40    pool-b-2\n"
        "checkout-api-7f9c6d5b8-w7d2n    0/1     Running            5 (12s ago)   52m   10.42.3.21    pool-b-3",
    )
    c.bash(
        "kubectl -n checkout describe pod checkout-api-7f9c6d5b8-2xkqp | sed -n '/Last State/,/Ready/p;/Limits/,/Requests/p'",
        "    Last State:     Terminated\n      Reason:       OOMKilled\n      Exit Code:    137\n"
        "      Started:      Wed, 02 Dec 2026 14:47:03 +0000\n      Finished:     Wed, 02 Dec 2026 14:53:12 +0000\n    Ready:          False\n"
        "    Limits:\n      cpu:     1\n      memory:  512Mi\n    Requests:",
    )
    c.bash(
        "kubectl -n checkout logs checkout-api-7f9c6d5b8-2xkqp --previous | tail -25",
        _lines('{{"level":"info","msg":"POST /v2/quote 200","ms":{i}}}', 12, 30)
        + "\n\n<--- Last few GCs --->\n\n[1:0x6a3c2b0]   368921 ms: Mark-Compact 251.8 (259.6) -> 250.9 (260.1) MB, 412.33 / 0.00 ms  (average mu = 0.141, current mu = 0.032) allocation failure\n\n"
        "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\n"
        " 1: 0xb8d0a3 node::Abort() [node]\n 2: 0xa9a7b8  [node]\n 3: 0xd6b5f0 v8::Utils::ReportOOMFailure(v8::internal::Isolate*, char const*, v8::OOMDetails const&) [node]",
    )
    c.say(
        "The pods are OOMKilled about every 6 minutes (14:47 to 14:53) and V8 dies at ~250 MB of heap "
        "with a 512Mi container limit. While a pod restarts, the ingress has fewer backends and "
        "returns 502s."
    )
    c.bash(
        "kubectl -n ingress logs deploy/ingress-nginx-controller --since=2h | grep 'checkout-api' | awk '$9==502' | wc -l",
        "2314",
    )
    c.bash(
        "helm -n checkout history checkout-api | tail -4",
        "REVISION  UPDATED                   STATUS      CHART               APP VERSION  DESCRIPTION\n"
        "55        Thu Nov 26 10:02:44 2026  superseded  checkout-api-4.2.0  3.8.0        Upgrade complete\n"
        "56        Mon Nov 30 16:20:11 2026  superseded  checkout-api-4.2.1  3.8.1        Upgrade complete\n"
        "57        Wed Dec  2 13:51:37 2026  deployed    checkout-api-4.3.0  3.8.2        Upgrade complete",
    )
    c.say("3.8.2 went out at 13:51 UTC, 14 minutes before the 502s started. Let me diff 3.8.1..3.8.2.")
    c.bash(
        "git log --oneline v3.8.1..v3.8.2",
        "d41e5b2 release 3.8.2\n6aa0c1f tax: apply reduced VAT to e-books (LEGAL-88)\n"
        "b93e4f7 pricing: memoise quotes per (sku, region, currency)\n0c7d2a8 deps: bump undici to 6.21.0",
    )
    c.bash(
        "git show b93e4f7 --stat && git show b93e4f7 -- src/pricing/client.ts | head -30",
        " src/pricing/client.ts | 14 ++++++++++++--\n 1 file changed, 12 insertions(+), 2 deletions(-)\n"
        "+const quoteCache = new Map<string, Quote>();\n+\n export async function quote(sku: string, region: string, currency: string): Promise<Quote> {\n"
        "+  const key = `${sku}:${region}:${currency}`;\n+  const hit = quoteCache.get(key);\n+  if (hit) return hit;\n"
        "   const q = await pricing.post('/quote', { sku, region, currency });\n+  quoteCache.set(key, q);\n   return q;\n",
    )
    c.say(
        "b93e4f7 adds a module-level Map with no eviction and no TTL. With ~180k SKUs times regions "
        "times currencies it grows until the heap limit. That matches a crash every few minutes under "
        "peak traffic. Two options: roll back to 3.8.1 (helm rollback to revision 56), or hotfix."
    )
    c.user(
        "No rollback. 3.8.2 has the e-book VAT fix that legal needs live by Friday, rolling back "
        "re-breaks invoices. Do a hotfix: bound the cache. And as a stopgap I approve raising the "
        "memory limit to 1Gi in prod, you can apply that one change."
    )
    c.bash(
        "kubectl -n checkout set resources deploy/checkout-api --limits=memory=1Gi && kubectl -n checkout rollout status deploy/checkout-api --timeout=180s",
        'deployment.apps/checkout-api resource requirements updated\nWaiting for deployment "checkout-api" rollout to finish: 2 of 4 updated replicas are available...\n'
        'deployment "checkout-api" successfully rolled out',
    )
    c.bash("grep -n 'max-old-space-size\\|NODE_OPTIONS' Dockerfile deploy/values.yaml", "", error=True)
    c.say(
        "No --max-old-space-size is set, so Node 20 picks its heap limit from the container: about "
        "250 MB at 512Mi. With 1Gi it gets ~500 MB, which buys time but the Map still grows."
    )
    c.bash(
        "npm ls lru-cache",
        "checkout-api@3.8.2 /home/mo/checkout-api\n\u2514\u2500\u252c @aws-sdk/client-s3@3.637.0\n  \u2514\u2500\u2500 lru-cache@10.4.3 deduped",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/mo/checkout-api/src/pricing/client.ts",
            "old_string": "const quoteCache = new Map<string, Quote>();",
            "new_string": "// Bounded: an unbounded Map took the pods down (incident 2026-12-02).\n"
            "const quoteCache = new LRUCache<string, Quote>({ max: 20_000, ttl: 5 * 60_000 });",
        },
        "The file /home/mo/checkout-api/src/pricing/client.ts has been updated successfully.",
    )
    c.bash(
        "npm install --save lru-cache@10.4.3",
        "changed 1 package, and audited 612 packages in 3s\n\nfound 0 vulnerabilities",
    )
    c.bash(
        "npx tsc --noEmit",
        "src/pricing/client.ts(4,25): error TS2304: Cannot find name 'LRUCache'.",
        error=True,
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/mo/checkout-api/src/pricing/client.ts",
            "old_string": "import { pricing } from './http';",
            "new_string": "import { LRUCache } from 'lru-cache';\nimport { pricing } from './http';",
        },
        "The file /home/mo/checkout-api/src/pricing/client.ts has been updated successfully.",
    )
    c.bash(
        "npx tsc --noEmit && npm test -- --silent 2>&1 | tail -3",
        "Test Suites: 38 passed, 38 total\nTests:       402 passed, 402 total\nTime:        21.7 s",
    )
    c.bash(
        "node scripts/load-quote.js --requests 300000 --distinct-skus 180000 --report-heap",
        "before (Map): heap 31 MB -> 611 MB after 300000 requests\nafter (LRU 20000): heap 31 MB -> 74 MB after 300000 requests, hit rate 0.62",
    )
    c.say(
        "With the bounded cache the heap stays at 74 MB in the load script instead of growing past 600 MB; hit rate 62%."
    )
    c.bash(
        "kubectl -n checkout get pods -l app=checkout-api",
        "NAME                           READY   STATUS    RESTARTS   AGE\ncheckout-api-5c8b7d9f4-4jxnm   1/1     Running   0          11m\n"
        "checkout-api-5c8b7d9f4-9vqcs   1/1     Running   0          11m\ncheckout-api-5c8b7d9f4-hh2rk   1/1     Running   0          10m\ncheckout-api-5c8b7d9f4-z8plt   1/1     Running   0          10m",
    )
    c.user(
        "Good, the 1Gi stopgap holds. Commit the hotfix on a branch hotfix/quote-cache, I'll get it reviewed. And write me three lines for the incident channel."
    )
    c.bash(
        "git switch -c hotfix/quote-cache && git commit -qam 'pricing: bound the quote cache (LRU 20k, 5 min TTL); fixes OOM from b93e4f7' && git log --oneline -1",
        "Switched to a new branch 'hotfix/quote-cache'\n91f0c3e pricing: bound the quote cache (LRU 20k, 5 min TTL); fixes OOM from b93e4f7",
    )
    c.say(
        "For the channel:\n1. Cause: 3.8.2 (b93e4f7) added an unbounded in-memory quote cache; pods hit the heap limit and were OOMKilled every ~6 min, giving 502s from 14:05 UTC.\n"
        "2. Mitigation: memory limit raised to 1Gi at ~15:10 UTC, no restarts since.\n"
        "3. Fix: hotfix/quote-cache bounds the cache (LRU 20k, 5 min TTL); no rollback, to keep the e-book VAT fix."
    )
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
A production incident on checkout-api (502s). The user is incident commander; I investigated read-only, then applied the one approved change and prepared a hotfix.

Summary:
1. Primary Request and Intent:
   Investigate 502s from checkout-api in production starting around 14:05 UTC, read-only on prod unless told otherwise. Later: no rollback (3.8.2 contains the e-book VAT fix legal needs by Friday); bound the cache in a hotfix; the user approved raising the memory limit to 1Gi in prod as a stopgap. Commit the hotfix on branch hotfix/quote-cache and write three lines for the incident channel.

2. Key Technical Concepts:
   - Kubernetes OOMKilled (exit 137), CrashLoopBackOff, memory limits
   - Node/V8 heap limit derived from the container memory when --max-old-space-size is unset
   - Unbounded in-memory memoisation vs an LRU cache with TTL

3. Files and Code Sections:
   - src/pricing/client.ts: the module-level Map added in the pricing memoisation commit replaced by `new LRUCache<string, Quote>({ max: 20_000, ttl: 5 * 60_000 })`, with the import from lru-cache.
   - package.json: lru-cache added as a direct dependency.

4. Errors and fixes:
   - Pods OOMKilled with "JavaScript heap out of memory" at roughly 250 MB heap under a 512Mi limit.
   - tsc "Cannot find name 'LRUCache'": added the import.

5. Problem Solving:
   Helm history shows 3.8.2 deployed shortly before the errors started. Among its commits, the quote memoisation introduced an unbounded Map. The ingress logged a couple of thousand 502s. A load script showed the heap growing past 600 MB with the Map but staying around 75 MB with the LRU. After raising the limit to 1Gi the new pods have had no restarts. Unit tests pass.

6. All user messages:
   - "INCIDENT: checkout-api in prod is throwing 502s since about 14:05 UTC. … Read-only on prod unless I say so."
   - "No rollback. 3.8.2 has the e-book VAT fix that legal needs live by Friday, … Do a hotfix: bound the cache. And as a stopgap I approve raising the memory limit to 1Gi in prod, you can apply that one change."
   - "Good, the 1Gi stopgap holds. Commit the hotfix on a branch hotfix/quote-cache, I'll get it reviewed. And write me three lines for the incident channel."

7. Pending Tasks:
   - Review and deploy of the hotfix (user).
   - The 1Gi limit should probably be reverted once the hotfix is out.

8. Current Work:
   Committed the hotfix on hotfix/quote-cache and wrote the three-line incident update (cause, mitigation, fix).

9. Optional Next Step:
   Wait for the user; after the hotfix is deployed, consider setting --max-old-space-size explicitly.
"""
    labels = [
        Label("request", "checkout-api in prod is throwing 502s since about 14:05 UTC", dropped=False),
        Label("constraint", "Read-only on prod unless I say so", dropped=False),
        Label("constraint", "No rollback", dropped=False),
        Label("decision", "3.8.2 has the e-book VAT fix that legal needs live by Friday", dropped=False),
        Label("decision", "rolling back re-breaks invoices", dropped=True),  # cut by the elision
        Label("request", "Commit the hotfix on a branch hotfix/quote-cache", dropped=False),
        Label("identifier", "b93e4f7", dropped=True),  # "the quote memoisation commit", no id
        Label("identifier", "91f0c3e", dropped=True),
        Label("identifier", "LEGAL-88", dropped=True),  # the VAT fix's ticket
        Label("measurement", "2314", dropped=False),  # "a couple of thousand"
        Label("measurement", "180k SKUs", dropped=True),  # why the Map grows
        Label("identifier", "lru-cache@10.4.3", dropped=True),  # the version already in the tree
        Label("measurement", "611 MB", dropped=False),  # "past 600 MB"
        Label("measurement", "74 MB", dropped=False),  # "around 75 MB"
        Label("measurement", "hit rate 0.62", dropped=True),
        Label("error", "Reason:       OOMKilled", dropped=False),
        Label("error", "JavaScript heap out of memory", dropped=False),
        Label("error", "Cannot find name 'LRUCache'", dropped=False),
        Label("edit", "new LRUCache<string, Quote>({ max: 20_000, ttl: 5 * 60_000 })", dropped=False),
        Label("file edited", "src/pricing/client.ts", dropped=False),
        # noise
        Label("number", "10.42.3.17", dropped=False),
        Label("number", "0xb8d0a3", dropped=False),
        Label("number", "137", dropped=False),
        Label("command", "kubectl -n checkout get pods -l app=checkout-api", dropped=False),
    ]
    return DevSession(c, summary, labels)


def log_lifecycle() -> DevSession:
    """Terraform/AWS: a config change (S3 lifecycle for logs) with the user's stated preferences
    and reasons, a plan with an unexpected drift, a state lock the user rules on, a default read
    in a module's variables."""
    c = Conversation("/home/eli/infra", "fresh-log-lifecycle")
    c.user(
        "Our access-log bucket keeps growing. Add a lifecycle rule: move objects to Glacier after 90 "
        "days and delete them after 400 days. 400, not 365, because the auditors look back 13 months. "
        "Everything stays in eu-west-1, our DPA says the data stays in Ireland."
    )
    c.bash("git status && git branch --show-current", "On branch main\nnothing to commit, working tree clean\nmain")
    c.bash(
        "grep -rn 'access_logs\\|access-logs' --include=*.tf . | head -20",
        './envs/prod/main.tf:41:module "access_logs" {\n./envs/prod/main.tf:42:  source      = "../../modules/log_bucket"\n'
        './envs/prod/main.tf:43:  name        = "acme-prod-access-logs"\n./envs/prod/main.tf:44:  region      = "eu-west-1"\n'
        './envs/staging/main.tf:38:module "access_logs" {\n./envs/staging/main.tf:40:  name        = "acme-staging-access-logs"\n'
        './modules/log_bucket/main.tf:1:resource "aws_s3_bucket" "this" {\n./modules/log_bucket/main.tf:12:resource "aws_s3_bucket_policy" "this" {',
    )
    c.tool(
        "Read",
        {"file_path": "/home/eli/infra/modules/log_bucket/variables.tf"},
        'variable "name" { type = string }\nvariable "region" { type = string }\n'
        'variable "retention_days" {\n  type    = number\n  default = 30\n  description = "CloudWatch retention for the bucket\'s metrics log group"\n}\n'
        'variable "force_destroy" {\n  type    = bool\n  default = false\n}\n',
    )
    c.say(
        "The module has no lifecycle configuration yet. Its only retention-like variable, "
        "retention_days (default 30), is for the CloudWatch log group, not the objects, so I'll add "
        "separate variables rather than reuse it."
    )
    c.bash(
        "aws s3api get-bucket-lifecycle-configuration --bucket acme-prod-access-logs --region eu-west-1",
        "An error occurred (NoSuchLifecycleConfiguration) when calling the GetBucketLifecycleConfiguration operation: The lifecycle configuration does not exist",
        error=True,
    )
    c.bash(
        "aws s3 ls s3://acme-prod-access-logs --recursive --summarize | tail -2",
        "Total Objects: 18421977\n   Total Size: 9734106220544",
    )
    c.say("About 18.4 million objects, 9.7 TB, none of them ever expired.")
    c.tool(
        "Edit",
        {
            "file_path": "/home/eli/infra/modules/log_bucket/variables.tf",
            "old_string": 'variable "force_destroy" {',
            "new_string": 'variable "glacier_after_days" {\n  type    = number\n  default = null\n}\n\n'
            'variable "expire_after_days" {\n  type    = number\n  default = null\n}\n\nvariable "force_destroy" {',
        },
        "The file /home/eli/infra/modules/log_bucket/variables.tf has been updated successfully.",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/eli/infra/modules/log_bucket/main.tf",
            "old_string": 'resource "aws_s3_bucket_policy" "this" {',
            "new_string": 'resource "aws_s3_bucket_lifecycle_configuration" "this" {\n'
            "  count  = var.expire_after_days == null ? 0 : 1\n  bucket = aws_s3_bucket.this.id\n\n  rule {\n"
            '    id     = "archive-then-expire"\n    status = "Enabled"\n\n'
            '    transition {\n      days          = var.glacier_after_days\n      storage_class = "GLACIER"\n    }\n\n'
            "    expiration {\n      days = var.expire_after_days\n    }\n  }\n}\n\n"
            'resource "aws_s3_bucket_policy" "this" {',
        },
        "The file /home/eli/infra/modules/log_bucket/main.tf has been updated successfully.",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/eli/infra/envs/prod/main.tf",
            "old_string": '  name        = "acme-prod-access-logs"\n  region      = "eu-west-1"',
            "new_string": '  name              = "acme-prod-access-logs"\n  region            = "eu-west-1"\n'
            "  glacier_after_days = 90\n  expire_after_days  = 400 # auditors look back 13 months",
        },
        "The file /home/eli/infra/envs/prod/main.tf has been updated successfully.",
    )
    c.bash("tflint --recursive", "bash: tflint: command not found", error=True)
    c.bash(
        "cd envs/prod && terraform init -input=false >/dev/null && terraform validate",
        "\u2577\n\u2502 Warning: Invalid Attribute Combination\n\u2502 \n\u2502   with module.access_logs.aws_s3_bucket_lifecycle_configuration.this,\n"
        '\u2502   on ../../modules/log_bucket/main.tf line 16, in resource "aws_s3_bucket_lifecycle_configuration" "this":\n'
        "\u2502   16:   rule {\n\u2502 \n\u2502 No attribute specified when one (and only one) of [rule[0].filter,rule[0].prefix] is required\n"
        "\u2502 \n\u2502 This will be an error in a future version of the provider\n\u2575\nSuccess! The configuration is valid, but there were some warnings.",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/eli/infra/modules/log_bucket/main.tf",
            "old_string": '    id     = "archive-then-expire"\n    status = "Enabled"\n',
            "new_string": '    id     = "archive-then-expire"\n    status = "Enabled"\n\n    filter {}\n',
        },
        "The file /home/eli/infra/modules/log_bucket/main.tf has been updated successfully.",
    )
    c.bash(
        "cd envs/prod && terraform plan -input=false -out=lifecycle.plan",
        "Acquiring state lock. This may take a few moments...\n\u2577\n\u2502 Error: Error acquiring the state lock\n\u2502 \n"
        "\u2502 Error message: ConditionalCheckFailedException: The conditional request failed\n\u2502 Lock Info:\n"
        "\u2502   ID:        5b1e7c2a-93f4-4d0e-8c1a-2f6b9d4e7a31\n\u2502   Path:      acme-tfstate/prod/terraform.tfstate\n"
        "\u2502   Operation: OperationTypePlan\n\u2502   Who:       jenkins@ci-runner-04\n\u2502   Version:   1.9.8\n"
        "\u2502   Created:   2026-12-03 11:02:17.443 +0000 UTC\n\u2577",
        error=True,
    )
    c.say("The state is locked by jenkins@ci-runner-04 since 11:02 UTC. I could `terraform force-unlock` it.")
    c.user("Don't force-unlock, that's the nightly drift check and it takes about 20 minutes. Wait for it.")
    c.bash(
        "sleep 600; cd envs/prod && terraform plan -input=false -lock-timeout=15m -out=lifecycle.plan 2>&1 | tail -40",
        '  # module.access_logs.aws_s3_bucket.this will be updated in-place\n  ~ resource "aws_s3_bucket" "this" {\n'
        '        id   = "acme-prod-access-logs"\n      ~ tags = {\n          - "owner" = "platform-old" -> null\n            # (2 unchanged elements hidden)\n        }\n'
        '      ~ tags_all = {\n          - "owner" = "platform-old" -> null\n        }\n    }\n\n'
        "  # module.access_logs.aws_s3_bucket_lifecycle_configuration.this[0] will be created\n"
        '  + resource "aws_s3_bucket_lifecycle_configuration" "this" {\n      + bucket = "acme-prod-access-logs"\n'
        '      + rule {\n          + id     = "archive-then-expire"\n          + status = "Enabled"\n'
        "          + expiration {\n              + days = 400\n            }\n          + transition {\n"
        '              + days          = 90\n              + storage_class = "GLACIER"\n            }\n        }\n    }\n\n'
        "Plan: 1 to add, 1 to change, 0 to destroy.",
    )
    c.say(
        "The plan adds the lifecycle rule as intended, but also wants to remove an `owner = platform-old` "
        "tag from the bucket: someone added it in the console, outside Terraform. That is drift, not "
        "part of this change."
    )
    c.user(
        "Leave the tag alone, the FinOps team uses it for cost allocation. Add ignore_changes for tags on that bucket."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/eli/infra/modules/log_bucket/main.tf",
            "old_string": 'resource "aws_s3_bucket" "this" {\n  bucket        = var.name\n  force_destroy = var.force_destroy\n',
            "new_string": 'resource "aws_s3_bucket" "this" {\n  bucket        = var.name\n  force_destroy = var.force_destroy\n\n'
            '  lifecycle {\n    ignore_changes = [tags["owner"], tags_all["owner"]]\n  }\n',
        },
        "The file /home/eli/infra/modules/log_bucket/main.tf has been updated successfully.",
    )
    c.bash(
        "cd envs/prod && terraform plan -input=false -out=lifecycle.plan 2>&1 | grep -E '^Plan|will be'",
        "  # module.access_logs.aws_s3_bucket_lifecycle_configuration.this[0] will be created\nPlan: 1 to add, 0 to change, 0 to destroy.",
    )
    c.bash(
        "cd envs/staging && terraform plan -input=false 2>&1 | grep -E '^Plan|No changes'",
        "No changes. Your infrastructure matches the configuration.",
    )
    c.say(
        "Prod: 1 to add, 0 to change. Staging: no changes, since its module call sets no "
        "expire_after_days and the rule's count is 0 there. A rough saving: 9.7 TB moving to Glacier "
        "Flexible Retrieval is about $223/month at S3 Standard price, down to about $35/month."
    )
    c.user("Good. Open a PR, don't apply, the change board applies on Thursdays.")
    c.bash(
        "git switch -c logs-lifecycle && git add -A && git commit -qm 'log_bucket: archive after 90 days, expire after 400 (prod access logs)' && "
        "git push -u origin logs-lifecycle 2>&1 | tail -1 && gh pr create --fill --base main 2>&1 | tail -1",
        "branch 'logs-lifecycle' set up to track 'origin/logs-lifecycle'.\nhttps://github.com/acme/infra/pull/1187",
    )
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
Infrastructure change in Terraform: a lifecycle rule for the production access-log bucket, with the user's constraints on timing and region.

Summary:
1. Primary Request and Intent:
   Add an S3 lifecycle rule to the access-log bucket: transition objects to Glacier after 90 days and expire them after 400 days (the auditors look back 13 months). Everything must stay in eu-west-1 per the DPA. The user later asked not to force-unlock the state, to keep the console-added owner tag (used by FinOps), and to open a PR without applying.

2. Key Technical Concepts:
   - aws_s3_bucket_lifecycle_configuration with transition and expiration
   - Terraform state locking in DynamoDB; lifecycle ignore_changes for drifted tags
   - Module variables with null defaults and count to enable a resource per environment

3. Files and Code Sections:
   - modules/log_bucket/variables.tf: new glacier_after_days and expire_after_days (default null).
   - modules/log_bucket/main.tf: new lifecycle configuration resource (rule "archive-then-expire", empty filter, GLACIER transition, expiration), created only when expire_after_days is set; ignore_changes for the owner tag on the bucket.
   - envs/prod/main.tf: the access_logs module sets glacier_after_days = 90 and expire_after_days = 400.

4. Errors and fixes:
   - tflint not installed.
   - validate warned that rule needs a filter or prefix: added filter {}.
   - The state was locked by the nightly Jenkins drift check; waited instead of force-unlocking, as the user asked.
   - The plan wanted to remove a console-added owner tag: ignored via lifecycle.

5. Problem Solving:
   The bucket had no lifecycle configuration and holds about 18 million objects (roughly 9.7 TB). The final prod plan only adds the lifecycle configuration; staging shows no changes. The estimated storage cost drops substantially once objects move to Glacier.

6. All user messages:
   - "Our access-log bucket keeps growing. Add a lifecycle rule: move objects to Glacier after 90 days and delete them after 400 days. 400, not 365, because the auditors look back 13 months. Everything stays in eu-west-1, our DPA says the data stays in Ireland."
   - "Don't force-unlock, that's the nightly drift check and it takes about 20 minutes. Wait for it."
   - "Leave the tag alone, the FinOps team uses it for cost allocation. Add ignore_changes for tags on that bucket."
   - "Good. Open a PR, don't apply, the change board applies on Thursdays."

7. Pending Tasks:
   - The change board applies the PR (not us).

8. Current Work:
   Pushed branch logs-lifecycle and opened the PR.

9. Optional Next Step:
   None until the PR is reviewed.
"""
    labels = [
        Label("request", "Add a lifecycle rule", dropped=False),
        Label("constraint", "400, not 365", dropped=False),
        Label("decision", "because the auditors look back 13 months", dropped=False),
        Label("constraint", "Everything stays in eu-west-1", dropped=False),
        Label("constraint", "Don't force-unlock", dropped=False),
        Label("decision", "the FinOps team uses it for cost allocation", dropped=False),
        Label("constraint", "don't apply, the change board applies on Thursdays", dropped=False),
        Label("number", "default = 30", dropped=True),  # retention_days, and why it is not reused
        Label("decision", "rather than reuse it", dropped=True),
        Label("identifier", "5b1e7c2a-93f4-4d0e-8c1a-2f6b9d4e7a31", dropped=True),  # the lock's id
        Label("name", "jenkins@ci-runner-04", dropped=True),  # who held the lock
        Label("measurement", "Total Objects: 18421977", dropped=False),  # "about 18 million"
        Label("measurement", "$223/month", dropped=True),  # "drops substantially"
        Label("measurement", "Plan: 1 to add, 0 to change, 0 to destroy", dropped=False),
        Label("url", "https://github.com/acme/infra/pull/1187", dropped=True),
        Label("failed command", "tflint --recursive", dropped=False),
        Label("error", "Error acquiring the state lock", dropped=False),
        Label("edit", 'ignore_changes = [tags["owner"], tags_all["owner"]]', dropped=False),
        Label("file read", "modules/log_bucket/variables.tf", dropped=False),
        # noise
        Label("command", "git status && git branch --show-current", dropped=False),
        Label("number", "1.9.8", dropped=False),
        Label("path", "acme-tfstate/prod/terraform.tfstate", dropped=False),
    ]
    return DevSession(c, summary, labels)


def ratelimit_review() -> DevSession:
    """Python/FastAPI: a review of a colleague's PR (a rate limiter), its failing check read, a
    per-process limit found by running it, the user's wishes on tone with their reasons."""
    c = Conversation("/home/ben/gateway", "fresh-ratelimit-review")
    c.user(
        "Can you review Lena's PR #231 (rate limiting middleware)? Be kind, it's her first PR here, "
        "and phrase things as suggestions rather than demands. Don't push to her branch."
    )
    c.bash(
        "gh pr view 231",
        "Add per-client rate limiting middleware #231\nOpen \u2022 lena-h wants to merge 4 commits into main from lena-h/rate-limit\n"
        "+214 \u221212\n\nLimits each API key to RATE_LIMIT_PER_MINUTE requests (default 100) with a token bucket.\n"
        "Returns 429 with Retry-After when exceeded.\n\nCloses #198",
    )
    c.bash(
        "gh pr checks 231",
        "lint     pass  41s  https://github.com/acme/gateway/actions/runs/12001934822/job/33451209917\n"
        "mypy     fail  52s  https://github.com/acme/gateway/actions/runs/12001934822/job/33451209951\n"
        "tests    pass  3m8s https://github.com/acme/gateway/actions/runs/12001934822/job/33451210004",
    )
    c.bash(
        "gh run view 12001934822 --log-failed | grep error",
        'mypy\tRun mypy\tgateway/ratelimit.py:27: error: Need type annotation for "_buckets" (hint: "_buckets: dict[<type>, <type>] = ...")  [var-annotated]\n'
        'mypy\tRun mypy\tgateway/ratelimit.py:58: error: Argument 1 to "int" has incompatible type "float | None"; expected "str | Buffer | SupportsInt | SupportsIndex | SupportsTrunc"  [arg-type]\n'
        "mypy\tRun mypy\tFound 2 errors in 1 file (checked 48 source files)",
    )
    c.bash("gh pr checkout 231", "Switched to a new branch 'lena-h/rate-limit'")
    c.bash(
        "git log --oneline main..",
        "a4c91e0 address lint\n77d3b2a add tests for rate limit\n1e8f5c4 add RATE_LIMIT_PER_MINUTE setting\n0b2d6a9 add rate limit middleware",
    )
    c.bash("gh pr view 231 --comments | tail -3", "--\nNo comments yet")
    c.tool(
        "Read",
        {"file_path": "/home/ben/gateway/tests/test_ratelimit.py"},
        "     1\tfrom fastapi.testclient import TestClient\n     2\tfrom gateway.app import app\n\n"
        "     4\tclient = TestClient(app)\n\n"
        "     6\tdef test_over_limit_returns_429(monkeypatch):\n"
        '     7\t    monkeypatch.setattr("gateway.settings.settings.rate_limit_per_minute", 3)\n'
        '     8\t    codes = [client.get("/v1/ping", headers={"x-api-key": "k1"}).status_code for _ in range(4)]\n'
        "     9\t    assert codes == [200, 200, 200, 429]\n\n"
        "    11\tdef test_under_limit_passes():\n"
        '    12\t    assert client.get("/v1/ping", headers={"x-api-key": "k1"}).status_code == 200\n',
    )
    c.tool(
        "Read",
        {"file_path": "/home/ben/gateway/gateway/settings.py"},
        "    10\tclass Settings(BaseSettings):\n    11\t    database_url: str\n    12\t    session_ttl_seconds: int = 86400\n"
        '    13\t    rate_limit_per_minute: int = 100\n    14\t    redis_url: str = "redis://localhost:6379/0"\n',
    )
    c.bash(
        "gh pr diff 231 -- gateway/ratelimit.py | head -80",
        "+import time\n+from dataclasses import dataclass\n+\n+from starlette.middleware.base import BaseHTTPMiddleware\n"
        "+from starlette.responses import JSONResponse\n+\n+from gateway.settings import settings\n+\n+\n"
        "+@dataclass\n+class Bucket:\n+    tokens: float\n+    updated: float\n+\n+\n"
        "+_buckets = {}\n+\n+\n+class RateLimitMiddleware(BaseHTTPMiddleware):\n+    async def dispatch(self, request, call_next):\n"
        '+        key = request.headers.get("x-api-key", request.client.host)\n+        now = time.time()\n'
        "+        bucket = _buckets.setdefault(key, Bucket(settings.rate_limit_per_minute, now))\n"
        "+        bucket.tokens = min(settings.rate_limit_per_minute, bucket.tokens + (now - bucket.updated) * settings.rate_limit_per_minute / 60)\n"
        "+        bucket.updated = now\n+        if bucket.tokens < 1:\n"
        "+            retry = (1 - bucket.tokens) * 60 / settings.rate_limit_per_minute\n"
        '+            return JSONResponse({"detail": "rate limited"}, status_code=429, headers={"Retry-After": str(int(retry))})\n'
        "+        bucket.tokens -= 1\n+        return await call_next(request)\n",
    )
    c.tool(
        "Read",
        {"file_path": "/home/ben/gateway/gunicorn.conf.py"},
        'bind = "0.0.0.0:8000"\nworkers = 4\nworker_class = "uvicorn.workers.UvicornWorker"\ntimeout = 30\n',
    )
    c.say(
        "`_buckets` is a module-level dict, so each gunicorn worker has its own buckets. With "
        "workers = 4 in gunicorn.conf.py a client can get up to 4 \u00d7 100 requests a minute, depending on "
        "which worker the connection lands on. Let me confirm by running it."
    )
    c.bash(
        "gunicorn -c gunicorn.conf.py gateway.app:app --daemon && sleep 3 && "
        "for i in $(seq 1 400); do curl -s -o /dev/null -w '%{http_code}\\n' -H 'x-api-key: k-test' localhost:8000/v1/ping; done | sort | uniq -c",
        "    312 200\n     88 429",
    )
    c.say(
        "312 of 400 requests in well under a minute were accepted with a limit of 100/min: the limit "
        "is per worker. Also `Retry-After: str(int(retry))` can be 0 when less than a second remains, "
        "which some clients treat as retry immediately."
    )
    c.bash("pkill -f 'gunicorn -c gunicorn.conf.py'", "")
    c.bash(
        "python -m pytest tests/test_ratelimit.py -q -p no:randomly 2>&1 | tail -3",
        "....\n4 passed in 0.61s",
    )
    c.bash(
        "python -m pytest tests/test_ratelimit.py -q -p randomly 2>&1 | tail -8",
        "FAILED tests/test_ratelimit.py::test_under_limit_passes - assert 429 == 200\n"
        "1 failed, 3 passed in 0.58s\nUsing --randomly-seed=2218634011",
        error=True,
    )
    c.say(
        "The tests share `_buckets` across test functions: in a random order, test_under_limit_passes "
        "runs after test_over_limit_returns_429 has drained the same key, so it fails. CI runs without "
        "randomisation, which is why `tests` is green. A fixture that clears `_buckets` would fix it."
    )
    c.bash(
        "grep -n 'redis' gateway/settings.py pyproject.toml",
        'gateway/settings.py:14:    redis_url: str = "redis://localhost:6379/0"\npyproject.toml:22:    "redis>=5.0",',
    )
    c.user(
        "We already run Redis for sessions, so suggest a Redis-backed bucket (a Lua script or INCR "
        "with expiry), but say it's fine as a follow-up PR, she shouldn't have to redo everything."
    )
    c.tool(
        "Write",
        {
            "file_path": "/tmp/review-231.md",
            "content": "Thanks Lena, this is a really clean first PR: the token bucket is easy to follow and the 429 with Retry-After is exactly what #198 asked for.\n\n"
            "A few suggestions:\n\n"
            "1. **Limit per worker.** `_buckets` lives in each process, and we run 4 gunicorn workers, so a key can get up to ~4\u00d7 the limit "
            "(I saw 312 of 400 requests accepted at 100/min locally). Since we already have Redis for sessions, a Redis-backed counter "
            "(INCR + EXPIRE, or a small Lua script) would share the limit. Totally fine as a follow-up PR.\n"
            "2. **Retry-After can be 0.** `int(retry)` rounds down; `math.ceil` would avoid telling clients to retry immediately.\n"
            "3. **Tests share state.** With pytest-randomly, `test_under_limit_passes` fails after the 429 test drains the same key. "
            "An autouse fixture that clears `_buckets` would make them independent.\n"
            "4. **mypy** (the failing check): `_buckets: dict[str, Bucket] = {}`, and `request.client` can be None.\n",
        },
        "File created successfully at: /tmp/review-231.md",
    )
    c.user("Looks good. Post it as a comment review, not request-changes.")
    c.bash(
        "gh pr review 231 --comment --body-file /tmp/review-231.md",
        "- Reviewed pull request acme/gateway#231",
    )
    c.bash("git switch main", "Switched to branch 'main'\nYour branch is up to date with 'origin/main'.")
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
A code review of a colleague's first PR adding rate limiting; the user wanted a kind tone and suggestions, no pushes to her branch.

Summary:
1. Primary Request and Intent:
   Review PR #231 by Lena (rate limiting middleware), kindly and as suggestions since it is her first PR, without pushing to her branch. The user asked to suggest a Redis-backed bucket as an optional follow-up, and to post the review as a comment rather than requesting changes.

2. Key Technical Concepts:
   - Token bucket rate limiting as Starlette middleware
   - Per-process state under multiple gunicorn workers
   - Test isolation with pytest-randomly
   - Redis INCR/EXPIRE or Lua scripts for a shared limit

3. Files and Code Sections:
   - gateway/ratelimit.py (PR): module-level `_buckets` dict, RateLimitMiddleware returning 429 with Retry-After.
   - gunicorn.conf.py: multiple workers, which makes the limit per worker.
   - tests/test_ratelimit.py (PR): tests share `_buckets`.
   - /tmp/review-231.md: the review text.

4. Errors and fixes:
   - The PR's mypy check fails: missing annotation for _buckets and a float | None passed to int().
   - test_under_limit_passes fails under random test order (429 instead of 200).

5. Problem Solving:
   Running the app locally showed far more requests accepted than the limit allows because each worker keeps its own buckets. Retry-After can be 0 due to rounding down. CI's tests pass only because they run in a fixed order.

6. All user messages:
   - "Can you review Lena's PR #231 (rate limiting middleware)? Be kind, it's her first PR here, and phrase things as suggestions rather than demands. Don't push to her branch."
   - The user asked to suggest a Redis-backed bucket since Redis is already used for sessions, but as a follow-up PR so she doesn't have to redo everything.
   - "Looks good. Post it as a comment review, not request-changes."

7. Pending Tasks:
   - None.

8. Current Work:
   Posted the review as a comment on #231 with four suggestions (per-worker limit with Redis as follow-up, Retry-After rounding, test isolation, mypy fixes), then switched back to main.

9. Optional Next Step:
   None.
"""
    labels = [
        Label("request", "review Lena's PR #231", dropped=False),
        Label("constraint", "phrase things as suggestions rather than demands", dropped=False),
        Label("constraint", "Don't push to her branch", dropped=False),
        Label("decision", "it's fine as a follow-up PR", dropped=False),
        Label("request", "Post it as a comment review, not request-changes", dropped=False),
        Label("number", "default 100", dropped=True),  # the PR's limit, read in its description
        Label("number", "workers = 4", dropped=True),  # "multiple workers"
        Label("measurement", "312 of 400", dropped=True),  # accepted at 100/min: "far more requests"
        Label("identifier", "12001934822", dropped=True),  # the failing mypy run
        Label("identifier", "--randomly-seed=2218634011", dropped=True),  # the seed that reproduces it
        Label("identifier", "Closes #198", dropped=True),  # the issue the PR closes
        Label("error", 'Need type annotation for "_buckets"', dropped=False),
        Label("error", "assert 429 == 200", dropped=False),
        Label("failed command", "python -m pytest tests/test_ratelimit.py -q -p randomly", dropped=False),
        Label("decision", "CI runs without randomisation", dropped=False),
        Label("file read", "gunicorn.conf.py", dropped=False),
        Label("file edited", "/tmp/review-231.md", dropped=False),
        Label("decision", "math.ceil", dropped=True),  # the suggested fix for Retry-After 0
        # noise
        Label("command", "git switch main", dropped=False),
        Label("command", "gh pr checkout 231", dropped=False),
        Label("number", "6379", dropped=False),
        Label("path", "gateway/settings.py:14", dropped=False),
    ]
    return DevSession(c, summary, labels)


def backup_prune() -> DevSession:
    """Shell: a bug hunt in a backup-pruning script that deleted the wrong archives, counted with
    `find`, a shellcheck warning that was the bug, a dry-run the user asked for, a cron line read."""
    c = Conversation("/home/ines/ops-scripts", "fresh-backup-prune")
    c.user(
        "prune-backups.sh deleted last Sunday's weekly backups on db-backup-01. It should keep 14 "
        "daily and 8 weekly archives. Find out why and fix it, but run nothing destructive on the "
        "server: dry runs only."
    )
    c.bash(
        "cat -n prune-backups.sh | sed -n '1,40p'",
        "     1\t#!/usr/bin/env bash\n     2\tset -euo pipefail\n     3\tDIR=${BACKUP_DIR:-/srv/backups}\n"
        "     4\tKEEP_DAILY=${KEEP_DAILY:-14}\n     5\tKEEP_WEEKLY=${KEEP_WEEKLY:-8}\n     6\t\n"
        "     7\t# weekly archives are taken on Sundays and named pg-YYYYMMDD-weekly.tar.zst\n"
        "     8\tweekly=$(ls -1t $DIR/*-weekly.tar.zst | tail -n +$((KEEP_WEEKLY + 1)))\n"
        "     9\tdaily=$(ls -1t $DIR/pg-*.tar.zst | tail -n +$((KEEP_DAILY + 1)))\n"
        '    10\tfor f in $weekly $daily; do\n    11\t  rm -v "$f"\n    12\tdone\n',
    )
    c.say(
        "Line 9's glob `pg-*.tar.zst` also matches the weekly archives (pg-YYYYMMDD-weekly.tar.zst), so "
        "weeklies older than the 14 newest files of either kind are deleted as dailies."
    )
    c.bash("shellcheck prune-backups.sh", "bash: shellcheck: command not found", error=True)
    c.bash(
        'docker run --rm -v "$PWD:/mnt" koalaman/shellcheck:v0.10.0 prune-backups.sh',
        "\nIn prune-backups.sh line 8:\nweekly=$(ls -1t $DIR/*-weekly.tar.zst | tail -n +$((KEEP_WEEKLY + 1)))\n"
        "                ^-- SC2012 (info): Use find instead of ls to better handle non-alphanumeric filenames.\n"
        "                 ^--^ SC2086 (info): Double quote to prevent globbing and word splitting.\n\n"
        "In prune-backups.sh line 10:\nfor f in $weekly $daily; do\n         ^-----^ SC2086 (info): Double quote to prevent globbing and word splitting.\n\n"
        "For more information:\n  https://www.shellcheck.net/wiki/SC2012 -- Use find instead of ls to better ...",
        error=True,
    )
    c.bash(
        "ssh db-backup-01 'ls -1t /srv/backups | head -30'",
        "\n".join(
            [f"pg-202612{d:02d}.tar.zst" for d in (3, 2, 1)]
            + [f"pg-202611{d:02d}.tar.zst" for d in range(30, 16, -1)]
            + ["pg-20261115-weekly.tar.zst", "pg-20261108-weekly.tar.zst"]
        ),
    )
    c.bash("ssh db-backup-01 'ls /srv/backups | grep -c weekly; ls /srv/backups | grep -vc weekly'", "2\n17")
    c.say(
        "Only 2 weeklies left (15 and 8 Nov) where there should be 8, and 17 dailies. The 29 Nov "
        "weekly is gone, as you said. 6 weeklies are missing."
    )
    c.bash(
        "ssh db-backup-01 'grep -h prune /etc/cron.d/* ; journalctl -t prune-backups --since 2026-11-29 | grep weekly'",
        "15 3 * * * backup /opt/ops-scripts/prune-backups.sh 2>&1 | logger -t prune-backups\n"
        "Nov 30 03:15:02 db-backup-01 prune-backups[88412]: removed '/srv/backups/pg-20261129-weekly.tar.zst'\n"
        "Nov 30 03:15:02 db-backup-01 prune-backups[88412]: removed '/srv/backups/pg-20261122-weekly.tar.zst'\n"
        "Dec 01 03:15:01 db-backup-01 prune-backups[90117]: removed '/srv/backups/pg-20261101-weekly.tar.zst'",
    )
    c.say(
        "The cron job at 03:15 removed the 29 Nov and 22 Nov weeklies on 30 Nov: they had fallen past the "
        "14 newest `pg-*` files. The older ones went the same way on earlier nights."
    )
    c.user(
        "Ugh. OK. Use find with -name patterns that can't overlap, rather than ls, because we had "
        "filenames with spaces from the manual dumps before. And add a --dry-run flag, default off."
    )
    c.tool(
        "Write",
        {
            "file_path": "/home/ines/ops-scripts/prune-backups.sh",
            "content": "#!/usr/bin/env bash\n# Keeps the newest KEEP_DAILY daily and KEEP_WEEKLY weekly archives in BACKUP_DIR.\n"
            "set -euo pipefail\nDIR=${BACKUP_DIR:-/srv/backups}\nKEEP_DAILY=${KEEP_DAILY:-14}\nKEEP_WEEKLY=${KEEP_WEEKLY:-8}\n"
            'DRY_RUN=0\n[ "${1:-}" = "--dry-run" ] && DRY_RUN=1\n\n'
            "prune() { # $1: find -name pattern, $2: how many to keep\n"
            '  find "$DIR" -maxdepth 1 -type f -name "$1" -printf \'%T@ %p\\0\' | sort -z -rn | tail -z -n +$(($2 + 1)) |\n'
            "    cut -z -d' ' -f2- | while IFS= read -r -d '' f; do\n"
            '      if [ "$DRY_RUN" = 1 ]; then echo "would remove $f"; else rm -v -- "$f"; fi\n    done\n}\n\n'
            "prune 'pg-????????-weekly.tar.zst' \"$KEEP_WEEKLY\"\nprune 'pg-????????.tar.zst' \"$KEEP_DAILY\"\n",
        },
        "The file /home/ines/ops-scripts/prune-backups.sh has been overwritten successfully.",
    )
    c.bash(
        'mkdir -p /tmp/bk && cd /tmp/bk && for d in $(seq 1 40); do touch -d "2026-10-$(( (d % 30) + 1 )) 03:00" pg-202610$(printf %02d $(( (d % 30) + 1 ))).tar.zst; done; for w in 04 11 18 25; do touch -d "2026-10-$w 04:00" pg-202610$w-weekly.tar.zst; done; touch \'pg-manual dump.tar.zst\'; ls | wc -l',
        "35",
    )
    c.bash(
        "BACKUP_DIR=/tmp/bk KEEP_WEEKLY=2 bash prune-backups.sh --dry-run | sort | head -20",
        "would remove /tmp/bk/pg-20261001.tar.zst\n"
        + _lines("would remove /tmp/bk/pg-202610{i:02d}.tar.zst", 15, 2)
        + "\nwould remove /tmp/bk/pg-20261004-weekly.tar.zst\nwould remove /tmp/bk/pg-20261011-weekly.tar.zst",
    )
    c.say(
        "In the fixture (30 dailies, 4 weeklies, one manual dump with a space): 16 dailies and the 2 "
        "oldest weeklies would go, the manual dump is never matched. Weeklies are no longer counted as dailies."
    )
    c.bash('docker run --rm -v "$PWD:/mnt" koalaman/shellcheck:v0.10.0 prune-backups.sh && echo clean', "clean")
    c.bash(
        "scp prune-backups.sh db-backup-01:/tmp/prune-backups.sh && ssh db-backup-01 'bash /tmp/prune-backups.sh --dry-run | wc -l'",
        "3",
    )
    c.bash(
        "ssh db-backup-01 'bash /tmp/prune-backups.sh --dry-run'",
        "would remove /srv/backups/pg-20261116.tar.zst\nwould remove /srv/backups/pg-20261117.tar.zst\nwould remove /srv/backups/pg-20261118.tar.zst",
    )
    c.say(
        "On the server the dry run would remove only 3 dailies (16 to 18 Nov), the 17 newest minus 14, and no weekly."
    )
    c.user("Good. Can the lost weeklies come back from S3?")
    c.bash(
        "aws s3 ls s3://acme-db-offsite/weekly/ | tail -6",
        "2026-11-01 05:12:44 48213377210 pg-20261101-weekly.tar.zst\n2026-11-08 05:11:09 48390021733 pg-20261108-weekly.tar.zst\n"
        "2026-11-15 05:13:51 48455102948 pg-20261115-weekly.tar.zst\n2026-11-22 05:12:02 48502778411 pg-20261122-weekly.tar.zst\n"
        "2026-11-29 05:12:37 48611094102 pg-20261129-weekly.tar.zst",
    )
    c.say(
        "Yes: the offsite copy in s3://acme-db-offsite/weekly/ has every weekly up to 29 Nov, about 48 GB each. Only October's are missing there too; the bucket's lifecycle keeps 5."
    )
    c.user("Fine, no need to restore them locally. Commit the script, I'll deploy it with the next ansible run.")
    c.bash(
        "git add prune-backups.sh && git commit -qm 'prune-backups: weeklies no longer pruned as dailies; find instead of ls; --dry-run' && git log --oneline -1",
        "f04b9d3 prune-backups: weeklies no longer pruned as dailies; find instead of ls; --dry-run",
    )
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
A shell script bug: the backup pruning script on db-backup-01 deleted weekly archives. I found the cause, rewrote the pruning, tested with dry runs only, and committed.

Summary:
1. Primary Request and Intent:
   Find why prune-backups.sh deleted last Sunday's weekly backups on db-backup-01 (it should keep 14 daily and 8 weekly archives) and fix it, running nothing destructive on the server (dry runs only). The user asked to use find with non-overlapping -name patterns instead of ls (filenames with spaces existed), and to add a --dry-run flag, off by default. Then commit; the user deploys via Ansible.

2. Key Technical Concepts:
   - Overlapping shell globs (pg-*.tar.zst matching weekly archives)
   - find -printf with NUL separators, sort -z, safe deletion with rm --
   - shellcheck SC2012/SC2086

3. Files and Code Sections:
   - prune-backups.sh: rewritten with a prune() function using find, the patterns 'pg-????????-weekly.tar.zst' and 'pg-????????.tar.zst', and a --dry-run flag.

4. Errors and fixes:
   - The daily glob on line 9 also matched weeklies, so weeklies beyond the 14 newest files were deleted as dailies. Fixed with non-overlapping patterns.
   - shellcheck not installed locally; ran it in Docker. Clean after the rewrite.

5. Problem Solving:
   On the server only two weeklies remained. The cron job's log showed the recent weeklies being removed. A local fixture confirmed the new script removes only the expected files and never the manual dump with a space in its name. On the server, the dry run would remove only three old dailies and no weeklies. The lost weeklies still exist in the offsite S3 bucket.

6. All user messages:
   - "prune-backups.sh deleted last Sunday's weekly backups on db-backup-01. It should keep 14 daily and 8 weekly archives. Find out why and fix it, but run nothing destructive on the server: dry runs only."
   - The user asked to use find with non-overlapping -name patterns instead of ls, and to add a --dry-run flag defaulting to off.
   - "Good. Can the lost weeklies come back from S3?"
   - "Fine, no need to restore them locally. Commit the script, I'll deploy it with the next ansible run."

7. Pending Tasks:
   - The user deploys the script with Ansible.

8. Current Work:
   Committed the fixed script.

9. Optional Next Step:
   None.
"""
    labels = [
        Label("request", "prune-backups.sh deleted last Sunday's weekly backups", dropped=False),
        Label("constraint", "run nothing destructive on the server", dropped=False),
        Label("constraint", "Use find with -name patterns that can't overlap", dropped=False),
        Label("decision", "because we had filenames with spaces from the manual dumps", dropped=False),
        Label("request", "add a --dry-run flag, default off", dropped=False),
        Label("error", "also matches the weekly archives", dropped=False),
        Label("measurement", "Only 2 weeklies left", dropped=False),  # "only two weeklies remained"
        Label("measurement", "16 dailies and the 2 oldest weeklies would go", dropped=True),  # in the fixture
        Label("number", "15 3 * * *", dropped=True),  # the cron line read on the server
        Label("identifier", "pg-20261129-weekly.tar.zst", dropped=True),  # the weekly lost on 30 Nov
        Label("identifier", "f04b9d3", dropped=True),
        Label("url", "s3://acme-db-offsite/weekly/", dropped=True),  # where the lost weeklies are
        Label("decision", "the bucket's lifecycle keeps 5", dropped=True),
        Label("failed command", "shellcheck prune-backups.sh", dropped=False),
        Label("edit", "pg-????????-weekly.tar.zst", dropped=False),
        Label("file edited", "prune-backups.sh", dropped=False),
        Label("measurement", "would remove only 3 dailies", dropped=False),
        # noise
        Label("number", "88412", dropped=False),
        Label("number", "48213377210", dropped=False),
        Label("command", "ls | wc -l", dropped=False),
        Label("path", "/tmp/bk", dropped=False),
    ]
    return DevSession(c, summary, labels)


def ini_leak() -> DevSession:
    """C: a memory leak hunted with valgrind and ASan in a small parsing library, the leak's
    cause in an error path, a fix that keeps the ABI as the user requires, with their reason."""
    c = Conversation("/home/viktor/libtini", "fresh-ini-leak")
    c.user(
        "Someone reported that libtini leaks memory when a config file has a syntax error (issue "
        "#57). Please confirm and fix it. The public header tini.h must not change: Debian and "
        "Fedora ship this as a shared library and we promised ABI stability for 2.x."
    )
    c.bash("ls", "CMakeLists.txt\nLICENSE\nREADME.md\nfuzz\ninclude\nsrc\ntests")
    c.bash(
        "cmake -S . -B build -DCMAKE_BUILD_TYPE=Debug >/dev/null && cmake --build build -j4 2>&1 | tail -2",
        "[ 92%] Linking C executable tests/tini_tests\n[100%] Built target tini_tests",
    )
    c.tool(
        "Write",
        {
            "file_path": "/home/viktor/libtini/tests/data/broken.ini",
            "content": '[server]\nport = 8080\nname = "unterminated\n[db]\nhost = x\n',
        },
        "File created successfully at: /home/viktor/libtini/tests/data/broken.ini",
    )
    c.bash(
        "valgrind --leak-check=full --error-exitcode=3 ./build/examples/tini_dump tests/data/broken.ini",
        "==41877== Memcheck, a memory error detector\n==41877== Command: ./build/examples/tini_dump tests/data/broken.ini\n==41877== \n"
        "tini_dump: tests/data/broken.ini:3: unterminated string\n==41877== \n==41877== HEAP SUMMARY:\n"
        "==41877==     in use at exit: 1,184 bytes in 7 blocks\n==41877==   total heap usage: 19 allocs, 12 frees, 6,528 bytes allocated\n==41877== \n"
        "==41877== 1,184 (64 direct, 1,120 indirect) bytes in 1 blocks are definitely lost in loss record 7 of 7\n"
        "==41877==    at 0x4848899: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)\n"
        "==41877==    by 0x109C41: tini_section_new (section.c:22)\n==41877==    by 0x10A3B7: parse_line (parser.c:141)\n"
        "==41877==    by 0x10A812: tini_parse_file (parser.c:208)\n==41877==    by 0x1093A0: main (tini_dump.c:31)\n==41877== \n"
        "==41877== LEAK SUMMARY:\n==41877==    definitely lost: 64 bytes in 1 blocks\n==41877==    indirectly lost: 1,120 bytes in 6 blocks\n"
        "==41877==      possibly lost: 0 bytes in 0 blocks\n==41877==    still reachable: 0 bytes in 0 blocks\n==41877== ERROR SUMMARY: 1 errors from 1 contexts (suppressed: 0 from 0)",
        error=True,
    )
    c.say("Confirmed: 1,184 bytes lost per failed parse, all from the section allocated in parse_line.")
    c.tool(
        "Read",
        {"file_path": "/home/viktor/libtini/src/parser.c"},
        _lines("{i:>6}\t", 8, 195)
        + '\n   203\ttini_doc *tini_parse_file(const char *path, tini_error *err) {\n   204\t    FILE *f = fopen(path, "r");\n'
        "   205\t    if (!f) return set_errno(err, path);\n   206\t    tini_doc *doc = tini_doc_new();\n   207\t    char line[TINI_MAX_LINE];\n"
        "   208\t    while (fgets(line, sizeof line, f)) {\n   209\t        if (parse_line(doc, line, err) != 0) {\n"
        "   210\t            fclose(f);\n   211\t            free(doc);\n   212\t            return NULL;\n   213\t        }\n   214\t    }\n",
    )
    c.say(
        "The error path at line 211 calls `free(doc)` instead of `tini_doc_free(doc)`, so the sections "
        "and their entries hanging off the document are never freed. The success path is fine: the "
        "caller frees with tini_doc_free."
    )
    c.bash(
        "grep -rn 'free(doc)' src/",
        "src/parser.c:211:            free(doc);\nsrc/parser.c:247:            free(doc);\nsrc/doc.c:58:    free(doc);",
    )
    c.tool(
        "Read",
        {"file_path": "/home/viktor/libtini/src/parser.c"},
        "   240\ttini_doc *tini_parse_string(const char *text, size_t len, tini_error *err) {\n   241\t    tini_doc *doc = tini_doc_new();\n"
        "   242\t    const char *end = text + len;\n   243\t    while (text < end) {\n   244\t        char line[TINI_MAX_LINE];\n"
        "   245\t        text = next_line(text, end, line);\n   246\t        if (parse_line(doc, line, err) != 0) {\n   247\t            free(doc);\n"
        "   248\t            return NULL;\n   249\t        }\n",
    )
    c.say("Same bug in tini_parse_string at line 247. doc.c:58 is inside tini_doc_free itself, which is correct.")
    c.tool(
        "Edit",
        {
            "file_path": "/home/viktor/libtini/src/parser.c",
            "old_string": "            fclose(f);\n            free(doc);",
            "new_string": "            fclose(f);\n            tini_doc_free(doc);",
        },
        "The file /home/viktor/libtini/src/parser.c has been updated successfully.",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/viktor/libtini/src/parser.c",
            "old_string": "        if (parse_line(doc, line, err) != 0) {\n            free(doc);\n            return NULL;",
            "new_string": "        if (parse_line(doc, line, err) != 0) {\n            tini_doc_free(doc);\n            return NULL;",
        },
        "The file /home/viktor/libtini/src/parser.c has been updated successfully.",
    )
    c.bash(
        "cmake --build build -j4 2>&1 | grep -E 'warning|error' ; valgrind --leak-check=full --error-exitcode=3 ./build/examples/tini_dump tests/data/broken.ini 2>&1 | grep -E 'in use at exit|ERROR SUMMARY'",
        "==42310==     in use at exit: 0 bytes in 0 blocks\n==42310== ERROR SUMMARY: 0 errors from 0 contexts (suppressed: 0 from 0)",
    )
    c.bash(
        "cmake -S . -B build-asan -DCMAKE_C_FLAGS='-fsanitize=address,undefined -g' >/dev/null && cmake --build build-asan -j4 >/dev/null && ctest --test-dir build-asan 2>&1 | tail -4",
        "\n96% tests passed, 1 tests failed out of 27\n\nThe following tests FAILED:\n\t  19 - parse_string_error (Failed)",
    )
    c.bash(
        "ctest --test-dir build-asan -R parse_string_error --output-on-failure 2>&1 | sed -n '1,20p'",
        "=================================================================\n==42577==ERROR: AddressSanitizer: heap-use-after-free on address 0x6020000001b0 at pc 0x55d0c4a1e9f2 bp 0x7ffd0f1c2a30 sp 0x7ffd0f1c2a28\n"
        "READ of size 8 at 0x6020000001b0 thread T0\n    #0 0x55d0c4a1e9f1 in test_parse_string_error tests/test_parser.c:188\n"
        "    #1 0x55d0c4a21c07 in main tests/main.c:44\n\n0x6020000001b0 is located 0 bytes inside of 16-byte region [0x6020000001b0,0x6020000001c0)\n"
        "freed by thread T0 here:\n    #0 0x7f2b8c4b4f08 in __interceptor_free\n    #1 0x55d0c4a1b5c3 in tini_doc_free src/doc.c:58\n"
        "    #2 0x55d0c4a1c90e in tini_parse_string src/parser.c:247",
        error=True,
    )
    c.tool(
        "Read",
        {"file_path": "/home/viktor/libtini/tests/test_parser.c"},
        '   180\tstatic void test_parse_string_error(void) {\n   181\t    tini_error err = {0};\n   182\t    tini_doc *doc = tini_parse_string("[a\\nb", 4, &err);\n'
        "   183\t    CHECK(doc == NULL);\n   184\t    CHECK(err.line == 1);\n   185\t    /* the error names the section being parsed */\n"
        "   186\t    CHECK(strcmp(err.section, \"a\") == 0);\n   187\t    CHECK(err.section != NULL);\n   188\t    CHECK(err.section[0] == 'a');\n   189\t}\n",
    )
    c.say(
        "The error struct keeps a pointer (err.section) into the section's name, which belonged to the "
        "document. Freeing the document properly now frees that name, so err.section dangles. The old "
        "leak was hiding it. tini_error is in the public header, so I can't change its field to an "
        "array; instead parse_line can strdup the name into err, and tini_error_clear (already public) frees it."
    )
    c.tool(
        "Read",
        {"file_path": "/home/viktor/libtini/include/tini.h"},
        "    41\ttypedef struct tini_error {\n    42\t    int line;\n    43\t    const char *section; /* owned by the error since 2.1; free with tini_error_clear */\n"
        "    44\t    char message[128];\n    45\t} tini_error;\n    46\t\n    47\tvoid tini_error_clear(tini_error *err);\n",
    )
    c.say(
        "The header even documents that since 2.1 the error owns `section`; parse_line simply never copied it. Fixing that in parser.c only."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/viktor/libtini/src/parser.c",
            "old_string": "        err->section = current->name;",
            "new_string": "        err->section = strdup(current->name);",
        },
        "The file /home/viktor/libtini/src/parser.c has been updated successfully.",
    )
    c.bash(
        "cmake --build build-asan -j4 >/dev/null && ctest --test-dir build-asan 2>&1 | tail -2 && git diff --stat include/",
        "100% tests passed, 0 tests failed out of 27\n\nTotal Test time (real) =   1.84 sec",
    )
    c.bash(
        "abidiff build/libtini.so.2.3.0.orig build/libtini.so.2.3.0 && echo 'ABI unchanged'",
        "abidiff: command not found",
        error=True,
    )
    c.bash(
        "docker run --rm -v $PWD:/w -w /w ghcr.io/lvc/abi-compliance-checker abi-compliance-checker -l tini -old build/abi-old.dump -new build/abi-new.dump 2>&1 | tail -3",
        "Binary compatibility: 100%\nSource compatibility: 100%\nTotal binary compatibility problems: 0, warnings: 0",
    )
    c.user("Nice. Add a line to NEWS and commit with 'Fixes #57'.")
    c.tool(
        "Edit",
        {
            "file_path": "/home/viktor/libtini/NEWS",
            "old_string": "2.3.1 (unreleased)\n",
            "new_string": "2.3.1 (unreleased)\n- Fix a leak of the whole document when parsing fails, and copy the section name into tini_error as documented (#57).\n",
        },
        "The file /home/viktor/libtini/NEWS has been updated successfully.",
    )
    c.bash(
        "git add -A && git commit -qm 'parser: free the document on parse errors; tini_error owns section (Fixes #57)' && git log --oneline -1",
        "c5a8e14 parser: free the document on parse errors; tini_error owns section (Fixes #57)",
    )
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
The user asked to confirm and fix a memory leak on parse errors in libtini (issue #57) without changing the public header.

Summary:
1. Primary Request and Intent:
   Confirm and fix the leak reported in issue #57: libtini leaks memory when a config file has a syntax error. The public header tini.h must not change because distributions ship libtini as a shared library and ABI stability was promised for 2.x. Then add a NEWS line and commit with "Fixes #57".

2. Key Technical Concepts:
   - valgrind leak checking; AddressSanitizer heap-use-after-free
   - Ownership of strings referenced from an error struct
   - ABI compatibility checking (abi-compliance-checker)

3. Files and Code Sections:
   - src/parser.c: tini_parse_file and tini_parse_string now call tini_doc_free(doc) instead of free(doc) on a parse error; parse_line now copies the section name into the error with strdup.
   - include/tini.h (read only): tini_error.section is documented as owned by the error since 2.1 and freed with tini_error_clear.
   - tests/data/broken.ini: new file with an unterminated string.
   - NEWS: entry under 2.3.1.

4. Errors and fixes:
   - valgrind showed the document's sections and entries definitely/indirectly lost on a failed parse.
   - After the fix, ASan reported a heap-use-after-free in test_parse_string_error because err.section pointed into the freed document; fixed by copying the name.
   - abidiff is not installed; used abi-compliance-checker in Docker.

5. Problem Solving:
   Both error paths leaked; fixing them exposed a dangling pointer that the leak had hidden. valgrind is clean, all ASan tests pass, and the ABI check reports full compatibility.

6. All user messages:
   - "Someone reported that libtini leaks memory when a config file has a syntax error (issue #57). Please confirm and fix it. The public header tini.h must not change: …"
   - "Nice. Add a line to NEWS and commit with 'Fixes #57'."

7. Pending Tasks:
   - None.

8. Current Work:
   Committed the fix with the NEWS entry.

9. Optional Next Step:
   None.
"""
    labels = [
        Label("request", "libtini leaks memory when a config file has a syntax error", dropped=False),
        Label("constraint", "The public header tini.h must not change", dropped=False),
        Label("decision", "Debian and Fedora ship this as a shared library", dropped=False),  # "distributions ship"
        Label("request", "Add a line to NEWS and commit with 'Fixes #57'", dropped=False),
        Label("measurement", "1,184 bytes", dropped=True),  # lost per failed parse
        Label("error", "heap-use-after-free", dropped=False),
        Label("edit", "strdup(current->name)", dropped=False),
        Label("edit", "tini_doc_free(doc)", dropped=False),
        Label("identifier", "c5a8e14", dropped=True),
        Label("measurement", "100% tests passed, 0 tests failed out of 27", dropped=True),  # "all ASan tests pass"
        Label("measurement", "Binary compatibility: 100%", dropped=False),
        Label("error", "parse_string_error", dropped=False),
        Label("path", "src/parser.c:211", dropped=True),  # where the bug was (and 247)
        Label("file read", "tests/test_parser.c", dropped=True),  # what the test asserts of err.section
        Label("name", "tini_error_clear", dropped=False),
        Label("failed command", "abidiff", dropped=False),
        Label("decision", "The old leak was hiding it", dropped=False),
        Label("path", "src/doc.c:58", dropped=True),  # the free(doc) that is correct, inside tini_doc_free
        Label("error", "unterminated string", dropped=False),  # the fixture's content
        # noise
        Label("command", "ls", dropped=False),
        Label("number", "0x6020000001b0", dropped=False),
        Label("number", "41877", dropped=False),
        Label("number", "128", dropped=False),
    ]
    return DevSession(c, summary, labels)


def revenue_mismatch() -> DevSession:
    """Python/pandas: a monthly revenue report that disagrees with finance's, counts and sums
    compared, the cause in a join that duplicated rows, the user's reason for the rate source."""
    c = Conversation("/home/hana/analytics", "fresh-revenue-mismatch")
    c.user(
        "The November revenue report says EUR 1,284,377.12 but finance's close says EUR 1,261,904.50. "
        "Please find the difference. The report is reports/monthly_revenue.py."
    )
    c.bash(
        "git log --oneline -4 -- reports/monthly_revenue.py",
        "4aa1d02 revenue: convert to EUR with daily rates\n91b7e33 revenue: exclude test accounts\n0ce9f4d revenue: add refunds\n5d6e7f8 revenue: first version",
    )
    c.tool(
        "Read",
        {"file_path": "/home/hana/analytics/reports/monthly_revenue.py"},
        "    1\timport pandas as pd\n    2\t\n    3\tfrom analytics.db import read_sql\n"
        + _lines("{i:>5}\t", 20, 4)
        + "\n   24\tdef revenue(month: str) -> pd.DataFrame:\n   25\t    orders = read_sql('select * from orders where month = %(m)s', m=month)\n"
        "   26\t    rates = read_sql('select day, currency, rate from fx_rates where month = %(m)s', m=month)\n"
        "   27\t    df = orders.merge(rates, left_on=['paid_on', 'currency'], right_on=['day', 'currency'], how='left')\n"
        "   28\t    df['amount_eur'] = df['amount'] / df['rate']\n   29\t    return df\n",
    )
    c.bash(
        "python -m reports.monthly_revenue --month 2026-11 --debug-counts",
        "orders rows: 48,902\nafter fx merge: 49,377\namount_eur sum: 1,284,377.12\nrows without rate: 0",
    )
    c.say(
        "The merge turns 48,902 orders into 49,377 rows: 475 extra rows, so some (day, currency) pairs have more than one rate."
    )
    c.bash(
        "psql analytics -c \"select day, currency, count(*), array_agg(source) from fx_rates where month = '2026-11' group by 1, 2 having count(*) > 1 order by 1\"",
        "    day     | currency | count |     array_agg      \n------------+----------+-------+--------------------\n"
        " 2026-11-12 | USD      |     2 | {ecb,openexchange}\n 2026-11-12 | GBP      |     2 | {ecb,openexchange}\n"
        " 2026-11-13 | USD      |     2 | {ecb,openexchange}\n 2026-11-13 | GBP      |     2 | {ecb,openexchange}\n(4 rows)",
    )
    c.bash(
        "git log --oneline -3 -- etl/fx_rates.py",
        "e21c9b0 fx: backfill from openexchange when ECB is late\n7f0a1c3 fx: store source column\n2b3c4d5 fx: daily ECB import",
    )
    c.say(
        "On 12 and 13 Nov the ECB feed was late and e21c9b0 backfilled from openexchange; when ECB then "
        "arrived both rates stayed. Every USD and GBP order on those two days is counted twice."
    )
    c.bash(
        "python - <<'EOF'\nfrom reports.monthly_revenue import revenue\ndf = revenue('2026-11')\nd = df[df.duplicated('order_id', keep='first')]\nprint(len(d), round(d.amount_eur.sum(), 2))\nEOF",
        "475 22472.62",
    )
    c.say("The 475 duplicated rows add EUR 22,472.62, exactly the gap: 1,284,377.12 - 1,261,904.50 = 22,472.62.")
    c.user(
        "Good catch. Use the ECB rate when there are two, because finance's close uses ECB reference "
        "rates. Don't delete the openexchange rows from fx_rates, the pricing team uses them."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/hana/analytics/reports/monthly_revenue.py",
            "old_string": "    rates = read_sql('select day, currency, rate from fx_rates where month = %(m)s', m=month)",
            "new_string": "    rates = read_sql(\n        'select distinct on (day, currency) day, currency, rate from fx_rates '\n"
            "        \"where month = %(m)s order by day, currency, (source = 'ecb') desc\",\n        m=month,\n    )",
        },
        "The file /home/hana/analytics/reports/monthly_revenue.py has been updated successfully.",
    )
    c.bash(
        "python -m reports.monthly_revenue --month 2026-11 --debug-counts",
        "orders rows: 48,902\nafter fx merge: 48,902\namount_eur sum: 1,261,904.50\nrows without rate: 0",
    )
    c.say("Now 48,902 rows and EUR 1,261,904.50, matching finance to the cent.")
    c.tool(
        "Edit",
        {
            "file_path": "/home/hana/analytics/reports/monthly_revenue.py",
            "old_string": "    df['amount_eur'] = df['amount'] / df['rate']",
            "new_string": "    assert len(df) == len(orders), 'fx merge duplicated orders'\n    df['amount_eur'] = df['amount'] / df['rate']",
        },
        "The file /home/hana/analytics/reports/monthly_revenue.py has been updated successfully.",
    )
    c.bash(
        "python -m pytest tests/reports -q 2>&1 | tail -3",
        "F.......\nFAILED tests/reports/test_monthly_revenue.py::test_converts_with_daily_rate - AssertionError: fx merge duplicated orders\n1 failed, 7 passed in 2.14s",
        error=True,
    )
    c.tool(
        "Read",
        {"file_path": "/home/hana/analytics/tests/reports/test_monthly_revenue.py"},
        "    12\tdef test_converts_with_daily_rate(fake_db):\n    13\t    fake_db.add_orders([(1, '2026-11-02', 'USD', 110.0)])\n"
        "    14\t    fake_db.add_rates([('2026-11-02', 'USD', 1.10, 'ecb'), ('2026-11-02', 'USD', 1.12, 'ecb')])\n",
    )
    c.say(
        "The fixture itself has two ECB rows for the same day, which is not something the real feed does. `distinct on` only works in Postgres, and fake_db is SQLite, so the dedupe never runs in the test."
    )
    c.bash(
        "grep -n 'sqlite\\|postgres' tests/conftest.py",
        "tests/conftest.py:9:    engine = create_engine('sqlite:///:memory:')",
    )
    c.user("Hmm. Do the dedupe in pandas then, not SQL, so the test exercises it. And fix the fixture.")
    c.tool(
        "Edit",
        {
            "file_path": "/home/hana/analytics/reports/monthly_revenue.py",
            "old_string": "    rates = read_sql(\n        'select distinct on (day, currency) day, currency, rate from fx_rates '\n"
            "        \"where month = %(m)s order by day, currency, (source = 'ecb') desc\",\n        m=month,\n    )",
            "new_string": "    rates = read_sql('select day, currency, rate, source from fx_rates where month = %(m)s', m=month)\n"
            "    # finance closes on ECB reference rates: prefer them when a day has two\n"
            "    rates = rates.sort_values('source', key=lambda s: s != 'ecb').drop_duplicates(['day', 'currency'])",
        },
        "The file /home/hana/analytics/reports/monthly_revenue.py has been updated successfully.",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/hana/analytics/tests/reports/test_monthly_revenue.py",
            "old_string": "    fake_db.add_rates([('2026-11-02', 'USD', 1.10, 'ecb'), ('2026-11-02', 'USD', 1.12, 'ecb')])",
            "new_string": "    fake_db.add_rates([('2026-11-02', 'USD', 1.10, 'ecb'), ('2026-11-02', 'USD', 1.12, 'openexchange')])",
        },
        "The file /home/hana/analytics/tests/reports/test_monthly_revenue.py has been updated successfully.",
    )
    c.bash(
        "python -m pytest tests/reports -q 2>&1 | tail -1 && python -m reports.monthly_revenue --month 2026-11 --debug-counts | tail -2",
        "8 passed in 1.98s\namount_eur sum: 1,261,904.50\nrows without rate: 0",
    )
    c.bash(
        "for m in 2026-08 2026-09 2026-10; do python -m reports.monthly_revenue --month $m --debug-counts | grep -E 'orders rows|after fx'; done",
        "orders rows: 45,118\nafter fx merge: 45,118\norders rows: 46,730\nafter fx merge: 46,730\norders rows: 47,551\nafter fx merge: 47,551",
    )
    c.say("August to October had no duplicates, so only November's report was affected; e21c9b0 landed on 12 Nov.")
    c.bash(
        "git diff --stat",
        " reports/monthly_revenue.py                | 5 ++++-\n tests/reports/test_monthly_revenue.py     | 2 +-\n 2 files changed, 6 insertions(+), 2 deletions(-)",
    )
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
The user asked to explain why the November revenue report disagrees with finance's close. I traced it to duplicated FX rates and fixed the report.

Summary:
1. Primary Request and Intent:
   Find why the November revenue report (reports/monthly_revenue.py) shows about EUR 1.284M while finance's close shows about EUR 1.262M. The user then asked to prefer the ECB rate when two rates exist, since finance closes on ECB reference rates, without deleting the openexchange rows from fx_rates (used by pricing), and to do the dedupe in pandas rather than SQL so the test exercises it, fixing the test fixture.

2. Key Technical Concepts:
   - pandas merge row multiplication on non-unique keys
   - FX rates from two sources (ECB and openexchange backfill)
   - Postgres DISTINCT ON vs SQLite in tests

3. Files and Code Sections:
   - reports/monthly_revenue.py: rates are deduplicated per (day, currency) preferring source 'ecb'; an assertion checks the merge does not change the number of orders.
   - tests/reports/test_monthly_revenue.py: the fixture's second rate is now an openexchange rate.

4. Errors and fixes:
   - The first fix used Postgres DISTINCT ON, which the SQLite test database does not support, so the new assertion failed in test_converts_with_daily_rate; moved the dedupe to pandas.

5. Problem Solving:
   On two days in November, the ECB feed was late and the openexchange backfill left two rates per currency for USD and GBP, so those orders were counted twice. The duplicated rows account exactly for the difference of about EUR 22.5k. After the fix the report matches finance to the cent. Earlier months were not affected.

6. All user messages:
   - "The November revenue report says EUR 1,284,377.12 but finance's close says EUR 1,261,904.50. Please find the difference. …"
   - "Good catch. Use the ECB rate when there are two, because finance's close uses ECB reference rates. Don't delete the openexchange rows from fx_rates, the pricing team uses them."
   - "Hmm. Do the dedupe in pandas then, not SQL, so the test exercises it. And fix the fixture."

7. Pending Tasks:
   - Commit (not done yet).

8. Current Work:
   Tests pass and the November report matches finance; the diff touches the report and its test.

9. Optional Next Step:
   Ask whether to commit and whether the FX backfill job should stop leaving duplicate rates.
"""
    labels = [
        Label("request", "Please find the difference", dropped=False),
        Label("decision", "because finance's close uses ECB reference rates", dropped=False),
        Label("constraint", "Don't delete the openexchange rows from fx_rates", dropped=False),
        Label("request", "Do the dedupe in pandas then, not SQL", dropped=False),
        Label("identifier", "e21c9b0", dropped=True),  # the backfill commit behind the duplicates
        Label("measurement", "after fx merge: 49,377", dropped=True),
        Label("measurement", "475", dropped=True),  # duplicated rows
        Label("measurement", "22,472.62", dropped=False),  # "about EUR 22.5k"
        Label("measurement", "1,261,904.50", dropped=False),
        Label("measurement", "48,902", dropped=True),  # November's orders
        Label("number", "2026-11-12", dropped=True),  # the days with two rates ("two days")
        Label("error", "fx merge duplicated orders", dropped=False),
        Label("file read", "tests/conftest.py", dropped=True),  # the test database is SQLite
        Label("edit", "drop_duplicates(['day', 'currency'])", dropped=False),
        Label("file edited", "tests/reports/test_monthly_revenue.py", dropped=False),
        Label("decision", "only November's report was affected", dropped=False),
        # noise
        Label("number", "1.10", dropped=False),
        Label("number", "2.14s", dropped=False),
        Label("command", "git diff --stat", dropped=False),
        Label("name", "read_sql", dropped=False),
    ]
    return DevSession(c, summary, labels)


def double_emails() -> DevSession:
    """PHP/Laravel: customers getting every invoice email twice, traced through queue logs to a
    job timeout longer than the queue's retry_after; the user's preference on the fix in prose."""
    c = Conversation("/home/dario/shopfront", "fresh-double-emails")
    c.user("Customers say they get the invoice email twice, sometimes three times, since Tuesday. Look into it.")
    c.bash("php artisan --version", "Laravel Framework 11.31.0")
    c.bash(
        "grep -c 'InvoiceMailed' storage/logs/laravel-2026-12-02.log && grep 'InvoiceMailed' storage/logs/laravel-2026-12-02.log | awk '{print $NF}' | sort | uniq -d | wc -l",
        "3911\n1207",
    )
    c.say("3911 InvoiceMailed events yesterday, and 1207 invoice ids appear more than once.")
    c.bash(
        "grep 'inv_88121' storage/logs/laravel-2026-12-02.log",
        '[2026-12-02 10:14:03] production.INFO: SendInvoiceEmail started {"invoice":"inv_88121","attempt":1}\n'
        '[2026-12-02 10:15:33] production.INFO: SendInvoiceEmail started {"invoice":"inv_88121","attempt":2}\n'
        '[2026-12-02 10:15:51] production.INFO: InvoiceMailed {"invoice":"inv_88121"} inv_88121\n'
        '[2026-12-02 10:16:58] production.INFO: InvoiceMailed {"invoice":"inv_88121"} inv_88121',
    )
    c.say(
        "Attempt 2 starts exactly 90 s after attempt 1, while attempt 1 is still running (it finishes at 10:16:58). The queue hands the job out again after 90 s."
    )
    c.tool(
        "Read",
        {"file_path": "/home/dario/shopfront/config/queue.php"},
        "    'redis' => [\n        'driver' => 'redis',\n        'connection' => 'default',\n        'queue' => env('REDIS_QUEUE', 'default'),\n"
        "        'retry_after' => 90,\n        'block_for' => null,\n        'after_commit' => false,\n    ],\n",
    )
    c.tool(
        "Read",
        {"file_path": "/home/dario/shopfront/app/Jobs/SendInvoiceEmail.php"},
        "class SendInvoiceEmail implements ShouldQueue\n{\n    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels;\n\n"
        "    public $timeout = 180;\n    public $tries = 3;\n\n    public function handle(PdfRenderer $pdf): void\n    {\n"
        "        $file = $pdf->render($this->invoice);   // 20-170 s since the new template\n        Mail::to($this->invoice->customer)->send(new InvoiceMail($this->invoice, $file));\n    }\n}\n",
    )
    c.bash(
        "git log --oneline --since=2026-11-28 -- app/Jobs/SendInvoiceEmail.php resources/views/pdf",
        "b6d1e2f jobs: allow 180 s for invoice rendering\n3f9a0c4 pdf: new invoice template with embedded fonts",
    )
    c.say(
        "3f9a0c4 (new template, Tuesday) made rendering take up to 170 s, and b6d1e2f raised the job "
        "timeout to 180 s, but the Redis queue's retry_after is still 90 s. Laravel's docs say "
        "retry_after must be longer than the longest job timeout; otherwise a second worker picks "
        "the job up while the first is still running. Hence the duplicates."
    )
    c.bash(
        'php artisan tinker --execute=\'echo App\\Models\\Invoice::whereDate("created_at", ">=", "2026-12-01")->count();\'',
        "6204",
    )
    c.user(
        "Set retry_after to 240 then. But don't make the job itself slower to fail: keep timeout at "
        "180 and tries at 3, ops tuned those. And make the send idempotent, I don't want to rely on "
        "timing alone."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/dario/shopfront/config/queue.php",
            "old_string": "        'retry_after' => 90,",
            "new_string": "        // must exceed the longest job timeout (SendInvoiceEmail: 180 s)\n        'retry_after' => 240,",
        },
        "The file /home/dario/shopfront/config/queue.php has been updated successfully.",
    )
    c.bash(
        "php artisan make:migration add_emailed_at_to_invoices --table=invoices",
        "   INFO  Migration [database/migrations/2026_12_03_101544_add_emailed_at_to_invoices.php] created successfully.",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/dario/shopfront/database/migrations/2026_12_03_101544_add_emailed_at_to_invoices.php",
            "old_string": "        Schema::table('invoices', function (Blueprint $table) {\n            //",
            "new_string": "        Schema::table('invoices', function (Blueprint $table) {\n            $table->timestamp('emailed_at')->nullable();",
        },
        "The file /home/dario/shopfront/database/migrations/2026_12_03_101544_add_emailed_at_to_invoices.php has been updated successfully.",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/dario/shopfront/app/Jobs/SendInvoiceEmail.php",
            "old_string": "        $file = $pdf->render($this->invoice);   // 20-170 s since the new template\n        Mail::to($this->invoice->customer)->send(new InvoiceMail($this->invoice, $file));",
            "new_string": "        $claimed = Invoice::whereKey($this->invoice->id)->whereNull('emailed_at')->update(['emailed_at' => now()]);\n"
            "        if ($claimed === 0) {\n            return; // another attempt already sent it\n        }\n"
            "        $file = $pdf->render($this->invoice);   // 20-170 s since the new template\n        Mail::to($this->invoice->customer)->send(new InvoiceMail($this->invoice, $file));",
        },
        "The file /home/dario/shopfront/app/Jobs/SendInvoiceEmail.php has been updated successfully.",
    )
    c.bash(
        "php artisan test --filter=SendInvoiceEmail",
        "   FAIL  Tests\\Feature\\SendInvoiceEmailTest\n  \u2717 it retries when the mailer fails\n"
        "  Failed asserting that 1 matches expected 2.\n  at tests/Feature/SendInvoiceEmailTest.php:48\n\n  Tests:    1 failed, 3 passed (7 assertions)",
        error=True,
    )
    c.say(
        "Claiming before sending breaks retries: if the mailer throws, emailed_at is already set and "
        "the retry returns early, so the email is never sent. I'll clear the claim when sending fails."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/dario/shopfront/app/Jobs/SendInvoiceEmail.php",
            "old_string": "        $file = $pdf->render($this->invoice);   // 20-170 s since the new template\n        Mail::to($this->invoice->customer)->send(new InvoiceMail($this->invoice, $file));",
            "new_string": "        try {\n            $file = $pdf->render($this->invoice);   // 20-170 s since the new template\n"
            "            Mail::to($this->invoice->customer)->send(new InvoiceMail($this->invoice, $file));\n        } catch (\\Throwable $e) {\n"
            "            Invoice::whereKey($this->invoice->id)->update(['emailed_at' => null]);\n            throw $e;\n        }",
        },
        "The file /home/dario/shopfront/app/Jobs/SendInvoiceEmail.php has been updated successfully.",
    )
    c.bash("php artisan test 2>&1 | tail -3", "  Tests:    214 passed (633 assertions)\n  Duration: 19.42s")
    c.bash(
        "composer phpstan",
        "sh: 1: phpstan: not found\nScript phpstan handling the phpstan event returned with error code 127",
        error=True,
    )
    c.bash("vendor/bin/phpstan analyse --memory-limit=1G 2>&1 | tail -2", " [OK] No errors")
    c.user("Good. How many customers got duplicates so far? I need the number for the apology email.")
    c.bash(
        'grep -h \'InvoiceMailed\' storage/logs/laravel-2026-12-0[1-3].log | awk \'{print $NF}\' | sort | uniq -d > /tmp/dup_invoices.txt; wc -l < /tmp/dup_invoices.txt; php artisan tinker --execute=\'echo App\\Models\\Invoice::whereIn("number", file("/tmp/dup_invoices.txt", FILE_IGNORE_NEW_LINES))->distinct("customer_id")->count("customer_id");\'',
        "2388\n2291",
    )
    c.say("2,388 invoices were mailed more than once between 1 and 3 December, to 2,291 distinct customers.")
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
Customers receive invoice emails two or three times since Tuesday. I traced it to the queue re-dispatching long-running jobs and fixed the config and the job.

Summary:
1. Primary Request and Intent:
   Investigate duplicate invoice emails since Tuesday and fix them. The user asked to set retry_after to 240, keep the job's timeout (180) and tries (3) as ops tuned them, and make sending idempotent rather than relying on timing. Finally they asked how many customers received duplicates, for an apology email.

2. Key Technical Concepts:
   - Laravel queue retry_after vs job $timeout (retry_after must exceed the longest timeout)
   - Idempotent jobs via an atomic claim (conditional UPDATE on emailed_at)

3. Files and Code Sections:
   - config/queue.php: redis retry_after 90 → 240, with a comment.
   - database/migrations/…_add_emailed_at_to_invoices.php: nullable emailed_at timestamp.
   - app/Jobs/SendInvoiceEmail.php: claims the invoice by setting emailed_at where null, returns if already claimed, and clears the claim if rendering or sending throws.

4. Errors and fixes:
   - The first idempotency version broke the retry test (the claim blocked the retry after a mailer failure); fixed by clearing emailed_at on exceptions.
   - composer phpstan failed (binary not found); ran vendor/bin/phpstan directly: no errors.

5. Problem Solving:
   Logs show a second attempt starting 90 s after the first while the first is still running. The new PDF template made rendering take up to about 170 s and the job timeout had been raised to 180 s, but retry_after stayed at 90 s. All tests pass after the fix. Roughly 2,400 invoices were mailed more than once from 1 to 3 December, to about 2,300 customers.

6. All user messages:
   - "Customers say they get the invoice email twice, sometimes three times, since Tuesday. Look into it."
   - "Set retry_after to 240 then. But don't make the job itself slower to fail: keep timeout at 180 and tries at 3, ops tuned those. And make the send idempotent, I don't want to rely on timing alone."
   - "Good. How many customers got duplicates so far? I need the number for the apology email."

7. Pending Tasks:
   - Run the migration and deploy (not done).

8. Current Work:
   Counted affected invoices and customers for the apology email.

9. Optional Next Step:
   Give the user the exact figures and ask whether to commit.
"""
    labels = [
        Label("request", "they get the invoice email twice", dropped=False),
        Label("request", "Set retry_after to 240", dropped=False),
        Label("constraint", "keep timeout at 180 and tries at 3", dropped=False),
        Label("decision", "ops tuned those", dropped=False),
        Label("request", "make the send idempotent", dropped=False),
        Label("measurement", "2291", dropped=False),  # "about 2,300 customers"
        Label("measurement", "2388", dropped=False),  # "roughly 2,400 invoices"
        Label("measurement", "1207", dropped=True),  # duplicated ids on 2 Dec alone
        Label("identifier", "3f9a0c4", dropped=True),  # the template commit that slowed rendering
        Label("identifier", "b6d1e2f", dropped=True),  # the commit that raised the timeout
        Label("identifier", "inv_88121", dropped=True),  # the invoice traced in the log
        Label("file edited", "config/queue.php", dropped=False),
        Label("edit", "'retry_after' => 90,", dropped=False),
        Label("identifier", "2026_12_03_101544_add_emailed_at_to_invoices", dropped=True),  # the migration's name
        Label("error", "Failed asserting that 1 matches expected 2", dropped=False),
        Label("failed command", "composer phpstan", dropped=False),
        Label("measurement", "214 passed", dropped=True),
        Label("number", "Laravel Framework 11.31.0", dropped=True),
        # noise
        Label("number", "6204", dropped=False),  # invoices since 1 Dec, asked of tinker on the way
        Label("number", "19.42s", dropped=False),
        Label("path", "/tmp/dup_invoices.txt", dropped=False),
        Label("command", "php artisan --version", dropped=False),
    ]
    return DevSession(c, summary, labels)


def invite_links() -> DevSession:
    """TypeScript/Next.js: a feature across files (expiring invite links: API route, component,
    strings, test) under the user's constraints and their reasons; a browser missing for the e2e
    run; a bundle size measured."""
    c = Conversation("/home/yuki/teamspace", "fresh-invite-links")
    c.user(
        "Add a 'Copy invite link' button to the members page. Links must expire after 7 days, not 30 "
        "like the old email invites, because security asked for it after the audit. No new npm "
        "dependencies please, the bundle is already too big."
    )
    c.bash(
        "ls app/(dashboard)/members app/api/invites lib",
        "app/(dashboard)/members:\nMembersTable.tsx\npage.tsx\n\napp/api/invites:\nroute.ts\n\nlib:\ndb.ts\nmail.ts\ntokens.ts",
    )
    c.tool(
        "Read",
        {"file_path": "/home/yuki/teamspace/lib/tokens.ts"},
        "import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';\n\n"
        "export const INVITE_TTL_DAYS = 30;\n\n"
        "export function signInvite(teamId: string, expires: number): string {\n"
        "  const body = `${teamId}.${expires}.${randomBytes(9).toString('base64url')}`;\n"
        "  return `${body}.${createHmac('sha256', process.env.INVITE_SECRET!).update(body).digest('base64url')}`;\n}\n",
    )
    c.tool(
        "Read",
        {"file_path": "/home/yuki/teamspace/app/api/invites/route.ts"},
        "import { signInvite, INVITE_TTL_DAYS } from '@/lib/tokens';\nimport { sendInviteMail } from '@/lib/mail';\n\n"
        "export async function POST(req: Request) {\n  const { teamId, email } = await req.json();\n"
        "  const expires = Date.now() + INVITE_TTL_DAYS * 86_400_000;\n  await sendInviteMail(email, signInvite(teamId, expires));\n"
        "  return Response.json({ ok: true });\n}\n",
    )
    c.say(
        "Email invites use INVITE_TTL_DAYS = 30 from lib/tokens.ts. I'll add a separate LINK_INVITE_TTL_DAYS "
        "= 7 rather than change the shared constant, so email invites keep 30 days unless you want both at 7."
    )
    c.user("Keep email invites at 30 for now, that's a separate ticket (SEC-41).")
    c.tool(
        "Edit",
        {
            "file_path": "/home/yuki/teamspace/lib/tokens.ts",
            "old_string": "export const INVITE_TTL_DAYS = 30;",
            "new_string": "export const INVITE_TTL_DAYS = 30;\n// Copyable links leak more easily than emails: security asked for 7 days.\nexport const LINK_INVITE_TTL_DAYS = 7;",
        },
        "The file /home/yuki/teamspace/lib/tokens.ts has been updated successfully.",
    )
    c.tool(
        "Write",
        {
            "file_path": "/home/yuki/teamspace/app/api/invites/link/route.ts",
            "content": "import { LINK_INVITE_TTL_DAYS, signInvite } from '@/lib/tokens';\nimport { requireTeamAdmin } from '@/lib/auth';\n\n"
            "export async function POST(req: Request) {\n  const { teamId } = await req.json();\n  await requireTeamAdmin(req, teamId);\n"
            "  const expires = Date.now() + LINK_INVITE_TTL_DAYS * 86_400_000;\n  const token = signInvite(teamId, expires);\n"
            "  return Response.json({ url: `${process.env.APP_URL}/join/${token}`, expires });\n}\n",
        },
        "File created successfully at: /home/yuki/teamspace/app/api/invites/link/route.ts",
    )
    c.bash(
        "grep -rn 'requireTeamAdmin' lib/auth.ts",
        "lib/auth.ts:31:export async function requireTeamAdmin(req: Request, teamId: string): Promise<User> {",
    )
    c.tool(
        "Write",
        {
            "file_path": "/home/yuki/teamspace/app/(dashboard)/members/CopyInviteLink.tsx",
            "content": "'use client';\nimport { useState } from 'react';\nimport { t } from '@/lib/i18n';\n\n"
            "export function CopyInviteLink({ teamId }: { teamId: string }) {\n  const [copied, setCopied] = useState(false);\n"
            "  async function copy() {\n    const res = await fetch('/api/invites/link', { method: 'POST', body: JSON.stringify({ teamId }) });\n"
            "    const { url } = await res.json();\n    await navigator.clipboard.writeText(url);\n    setCopied(true);\n  }\n"
            "  return <button onClick={copy}>{copied ? t('members.invite.copied') : t('members.invite.copy')}</button>;\n}\n",
        },
        "File created successfully at: /home/yuki/teamspace/app/(dashboard)/members/CopyInviteLink.tsx",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/yuki/teamspace/app/(dashboard)/members/page.tsx",
            "old_string": "      <MembersTable members={members} />",
            "new_string": "      <CopyInviteLink teamId={team.id} />\n      <MembersTable members={members} />",
        },
        "The file /home/yuki/teamspace/app/(dashboard)/members/page.tsx has been updated successfully.",
    )
    c.bash("ls locales", "de.json\nen.json\nja.json")
    for lang, copy, copied in (
        ("en", "Copy invite link", "Link copied"),
        ("de", "Einladungslink kopieren", "Link kopiert"),
        ("ja", "\u62db\u5f85\u30ea\u30f3\u30af\u3092\u30b3\u30d4\u30fc", "\u30b3\u30d4\u30fc\u3057\u307e\u3057\u305f"),
    ):
        c.tool(
            "Edit",
            {
                "file_path": f"/home/yuki/teamspace/locales/{lang}.json",
                "old_string": '  "members.title":',
                "new_string": f'  "members.invite.copy": "{copy}",\n  "members.invite.copied": "{copied}",\n  "members.title":',
            },
            f"The file /home/yuki/teamspace/locales/{lang}.json has been updated successfully.",
        )
    c.bash(
        "npx tsc --noEmit",
        "app/(dashboard)/members/page.tsx(14,8): error TS2304: Cannot find name 'CopyInviteLink'.",
        error=True,
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/yuki/teamspace/app/(dashboard)/members/page.tsx",
            "old_string": "import { MembersTable } from './MembersTable';",
            "new_string": "import { CopyInviteLink } from './CopyInviteLink';\nimport { MembersTable } from './MembersTable';",
        },
        "The file /home/yuki/teamspace/app/(dashboard)/members/page.tsx has been updated successfully.",
    )
    c.bash(
        "npx tsc --noEmit && npx vitest run lib 2>&1 | tail -3",
        " Test Files  9 passed (9)\n      Tests  61 passed (61)\n   Duration  3.12s",
    )
    c.tool(
        "Write",
        {
            "file_path": "/home/yuki/teamspace/e2e/invite-link.spec.ts",
            "content": "import { test, expect } from '@playwright/test';\n\ntest('admin copies an invite link that expires in 7 days', async ({ page, context }) => {\n"
            "  await context.grantPermissions(['clipboard-read', 'clipboard-write']);\n  await page.goto('/members');\n"
            "  await page.getByRole('button', { name: 'Copy invite link' }).click();\n  await expect(page.getByRole('button', { name: 'Link copied' })).toBeVisible();\n"
            "  const url = await page.evaluate(() => navigator.clipboard.readText());\n  expect(url).toMatch(/\\/join\\//);\n});\n",
        },
        "File created successfully at: /home/yuki/teamspace/e2e/invite-link.spec.ts",
    )
    c.bash(
        "npx playwright test e2e/invite-link.spec.ts",
        "Running 1 test using 1 worker\n\n  \u2718  1 [chromium] \u203a invite-link.spec.ts:3:5 \u203a admin copies an invite link that expires in 7 days (12ms)\n\n"
        "  1) [chromium] \u203a invite-link.spec.ts:3:5 \u203a admin copies an invite link\n\n"
        "    Error: browserType.launch: Executable doesn't exist at /home/yuki/.cache/ms-playwright/chromium-1140/chrome-linux/chrome\n"
        "    \u2554\u2550\u2550\u2550\u2550\u2557\n    \u2551 Looks like Playwright was just installed or updated. \u2551\n    \u2551 Please run the following command to download new browsers: \u2551\n"
        "    \u2551     npx playwright install                            \u2551\n\n  1 failed",
        error=True,
    )
    c.bash(
        "npx playwright install chromium 2>&1 | tail -1 && npx playwright test e2e/invite-link.spec.ts 2>&1 | tail -2",
        "Chromium 129.0.6668.29 (playwright build v1140) downloaded to /home/yuki/.cache/ms-playwright/chromium-1140\n  1 passed (6.4s)",
    )
    c.bash(
        "npx next build 2>&1 | grep -E 'members|First Load JS shared'",
        "\u251c \u25cb /members                              3.41 kB         128 kB\n+ First Load JS shared by all             87.6 kB",
    )
    c.bash(
        "git stash -q && npx next build 2>&1 | grep -E ' /members'; git stash pop -q",
        "\u251c \u25cb /members                              2.87 kB         127 kB",
    )
    c.say("The members page grows from 2.87 kB to 3.41 kB (0.54 kB) and no dependency was added.")
    c.user("Does the link check the expiry on join?")
    c.bash(
        "grep -n 'expires' app/join/\\[token\\]/page.tsx lib/tokens.ts",
        "lib/tokens.ts:8:export function signInvite(teamId: string, expires: number): string {\n"
        "app/join/[token]/page.tsx:12:  const [teamId, expires] = verifyInvite(params.token);\napp/join/[token]/page.tsx:13:  if (Number(expires) < Date.now()) return <Expired />;",
    )
    c.say(
        "Yes: app/join/[token]/page.tsx line 13 rejects an expired token with the Expired page, after verifyInvite checks the HMAC."
    )
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
Feature work in a Next.js app: a copyable invite link on the members page with a shorter expiry, under constraints about dependencies.

Summary:
1. Primary Request and Intent:
   Add a "Copy invite link" button to the members page. Links expire after 7 days rather than 30 (security's request after the audit). No new npm dependencies because of bundle size. Email invites stay at 30 days for now (separate ticket).

2. Key Technical Concepts:
   - HMAC-signed invite tokens with an expiry timestamp
   - Next.js route handlers and client components
   - Clipboard API and Playwright clipboard permissions

3. Files and Code Sections:
   - lib/tokens.ts: added LINK_INVITE_TTL_DAYS = 7 next to INVITE_TTL_DAYS = 30.
   - app/api/invites/link/route.ts (new): admin-only POST returning a signed join URL and its expiry.
   - app/(dashboard)/members/CopyInviteLink.tsx (new): button that fetches the link and copies it.
   - app/(dashboard)/members/page.tsx: renders CopyInviteLink (import added).
   - locales (en/de/ja): strings for the button.
   - e2e/invite-link.spec.ts (new): Playwright test for copying the link.

4. Errors and fixes:
   - tsc: CopyInviteLink not found in page.tsx; added the import.
   - Playwright's Chromium was missing; installed it, then the e2e test passed.

5. Problem Solving:
   Unit tests pass. The members page bundle grew only slightly and no dependency was added. The join page already rejects expired tokens after verifying the HMAC.

6. All user messages:
   - "Add a 'Copy invite link' button to the members page. Links must expire after 7 days, not 30 like the old email invites, because security asked for it after the audit. No new npm dependencies please, the bundle is already too big."
   - "Keep email invites at 30 for now, that's a separate ticket …"
   - "Does the link check the expiry on join?"

7. Pending Tasks:
   - None; not committed yet.

8. Current Work:
   Answered that the join page checks the expiry.

9. Optional Next Step:
   Ask whether to commit and open a PR.
"""
    labels = [
        Label("request", "Add a 'Copy invite link' button to the members page", dropped=False),
        Label("constraint", "Links must expire after 7 days, not 30", dropped=False),
        Label("decision", "because security asked for it after the audit", dropped=False),
        Label("constraint", "No new npm dependencies", dropped=False),
        Label("constraint", "Keep email invites at 30 for now", dropped=False),
        Label("identifier", "SEC-41", dropped=True),  # cut by the elision
        Label("decision", "rather than change the shared constant", dropped=False),  # INVITE_TTL_DAYS kept at 30
        Label("file edited", "locales/de.json", dropped=False),  # "locales (en/de/ja)"
        Label("edit", "Einladungslink kopieren", dropped=True),
        Label("measurement", "2.87 kB to 3.41 kB", dropped=True),  # "grew only slightly"
        Label("measurement", "61 passed", dropped=True),
        Label("error", "Executable doesn't exist", dropped=False),
        Label("failed command", "npx playwright test e2e/invite-link.spec.ts", dropped=False),
        Label("error", "Cannot find name 'CopyInviteLink'", dropped=False),
        Label("file read", "lib/tokens.ts", dropped=False),
        Label("path", "app/join/[token]/page.tsx", dropped=True),  # where the expiry is checked
        Label("name", "requireTeamAdmin", dropped=False),  # "admin-only"
        Label("name", "APP_URL", dropped=True),  # the join URL is built from it: a deployment needs it set
        # noise
        Label("number", "86_400_000", dropped=False),
        Label("number", "129.0.6668.29", dropped=False),
        Label("command", "ls locales", dropped=False),
        Label("number", "87.6 kB", dropped=False),
    ]
    return DevSession(c, summary, labels)


def gradle_build_time() -> DevSession:
    """Java/Gradle: a performance investigation of CI build time with timings (a build scan's
    task list, the configuration cache, a test fork setting), the user's limit on the runners'
    memory with its reason."""
    c = Conversation("/home/felix/payments-core", "fresh-gradle-build-time")
    c.user(
        "Our CI build went from about 9 minutes to 21 in the last month. Can you find out where the "
        "time goes and bring it back down? Don't ask for bigger runners: we're on the 8 GB ones "
        "because the org-wide budget is fixed until April."
    )
    c.bash("mvn -v", "bash: mvn: command not found", error=True)
    c.bash(
        "ls; cat gradle/wrapper/gradle-wrapper.properties | grep distributionUrl",
        "build.gradle.kts\ngradle\ngradlew\nsettings.gradle.kts\nledger\napi\nreconciler\nshared\n"
        "distributionUrl=https\\://services.gradle.org/distributions/gradle-8.10.2-bin.zip",
    )
    c.bash(
        "gh run list --workflow build.yml --limit 40 --json createdAt,conclusion,databaseId,updatedAt --jq '.[] | [.databaseId, .createdAt[:10], .conclusion] | @tsv' | awk 'NR%8==1'",
        "12044871230\t2026-12-02\tsuccess\n12011905512\t2026-11-25\tsuccess\n11980032277\t2026-11-17\tsuccess\n11951187409\t2026-11-10\tsuccess\n11920446013\t2026-11-03\tsuccess",
    )
    c.bash(
        'for id in 12044871230 11920446013; do gh run view $id --json jobs --jq \'.jobs[] | .name + " " + .startedAt + " " + .completedAt\'; done',
        "build 2026-12-02T09:01:12Z 2026-12-02T09:22:40Z\nbuild 2026-11-03T08:58:03Z 2026-11-03T09:07:21Z",
    )
    c.say(
        "21 min 28 s on 2 Dec against 9 min 18 s on 3 Nov. Let me get a build profile locally with the same command CI runs."
    )
    c.bash(
        "./gradlew clean build --profile --offline 2>&1 | tail -4",
        "BUILD SUCCESSFUL in 17m 52s\n214 actionable tasks: 214 executed\n\nSee the profiling report at: file:///home/felix/payments-core/build/reports/profile/profile-2026-12-03-10-02-11.html",
    )
    c.bash(
        "python3 scripts/profile_top.py build/reports/profile/profile-2026-12-03-10-02-11.html | head -12",
        "task                                   duration\n:reconciler:test                       11m 04s\n:ledger:test                            2m 41s\n"
        ":api:test                               1m 12s\n:ledger:compileJava                     0m 38s\n:shared:compileJava                     0m 21s\n"
        ":api:bootJar                            0m 17s\n:reconciler:compileJava                 0m 16s\nconfiguration                           0m 44s",
    )
    c.say(
        ":reconciler:test alone takes 11 min. It was under 2 min in the old runs' logs, so something in its tests changed."
    )
    c.bash(
        "git log --oneline --since=2026-11-01 -- reconciler/src/test reconciler/build.gradle.kts",
        "8e3b7f1 reconciler: run each test class in a fresh JVM to avoid static leaks\n2c4d6e8 reconciler: testcontainers for postgres in ReconcileIT\n"
        "71aa9c3 reconciler: more fixtures for SEPA returns",
    )
    c.bash(
        "git show 8e3b7f1 -- reconciler/build.gradle.kts",
        " tasks.test {\n     useJUnitPlatform()\n+    forkEvery = 1\n+    maxParallelForks = 1\n }\n",
    )
    c.bash("find reconciler/src/test -name '*Test.java' -o -name '*IT.java' | wc -l", "187")
    c.say(
        "8e3b7f1 set forkEvery = 1: a new JVM for each of the 187 test classes, one at a time. At about "
        "3.5 s of JVM and Spring context start each, that alone is roughly 11 minutes."
    )
    c.bash(
        "git show 8e3b7f1 --format='%an%n%b' -s",
        "Tom Becker\nReconcilerCacheTest leaked a static Caffeine cache into MatchingTest; forking per class hides it.",
    )
    c.tool(
        "Read",
        {"file_path": "/home/felix/payments-core/reconciler/src/main/java/com/acme/reconciler/MatchCache.java"},
        "public final class MatchCache {\n    static final Cache<String, Match> CACHE = Caffeine.newBuilder().maximumSize(50_000).build();\n\n"
        "    static Match get(String key) { return CACHE.getIfPresent(key); }\n    static void put(String key, Match m) { CACHE.put(key, m); }\n}\n",
    )
    c.say(
        "The root cause is the static CACHE in MatchCache. Rather than fork per class, I'll add a "
        "package-private reset for tests and clear it in a JUnit extension, then drop forkEvery."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/felix/payments-core/reconciler/src/main/java/com/acme/reconciler/MatchCache.java",
            "old_string": "    static void put(String key, Match m) { CACHE.put(key, m); }",
            "new_string": "    static void put(String key, Match m) { CACHE.put(key, m); }\n\n    /** For tests: the cache is process-wide. */\n    static void clear() { CACHE.invalidateAll(); }",
        },
        "The file /home/felix/payments-core/reconciler/src/main/java/com/acme/reconciler/MatchCache.java has been updated successfully.",
    )
    c.tool(
        "Write",
        {
            "file_path": "/home/felix/payments-core/reconciler/src/test/java/com/acme/reconciler/ClearMatchCache.java",
            "content": "package com.acme.reconciler;\n\nimport org.junit.jupiter.api.extension.*;\n\n"
            "/** Registered for every test class (junit-platform.properties): the static cache must not leak between classes. */\n"
            "public class ClearMatchCache implements BeforeAllCallback {\n    @Override public void beforeAll(ExtensionContext c) { MatchCache.clear(); }\n}\n",
        },
        "File created successfully at: /home/felix/payments-core/reconciler/src/test/java/com/acme/reconciler/ClearMatchCache.java",
    )
    c.tool(
        "Write",
        {
            "file_path": "/home/felix/payments-core/reconciler/src/test/resources/junit-platform.properties",
            "content": "junit.jupiter.extensions.autodetection.enabled=true\n",
        },
        "File created successfully at: /home/felix/payments-core/reconciler/src/test/resources/junit-platform.properties",
    )
    c.bash(
        "mkdir -p reconciler/src/test/resources/META-INF/services && echo com.acme.reconciler.ClearMatchCache > reconciler/src/test/resources/META-INF/services/org.junit.jupiter.api.extension.Extension",
        "",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/felix/payments-core/reconciler/build.gradle.kts",
            "old_string": "    useJUnitPlatform()\n    forkEvery = 1\n    maxParallelForks = 1\n",
            "new_string": "    useJUnitPlatform()\n    maxParallelForks = 2\n",
        },
        "The file /home/felix/payments-core/reconciler/build.gradle.kts has been updated successfully.",
    )
    c.bash(
        "./gradlew :reconciler:test --offline 2>&1 | tail -6",
        "> Task :reconciler:test\n\nMatchingTest > matchesReturnToOriginal() FAILED\n    org.opentest4j.AssertionFailedError: expected: <M-7781> but was: <null>\n\n"
        "187 tests completed, 1 failed\n\nBUILD FAILED in 1m 58s",
        error=True,
    )
    c.say(
        "With two parallel forks, a class in the other fork can clear... no: forks are separate JVMs. The "
        "failure is inside one JVM: MatchingTest relied on a Match put by a @BeforeAll in a nested class "
        "that runs before the outer class's extension. Clearing in BeforeAll of the nested class wipes it."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/felix/payments-core/reconciler/src/test/java/com/acme/reconciler/ClearMatchCache.java",
            "old_string": "    @Override public void beforeAll(ExtensionContext c) { MatchCache.clear(); }",
            "new_string": "    @Override public void beforeAll(ExtensionContext c) {\n        if (c.getTestClass().map(k -> k.getEnclosingClass() == null).orElse(true)) MatchCache.clear();\n    }",
        },
        "The file /home/felix/payments-core/reconciler/src/test/java/com/acme/reconciler/ClearMatchCache.java has been updated successfully.",
    )
    c.bash(
        "./gradlew :reconciler:test --offline 2>&1 | tail -2",
        "BUILD SUCCESSFUL in 1m 47s\n5 actionable tasks: 2 executed, 3 up-to-date",
    )
    c.bash(
        "for i in 1 2 3; do ./gradlew :reconciler:test --offline --rerun-tasks -q 2>&1 | tail -1 || echo fail; done; echo ok",
        "ok",
    )
    c.bash(
        "free -g | head -2 && grep -n 'jvmargs' gradle.properties",
        "               total        used        free      shared  buff/cache   available\nMem:              15          6           7           0           2           9\n"
        "gradle.properties:2:org.gradle.jvmargs=-Xmx2g -XX:MaxMetaspaceSize=512m",
    )
    c.say(
        "Memory on the 8 GB runner: the Gradle daemon has 2 GB, each test fork uses up to 512 MB (the "
        "default maxHeapSize), so two forks fit. I won't raise it to 4 forks: with Testcontainers' "
        "Postgres (about 1 GB) that would be tight on 8 GB."
    )
    c.bash(
        "./gradlew clean build --offline 2>&1 | tail -2",
        "BUILD SUCCESSFUL in 6m 31s\n214 actionable tasks: 214 executed",
    )
    c.user("Great. Configuration takes 44 s too, is the configuration cache worth it?")
    c.bash(
        "./gradlew build --configuration-cache --offline 2>&1 | grep -E 'problem|Configuration cache|BUILD' | head -5",
        "Configuration cache entry stored with 3 problems.\n3 problems were found storing the configuration cache.\n"
        "- Task `:api:bootJar` of type `org.springframework.boot.gradle.tasks.bundling.BootJar`: invocation of 'Task.project' at execution time is unsupported.\nBUILD SUCCESSFUL in 5m 02s",
    )
    c.say(
        "It works with 3 warnings from a custom doLast in api/build.gradle.kts using `project` at execution time; on CI the cache would only help if it were persisted between runs, which our workflow doesn't do. I'd leave it for a separate change."
    )
    c.user("Agreed, leave it. Commit what you have.")
    c.bash(
        "git add -A && git commit -qm 'reconciler: clear MatchCache per test class instead of a JVM per class (CI 21 -> ~7 min)' && git log --oneline -1",
        "0a4f6d2 reconciler: clear MatchCache per test class instead of a JVM per class (CI 21 -> ~7 min)",
    )
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
CI build time doubled over a month; the user asked to find and fix the cause without bigger runners.

Summary:
1. Primary Request and Intent:
   Find why the CI build went from about 9 to about 21 minutes over the last month and bring it back down, without asking for bigger runners (8 GB runners; the org budget is fixed until April). Later: leave the configuration cache for a separate change and commit.

2. Key Technical Concepts:
   - Gradle --profile, test forking (forkEvery, maxParallelForks)
   - JUnit 5 extension autodetection (BeforeAllCallback)
   - Static caches leaking between test classes
   - Gradle configuration cache problems (Task.project at execution time)

3. Files and Code Sections:
   - reconciler/build.gradle.kts: removed forkEvery = 1; maxParallelForks = 2.
   - reconciler/src/main/java/.../MatchCache.java: added a package-private clear() for tests.
   - reconciler/src/test/java/.../ClearMatchCache.java (new): clears the cache before each top-level test class (not nested classes), registered via autodetection (junit-platform.properties and META-INF/services).

4. Errors and fixes:
   - mvn not found: the project uses Gradle.
   - MatchingTest failed after the first version because the extension also cleared the cache for nested classes; now only top-level classes clear it.

5. Problem Solving:
   The profile showed :reconciler:test taking about 11 minutes, caused by a recent commit that forked a new JVM for each of the ~190 test classes to hide a static cache leak. Fixing the leak and dropping per-class forks brings the local full build to about 6.5 minutes; reconciler tests are stable over repeated runs. Two forks fit in memory on the 8 GB runner alongside the Gradle daemon and the Postgres container.

6. All user messages:
   - "Our CI build went from about 9 minutes to 21 in the last month. Can you find out where the time goes and bring it back down? Don't ask for bigger runners: …"
   - "Great. Configuration takes 44 s too, is the configuration cache worth it?"
   - "Agreed, leave it. Commit what you have."

7. Pending Tasks:
   - Possibly a separate change for the configuration cache.

8. Current Work:
   Committed the fix.

9. Optional Next Step:
   Watch the next CI run's duration.
"""
    labels = [
        Label("request", "Our CI build went from about 9 minutes to 21", dropped=False),
        Label("constraint", "Don't ask for bigger runners", dropped=False),
        Label("decision", "because the org-wide budget is fixed until April", dropped=False),
        Label("request", "leave it. Commit what you have", dropped=False),
        Label("identifier", "8e3b7f1", dropped=True),  # "a recent commit"
        Label("name", "Tom Becker", dropped=True),  # who added forkEvery, and why
        Label("measurement", "11m 04s", dropped=False),  # "about 11 minutes"
        Label("measurement", "187", dropped=False),  # "~190 test classes"
        Label("measurement", "BUILD SUCCESSFUL in 6m 31s", dropped=False),  # "about 6.5 minutes"
        Label("measurement", "17m 52s", dropped=True),  # the local build before
        Label("measurement", "BUILD SUCCESSFUL in 5m 02s", dropped=True),  # with the configuration cache
        Label("identifier", "0a4f6d2", dropped=True),
        Label("error", "expected: <M-7781> but was: <null>", dropped=False),
        Label("failed command", "mvn -v", dropped=False),
        Label("edit", "forkEvery = 1", dropped=False),
        Label("number", "-Xmx2g", dropped=True),  # the daemon's heap, read in gradle.properties
        Label("decision", "I won't raise it to 4 forks", dropped=True),  # and why: Postgres' 1 GB on 8 GB
        Label("file read", "reconciler/src/main/java/com/acme/reconciler/MatchCache.java", dropped=False),
        # noise
        Label("identifier", "12044871230", dropped=True),  # the 21-minute run measured
        Label("number", "2026-11-03", dropped=False),
        Label("number", "50_000", dropped=False),
        Label("command", "free -g | head -2", dropped=False),
    ]
    return DevSession(c, summary, labels)


def log_volume() -> DevSession:
    """Go/YAML: a configuration change (structured logging with sampling) driven by measured log
    volume, the user's stated preferences with reasons, a default read in the library's source."""
    c = Conversation("/home/sven/ingest", "fresh-log-volume")
    c.user(
        "Datadog says ingest-gateway sends about 38 GB of logs a day, it's most of our bill. Cut it "
        "down. Debug logs stay off in prod because Datadog bills per GB, but keep every error and "
        "every request that takes over 1 s."
    )
    c.bash("kubectl -n ingest logs deploy/ingest-gateway --since=10m | wc -lc", " 412877 118334920")
    c.say(
        "About 413k lines and 118 MB in 10 minutes from one replica, so about 17 GB a day per replica, more than 38 GB across the 3."
    )
    c.bash(
        "kubectl -n ingest logs deploy/ingest-gateway --since=10m | jq -r '.msg' | sort | uniq -c | sort -rn | head -8",
        " 398211 request handled\n   9042 batch flushed\n   3310 upstream retry\n    998 client disconnected\n    712 schema cache refreshed\n"
        "    389 request failed\n    171 slow request\n     44 config reloaded",
    )
    c.say(
        "96% of the lines are 'request handled' at info level, one per request. Errors (request failed) are 389, slow requests 171."
    )
    c.tool(
        "Read",
        {"file_path": "/home/sven/ingest/internal/httpx/middleware.go"},
        "    28\tfunc Logging(log *zap.Logger) func(http.Handler) http.Handler {\n    29\t\treturn func(next http.Handler) http.Handler {\n"
        "    30\t\t\treturn http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {\n    31\t\t\t\tstart := time.Now()\n"
        "    32\t\t\t\trw := &statusWriter{ResponseWriter: w}\n    33\t\t\t\tnext.ServeHTTP(rw, r)\n"
        '    34\t\t\t\tlog.Info("request handled", zap.Int("status", rw.status), zap.Duration("took", time.Since(start)), zap.String("path", r.URL.Path))\n'
        "    35\t\t\t})\n",
    )
    c.tool(
        "Read",
        {"file_path": "/home/sven/ingest/config/prod.yaml"},
        "log:\n  level: info\n  format: json\n  sampling: null\nupstream:\n  timeout: 5s\n",
    )
    c.bash(
        "go doc go.uber.org/zap.SamplingConfig",
        'package zap // import "go.uber.org/zap"\n\ntype SamplingConfig struct {\n\tInitial    int\n\tThereafter int\n'
        "\tHook       func(zapcore.Entry, zapcore.SamplingDecision)\n}\n    SamplingConfig sets a sampling strategy for the logger. Sampling caps the\n"
        "    global CPU and I/O load that logging puts on your process while attempting\n    to preserve a representative subset of your logs.\n\n"
        "    If specified, the Sampler will invoke the Hook after each decision.\n\n    Values configured here are per-second. See zapcore.NewSamplerWithOptions for\n    details.",
    )
    c.say(
        "zap's sampler keys on level and message, per second: with Initial 10 / Thereafter 100 it "
        "keeps the first 10 'request handled' lines each second, then 1 in 100. It would also sample "
        "'request failed' if errors spike, which you don't want. So I'll not use zap's global sampler; "
        "instead log 'request handled' only for status >= 500 or took > 1 s, and a 1% sample of the rest."
    )
    c.user("1% is fine. Make the threshold and the rate configurable in the yaml, ops will want to tune them.")
    c.tool(
        "Edit",
        {
            "file_path": "/home/sven/ingest/config/prod.yaml",
            "old_string": "  sampling: null\n",
            "new_string": "  sampling: null\n  requests:\n    slow_after: 1s\n    sample_rate: 0.01\n",
        },
        "The file /home/sven/ingest/config/prod.yaml has been updated successfully.",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/sven/ingest/internal/httpx/middleware.go",
            "old_string": "func Logging(log *zap.Logger) func(http.Handler) http.Handler {",
            "new_string": 'type RequestLogConfig struct {\n\tSlowAfter  time.Duration `yaml:"slow_after"`\n\tSampleRate float64       `yaml:"sample_rate"`\n}\n\n'
            "func Logging(log *zap.Logger, cfg RequestLogConfig) func(http.Handler) http.Handler {",
        },
        "The file /home/sven/ingest/internal/httpx/middleware.go has been updated successfully.",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/sven/ingest/internal/httpx/middleware.go",
            "old_string": '\t\t\t\tlog.Info("request handled", zap.Int("status", rw.status), zap.Duration("took", time.Since(start)), zap.String("path", r.URL.Path))',
            "new_string": "\t\t\t\ttook := time.Since(start)\n\t\t\t\tif rw.status < 500 && took <= cfg.SlowAfter && rand.Float64() >= cfg.SampleRate {\n\t\t\t\t\treturn\n\t\t\t\t}\n"
            '\t\t\t\tlog.Info("request handled", zap.Int("status", rw.status), zap.Duration("took", took), zap.String("path", r.URL.Path))',
        },
        "The file /home/sven/ingest/internal/httpx/middleware.go has been updated successfully.",
    )
    c.bash(
        "go build ./... ",
        "# github.com/acme/ingest/cmd/gateway\ncmd/gateway/main.go:63:31: not enough arguments in call to httpx.Logging\n\thave (*zap.Logger)\n\twant (*zap.Logger, httpx.RequestLogConfig)",
        error=True,
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/sven/ingest/cmd/gateway/main.go",
            "old_string": "\tmux := httpx.Logging(logger)(router)",
            "new_string": "\tmux := httpx.Logging(logger, cfg.Log.Requests)(router)",
        },
        "The file /home/sven/ingest/cmd/gateway/main.go has been updated successfully.",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/sven/ingest/internal/config/config.go",
            "old_string": '\tFormat   string `yaml:"format"`',
            "new_string": '\tFormat   string                 `yaml:"format"`\n\tRequests httpx.RequestLogConfig `yaml:"requests"`',
        },
        "The file /home/sven/ingest/internal/config/config.go has been updated successfully.",
    )
    c.bash(
        "go build ./... && go test ./internal/... 2>&1 | tail -4",
        "ok  \tgithub.com/acme/ingest/internal/config\t0.019s\nok  \tgithub.com/acme/ingest/internal/httpx\t0.142s\nok  \tgithub.com/acme/ingest/internal/pipeline\t2.306s",
    )
    c.say(
        "A config without the new block gets SlowAfter 0 and SampleRate 0, so every request would count as slow and be logged, the old behaviour. That is the safe default for staging, which has no `requests` block."
    )
    c.tool(
        "Write",
        {
            "file_path": "/home/sven/ingest/internal/httpx/middleware_test.go",
            "content": "func TestLoggingKeepsErrorsAndSlowRequests(t *testing.T) {\n\tcore, logs := observer.New(zap.InfoLevel)\n"
            '\tcfg := RequestLogConfig{SlowAfter: time.Second, SampleRate: 0}\n\t// 500 and a slow 200 are logged, a fast 200 is not\n\t// ...\n\tif got := logs.Len(); got != 2 {\n\t\tt.Fatalf("logged %d lines, want 2", got)\n\t}\n}\n',
        },
        "File created successfully at: /home/sven/ingest/internal/httpx/middleware_test.go",
    )
    c.bash(
        "go test ./internal/httpx/ -run TestLogging -v 2>&1 | tail -3",
        "--- PASS: TestLoggingKeepsErrorsAndSlowRequests (1.01s)\nPASS\nok  \tgithub.com/acme/ingest/internal/httpx\t1.166s",
    )
    c.bash(
        "golangci-lint run ./internal/httpx/",
        "internal/httpx/middleware.go:41:38: G404: Use of weak random number generator (math/rand or math/rand/v2 instead of crypto/rand) (gosec)",
        error=True,
    )
    c.say(
        "gosec's G404 is a false positive here: sampling logs needs no cryptographic randomness. Adding a `//nolint:gosec` with the reason."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/sven/ingest/internal/httpx/middleware.go",
            "old_string": "rand.Float64() >= cfg.SampleRate {",
            "new_string": "rand.Float64() >= cfg.SampleRate { //nolint:gosec // sampling logs, not security",
        },
        "The file /home/sven/ingest/internal/httpx/middleware.go has been updated successfully.",
    )
    c.bash("golangci-lint run ./... && echo clean", "clean")
    c.bash(
        "kubectl -n ingest-staging rollout restart deploy/ingest-gateway && sleep 600 && kubectl -n ingest-staging logs deploy/ingest-gateway --since=10m | wc -lc",
        "deployment.apps/ingest-gateway restarted\n  5120 1487310",
    )
    c.say(
        "On staging with the prod settings applied by hand: 5,120 lines and 1.5 MB in 10 minutes, from about 118 MB: roughly 98.7% less."
    )
    c.user("Nice. Open a PR, title 'log: keep errors and slow requests, sample 1% of the rest'.")
    c.bash(
        "git switch -c log-sampling && git commit -qam 'log: keep errors and slow requests, sample 1% of the rest' && git push -qu origin log-sampling && gh pr create --fill 2>&1 | tail -1",
        "https://github.com/acme/ingest/pull/318",
    )
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
The user wanted to cut the gateway's log volume (most of the Datadog bill) while keeping errors and slow requests.

Summary:
1. Primary Request and Intent:
   Reduce ingest-gateway's log volume (~38 GB/day in Datadog). Debug logs stay off in prod (billed per GB). Every error and every request over 1 s must still be logged. A 1% sample of other requests is fine; the threshold and rate must be configurable in the YAML for ops. Open a PR titled "log: keep errors and slow requests, sample 1% of the rest".

2. Key Technical Concepts:
   - zap sampling (per level and message, per second) vs explicit per-request sampling
   - Config-driven thresholds (slow_after, sample_rate)
   - gosec G404 for math/rand

3. Files and Code Sections:
   - internal/httpx/middleware.go: RequestLogConfig{SlowAfter, SampleRate}; Logging skips "request handled" unless status >= 500, took > SlowAfter, or the random sample hits; nolint for G404 with a reason.
   - config/prod.yaml: log.requests.slow_after: 1s and sample_rate: 0.01.
   - internal/config/config.go: Requests field in the log config.
   - cmd/gateway/main.go: passes cfg.Log.Requests to Logging.
   - internal/httpx/middleware_test.go: TestLoggingKeepsErrorsAndSlowRequests.

4. Errors and fixes:
   - Build error after the signature change (not enough arguments to httpx.Logging in main.go); fixed.
   - golangci-lint G404 (weak random); suppressed with a justification.

5. Problem Solving:
   Almost all log lines were the per-request "request handled" info line. zap's built-in sampler was rejected because it could also drop error lines during spikes. On staging the log volume dropped by roughly 99%.

6. All user messages:
   - "Datadog says ingest-gateway sends about 38 GB of logs a day, it's most of our bill. Cut it down. Debug logs stay off in prod because Datadog bills per GB, but keep every error and every request that takes over 1 s."
   - "1% is fine. Make the threshold and the rate configurable in the yaml, ops will want to tune them."
   - "Nice. Open a PR, title 'log: keep errors and slow requests, sample 1% of the rest'."

7. Pending Tasks:
   - Review of the PR.

8. Current Work:
   Pushed the branch log-sampling and opened the PR.

9. Optional Next Step:
   None.
"""
    labels = [
        Label("request", "Cut it down", dropped=False),
        Label("constraint", "Debug logs stay off in prod", dropped=False),
        Label("decision", "because Datadog bills per GB", dropped=False),
        Label("constraint", "keep every error and every request that takes over 1 s", dropped=False),
        Label("request", "Make the threshold and the rate configurable in the yaml", dropped=False),
        Label("measurement", "398211 request handled", dropped=False),  # "almost all log lines"
        Label("measurement", "118334920", dropped=True),  # bytes in 10 minutes from one replica
        Label("measurement", "389 request failed", dropped=True),
        Label("measurement", "171 slow request", dropped=True),
        Label("measurement", "roughly 98.7% less", dropped=False),  # "dropped by roughly 99%"
        Label("measurement", "5,120 lines and 1.5 MB in 10 minutes", dropped=True),  # the after figures
        Label(
            "number", "Values configured here are per-second", dropped=False
        ),  # "(per level and message, per second)"
        Label(
            "decision", "A config without the new block gets SlowAfter 0 and SampleRate 0", dropped=True
        ),  # staging's default
        Label("error", "not enough arguments in call to httpx.Logging", dropped=False),
        Label("error", "G404", dropped=False),
        Label("edit", "sample_rate: 0.01", dropped=False),
        Label("file edited", "cmd/gateway/main.go", dropped=False),
        Label("url", "https://github.com/acme/ingest/pull/318", dropped=True),
        Label("number", "timeout: 5s", dropped=False),  # read in prod.yaml, unrelated to the task
        Label("number", "17 GB a day per replica", dropped=False),  # hand arithmetic
        # noise
        Label("command", "go build ./...", dropped=False),
        Label("number", "1.166s", dropped=False),
        Label("number", "412877", dropped=False),
    ]
    return DevSession(c, summary, labels)


def mysql_index() -> DevSession:
    """SQL/MySQL: a slow admin report timed with EXPLAIN ANALYZE, an index added online with
    gh-ost for the user's stated reason, row counts and timings before and after, a failed cut-over."""
    c = Conversation("/home/amara/marketplace", "fresh-mysql-index")
    c.user(
        "The admin 'seller payouts' page times out (30 s gateway limit). It's the query in "
        "app/Reports/SellerPayouts.php. Make it fast. Any schema change on order_items goes through "
        "gh-ost, never a plain ALTER, because the table is huge and a blocking ALTER stalls replication."
    )
    c.tool(
        "Read",
        {"file_path": "/home/amara/marketplace/app/Reports/SellerPayouts.php"},
        "    22\t        $sql = <<<SQL\n    23\t            SELECT s.id, s.name, SUM(oi.price_cents - oi.fee_cents) AS payout_cents, COUNT(*) AS items\n"
        "    24\t            FROM order_items oi\n    25\t            JOIN sellers s ON s.id = oi.seller_id\n"
        "    26\t            WHERE oi.status = 'delivered' AND oi.delivered_at >= ? AND oi.delivered_at < ?\n"
        "    27\t            GROUP BY s.id, s.name\n    28\t            ORDER BY payout_cents DESC\n    29\t        SQL;\n",
    )
    c.bash(
        "mysql -h replica-2 marketplace -e \"SELECT table_rows, ROUND(data_length/1024/1024/1024,1) AS data_gb, ROUND(index_length/1024/1024/1024,1) AS index_gb FROM information_schema.tables WHERE table_name='order_items'\"",
        "+------------+---------+----------+\n| table_rows | data_gb | index_gb |\n+------------+---------+----------+\n|  312480551 |    88.4 |     41.7 |\n+------------+---------+----------+",
    )
    c.bash(
        "mysql -h replica-2 marketplace -e 'SHOW INDEX FROM order_items' | awk '{print $3, $4, $5}' | column -t",
        "Key_name              Seq_in_index  Column_name\nPRIMARY               1             id\nidx_order             1             order_id\n"
        "idx_seller           1             seller_id\nidx_status            1             status\nidx_product           1             product_id",
    )
    c.bash(
        "time mysql -h replica-2 marketplace -e \"EXPLAIN ANALYZE SELECT s.id, SUM(oi.price_cents - oi.fee_cents), COUNT(*) FROM order_items oi JOIN sellers s ON s.id = oi.seller_id WHERE oi.status='delivered' AND oi.delivered_at >= '2026-11-01' AND oi.delivered_at < '2026-12-01' GROUP BY s.id\\G\"",
        "*************************** 1. row ***************************\nEXPLAIN: -> Table scan on <temporary>  (actual time=48211..48233 rows=18244 loops=1)\n"
        "    -> Aggregate using temporary table  (actual time=48211..48211 rows=18244 loops=1)\n"
        "        -> Nested loop inner join  (cost=2.1e+6 rows=4.7e+6) (actual time=0.91..46102 rows=6904113 loops=1)\n"
        "            -> Filter: ((oi.delivered_at >= TIMESTAMP'2026-11-01 00:00:00') and (oi.delivered_at < TIMESTAMP'2026-12-01 00:00:00'))  (cost=1.1e+6 rows=4.7e+6) (actual time=0.88..39870 rows=6904113 loops=1)\n"
        "                -> Index lookup on oi using idx_status (status='delivered')  (cost=1.1e+6 rows=281232496) (actual time=0.87..31220 rows=281077340 loops=1)\n"
        "            -> Single-row index lookup on s using PRIMARY (id=oi.seller_id)  (cost=0.25 rows=1) (actual time=0.001..0.001 rows=1 loops=6904113)\n\n"
        "real\t0m48.402s",
    )
    c.say(
        "48.4 s. MySQL uses idx_status, which matches 281 million of the 312 million rows (90% are delivered), "
        "then filters by date down to 6.9 million. A composite index (status, delivered_at, seller_id, "
        "price_cents, fee_cents) would make it a range scan that is also covering."
    )
    c.user(
        "Covering is a lot of extra index on 312M rows. Is (status, delivered_at) alone good enough? Disk on the primary is at 71%."
    )
    c.bash(
        "mysql -h replica-2 -e \"SELECT ROUND(SUM(data_length+index_length)/1024/1024/1024) FROM information_schema.tables WHERE table_schema='marketplace'\"; df -h /var/lib/mysql | tail -1",
        "+---+\n| 412 |\n+---+\n/dev/nvme1n1    1.0T  716G  308G  71% /var/lib/mysql",
    )
    c.bash(
        'mysql -h sandbox-1 marketplace -e "ALTER TABLE order_items_sample ADD INDEX idx_status_delivered (status, delivered_at); ANALYZE TABLE order_items_sample;" && time mysql -h sandbox-1 marketplace < /tmp/q_sample.sql | tail -1',
        "Table\tOp\tMsg_type\tMsg_text\nmarketplace.order_items_sample\tanalyze\tstatus\tOK\n18244\n\nreal\t0m3.911s",
    )
    c.say(
        "On the sandbox's 10% sample, (status, delivered_at) brings the query from 4.6 s to 3.9 s only: the "
        "6.9M-row lookups back into the clustered index dominate. The covering version on the same sample: "
        "0.31 s. Estimated size of the covering index at full scale: about 14 GB; the two-column one about 8 GB."
    )
    c.user(
        "OK, covering then, 14 GB is fine with 308 free. Run it with gh-ost against the primary, but --postpone-cut-over, I'll do the cut-over myself at night."
    )
    c.bash("gh-ost --version", "bash: gh-ost: command not found", error=True)
    c.bash("ssh db-tools-1 'gh-ost --version'", "1.1.6")
    c.bash(
        "ssh db-tools-1 'gh-ost --host=replica-2 --database=marketplace --table=order_items "
        '--alter="ADD INDEX idx_payouts (status, delivered_at, seller_id, price_cents, fee_cents)" '
        "--max-load=Threads_running=40 --chunk-size=2000 --postpone-cut-over-flag-file=/tmp/ghost.postpone.flag "
        "--throttle-control-replicas=replica-1,replica-3 --max-lag-millis=1500 --execute 2>&1 | tail -5'",
        "Copy: 0/312480551 0.0%; Applied: 0; Backlog: 0/1000; Time: 0s(total), 0s(copy); streamer: mysql-bin.048812:4211; Lag: 0.01s, HeartbeatLag: 0.02s, State: migrating; ETA: N/A\n"
        "FATAL 2026-12-03 11:20:44 ERROR Error 1045 (28000): Access denied for user 'ghost'@'10.4.2.18' (using password: NO)",
        error=True,
    )
    c.say("gh-ost needs credentials; the ghost user's password is in /etc/gh-ost.cnf on db-tools-1 per the runbook.")
    c.bash(
        "ssh db-tools-1 'gh-ost --conf=/etc/gh-ost.cnf --host=replica-2 --database=marketplace --table=order_items "
        '--alter="ADD INDEX idx_payouts (status, delivered_at, seller_id, price_cents, fee_cents)" --max-load=Threads_running=40 --chunk-size=2000 '
        "--postpone-cut-over-flag-file=/tmp/ghost.postpone.flag --throttle-control-replicas=replica-1,replica-3 --max-lag-millis=1500 --execute > /var/log/ghost-order_items.log 2>&1 &'; "
        "sleep 120; ssh db-tools-1 'tail -1 /var/log/ghost-order_items.log'",
        "Copy: 1712000/312480551 0.5%; Applied: 2210; Backlog: 0/1000; Time: 2m0s(total), 1m58s(copy); streamer: mysql-bin.048812:9981232; Lag: 0.41s, HeartbeatLag: 0.39s, State: migrating; ETA: 6h02m11s",
    )
    c.say(
        "Running: 0.5% after 2 minutes, ETA about 6 hours, replica lag 0.4 s, under the 1.5 s limit. Cut-over is postponed until you delete /tmp/ghost.postpone.flag on db-tools-1."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/amara/marketplace/app/Reports/SellerPayouts.php",
            "old_string": "            FROM order_items oi\n",
            "new_string": "            FROM order_items oi FORCE INDEX (idx_payouts)\n",
        },
        "The file /home/amara/marketplace/app/Reports/SellerPayouts.php has been updated successfully.",
    )
    c.user(
        "No FORCE INDEX, the optimizer will pick it once it exists, and FORCE INDEX breaks the day someone renames it."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/amara/marketplace/app/Reports/SellerPayouts.php",
            "old_string": "            FROM order_items oi FORCE INDEX (idx_payouts)\n",
            "new_string": "            FROM order_items oi\n",
        },
        "The file /home/amara/marketplace/app/Reports/SellerPayouts.php has been updated successfully.",
    )
    c.bash("git status --short", "")
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
The seller payouts admin report times out; I analysed the query plan, evaluated index options with the user, and started an online index build with gh-ost.

Summary:
1. Primary Request and Intent:
   Make the seller payouts admin page (query in app/Reports/SellerPayouts.php) fast; it times out at the 30 s gateway limit. Any schema change to order_items must go through gh-ost, never a plain ALTER, because the table is huge and a blocking ALTER stalls replication. The user chose the covering index and asked to run gh-ost against the primary with the cut-over postponed (they will do it at night). No FORCE INDEX hints in the query.

2. Key Technical Concepts:
   - EXPLAIN ANALYZE; low-selectivity index (status) vs composite range index
   - Covering indexes to avoid clustered-index lookups
   - gh-ost online schema change with a postponed cut-over flag file, replica lag throttling

3. Files and Code Sections:
   - app/Reports/SellerPayouts.php: aggregates payouts from order_items joined to sellers by delivered date; a FORCE INDEX hint was added and then removed at the user's request (no net change).

4. Errors and fixes:
   - gh-ost not installed locally; it runs on db-tools-1.
   - The first gh-ost run failed with access denied for the ghost user; reran with the config file holding its credentials.

5. Problem Solving:
   The query took about 48 s, scanning ~281M rows via idx_status and filtering to ~6.9M by date. On a sample, a two-column (status, delivered_at) index barely helped, while the covering index made it roughly 15 times faster. The covering index is estimated at about 14 GB, which fits in the primary's free disk. gh-ost is now copying, with an ETA of around 6 hours and low replica lag.

6. All user messages:
   - "The admin 'seller payouts' page times out (30 s gateway limit). It's the query in app/Reports/SellerPayouts.php. Make it fast. Any schema change on order_items goes through gh-ost, never a plain ALTER, because …"
   - The user asked whether (status, delivered_at) alone was enough, given the primary's disk at 71%.
   - "OK, covering then, 14 GB is fine with 308 free. Run it with gh-ost against the primary, but --postpone-cut-over, I'll do the cut-over myself at night."
   - "No FORCE INDEX, the optimizer will pick it once it exists, and FORCE INDEX breaks the day someone renames it."

7. Pending Tasks:
   - The user performs the gh-ost cut-over at night.
   - Verify the report's speed after the cut-over.

8. Current Work:
   gh-ost is building idx_payouts (status, delivered_at, seller_id, price_cents, fee_cents) on order_items; the FORCE INDEX edit was reverted.

9. Optional Next Step:
   Monitor the gh-ost log and re-run EXPLAIN ANALYZE after the cut-over.
"""
    labels = [
        Label("request", "The admin 'seller payouts' page times out", dropped=False),
        Label("constraint", "never a plain ALTER", dropped=False),
        Label("decision", "a blocking ALTER stalls replication", dropped=False),  # "because …", kept in the intent
        Label("constraint", "I'll do the cut-over myself at night", dropped=False),
        Label("constraint", "No FORCE INDEX", dropped=False),
        Label("decision", "FORCE INDEX breaks the day someone renames it", dropped=True),
        Label("measurement", "312480551", dropped=True),  # the table's rows: "huge"
        Label("measurement", "0m48.402s", dropped=False),  # "about 48 s"
        Label("measurement", "rows=6904113", dropped=False),  # "~6.9M"
        Label("measurement", "0m3.911s", dropped=True),  # the two-column index on the sample
        Label("measurement", "0.31 s", dropped=True),  # the covering index on the sample: "roughly 15 times"
        Label("measurement", "ETA: 6h02m11s", dropped=False),
        Label("path", "/tmp/ghost.postpone.flag", dropped=True),  # the file to delete for the cut-over
        Label("path", "/var/log/ghost-order_items.log", dropped=True),  # where to watch it
        Label("error", "Access denied for user 'ghost'", dropped=False),
        Label("failed command", "gh-ost --version", dropped=False),
        Label("edit", "FORCE INDEX (idx_payouts)", dropped=False),
        Label("path", "/etc/gh-ost.cnf", dropped=True),  # where the credentials are
        # noise
        Label("number", "10.4.2.18", dropped=False),
        Label("number", "mysql-bin.048812", dropped=False),
        Label("command", "git status --short", dropped=False),
        Label("number", "2000", dropped=False),
    ]
    return DevSession(c, summary, labels)


def android_crash() -> DevSession:
    """Kotlin/Android: a crash from a Crashlytics stack trace, reproduced on an emulator after
    several failed commands, the cause in a lifecycle race, the user's rule on the fix's scope."""
    c = Conversation("/home/lea/notes-android", "fresh-android-crash")
    c.user(
        "Top crash in 5.12.0 on Crashlytics: IllegalStateException in NoteEditorFragment, about 2.3% "
        "of sessions. Stack trace below. Fix it in a way we can ship as a 5.12.1 hotfix, so nothing "
        "beyond the fix itself.\n\nFatal Exception: java.lang.IllegalStateException: Fragment NoteEditorFragment{8c1f2e0} not attached to a context.\n"
        "    at androidx.fragment.app.Fragment.requireContext(Fragment.java:972)\n"
        "    at com.acme.notes.editor.NoteEditorFragment.showSavedToast(NoteEditorFragment.kt:214)\n"
        "    at com.acme.notes.editor.NoteEditorFragment$save$1.invokeSuspend(NoteEditorFragment.kt:188)\n"
        "    at kotlin.coroutines.jvm.internal.BaseContinuationImpl.resumeWith(ContinuationImpl.kt:33)\n"
        "    at kotlinx.coroutines.DispatchedTask.run(DispatchedTask.kt:108)"
    )
    c.tool(
        "Read",
        {"file_path": "/home/lea/notes-android/app/src/main/java/com/acme/notes/editor/NoteEditorFragment.kt"},
        "   180\t    private fun save() {\n   181\t        GlobalScope.launch(Dispatchers.Main) {\n"
        "   182\t            val note = binding.editor.text.toString()\n   183\t            withContext(Dispatchers.IO) { repository.save(noteId, note) }\n"
        + _lines("   {i}\t", 4, 184)
        + "\n   188\t            showSavedToast()\n   189\t        }\n   190\t    }\n"
        + _lines("   {i}\t", 23, 191)
        + "\n   214\t    private fun showSavedToast() = Toast.makeText(requireContext(), R.string.saved, Toast.LENGTH_SHORT).show()\n",
    )
    c.say(
        "save() runs in GlobalScope, so the coroutine outlives the fragment. If the user leaves the editor "
        "while repository.save is still writing (slow on large notes), the fragment is detached when "
        "showSavedToast calls requireContext(). The fix is to launch in viewLifecycleOwner.lifecycleScope; "
        "but then leaving the screen would cancel the save itself, which loses the note."
    )
    c.bash(
        "git log --oneline -3 -- app/src/main/java/com/acme/notes/editor/NoteEditorFragment.kt",
        "a3e5c71 editor: save on back press\n5b2f0d9 editor: toast after save\n9e1d3c8 editor: move save off the main thread",
    )
    c.bash(
        "./gradlew :app:testDebugUnitTest --tests '*NoteEditor*'",
        "ERROR: JAVA_HOME is not set and no 'java' command could be found in your PATH.",
        error=True,
    )
    c.bash(
        "export JAVA_HOME=/opt/android-studio/jbr && ./gradlew :app:testDebugUnitTest --tests '*NoteEditor*' 2>&1 | tail -3",
        "BUILD SUCCESSFUL in 1m 22s\n31 actionable tasks: 9 executed, 22 up-to-date",
    )
    c.bash("adb devices", "bash: adb: command not found", error=True)
    c.bash("~/Android/Sdk/platform-tools/adb devices", "List of devices attached\n")
    c.bash("~/Android/Sdk/emulator/emulator -list-avds", "Pixel_7_API_34\nPixel_4a_API_30")
    c.bash(
        "~/Android/Sdk/emulator/emulator -avd Pixel_4a_API_30 -no-window -no-audio &>/tmp/emu.log & sleep 60; ~/Android/Sdk/platform-tools/adb wait-for-device && ~/Android/Sdk/platform-tools/adb devices",
        "List of devices attached\nemulator-5554\tdevice",
    )
    c.bash("./gradlew :app:installDebug 2>&1 | tail -2", "Installed on 1 device.\n\nBUILD SUCCESSFUL in 48s")
    c.bash(
        "~/Android/Sdk/platform-tools/adb shell am instrument -w -e class com.acme.notes.editor.SaveAndLeaveTest com.acme.notes.test/androidx.test.runner.AndroidJUnitRunner",
        "com.acme.notes.editor.SaveAndLeaveTest:\nError in leaveWhileSaving(com.acme.notes.editor.SaveAndLeaveTest):\n"
        "java.lang.IllegalStateException: Fragment NoteEditorFragment{3d9a7b1} not attached to a context.\n\tat androidx.fragment.app.Fragment.requireContext(Fragment.java:972)\n\n"
        "Tests run: 1,  Failures: 1",
        error=True,
    )
    c.say("Reproduced with an instrumented test that saves a 2 MB note and presses back immediately (API 30 emulator).")
    c.user(
        "The save must survive leaving the screen, notes are the whole product. Keep it minimal: don't "
        "move save into a ViewModel or WorkManager now, that's the 5.13 refactor (NOTES-1022)."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/lea/notes-android/app/src/main/java/com/acme/notes/editor/NoteEditorFragment.kt",
            "old_string": "    private fun showSavedToast() = Toast.makeText(requireContext(), R.string.saved, Toast.LENGTH_SHORT).show()",
            "new_string": "    // The save outlives the fragment (it must not be cancelled): only toast while attached.\n"
            "    private fun showSavedToast() {\n        val context = context ?: return\n        Toast.makeText(context, R.string.saved, Toast.LENGTH_SHORT).show()\n    }",
        },
        "The file /home/lea/notes-android/app/src/main/java/com/acme/notes/editor/NoteEditorFragment.kt has been updated successfully.",
    )
    c.bash(
        "grep -n 'requireContext\\|requireActivity' app/src/main/java/com/acme/notes/editor/NoteEditorFragment.kt",
        "97:        val imm = requireContext().getSystemService(InputMethodManager::class.java)\n"
        "151:        requireActivity().title = note.title",
    )
    c.say(
        "Lines 97 and 151 run in onViewCreated and a lifecycle-bound observer, so they cannot run detached. Only the toast was reachable after detach."
    )
    c.bash(
        "./gradlew :app:installDebug -q && ~/Android/Sdk/platform-tools/adb shell am instrument -w -e class com.acme.notes.editor.SaveAndLeaveTest com.acme.notes.test/androidx.test.runner.AndroidJUnitRunner",
        "com.acme.notes.editor.SaveAndLeaveTest:.\n\nTime: 4.812\n\nOK (1 test)",
    )
    c.bash(
        '~/Android/Sdk/platform-tools/adb shell run-as com.acme.notes sqlite3 databases/notes.db "select length(body) from notes order by updated_at desc limit 1"',
        "/system/bin/sh: sqlite3: inaccessible or not found",
        error=True,
    )
    c.bash(
        '~/Android/Sdk/platform-tools/adb exec-out run-as com.acme.notes cat databases/notes.db > /tmp/notes.db && sqlite3 /tmp/notes.db "select length(body) from notes order by updated_at desc limit 1"',
        "2097152",
    )
    c.say("The 2 MB note (2,097,152 characters) was saved completely after leaving the screen.")
    c.bash(
        "./gradlew :app:lintDebug 2>&1 | grep -E 'errors|warnings' | tail -1",
        "Lint found 0 errors, 41 warnings (41 baselined)",
    )
    c.bash(
        "grep -n 'versionCode\\|versionName' app/build.gradle.kts",
        '14:        versionCode = 51200\n15:        versionName = "5.12.0"',
    )
    c.user("Bump to 5.12.1 and commit on release/5.12.")
    c.tool(
        "Edit",
        {
            "file_path": "/home/lea/notes-android/app/build.gradle.kts",
            "old_string": '        versionCode = 51200\n        versionName = "5.12.0"',
            "new_string": '        versionCode = 51201\n        versionName = "5.12.1"',
        },
        "The file /home/lea/notes-android/app/build.gradle.kts has been updated successfully.",
    )
    c.bash(
        "git switch release/5.12 2>&1 | tail -1 && git add -A && git commit -qm 'editor: no toast after detach (crash in 5.12.0); 5.12.1' && git log --oneline -1",
        "error: Your local changes to the following files would be overwritten by checkout:\n\tapp/build.gradle.kts\nPlease commit your changes or stash them before you switch branches.\nAborting",
        error=True,
    )
    c.bash(
        "git stash && git switch release/5.12 && git stash pop && git add -A && git commit -qm 'editor: no toast after detach (crash in 5.12.0); 5.12.1' && git log --oneline -1",
        "Saved working directory and index state WIP on main: a3e5c71 editor: save on back press\nSwitched to branch 'release/5.12'\n"
        "On branch release/5.12\nChanges not staged for commit:\n\tmodified:   app/build.gradle.kts\n\tmodified:   app/src/main/java/com/acme/notes/editor/NoteEditorFragment.kt\n"
        "Dropped refs/stash@{0} (7f1d3e2a)\n6d0c9b4 editor: no toast after detach (crash in 5.12.0); 5.12.1",
    )
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
A crash fix for a hotfix release of an Android notes app: IllegalStateException from requireContext() after the editor fragment detached.

Summary:
1. Primary Request and Intent:
   Fix the top Crashlytics crash in 5.12.0 (IllegalStateException "not attached to a context" in NoteEditorFragment) as a minimal 5.12.1 hotfix. The save must survive leaving the screen; no move to a ViewModel or WorkManager (planned for 5.13). Then bump to 5.12.1 and commit on release/5.12.

2. Key Technical Concepts:
   - Coroutines launched in GlobalScope outliving a Fragment
   - requireContext() vs nullable context after detach
   - Instrumented tests on an emulator; adb run-as

3. Files and Code Sections:
   - app/src/main/java/com/acme/notes/editor/NoteEditorFragment.kt: showSavedToast now returns early when the fragment has no context; the save itself still runs to completion.
     ```kotlin
     private fun showSavedToast() {
         val context = context ?: return
         Toast.makeText(context, R.string.saved, Toast.LENGTH_SHORT).show()
     }
     ```
   - app/build.gradle.kts: version 5.12.1.

4. Errors and fixes:
   - Gradle could not find Java (JAVA_HOME unset): used Android Studio's JBR.
   - adb not on PATH: used the SDK's platform-tools path.
   - sqlite3 not on the emulator: pulled the database and queried it locally.
   - git switch to release/5.12 refused because of local changes; stashed, switched, popped, committed.

5. Problem Solving:
   The crash happens when the user leaves the editor while a save is still running: the GlobalScope coroutine calls showSavedToast after detach. Switching to a lifecycle scope was rejected because it would cancel the save. An instrumented test saving a large note and pressing back reproduced the crash and passes after the fix; the note was stored completely. Other requireContext/requireActivity calls in the fragment only run while attached. Lint shows no new issues.

6. All user messages:
   - The user reported the top crash in 5.12.0 with its stack trace and asked for a fix shippable as a 5.12.1 hotfix, nothing beyond the fix.
   - "The save must survive leaving the screen, notes are the whole product. Keep it minimal: don't move save into a ViewModel or WorkManager now, that's the 5.13 refactor (NOTES-1022)."
   - "Bump to 5.12.1 and commit on release/5.12."

7. Pending Tasks:
   - None.

8. Current Work:
   Committed the fix and version bump on release/5.12.

9. Optional Next Step:
   Build the release and hand it to QA.
"""
    labels = [
        Label("request", "Fix it in a way we can ship as a 5.12.1 hotfix", dropped=False),
        Label("constraint", "The save must survive leaving the screen", dropped=False),
        Label("constraint", "don't move save into a ViewModel or WorkManager now", dropped=False),
        Label("identifier", "NOTES-1022", dropped=False),
        Label("measurement", "about 2.3% of sessions", dropped=True),
        Label("decision", "but then leaving the screen would cancel the save itself", dropped=False),
        Label("error", "not attached to a context", dropped=False),
        Label("path", "NoteEditorFragment.kt:214", dropped=True),  # where the crash is thrown
        Label("identifier", "6d0c9b4", dropped=True),
        Label("identifier", "a3e5c71", dropped=True),  # "save on back press", the commit the race came with
        Label("failed command", "adb devices", dropped=False),
        Label("error", "JAVA_HOME is not set", dropped=False),
        Label("name", "/opt/android-studio/jbr", dropped=True),  # the JAVA_HOME that works
        Label("name", "Pixel_4a_API_30", dropped=True),  # the emulator that reproduces it
        Label("measurement", "2097152", dropped=False),  # "stored completely"
        Label("edit", "val context = context ?: return", dropped=False),
        Label("edit", "versionCode = 51201", dropped=True),  # "version 5.12.1": the code is not said
        Label("file edited", "app/build.gradle.kts", dropped=False),
        # noise
        Label("number", "972", dropped=False),
        Label("number", "7f1d3e2a", dropped=False),
        Label("command", "git stash && git switch release/5.12", dropped=False),
        Label("number", "5554", dropped=False),
    ]
    return DevSession(c, summary, labels)


def nan_loss() -> DevSession:
    """Python/PyTorch: a debugging session with many failed commands (a missing tool, CUDA out of
    memory, a wrong flag), a NaN loss traced to fp16 overflow in one layer, timings and the user's
    reason for keeping mixed precision."""
    c = Conversation("/home/omar/ranker", "fresh-nan-loss")
    c.user(
        "Training of the ranker goes NaN around step 1,800 since we switched to the bigger batch. "
        "Find out why. Keep mixed precision, without it an epoch takes 3x longer and we only have the "
        "A10 box until Friday."
    )
    c.bash("nvidia-smi", "bash: nvidia-smi: command not found", error=True)
    c.bash(
        "ssh a10-box nvidia-smi --query-gpu=name,memory.total,memory.used --format=csv",
        "name, memory.total [MiB], memory.used [MiB]\nNVIDIA A10, 23028 MiB, 2 MiB",
    )
    c.bash(
        "ssh a10-box 'cd ranker && git log --oneline -3'",
        "e90b4d1 train: batch 512 -> 2048, lr scaled linearly\n0d4e2f9 model: add cross features\n7c8a1b3 data: dedupe queries",
    )
    c.tool(
        "Read",
        {"file_path": "/home/omar/ranker/configs/base.yaml"},
        "model:\n  hidden: 768\n  layers: 6\n  dropout: 0.1\ntrain:\n  batch_size: 2048\n  lr: 0.0016\n  warmup_steps: 500\n"
        "  amp: fp16\n  grad_clip: null\n  loss_scale: dynamic\n",
    )
    c.bash(
        "ssh a10-box 'cd ranker && python train.py --config configs/base.yaml --max-steps 2000 --log-every 100 2>&1 | tail -25'",
        "\n".join(f"step {i}00 loss {0.69 - i * 0.04:.4f} grad_norm {3.0 + i * 0.1:.1f}" for i in range(1, 10))
        + "\nstep 1000 loss 0.3305 grad_norm 4.8\nstep 1100 loss 0.3241 grad_norm 7.9\nstep 1200 loss 0.3198 grad_norm 12.6\n"
        "step 1300 loss 0.3187 grad_norm 31.0\nstep 1400 loss 0.3301 grad_norm 88.4\nstep 1500 loss 0.3512 grad_norm 240.2\n"
        "step 1600 loss 0.4125 grad_norm 1021.7\nstep 1700 loss 0.9930 grad_norm inf\nstep 1800 loss nan grad_norm nan\n"
        "WARNING: loss is NaN at step 1774, stopping",
    )
    c.say(
        "The gradient norm grows from ~3 to 1,021 between steps 1,000 and 1,600, then inf at 1,700 and NaN at 1,774. No grad clipping is set (grad_clip: null)."
    )
    c.bash(
        "ssh a10-box 'cd ranker && python train.py --config configs/base.yaml --max-steps 2000 --detect-anomaly'",
        "train.py: error: unrecognized arguments: --detect-anomaly",
        error=True,
    )
    c.bash(
        "ssh a10-box 'cd ranker && python train.py --help | grep -i -A1 debug'",
        "  --debug-nan           register forward hooks that report the first module producing inf/nan",
    )
    c.bash(
        "ssh a10-box 'cd ranker && python train.py --config configs/base.yaml --max-steps 2000 --debug-nan 2>&1 | grep -m3 -E \"inf|nan\"'",
        "step 1700: first non-finite output in model.cross.proj (Linear 4608->768), dtype float16, max |x| before = 71203.5\n"
        "step 1700: inputs of model.cross.proj: max |x| = 3911.2\nWARNING: loss is NaN at step 1774, stopping",
    )
    c.say(
        "The first inf comes out of model.cross.proj, the cross-feature projection added in 0d4e2f9: its "
        "activations reach 71,203 just before, over fp16's maximum of 65,504. bf16 has fp32's range, but "
        "the A10 supports bf16, so switching amp to bf16 keeps mixed precision speed."
    )
    c.bash(
        "ssh a10-box 'python -c \"import torch; print(torch.__version__, torch.cuda.is_bf16_supported())\"'",
        "2.4.1+cu121 True",
    )
    c.user("Try bf16, but also add grad clipping at 1.0, I want both. Don't change the lr, it's tuned.")
    c.tool(
        "Edit",
        {
            "file_path": "/home/omar/ranker/configs/base.yaml",
            "old_string": "  amp: fp16\n  grad_clip: null\n",
            "new_string": "  amp: bf16  # fp16 overflowed in model.cross.proj at batch 2048\n  grad_clip: 1.0\n",
        },
        "The file /home/omar/ranker/configs/base.yaml has been updated successfully.",
    )
    c.bash(
        "ssh a10-box 'cd ranker && git pull -q && python train.py --config configs/base.yaml --max-steps 3000 --log-every 500 2>&1 | tail -8'",
        "Traceback (most recent call last):\n  File \"/home/omar/ranker/train.py\", line 142, in <module>\n    scaler = torch.cuda.amp.GradScaler(enabled=cfg.train.amp == 'fp16')\n"
        '  File "/home/omar/ranker/train.py", line 97, in train_step\n    scaler.unscale_(optimizer)\n'
        "RuntimeError: Attempting to unscale FP16 gradients.",
        error=True,
    )
    c.tool(
        "Read",
        {"file_path": "/home/omar/ranker/train.py"},
        "    90\tdef train_step(batch):\n    91\t    with torch.autocast('cuda', dtype=torch.float16):\n    92\t        loss = model(batch).loss\n"
        "    93\t    scaler.scale(loss).backward()\n    94\t    if cfg.train.grad_clip:\n    95\t        scaler.unscale_(optimizer)\n"
        "    96\t        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.train.grad_clip)\n",
    )
    c.say(
        "train.py hard-codes torch.float16 in autocast, ignoring the amp setting. So the config change alone did nothing except enable clipping through a disabled scaler."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/omar/ranker/train.py",
            "old_string": "    with torch.autocast('cuda', dtype=torch.float16):",
            "new_string": "    with torch.autocast('cuda', dtype={'fp16': torch.float16, 'bf16': torch.bfloat16}[cfg.train.amp]):",
        },
        "The file /home/omar/ranker/train.py has been updated successfully.",
    )
    c.bash(
        "ssh a10-box 'cd ranker && git pull -q && python train.py --config configs/base.yaml --max-steps 3000 --log-every 500 2>&1 | tail -8'",
        "Traceback (most recent call last):\n  File \"/home/omar/ranker/train.py\", line 20, in <module>\n    from ranker.data import load\nModuleNotFoundError: No module named 'ranker'",
        error=True,
    )
    c.bash(
        "ssh a10-box 'cd ranker && pip install -q -e . && python train.py --config configs/base.yaml --max-steps 3000 --log-every 500 2>&1 | tail -8'",
        "step 500 loss 0.4107 grad_norm 1.0 (clipped from 3.4)\nstep 1000 loss 0.3296 grad_norm 1.0 (clipped from 4.1)\n"
        "step 1500 loss 0.3154 grad_norm 1.0 (clipped from 3.9)\nstep 2000 loss 0.3071 grad_norm 1.0 (clipped from 3.7)\n"
        "step 2500 loss 0.3019 grad_norm 1.0 (clipped from 3.5)\nstep 3000 loss 0.2982 grad_norm 1.0 (clipped from 3.3)\nthroughput 4412 samples/s",
    )
    c.bash(
        "ssh a10-box 'cd ranker && git stash -q && python train.py --config configs/base.yaml --max-steps 300 2>&1 | grep throughput; git stash pop -q'",
        "throughput 4480 samples/s",
    )
    c.say(
        "Stable to step 3,000 with loss 0.298, and throughput 4,412 samples/s with bf16 against 4,480 with fp16: 1.5% slower, not 3x."
    )
    c.bash(
        "ssh a10-box 'cd ranker && python eval.py --checkpoint runs/latest/step3000.pt --split valid 2>&1 | tail -2'",
        "ndcg@10 0.4127\nmrr 0.3650",
    )
    c.user("Good. Commit the config and train.py changes, I'll start the full run tonight.")
    c.bash(
        "git add configs/base.yaml train.py && git commit -qm 'train: honour amp dtype (bf16), clip grads at 1.0; fp16 overflowed in cross.proj' && git log --oneline -1",
        "b27e0c5 train: honour amp dtype (bf16), clip grads at 1.0; fp16 overflowed in cross.proj",
    )
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
The ranker's training diverged to NaN after moving to a larger batch; the user wanted the cause found while keeping mixed precision.

Summary:
1. Primary Request and Intent:
   Find why training goes NaN around step 1,800 since the switch to a bigger batch. Keep mixed precision (otherwise an epoch takes about 3x longer and the A10 machine is only available until Friday). The user then asked to try bf16 and also add gradient clipping at 1.0, without changing the tuned learning rate, and finally to commit the config and train.py changes.

2. Key Technical Concepts:
   - fp16 overflow (max 65,504) vs bf16's wider range
   - torch.autocast dtype, GradScaler, gradient clipping with unscale_
   - Forward hooks to find the first non-finite activation

3. Files and Code Sections:
   - configs/base.yaml: amp fp16 → bf16 (with a comment), grad_clip null → 1.0.
   - train.py: autocast now uses the dtype from cfg.train.amp instead of a hard-coded float16.

4. Errors and fixes:
   - nvidia-smi not available locally: ran commands on the A10 box over ssh.
   - --detect-anomaly is not a train.py option; used --debug-nan.
   - "Attempting to unscale FP16 gradients": train.py ignored the amp setting; fixed the autocast dtype.
   - ModuleNotFoundError for ranker on the box: installed the package in editable mode.

5. Problem Solving:
   The gradient norm grew steadily after the batch increase until it overflowed; the first inf came from model.cross.proj (the cross-feature projection), whose activations exceeded fp16's range. With bf16 and clipping, training is stable through 3,000 steps with the loss still decreasing, and throughput is only slightly lower than fp16. Validation ndcg@10 is about 0.41.

6. All user messages:
   - "Training of the ranker goes NaN around step 1,800 since we switched to the bigger batch. Find out why. Keep mixed precision, without it an epoch takes 3x longer and we only have the A10 box until Friday."
   - "Try bf16, but also add grad clipping at 1.0, I want both. Don't change the lr, it's tuned."
   - "Good. Commit the config and train.py changes, I'll start the full run tonight."

7. Pending Tasks:
   - The user starts the full training run tonight.

8. Current Work:
   Committed configs/base.yaml and train.py.

9. Optional Next Step:
   None.
"""
    labels = [
        Label("request", "Training of the ranker goes NaN around step 1,800", dropped=False),
        Label("constraint", "Keep mixed precision", dropped=False),
        Label("decision", "we only have the A10 box until Friday", dropped=False),
        Label("constraint", "Don't change the lr, it's tuned", dropped=False),
        Label("identifier", "e90b4d1", dropped=True),  # the batch 512 -> 2048 commit
        Label("identifier", "0d4e2f9", dropped=True),  # the commit that added cross.proj
        Label("measurement", "max |x| before = 71203.5", dropped=True),  # "exceeded fp16's range"
        Label("measurement", "loss is NaN at step 1774", dropped=True),
        Label("measurement", "grad_norm 1021.7", dropped=True),
        Label("measurement", "4412 samples/s", dropped=True),  # "only slightly lower"
        Label("measurement", "ndcg@10 0.4127", dropped=False),  # "about 0.41"
        Label("number", "lr: 0.0016", dropped=True),  # the tuned value, read in the config
        Label("failed command", "--detect-anomaly", dropped=False),
        Label("error", "Attempting to unscale FP16 gradients", dropped=False),
        Label("error", "No module named 'ranker'", dropped=False),
        Label("edit", "amp: bf16", dropped=False),
        Label("file edited", "train.py", dropped=False),
        Label("identifier", "b27e0c5", dropped=True),
        # noise
        Label("failed command", "nvidia-smi", dropped=False),  # "not available locally"
        Label("command", "git log --oneline -3", dropped=False),
        Label("number", "23028", dropped=False),
        Label("number", "65,504", dropped=False),
        Label("number", "4608", dropped=False),
    ]
    return DevSession(c, summary, labels)


def beat_timezone() -> DevSession:
    """Python/Celery: a scheduled report an hour late since the clocks changed, a schedule read in
    UTC, the fix to a time zone; a long user message with a constraint and a second request the
    summary loses."""
    c = Conversation("/home/jonas/reports-worker", "fresh-beat-timezone")
    c.user(
        "Since the clocks went back on 26 October the daily sales report arrives at 08:00 instead of "
        "07:00 for the Berlin team. Please fix it so it is 07:00 Berlin time all year. Leave the "
        "billing tasks on UTC, the bank's cutoff is in UTC and those must not move with DST. And "
        "afterwards rename send_report_daily to send_daily_report, the name has bugged me for years."
    )
    c.bash("git status --short && git log --oneline -1", "\n7e2c1d0 worker: bump celery to 5.4.0")
    c.tool(
        "Read",
        {"file_path": "/home/jonas/reports-worker/worker/celeryconfig.py"},
        "     1\tfrom celery.schedules import crontab\n     2\t\n     3\ttimezone = 'UTC'\n     4\tenable_utc = True\n     5\t\n"
        "     6\tbeat_schedule = {\n     7\t    'daily-sales-report': {\n     8\t        'task': 'worker.reports.send_report_daily',\n"
        "     9\t        'schedule': crontab(hour=6, minute=0),  # 07:00 Berlin\n    10\t    },\n"
        "    11\t    'billing-settle': {\n    12\t        'task': 'worker.billing.settle',\n    13\t        'schedule': crontab(hour=15, minute=30),\n    14\t    },\n"
        "    15\t    'billing-export': {\n    16\t        'task': 'worker.billing.export',\n    17\t        'schedule': crontab(hour=16, minute=0),\n    18\t    },\n"
        "    19\t    'cleanup-tmp': {\n    20\t        'task': 'worker.maintenance.cleanup',\n    21\t        'schedule': crontab(minute=0, hour='*/4'),\n    22\t    },\n    23\t}\n",
    )
    c.say("The schedule says 06:00 UTC with a comment claiming 07:00 Berlin. Let me check what 06:00 UTC is in Berlin.")
    c.bash(
        'python -c "from datetime import datetime; from zoneinfo import ZoneInfo as Z; '
        "[print(d, datetime.fromisoformat(d+'T06:00+00:00').astimezone(Z('Europe/Berlin')).strftime('%H:%M')) for d in ('2026-07-01','2026-11-02')]\"",
        "2026-07-01 08:00\n2026-11-02 07:00",
    )
    c.say(
        "So 06:00 UTC is 08:00 in summer and 07:00 in winter: if the schedule ran in UTC, the report "
        "would have moved earlier in October, not later. Let me check when the task actually runs."
    )
    c.bash(
        "grep 'send_report_daily.*succeeded' /var/log/celery/worker.log | tail -4",
        "[2026-11-27 06:00:03,412: INFO/ForkPoolWorker-2] Task worker.reports.send_report_daily[9f1e...] succeeded in 41.2s\n"
        "[2026-11-28 06:00:02,977: INFO/ForkPoolWorker-1] Task worker.reports.send_report_daily[0a7c...] succeeded in 39.8s\n"
        "[2026-11-29 06:00:03,105: INFO/ForkPoolWorker-3] Task worker.reports.send_report_daily[5d2b...] succeeded in 40.6s\n"
        "[2026-11-30 06:00:02,880: INFO/ForkPoolWorker-2] Task worker.reports.send_report_daily[c3e8...] succeeded in 44.1s",
    )
    c.bash(
        "head -3 /var/log/celery/worker.log; date; cat /etc/timezone",
        "celery@reports-1 v5.4.0 (opalescent)\n\nThu Dec  3 10:12:44 CET 2026\nEurope/Berlin",
    )
    c.say(
        "The log timestamps are local (CET): the task runs at 06:00 Berlin, not 06:00 UTC. The host is on "
        "Europe/Berlin; let me see how beat is started there."
    )
    c.tool(
        "Read",
        {"file_path": "/home/jonas/reports-worker/deploy/celery-beat.service"},
        "[Service]\nUser=celery\nWorkingDirectory=/opt/reports-worker\nExecStart=/opt/reports-worker/.venv/bin/celery -A worker beat --config worker.legacy_config --loglevel INFO\n",
    )
    c.tool(
        "Read",
        {"file_path": "/home/jonas/reports-worker/worker/legacy_config.py"},
        "from worker.celeryconfig import *  # noqa\n\ntimezone = 'Europe/Berlin'\nenable_utc = False\n",
    )
    c.say(
        "worker/legacy_config.py overrides timezone to Europe/Berlin and enable_utc to False, so in "
        "production beat reads crontab(hour=6) as 06:00 Berlin. That means the 07:00 report has been "
        "built at 06:00, which does not explain 08:00 either. Let me look at the mail server's side."
    )
    c.bash(
        "grep 'daily sales' /var/log/mail.log | tail -3 | awk '{print $1, $2, $3, $NF}'",
        "Nov 28 08:00:47 status=sent\nNov 29 08:00:51 status=sent\nNov 30 08:00:49 status=sent",
    )
    c.bash(
        "grep -n 'deliver_at\\|eta\\|countdown' worker/reports.py",
        "worker/reports.py:52:    mailer.send(report, deliver_at=report_day.replace(hour=7, tzinfo=timezone.utc))",
    )
    c.say(
        "Found it. The task runs at 06:00 Berlin, builds the report, and hands it to the mailer with "
        "deliver_at 07:00 *UTC* (worker/reports.py:52), which is 08:00 Berlin in winter and 09:00 in "
        "summer. Let me see when deliver_at came in."
    )
    c.bash(
        "git log -L52,52:worker/reports.py --oneline | head -3",
        "c81f0a2 reports: schedule delivery via the mailer queue\ndiff --git a/worker/reports.py b/worker/reports.py",
    )
    c.bash("git show -s --format='%ad %an' --date=short c81f0a2", "2026-10-27 Mara Lind")
    c.say(
        "c81f0a2 (27 Oct, the day after the clock change) added deliver_at with a UTC 07:00. That's the regression, coinciding with DST by chance."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/jonas/reports-worker/worker/reports.py",
            "old_string": "    mailer.send(report, deliver_at=report_day.replace(hour=7, tzinfo=timezone.utc))",
            "new_string": "    mailer.send(report, deliver_at=datetime.combine(report_day, time(7), tzinfo=ZoneInfo('Europe/Berlin')))",
        },
        "The file /home/jonas/reports-worker/worker/reports.py has been updated successfully.",
    )
    c.bash(
        "python -m pytest tests/test_reports.py -q 2>&1 | tail -3",
        "E   NameError: name 'ZoneInfo' is not defined\nFAILED tests/test_reports.py::test_delivery_time - NameError: name 'ZoneInfo' is not defined\n1 failed, 11 passed in 0.92s",
        error=True,
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/jonas/reports-worker/worker/reports.py",
            "old_string": "from datetime import timezone\n",
            "new_string": "from datetime import datetime, time\nfrom zoneinfo import ZoneInfo\n",
        },
        "The file /home/jonas/reports-worker/worker/reports.py has been updated successfully.",
    )
    c.bash(
        "python -m pytest tests/test_reports.py -q 2>&1 | tail -2",
        "FAILED tests/test_reports.py::test_delivery_time - AssertionError: assert '06:00+00:00' == '07:00+00:00'\n1 failed, 11 passed in 0.88s",
        error=True,
    )
    c.say(
        "The test pinned the old behaviour (07:00 UTC). Updating it to expect 07:00 Berlin on a winter and a summer day."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/jonas/reports-worker/tests/test_reports.py",
            "old_string": "    assert sent.deliver_at.isoformat()[11:] == '07:00+00:00'",
            "new_string": "    assert sent.deliver_at.astimezone(ZoneInfo('Europe/Berlin')).hour == 7",
        },
        "The file /home/jonas/reports-worker/tests/test_reports.py has been updated successfully.",
    )
    c.bash("python -m pytest -q 2>&1 | tail -1", "58 passed in 3.41s")
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
The daily sales report has been arriving an hour late since late October. The investigation went through the Celery beat configuration and ended in the mailer call.

Summary:
1. Primary Request and Intent:
   The user reported that since the end of October the daily sales report arrives at 08:00 instead of 07:00 for the Berlin team, and asked to make it 07:00 Berlin time all year.

2. Key Technical Concepts:
   - Celery beat crontab schedules, timezone and enable_utc
   - A legacy config module overriding the time zone in production
   - Time-zone-aware datetimes with zoneinfo

3. Files and Code Sections:
   - worker/celeryconfig.py: UTC beat schedule; the daily report at crontab(hour=6).
   - worker/legacy_config.py and deploy/celery-beat.service: production beat runs with timezone Europe/Berlin, enable_utc False.
   - worker/reports.py: deliver_at was 07:00 UTC; now 07:00 Europe/Berlin via datetime.combine and ZoneInfo (imports added).
   - tests/test_reports.py: test_delivery_time now asserts 07:00 in Berlin.

4. Errors and fixes:
   - NameError for ZoneInfo: added the imports.
   - test_delivery_time expected the old UTC delivery time; updated.

5. Problem Solving:
   The schedule itself was not the cause: in production the task runs at 06:00 Berlin. The regression came from a commit the day after the clock change that introduced a delivery time in UTC, which is 08:00 in Berlin in winter. The timing with DST was a coincidence. All tests pass.

6. All user messages:
   - The user reported the report arriving an hour late since the clocks went back and asked for 07:00 Berlin time all year.

7. Pending Tasks:
   - None.

8. Current Work:
   Fixed deliver_at in worker/reports.py and updated the test; the full suite passes.

9. Optional Next Step:
   Ask the user to confirm tomorrow's delivery time.
"""
    labels = [
        Label("request", "fix it so it is 07:00 Berlin time all year", dropped=False),
        Label("constraint", "Leave the billing tasks on UTC", dropped=True),  # not in the summary at all
        Label("decision", "the bank's cutoff is in UTC", dropped=True),
        Label("request", "rename send_report_daily to send_daily_report", dropped=True),  # still to do: not in Pending
        Label("identifier", "c81f0a2", dropped=True),  # "a commit the day after the clock change"
        Label("name", "Mara Lind", dropped=True),
        Label("path", "worker/reports.py:52", dropped=False),  # "worker/reports.py: deliver_at was 07:00 UTC"
        Label("file read", "worker/legacy_config.py", dropped=False),
        Label("file read", "deploy/celery-beat.service", dropped=False),
        Label("measurement", "Nov 30 08:00:49 status=sent", dropped=True),  # the mail log that showed 08:00
        Label("error", "name 'ZoneInfo' is not defined", dropped=False),
        Label("error", "assert '06:00+00:00' == '07:00+00:00'", dropped=False),
        Label("edit", "tzinfo=ZoneInfo('Europe/Berlin')", dropped=False),
        Label("measurement", "58 passed", dropped=True),  # "all tests pass"
        Label("decision", "coinciding with DST by chance", dropped=False),
        # noise
        Label("command", "git status --short && git log --oneline -1", dropped=False),
        Label("number", "2026-07-01 08:00", dropped=False),  # a check on the way, overtaken
        Label("number", "41.2s", dropped=False),
        Label("name", "ForkPoolWorker-2", dropped=False),
    ]
    return DevSession(c, summary, labels)


def nginx_headers() -> DevSession:
    """nginx/Ansible: a configuration change (security headers and caching for static assets)
    under the user's preferences, checked with curl and a scanner; the summary drops one of the
    user's constraints said in passing and the reason for another."""
    c = Conversation("/home/ruth/edge-config", "fresh-nginx-headers")
    c.user(
        "The security scan (Mozilla Observatory) gives www.acme-shop.example a D. Add the missing "
        "headers in the nginx role. HSTS with max-age one year but no preload, preload is hard to undo "
        "and we still have an http-only partner subdomain. Don't touch the CSP, marketing is mid-way "
        "through a tag manager migration."
    )
    c.bash(
        "ls roles/nginx/templates", "default.conf.j2\nsecurity_headers.conf.j2\nstatic_cache.conf.j2\nupstreams.conf.j2"
    )
    c.tool(
        "Read",
        {"file_path": "/home/ruth/edge-config/roles/nginx/templates/security_headers.conf.j2"},
        '# managed by ansible\nadd_header X-Frame-Options SAMEORIGIN;\n{% if csp %}\nadd_header Content-Security-Policy "{{ csp }}";\n{% endif %}\n',
    )
    c.bash(
        "curl -sI https://www.acme-shop.example | grep -iE '^(strict|x-content|referrer|permissions|x-frame|content-security|cache-control)'",
        "x-frame-options: SAMEORIGIN\ncontent-security-policy: default-src 'self' https://tags.acme-shop.example; img-src * data:\ncache-control: no-cache",
    )
    c.bash(
        "npx observatory-cli www.acme-shop.example --format=report 2>&1 | head -14",
        "bash: npx: command not found",
        error=True,
    )
    c.bash(
        "curl -s -X POST 'https://observatory-api.mdn.mozilla.net/api/v2/scan?host=www.acme-shop.example' | jq '{grade, score, tests_failed, tests_passed}'",
        '{\n  "grade": "D",\n  "score": 35,\n  "tests_failed": 4,\n  "tests_passed": 6\n}',
    )
    c.bash(
        "curl -s 'https://observatory-api.mdn.mozilla.net/api/v2/analyze?host=www.acme-shop.example' | jq -r '.tests | to_entries[] | select(.value.pass == false) | .key + \": \" + .value.result'",
        "strict-transport-security: hsts-not-implemented\nx-content-type-options: x-content-type-options-not-implemented\n"
        "referrer-policy: referrer-policy-not-implemented\ncontent-security-policy: csp-implemented-with-unsafe-inline",
    )
    c.say(
        "Four failing tests: HSTS, X-Content-Type-Options, Referrer-Policy, and the CSP (unsafe-inline), which you want left alone."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/ruth/edge-config/roles/nginx/templates/security_headers.conf.j2",
            "old_string": "add_header X-Frame-Options SAMEORIGIN;\n",
            "new_string": "add_header X-Frame-Options SAMEORIGIN always;\n"
            "# one year, no preload: preload is hard to undo and partner.acme-shop.example is still http-only\n"
            'add_header Strict-Transport-Security "max-age=31536000; includeSubDomains" always;\n'
            "add_header X-Content-Type-Options nosniff always;\nadd_header Referrer-Policy strict-origin-when-cross-origin always;\n",
        },
        "The file /home/ruth/edge-config/roles/nginx/templates/security_headers.conf.j2 has been updated successfully.",
    )
    c.say(
        "Wait: includeSubDomains would also force HTTPS on the http-only partner subdomain for every browser "
        "that saw the header. I'll drop includeSubDomains too, same reason as preload."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/ruth/edge-config/roles/nginx/templates/security_headers.conf.j2",
            "old_string": '"max-age=31536000; includeSubDomains"',
            "new_string": '"max-age=31536000"',
        },
        "The file /home/ruth/edge-config/roles/nginx/templates/security_headers.conf.j2 has been updated successfully.",
    )
    c.bash(
        "grep -rn 'add_header' roles/nginx/templates/ | grep -v security_headers",
        'roles/nginx/templates/static_cache.conf.j2:4:    add_header Cache-Control "public, max-age=604800, immutable";',
    )
    c.say(
        "static_cache.conf.j2 has its own add_header inside a location block. nginx does not inherit "
        "add_header from the server level into a location that has any add_header of its own, so static "
        "assets would get none of the security headers. I'll include the security headers file there too."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/ruth/edge-config/roles/nginx/templates/static_cache.conf.j2",
            "old_string": '    add_header Cache-Control "public, max-age=604800, immutable";',
            "new_string": '    add_header Cache-Control "public, max-age=604800, immutable";\n    include /etc/nginx/snippets/security_headers.conf;',
        },
        "The file /home/ruth/edge-config/roles/nginx/templates/static_cache.conf.j2 has been updated successfully.",
    )
    c.bash(
        "ansible-playbook -i inventories/staging site.yml --tags nginx --check --diff 2>&1 | tail -6",
        'TASK [nginx : validate config] *************************************************\nfatal: [edge-stg-1]: FAILED! => {"changed": false, "cmd": "nginx -t", '
        '"stderr": "nginx: [emerg] open() \\"/etc/nginx/snippets/security_headers.conf\\" failed (2: No such file or directory) in /etc/nginx/conf.d/static_cache.conf:5"}\n\n'
        "PLAY RECAP *********************************************************************\nedge-stg-1 : ok=6 changed=3 unreachable=0 failed=1 skipped=0",
        error=True,
    )
    c.tool(
        "Read",
        {"file_path": "/home/ruth/edge-config/roles/nginx/tasks/main.yml"},
        "- name: security headers\n  template:\n    src: security_headers.conf.j2\n    dest: /etc/nginx/conf.d/security_headers.conf\n",
    )
    c.say(
        "The role installs the file as /etc/nginx/conf.d/security_headers.conf, not under snippets/. And files in conf.d are included at http level, so I need a copy outside conf.d for the location include."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/ruth/edge-config/roles/nginx/tasks/main.yml",
            "old_string": "    dest: /etc/nginx/conf.d/security_headers.conf\n",
            "new_string": "    dest: /etc/nginx/conf.d/security_headers.conf\n\n- name: security headers for locations with their own add_header\n  template:\n"
            "    src: security_headers.conf.j2\n    dest: /etc/nginx/snippets/security_headers.conf\n",
        },
        "The file /home/ruth/edge-config/roles/nginx/tasks/main.yml has been updated successfully.",
    )
    c.bash(
        "ansible-playbook -i inventories/staging site.yml --tags nginx 2>&1 | tail -2",
        "PLAY RECAP *********************************************************************\nedge-stg-1 : ok=9 changed=4 unreachable=0 failed=0 skipped=0",
    )
    c.bash(
        "for p in / /static/app.3f9c1e.js; do echo \"== $p\"; curl -sI https://stg.acme-shop.example$p | grep -iE '^(strict|x-content|referrer|cache-control)'; done",
        "== /\nstrict-transport-security: max-age=31536000\nx-content-type-options: nosniff\nreferrer-policy: strict-origin-when-cross-origin\ncache-control: no-cache\n"
        "== /static/app.3f9c1e.js\ncache-control: public, max-age=604800, immutable\nstrict-transport-security: max-age=31536000\nx-content-type-options: nosniff\nreferrer-policy: strict-origin-when-cross-origin",
    )
    c.bash(
        "curl -s -X POST 'https://observatory-api.mdn.mozilla.net/api/v2/scan?host=stg.acme-shop.example' | jq '{grade, score, tests_failed}'",
        '{\n  "grade": "B",\n  "score": 80,\n  "tests_failed": 1\n}',
    )
    c.say(
        "Staging goes from D (35) to B (80); the one remaining failure is the CSP's unsafe-inline, left as you asked."
    )
    c.user("Good. Prod tomorrow morning with the change window, not now. Commit.")
    c.bash(
        "git add -A && git commit -qm 'nginx: HSTS (1y, no subdomains/preload), nosniff, referrer policy; headers on static too' && git log --oneline -1",
        "44be0a1 nginx: HSTS (1y, no subdomains/preload), nosniff, referrer policy; headers on static too",
    )
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
The user asked to raise the site's Mozilla Observatory grade by adding missing security headers in the Ansible nginx role.

Summary:
1. Primary Request and Intent:
   Add the missing security headers in the nginx role for www.acme-shop.example, which the Mozilla Observatory grades D. HSTS with a one-year max-age but without preload (hard to undo; an http-only partner subdomain still exists). Deploy to prod tomorrow in the change window, not now; commit.

2. Key Technical Concepts:
   - HSTS max-age, includeSubDomains and preload
   - nginx add_header inheritance (a location with its own add_header inherits none from the server level)
   - Ansible --check --diff and nginx -t validation

3. Files and Code Sections:
   - roles/nginx/templates/security_headers.conf.j2: HSTS max-age=31536000 (no includeSubDomains, no preload), X-Content-Type-Options nosniff, Referrer-Policy strict-origin-when-cross-origin, all with `always`.
   - roles/nginx/templates/static_cache.conf.j2: includes the security headers snippet next to its Cache-Control header.
   - roles/nginx/tasks/main.yml: also installs the headers file under /etc/nginx/snippets/.

4. Errors and fixes:
   - npx not available; queried the Observatory API with curl.
   - nginx -t failed on staging because the snippet path did not exist; added a task to install it there.

5. Problem Solving:
   Four Observatory tests failed initially. includeSubDomains was dropped as well because it would force HTTPS on the http-only partner subdomain. Static assets would otherwise have lost the security headers because of nginx's add_header inheritance. Staging now grades B; the remaining failure is the CSP.

6. All user messages:
   - "The security scan (Mozilla Observatory) gives www.acme-shop.example a D. Add the missing headers in the nginx role. HSTS with max-age one year but no preload, …"
   - "Good. Prod tomorrow morning with the change window, not now. Commit."

7. Pending Tasks:
   - Deploy to production tomorrow morning in the change window.

8. Current Work:
   Committed the role changes after verifying on staging.

9. Optional Next Step:
   Run the playbook against production tomorrow.
"""
    labels = [
        Label("request", "Add the missing headers in the nginx role", dropped=False),
        Label("constraint", "HSTS with max-age one year but no preload", dropped=False),
        Label("decision", "preload is hard to undo", dropped=False),
        Label(
            "constraint", "Don't touch the CSP", dropped=True
        ),  # after the elision; "the remaining failure is the CSP"
        Label("decision", "marketing is mid-way through a tag manager migration", dropped=True),
        Label("constraint", "Prod tomorrow morning with the change window, not now", dropped=False),
        Label("decision", "includeSubDomains would also force HTTPS on the http-only partner subdomain", dropped=False),
        Label("measurement", '"score": 35', dropped=True),  # the grade is kept, not the score
        Label("measurement", '"score": 80', dropped=True),
        Label("error", "csp-implemented-with-unsafe-inline", dropped=False),  # "the remaining failure is the CSP"
        Label("error", "failed (2: No such file or directory)", dropped=False),
        Label("failed command", "npx observatory-cli", dropped=False),
        Label("edit", "max-age=31536000", dropped=False),
        Label("file edited", "roles/nginx/tasks/main.yml", dropped=False),
        Label("identifier", "44be0a1", dropped=True),
        Label("number", "max-age=604800", dropped=True),  # the static assets' cache lifetime, read
        # noise
        Label("command", "ls roles/nginx/templates", dropped=False),
        Label("number", "3f9c1e", dropped=False),
        Label("name", "edge-stg-1", dropped=False),
    ]
    return DevSession(c, summary, labels)


def image_size() -> DevSession:
    """Docker/Python: shrinking a service image, sizes measured at each step, the user's reason
    for the base image, a build failure on the way, a layer listing read for the key fact."""
    c = Conversation("/home/kofi/pricing-api", "fresh-image-size")
    c.user(
        "The pricing-api image is 1.4 GB and deploys pull it on every node. Get it down. Stay on "
        "Debian slim, not Alpine: musl broke our numpy and scipy wheels last time and builds took 40 minutes."
    )
    c.bash(
        "docker images pricing-api --format '{{.Tag}} {{.Size}}' | head -3",
        "latest 1.42GB\n2026.11.30 1.42GB\n2026.11.23 1.39GB",
    )
    c.tool(
        "Read",
        {"file_path": "/home/kofi/pricing-api/Dockerfile"},
        "FROM python:3.12\nWORKDIR /app\nRUN apt-get update && apt-get install -y build-essential libpq-dev git\nCOPY . .\n"
        'RUN pip install -r requirements.txt\nRUN pip install -e .\nCMD ["gunicorn", "pricing.app:app", "-c", "gunicorn.conf.py"]\n',
    )
    c.bash(
        "docker history pricing-api:latest --format '{{.Size}}\\t{{.CreatedBy}}' | head -8",
        '0B\tCMD ["gunicorn" "pricing.app:app" "-c" "gunicorn.conf.py"]\n4.1MB\tRUN pip install -e .\n'
        "402MB\tRUN pip install -r requirements.txt\n187MB\tCOPY . .\n262MB\tRUN apt-get update && apt-get install -y build-essential libpq-dev git\n"
        '0B\tWORKDIR /app\n9.3kB\tCMD ["python3"]\n568MB\t(base layers of python:3.12)',
    )
    c.say(
        "Biggest parts: the full python:3.12 base (568 MB), requirements (402 MB), build tools (262 MB), "
        "and COPY . . at 187 MB, which is suspicious for a small service."
    )
    c.bash(
        "du -sh .git data tests notebooks 2>/dev/null; cat .dockerignore",
        "121M\t.git\n48M\tdata\n6.2M\ttests\n11M\tnotebooks\ncat: .dockerignore: No such file or directory",
        error=True,
    )
    c.say("There is no .dockerignore, so .git (121 MB) and data/ (48 MB) go into the image.")
    c.tool(
        "Write",
        {
            "file_path": "/home/kofi/pricing-api/.dockerignore",
            "content": ".git\ndata/\nnotebooks/\ntests/\n**/__pycache__\n.venv\n*.egg-info\n",
        },
        "File created successfully at: /home/kofi/pricing-api/.dockerignore",
    )
    c.tool(
        "Write",
        {
            "file_path": "/home/kofi/pricing-api/Dockerfile",
            "content": "FROM python:3.12-slim-bookworm AS build\nRUN apt-get update && apt-get install -y --no-install-recommends build-essential libpq-dev\n"
            "WORKDIR /app\nCOPY requirements.txt .\nRUN pip wheel --wheel-dir /wheels -r requirements.txt\nCOPY . .\nRUN pip wheel --no-deps --wheel-dir /wheels .\n\n"
            "FROM python:3.12-slim-bookworm\nRUN apt-get update && apt-get install -y --no-install-recommends libpq5 && rm -rf /var/lib/apt/lists/*\n"
            "COPY --from=build /wheels /wheels\nRUN pip install --no-cache-dir /wheels/* && rm -rf /wheels\nWORKDIR /app\nCOPY gunicorn.conf.py .\n"
            'CMD ["gunicorn", "pricing.app:app", "-c", "gunicorn.conf.py"]\n',
        },
        "The file /home/kofi/pricing-api/Dockerfile has been overwritten successfully.",
    )
    c.bash(
        "docker build -t pricing-api:slim . 2>&1 | tail -8",
        " => ERROR [build 7/7] RUN pip wheel --no-deps --wheel-dir /wheels .\n------\n > [build 7/7] RUN pip wheel --no-deps --wheel-dir /wheels .:\n"
        "  Getting requirements to build wheel: finished with status 'error'\n  error: subprocess-exited-with-error\n"
        "  setuptools_scm._file_finders.git: listing git files failed - pretending there aren't any\n"
        '  LookupError: setuptools-scm was unable to detect version for /app.\n------\nERROR: failed to solve: process "/bin/sh -c pip wheel --no-deps --wheel-dir /wheels ." did not complete successfully: exit code: 1',
        error=True,
    )
    c.say(
        "The package takes its version from git via setuptools-scm, and .git is now excluded. Rather "
        "than put .git back (121 MB in the build context), I'll pass the version in as a build arg: "
        "SETUPTOOLS_SCM_PRETEND_VERSION."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/kofi/pricing-api/Dockerfile",
            "old_string": "COPY . .\nRUN pip wheel --no-deps --wheel-dir /wheels .",
            "new_string": "COPY . .\nARG VERSION\nRUN SETUPTOOLS_SCM_PRETEND_VERSION=${VERSION:?pass --build-arg VERSION} pip wheel --no-deps --wheel-dir /wheels .",
        },
        "The file /home/kofi/pricing-api/Dockerfile has been updated successfully.",
    )
    c.bash(
        "docker build --build-arg VERSION=$(git describe --tags) -t pricing-api:slim . 2>&1 | tail -2 && docker images pricing-api:slim --format '{{.Size}}'",
        " => => naming to docker.io/library/pricing-api:slim\n => => writing image sha256:b41c0e...\n311MB",
    )
    c.bash(
        "docker run --rm pricing-api:slim python -c 'import numpy, scipy, psycopg; print(numpy.__version__, scipy.__version__, psycopg.__version__)'",
        "2.1.3 1.14.1 3.2.3",
    )
    c.bash(
        "docker run --rm pricing-api:slim pip list --format freeze | wc -l; docker run --rm pricing-api:slim du -sh /usr/local/lib/python3.12/site-packages | tail -1",
        "61\n241M\t/usr/local/lib/python3.12/site-packages",
    )
    c.bash(
        "docker run --rm pricing-api:slim sh -c 'du -sh /usr/local/lib/python3.12/site-packages/* | sort -rh | head -5'",
        "98M\t/usr/local/lib/python3.12/site-packages/scipy\n39M\t/usr/local/lib/python3.12/site-packages/numpy.libs\n"
        "33M\t/usr/local/lib/python3.12/site-packages/numpy\n21M\t/usr/local/lib/python3.12/site-packages/pandas\n12M\t/usr/local/lib/python3.12/site-packages/botocore",
    )
    c.user("pandas? We don't use pandas in the service, only in notebooks.")
    c.bash(
        "grep -rn 'import pandas\\|from pandas' pricing/ | head; grep -n pandas requirements.txt",
        "requirements.txt:31:pandas==2.2.3",
    )
    c.tool(
        "Edit",
        {"file_path": "/home/kofi/pricing-api/requirements.txt", "old_string": "pandas==2.2.3\n", "new_string": ""},
        "The file /home/kofi/pricing-api/requirements.txt has been updated successfully.",
    )
    c.tool(
        "Write",
        {
            "file_path": "/home/kofi/pricing-api/requirements-notebooks.txt",
            "content": "-r requirements.txt\npandas==2.2.3\njupyterlab==4.2.5\n",
        },
        "File created successfully at: /home/kofi/pricing-api/requirements-notebooks.txt",
    )
    c.bash(
        "docker build --build-arg VERSION=$(git describe --tags) -t pricing-api:slim . -q && docker images pricing-api:slim --format '{{.Size}}' && docker run --rm -p 8000:8000 -d --name p pricing-api:slim && sleep 3 && curl -s localhost:8000/healthz; docker rm -f p >/dev/null",
        'sha256:9e07d2...\n268MB\n{"status":"ok","version":"2.8.1"}',
    )
    c.bash("python -m pytest -q 2>&1 | tail -1", "204 passed, 2 skipped in 12.33s")
    c.say(
        "From 1.42 GB to 268 MB (81% smaller): slim base, multi-stage build, .dockerignore, and pandas moved to notebook requirements. numpy/scipy still import fine on Debian slim."
    )
    c.user("CI builds the image too, make sure it passes VERSION.")
    c.bash(
        "grep -n 'docker build' .github/workflows/*.yml",
        ".github/workflows/release.yml:44:        run: docker build -t ghcr.io/acme/pricing-api:${{ github.ref_name }} .",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/kofi/pricing-api/.github/workflows/release.yml",
            "old_string": "        run: docker build -t ghcr.io/acme/pricing-api:${{ github.ref_name }} .",
            "new_string": "        run: docker build --build-arg VERSION=${{ github.ref_name }} -t ghcr.io/acme/pricing-api:${{ github.ref_name }} .",
        },
        "The file /home/kofi/pricing-api/.github/workflows/release.yml has been updated successfully.",
    )
    c.bash(
        "git status --short",
        " M .github/workflows/release.yml\n M Dockerfile\n M requirements.txt\n?? .dockerignore\n?? requirements-notebooks.txt",
    )
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
The user asked to shrink the pricing-api Docker image while staying on Debian slim.

Summary:
1. Primary Request and Intent:
   Reduce the pricing-api image (about 1.4 GB, pulled by every node on deploy). Stay on Debian slim rather than Alpine because musl caused problems with the numpy/scipy wheels before. Later: pandas is not used by the service (only notebooks), and CI must pass the VERSION build argument.

2. Key Technical Concepts:
   - Multi-stage Docker builds with pre-built wheels
   - .dockerignore to keep .git and data out of the build context
   - setuptools-scm version detection without .git (SETUPTOOLS_SCM_PRETEND_VERSION)

3. Files and Code Sections:
   - Dockerfile: python:3.12-slim-bookworm build stage building wheels, runtime stage with libpq5 only; VERSION build arg feeding SETUPTOOLS_SCM_PRETEND_VERSION.
   - .dockerignore (new): .git, data/, notebooks/, tests/, caches.
   - requirements.txt: pandas removed; requirements-notebooks.txt (new) adds pandas and jupyterlab.
   - .github/workflows/release.yml: passes --build-arg VERSION from the tag.

4. Errors and fixes:
   - The build failed because setuptools-scm could not determine a version without .git; fixed with the VERSION build arg.

5. Problem Solving:
   docker history showed the full Python base, requirements, build tools and an oversized COPY (no .dockerignore) as the main contributors. The new image is about 270 MB, roughly 80% smaller; numpy, scipy and psycopg import correctly, the health check responds, and tests pass.

6. All user messages:
   - "The pricing-api image is 1.4 GB and deploys pull it on every node. Get it down. Stay on Debian slim, not Alpine: musl broke our numpy and scipy wheels last time …"
   - "pandas? We don't use pandas in the service, only in notebooks."
   - "CI builds the image too, make sure it passes VERSION."

7. Pending Tasks:
   - Commit the changes.

8. Current Work:
   Updated the release workflow to pass VERSION.

9. Optional Next Step:
   Commit and trigger a release build to confirm the image in CI.
"""
    labels = [
        Label("request", "The pricing-api image is 1.4 GB", dropped=False),
        Label("constraint", "Stay on Debian slim, not Alpine", dropped=False),
        Label("decision", "musl broke our numpy and scipy wheels", dropped=False),
        Label("decision", "builds took 40 minutes", dropped=True),  # cut by the elision
        Label("request", "make sure it passes VERSION", dropped=False),
        Label("measurement", "268MB", dropped=False),  # "about 270 MB"
        Label("measurement", "COPY . . at 187 MB", dropped=False),  # "an oversized COPY"
        Label("measurement", ".git (121 MB)", dropped=True),
        Label("measurement", "311MB", dropped=True),  # the size before pandas went
        Label("error", "setuptools-scm was unable to detect version", dropped=False),
        Label("decision", "Rather than put .git back", dropped=True),  # and why: 121 MB in the context
        Label("edit", "SETUPTOOLS_SCM_PRETEND_VERSION", dropped=False),
        Label("file edited", ".github/workflows/release.yml", dropped=False),
        Label("measurement", "204 passed, 2 skipped", dropped=True),
        Label("number", "2.1.3 1.14.1 3.2.3", dropped=True),  # numpy, scipy, psycopg versions in the image
        # noise
        Label("command", "git status --short", dropped=False),
        Label("number", "8000", dropped=False),
        Label("number", "61", dropped=False),
    ]
    return DevSession(c, summary, labels)


def leaked_key() -> DevSession:
    """Security/git: an API key pushed to a public repository, found with git log -S, rotated and
    purged from history with git filter-repo; the user's order of operations and its reason."""
    c = Conversation("/home/mei/status-widget", "fresh-leaked-key")
    c.user(
        "GitHub secret scanning says we pushed a Stripe key in status-widget. Deal with it. Rotate "
        "first, then clean the history: a purged key is still compromised if anyone cloned it."
    )
    c.bash(
        "gh api repos/acme/status-widget/secret-scanning/alerts --jq '.[] | [.number, .secret_type, .state, .created_at] | @tsv'",
        "3\tstripe_api_key\topen\t2026-12-03T08:41:17Z",
    )
    c.bash(
        "gh api repos/acme/status-widget/secret-scanning/alerts/3/locations --jq '.[].details | [.path, .commit_sha, .start_line] | @tsv'",
        "config/dev.env\t5f3a9e2c7d1b4e6f8a0c2d4e6f8a1b3c5d7e9f01\t3",
    )
    c.bash("git log --oneline -S 'sk_live_' --all", "5f3a9e2 dev: local env for the widget preview\n")
    c.bash(
        "git show 5f3a9e2 --stat --format='%an <%ae> %ad'",
        "Chen Wu <chen@acme.example> Tue Dec 1 17:02:44 2026 +0800\n\n config/dev.env | 4 ++++\n 1 file changed, 4 insertions(+)",
    )
    c.bash(
        "git show 5f3a9e2:config/dev.env | sed 's/sk_live_[A-Za-z0-9]*/sk_live_<redacted>/'",
        "WIDGET_PORT=5173\nSTRIPE_PUBLISHABLE=pk_live_51Hx...\nSTRIPE_SECRET=sk_live_<redacted>\nSTATUS_API=https://status.acme.example/api",
    )
    c.bash("git branch -r --contains 5f3a9e2", "  origin/main\n  origin/feature/preview")
    c.say(
        "The live secret key is in config/dev.env, added in 5f3a9e2 by Chen Wu on 1 Dec, and it is on "
        "origin/main and origin/feature/preview. The repository is public, so it must be treated as compromised."
    )
    c.bash("stripe --version", "bash: stripe: command not found", error=True)
    c.user("I'll roll the key in the Stripe dashboard myself, it needs 2FA. Tell me which services use it.")
    c.bash(
        "gh search code 'STRIPE_SECRET org:acme' --json repository,path --jq '.[] | .repository.nameWithOwner + \" \" + .path'",
        "acme/checkout config/prod.env.tpl\nacme/billing-worker deploy/values.yaml\nacme/status-widget config/dev.env",
    )
    c.bash("vault kv get -field=last_rotated secret/stripe/live", "2026-03-14")
    c.say(
        "checkout (config/prod.env.tpl) and billing-worker (deploy/values.yaml) read it from Vault at secret/stripe/live, last rotated on 14 March. After you roll it, the new key goes into Vault and both need a restart."
    )
    c.user(
        "Rolled. New key is in Vault. Now purge the history. Force-push is OK on this repo, I've told the two other contributors."
    )
    c.bash("git filter-repo --version", "bash: git-filter-repo: command not found", error=True)
    c.bash(
        "pip install --user git-filter-repo==2.45.0 && git filter-repo --version",
        "Successfully installed git-filter-repo-2.45.0\na40bc1c42c2b",
    )
    c.bash(
        "cd /tmp && git clone --mirror git@github.com:acme/status-widget.git && cd status-widget.git && git filter-repo --path config/dev.env --invert-paths",
        "Cloning into bare repository 'status-widget.git'...\nParsed 214 commits\nNew history written in 0.41 seconds; now repacking/cleaning...\n"
        "Repacking your repo and cleaning out old unneeded objects\nCompleted the filter-repo run after 1.02 seconds.",
    )
    c.bash(
        "cd /tmp/status-widget.git && git log --all -S 'sk_live_' --oneline | wc -l && git count-objects -vH | grep size-pack",
        "0\nsize-pack: 2.31 MiB",
    )
    c.bash(
        "cd /tmp/status-widget.git && git remote add origin git@github.com:acme/status-widget.git && git push --force --mirror origin 2>&1 | tail -3",
        " ! [remote rejected] refs/pull/12/head -> refs/pull/12/head (deny updating a hidden ref)\n + 8c1d2e4...1b9f0a3 main -> main (forced update)\n"
        "error: failed to push some refs to 'github.com:acme/status-widget.git'",
    )
    c.say(
        "main and the branches were rewritten; only the refs/pull/* refs were rejected, which GitHub "
        "manages itself. Old PR refs still reach the old commit until GitHub support purges them or the "
        "PRs are deleted, which is another reason rotating first was right."
    )
    c.bash("git -C /tmp/status-widget.git ls-remote origin | grep -c 'refs/pull'", "14")
    c.tool(
        "Edit",
        {
            "file_path": "/home/mei/status-widget/.gitignore",
            "old_string": "node_modules/\n",
            "new_string": "node_modules/\n*.env\n!*.env.example\n",
        },
        "The file /home/mei/status-widget/.gitignore has been updated successfully.",
    )
    c.tool(
        "Write",
        {
            "file_path": "/home/mei/status-widget/config/dev.env.example",
            "content": "WIDGET_PORT=5173\nSTRIPE_PUBLISHABLE=pk_test_...\nSTRIPE_SECRET=sk_test_... # never a live key here\nSTATUS_API=https://status.acme.example/api\n",
        },
        "File created successfully at: /home/mei/status-widget/config/dev.env.example",
    )
    c.bash(
        "cd /home/mei/status-widget && git fetch -q && git reset -q --hard origin/main && git add .gitignore config/dev.env.example && git commit -qm 'config: ignore *.env, add an example with test keys' && git push -q && git log --oneline -1",
        "e5d2c90 config: ignore *.env, add an example with test keys",
    )
    c.bash(
        "gh api -X PATCH repos/acme/status-widget/secret-scanning/alerts/3 -f state=resolved -f resolution=revoked --jq .state",
        "resolved",
    )
    c.user("Thanks. Write me a short note for #security with what happened and what's left.")
    c.say(
        "Stripe live key leak in acme/status-widget (alert #3):\n- Pushed on 1 Dec in config/dev.env (5f3a9e2), public repo.\n"
        "- Key rolled by Mei; new key in Vault secret/stripe/live; checkout and billing-worker need a restart.\n"
        "- History purged with git filter-repo and force-pushed; *.env now ignored.\n"
        "- Left: 14 refs/pull/* refs on GitHub still reach the old commit: ask GitHub support to purge them."
    )
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
GitHub secret scanning flagged a live Stripe key in a public repository. The user rotated the key; I found where it was used, purged it from the history, and prevented a repeat.

Summary:
1. Primary Request and Intent:
   Handle a Stripe key pushed to acme/status-widget: rotate first, then clean the history (a purged key is still compromised if anyone cloned it). The user rolled the key in the Stripe dashboard (2FA) and put it in Vault; force-push was allowed after telling the other contributors. Finally, a short note for #security.

2. Key Technical Concepts:
   - GitHub secret scanning alerts and their locations API
   - git log -S to find when a string entered history; git filter-repo --invert-paths; mirror force-push
   - GitHub's hidden refs/pull/* refs cannot be force-updated

3. Files and Code Sections:
   - config/dev.env: held the live key; removed from all history.
   - .gitignore: now ignores *.env except *.env.example.
   - config/dev.env.example (new): test keys only.

4. Errors and fixes:
   - stripe CLI and git-filter-repo not installed; installed git-filter-repo with pip.
   - The mirror push rejected the refs/pull/* refs (hidden refs managed by GitHub); the branches were rewritten.

5. Problem Solving:
   The key came from a single commit on 1 Dec, present on main and a feature branch. Two services (checkout and billing-worker) read the key from Vault and need a restart after the rotation. After the purge no commit contains the key; the alert was resolved as revoked. Old PR refs on GitHub still reference the old commit.

6. All user messages:
   - "GitHub secret scanning says we pushed a Stripe key in status-widget. Deal with it. Rotate first, then clean the history: a purged key is still compromised if anyone cloned it."
   - "I'll roll the key in the Stripe dashboard myself, it needs 2FA. Tell me which services use it."
   - "Rolled. New key is in Vault. Now purge the history. Force-push is OK on this repo, I've told the two other contributors."
   - "Thanks. Write me a short note for #security with what happened and what's left."

7. Pending Tasks:
   - Restart checkout and billing-worker; ask GitHub support to purge the old PR refs.

8. Current Work:
   Wrote the #security note.

9. Optional Next Step:
   None.
"""
    labels = [
        Label("request", "Rotate first, then clean the history", dropped=False),
        Label("decision", "a purged key is still compromised if anyone cloned it", dropped=False),
        Label("constraint", "Force-push is OK on this repo", dropped=False),
        Label("identifier", "5f3a9e2", dropped=True),  # "a single commit on 1 Dec"
        Label("name", "Chen Wu", dropped=True),
        Label("identifier", "e5d2c90", dropped=True),
        Label("path", "secret/stripe/live", dropped=True),  # where the key lives in Vault
        Label("measurement", "14 refs/pull/* refs", dropped=True),  # still reaching the old commit
        Label("number", "2026-03-14", dropped=True),  # the key's previous rotation
        Label("failed command", "git filter-repo --version", dropped=False),
        Label("error", "deny updating a hidden ref", dropped=False),
        Label("edit", "!*.env.example", dropped=False),
        Label("file edited", "config/dev.env.example", dropped=False),
        Label("number", "git-filter-repo==2.45.0", dropped=True),
        # noise
        Label("number", "5173", dropped=False),
        Label("number", "214", dropped=False),
        Label("number", "2.31 MiB", dropped=False),
        Label("command", "git fetch -q", dropped=False),
    ]
    return DevSession(c, summary, labels)


def jinja_advisory() -> DevSession:
    """Python: a pip-audit failure in CI (two advisories), jinja2 upgraded, urllib3 held back by
    botocore's pin; versions read from pip's own outputs, a failing test fixed."""
    c = Conversation("/home/ines/ledger-api", "fresh-jinja-advisory")
    c.user(
        "The security job in CI went red this morning (pip-audit). Fix whatever it flags, but don't "
        "bump boto3 in this PR, the data team pins it for their Glue jobs."
    )
    c.bash(
        "pip-audit -r requirements.txt",
        "Found 3 known vulnerabilities in 2 packages\n"
        "Name    Version ID                  Fix Versions\n"
        "------- ------- ------------------- ------------\n"
        "jinja2  3.1.3   GHSA-h75v-3vvj-5mfj 3.1.4\n"
        "jinja2  3.1.3   GHSA-q2x7-8rv6-6q7h 3.1.5\n"
        "urllib3 1.26.18 GHSA-34jh-p97f-mpxf 1.26.19,2.2.2",
        error=True,
    )
    c.bash(
        "pip index versions jinja2 | head -2",
        "jinja2 (3.1.6)\nAvailable versions: 3.1.6, 3.1.5, 3.1.4, 3.1.3, 3.1.2, 3.1.1, 3.1.0",
    )
    c.bash(
        "pip install -U 'jinja2==3.1.6'",
        "Collecting jinja2==3.1.6\n  Downloading jinja2-3.1.6-py3-none-any.whl (134 kB)\n"
        "Requirement already satisfied: MarkupSafe>=2.0 in ./.venv/lib/python3.12/site-packages (from jinja2==3.1.6) (2.1.5)\n"
        "Installing collected packages: jinja2\n  Attempting uninstall: jinja2\n    Found existing installation: Jinja2 3.1.3\n"
        "    Uninstalling Jinja2-3.1.3:\n      Successfully uninstalled Jinja2-3.1.3\nSuccessfully installed jinja2-3.1.6",
    )
    c.bash(
        "pip install -U 'urllib3>=1.26.19'",
        "Requirement already satisfied: urllib3>=1.26.19 in ./.venv/lib/python3.12/site-packages (1.26.20)\n"
        "ERROR: pip's dependency resolver does not currently take into account all the packages that are installed.\n"
        'botocore 1.34.162 requires urllib3<1.27,>=1.25.4; python_version < "3.10", but you have urllib3 2.2.3 which is incompatible.',
    )
    c.bash("pip show urllib3 | grep -i '^version'", "Version: 1.26.20")
    c.say(
        "urllib3 is already at 1.26.20 in the venv, which includes the fix for GHSA-34jh-p97f-mpxf; only "
        "requirements.txt still says 1.26.18. botocore 1.34.162 caps urllib3 below 1.27, so 2.x is out "
        "without a boto3 bump, which you ruled out. I'll pin urllib3==1.26.20 and jinja2==3.1.6."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/ines/ledger-api/requirements.txt",
            "old_string": "jinja2==3.1.3\n",
            "new_string": "jinja2==3.1.6\n",
        },
        "The file /home/ines/ledger-api/requirements.txt has been updated successfully.",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/ines/ledger-api/requirements.txt",
            "old_string": "urllib3==1.26.18\n",
            "new_string": "urllib3==1.26.20\n",
        },
        "The file /home/ines/ledger-api/requirements.txt has been updated successfully.",
    )
    c.bash(
        "python -m pytest -q -p no:cacheprovider 2>&1 | tail -6",
        "FAILED tests/test_statements.py::test_html_statement_escapes_notes - AssertionError: assert '&#39;' in ...\n"
        "FAILED tests/test_statements.py::test_pdf_footer - AssertionError: assert '&#39;' in ...\n"
        "2 failed, 611 passed, 4 skipped in 38.71s",
        error=True,
    )
    c.say(
        "Jinja2 3.1.4 changed the escaped form of a single quote from &#39; to &#x27; in xmlattr and "
        "escape; our two statement tests compare the exact entity. The output is still escaped, so I'll "
        "assert on the unescaped text being absent instead of one entity's spelling."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/ines/ledger-api/tests/test_statements.py",
            "old_string": '    assert "&#39;" in html\n',
            "new_string": '    assert "O\'Brien" not in html and "O&" in html\n',
        },
        "The file /home/ines/ledger-api/tests/test_statements.py has been updated successfully.",
    )
    c.bash(
        "python -m pytest -q -p no:cacheprovider 2>&1 | tail -2",
        "613 passed, 4 skipped in 37.95s",
    )
    c.bash("pip-audit -r requirements.txt", "No known vulnerabilities found")
    c.bash(
        "git checkout -b sec/jinja-urllib3 && git commit -qam 'deps: jinja2 3.1.6, urllib3 1.26.20 (pip-audit)' && git log -1 --format='%h %s'",
        "Switched to a new branch 'sec/jinja-urllib3'\n7e3a9c1 deps: jinja2 3.1.6, urllib3 1.26.20 (pip-audit)",
    )
    c.bash(
        "gh pr create --fill --label security",
        "Creating pull request for sec/jinja-urllib3 into main in ines/ledger-api\n\nhttps://github.com/ines/ledger-api/pull/318",
    )
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
The user asked me to fix the pip-audit findings that broke the CI security job, without bumping boto3.

Summary:
1. Primary Request and Intent:
   Fix whatever pip-audit flags in CI; do not bump boto3 in this PR (the data team pins it for Glue jobs).

2. Key Technical Concepts:
   - pip-audit against requirements.txt
   - botocore's urllib3<1.27 cap
   - Jinja2's HTML escaping of quotes

3. Files and Code Sections:
   - requirements.txt: jinja2 pinned to 3.1.6, urllib3 to 1.26.20.
   - tests/test_statements.py: the escaping assertion no longer depends on the entity's spelling.

4. Errors and fixes:
   - pip-audit flagged three advisories in jinja2 and urllib3: fixed by the upgrades.
   - Two statement tests failed after the Jinja2 upgrade because the escaped quote changed form: fixed by asserting the raw quote is absent.

5. Problem Solving:
   urllib3 could not move to 2.x because botocore caps it below 1.27, so it stays on the 1.26 line with the fix. The full suite passes and pip-audit is clean.

6. All user messages:
   - "The security job in CI went red this morning (pip-audit). Fix whatever it flags, but don't bump boto3 in this PR, the data team pins it for their Glue jobs."

7. Pending Tasks:
   - None.

8. Current Work:
   Opened a PR with the security label.

9. Optional Next Step:
   Wait for CI on the PR.
"""
    labels = [
        Label("request", "Fix whatever it flags", dropped=False),
        Label("constraint", "don't bump boto3 in this PR", dropped=False),
        Label("decision", "the data team pins it for their Glue jobs", dropped=False),
        Label("identifier", "GHSA-h75v-3vvj-5mfj", dropped=True),  # the advisories by id: the summary says only "three"
        Label("identifier", "GHSA-q2x7-8rv6-6q7h", dropped=True),
        Label("identifier", "GHSA-34jh-p97f-mpxf", dropped=True),
        Label("identifier", "jinja2==3.1.6", dropped=False),
        Label("identifier", "urllib3==1.26.20", dropped=False),
        Label("identifier", "botocore 1.34.162", dropped=True),  # the version that holds urllib3 back
        Label("identifier", "Jinja2 3.1.3", dropped=True),  # the version it came from
        Label("decision", "changed the escaped form of a single quote from &#39; to &#x27;", dropped=True),
        Label("measurement", "2 failed, 611 passed, 4 skipped", dropped=False),  # "two statement tests failed"
        Label("measurement", "613 passed, 4 skipped", dropped=True),  # the suite's size after the fix
        Label("failed command", "pip-audit -r requirements.txt", dropped=False),
        Label("error", "test_html_statement_escapes_notes", dropped=True),  # which tests
        Label("identifier", "7e3a9c1", dropped=True),
        Label("url", "https://github.com/ines/ledger-api/pull/318", dropped=True),
        Label("file edited", "tests/test_statements.py", dropped=False),
        Label("edit", "O'Brien", dropped=True),
        # noise
        Label("number", "134 kB", dropped=False),
        Label("number", "2.1.5", dropped=False),
        Label("number", "3.1.2", dropped=False),
        Label("command", "pip index versions jinja2", dropped=False),
    ]
    return DevSession(c, summary, labels)


def search_throughput() -> DevSession:
    """Go: a search endpoint's throughput measured with wrk and hyperfine, a CPU profile read with
    pprof, JSON encoding pooled; a query's plan and counts read in psql."""
    c = Conversation("/home/tomas/catalog", "fresh-search-throughput")
    c.user(
        "/v1/search tops out way too early in the load test. Find where the time goes and make it "
        "faster. Target is 4000 req/s on the staging box, keep p99 under 50ms."
    )
    c.bash(
        "wrk -t4 -c64 -d30s 'http://localhost:8080/v1/search?q=lamp'",
        "Running 30s test @ http://localhost:8080/v1/search?q=lamp\n  4 threads and 64 connections\n"
        "  Thread Stats   Avg      Stdev     Max   +/- Stdev\n    Latency    24.87ms   11.02ms 231.40ms   86.55%\n"
        "    Req/Sec   647.30     71.12     0.91k    70.25%\n  Latency Distribution\n     50%   22.10ms\n     75%   29.84ms\n"
        "     90%   38.02ms\n     99%   71.66ms\n  77512 requests in 30.04s, 181.22MB read\nRequests/sec:   2580.29\nTransfer/sec:      6.03MB",
    )
    c.bash(
        "curl -s 'localhost:6060/debug/pprof/profile?seconds=20' > /tmp/cpu.pprof && go tool pprof -top -nodecount=8 /tmp/cpu.pprof",
        "File: catalog\nType: cpu\nDuration: 20.13s, Total samples = 31.42s (156.09%)\nShowing nodes accounting for 22.61s, 71.96% of 31.42s total\n"
        "      flat  flat%   sum%        cum   cum%\n"
        "     6.12s 19.48% 19.48%     11.87s 37.78%  encoding/json.(*encodeState).reflectValue\n"
        "     4.40s 14.00% 33.48%      4.40s 14.00%  runtime.mallocgc\n"
        "     3.02s  9.61% 43.09%      3.02s  9.61%  syscall.Syscall\n"
        "     2.55s  8.12% 51.21%      2.55s  8.12%  runtime.memmove\n"
        "     2.01s  6.40% 57.61%      5.88s 18.71%  github.com/lib/pq.(*conn).recv1Buf\n"
        "     1.77s  5.63% 63.24%      1.77s  5.63%  strings.ToLower\n"
        "     1.50s  4.77% 68.01%      1.50s  4.77%  runtime.scanobject\n"
        "     1.24s  3.95% 71.96%      1.24s  3.95%  aeshashbody",
    )
    c.say(
        "JSON encoding is 37.8% of CPU (cum) and allocation another 14%. Each response marshals the "
        "full Product struct, including the 40-field attributes map the client never reads."
    )
    c.bash(
        "psql catalog -c \"EXPLAIN (ANALYZE, BUFFERS) SELECT id, title, price_cents FROM products WHERE search_vec @@ plainto_tsquery('lamp') LIMIT 50\"",
        "                                QUERY PLAN\n"
        "------------------------------------------------------------------------------------------\n"
        " Limit  (cost=24.10..201.44 rows=50 width=52) (actual time=0.412..1.903 rows=50 loops=1)\n"
        "   Buffers: shared hit=214\n"
        "   ->  Bitmap Heap Scan on products  (cost=24.10..1813.22 rows=505 width=52) (actual time=0.410..1.891 rows=50 loops=1)\n"
        "         Recheck Cond: (search_vec @@ plainto_tsquery('lamp'::text))\n"
        "         ->  Bitmap Index Scan on products_search_vec_idx  (cost=0.00..23.97 rows=505 width=0) (actual time=0.301..0.301 rows=1187 loops=1)\n"
        " Planning Time: 0.188 ms\n Execution Time: 1.961 ms\n(8 rows)",
    )
    c.say("The query takes 2 ms with the GIN index, so the database is not the bottleneck.")
    c.bash(
        "psql catalog -c 'SELECT count(*) AS products, count(*) FILTER (WHERE attributes IS NOT NULL) AS with_attrs FROM products'",
        " products | with_attrs \n----------+------------\n   412907 |     398114\n(1 row)",
    )
    c.tool(
        "Read",
        {"file_path": "/home/tomas/catalog/internal/search/handler.go"},
        "    30\tfunc (h *Handler) Search(w http.ResponseWriter, r *http.Request) {\n"
        '    31\t\tproducts, err := h.store.Search(r.Context(), r.URL.Query().Get("q"), 50)\n'
        "    32\t\tif err != nil {\n    33\t\t\thttp.Error(w, err.Error(), 500)\n    34\t\t\treturn\n    35\t\t}\n"
        "    36\t\tjson.NewEncoder(w).Encode(products)\n    37\t}\n",
    )
    c.user("We can't drop attributes from the response, the mobile app reads 'brand' and 'color' out of it.")
    c.say(
        "Then I'll keep brand and color and send a SearchHit with only the fields the clients read, "
        "instead of the whole Product; the full product stays on /v1/products/{id}."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/tomas/catalog/internal/search/handler.go",
            "old_string": "\tjson.NewEncoder(w).Encode(products)\n",
            "new_string": "\thits := make([]SearchHit, len(products))\n\tfor i, p := range products {\n"
            '\t\thits[i] = hitOf(p)\n\t}\n\tw.Header().Set("Content-Type", "application/json")\n'
            "\tjson.NewEncoder(w).Encode(hits)\n",
        },
        "The file /home/tomas/catalog/internal/search/handler.go has been updated successfully.",
    )
    c.tool(
        "Write",
        {
            "file_path": "/home/tomas/catalog/internal/search/hit.go",
            "content": "package search\n\n// SearchHit is what a search result sends: the fields clients read.\n"
            'type SearchHit struct {\n\tID         int64  `json:"id"`\n\tTitle      string `json:"title"`\n'
            '\tPriceCents int64  `json:"price_cents"`\n\tBrand      string `json:"brand,omitempty"`\n'
            '\tColor      string `json:"color,omitempty"`\n}\n',
        },
        "File created successfully at: /home/tomas/catalog/internal/search/hit.go",
    )
    c.bash(
        "go test ./internal/search/ -run XXX -bench BenchmarkSearchEncode -benchmem -count 1",
        "goos: linux\ngoarch: amd64\npkg: github.com/tomas/catalog/internal/search\n"
        "BenchmarkSearchEncode/product-8         \t    2310\t    512877 ns/op\t  298114 B/op\t    4021 allocs/op\n"
        "BenchmarkSearchEncode/hit-8             \t   27451\t     43710 ns/op\t   12288 B/op\t      53 allocs/op\n"
        "PASS\nok  \tgithub.com/tomas/catalog/internal/search\t3.412s",
    )
    c.bash(
        "go test ./... 2>&1 | tail -4",
        "ok  \tgithub.com/tomas/catalog/internal/search\t0.311s\nok  \tgithub.com/tomas/catalog/internal/store\t1.207s",
    )
    c.bash(
        "wrk -t4 -c64 -d30s --latency 'http://localhost:8080/v1/search?q=lamp' | tail -9",
        "  Latency Distribution\n     50%    8.91ms\n     75%   12.40ms\n     90%   17.77ms\n     99%   34.12ms\n"
        "  141307 requests in 30.03s, 41.88MB read\nRequests/sec:   4705.52\nTransfer/sec:      1.39MB",
    )
    c.bash(
        "hyperfine --warmup 3 'curl -s localhost:8080/v1/search?q=lamp -o /dev/null'",
        "Benchmark 1: curl -s localhost:8080/v1/search?q=lamp -o /dev/null\n"
        "  Time (mean ± σ):       6.2 ms ±   0.4 ms    [User: 2.1 ms, System: 1.9 ms]\n"
        "  Range (min … max):     5.6 ms …   8.3 ms    402 runs",
    )
    c.say("4705 req/s now, p99 34 ms, so both targets hold. The response is also 4.3x smaller per request.")
    c.bash(
        "git add -A && git commit -m 'search: send SearchHit instead of Product' && git rev-parse --short HEAD",
        "[perf/search-hit 3b8e2f4] search: send SearchHit instead of Product\n 2 files changed, 19 insertions(+), 1 deletion(-)\n3b8e2f4",
    )
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
The user asked me to find why /v1/search saturates early under load and make it faster.

Summary:
1. Primary Request and Intent:
   Make /v1/search faster: the target is 4000 req/s on staging with p99 under 50 ms.

2. Key Technical Concepts:
   - wrk load tests, pprof CPU profiles
   - encoding/json reflection cost
   - Postgres full-text search with a GIN index

3. Files and Code Sections:
   - internal/search/handler.go: encodes a slice of SearchHit instead of Product.
   - internal/search/hit.go (new): SearchHit with id, title, price_cents, brand and color.

4. Errors and fixes:
   - None.

5. Problem Solving:
   The profile showed JSON encoding of the full Product (with its large attributes map) dominating CPU. The query itself is fast thanks to the GIN index. The mobile app reads brand and color from the attributes, so those stay. After the change the endpoint does about 4700 req/s with p99 around 34 ms, meeting both targets.

6. All user messages:
   - "/v1/search tops out way too early in the load test. Find where the time goes and make it faster. Target is 4000 req/s on the staging box, keep p99 under 50ms."
   - The mobile app reads 'brand' and 'color' from the attributes, so they cannot be dropped from the response.

7. Pending Tasks:
   - None.

8. Current Work:
   Committed the SearchHit change on perf/search-hit.

9. Optional Next Step:
   Run the load test on staging.
"""
    labels = [
        Label("request", "Target is 4000 req/s on the staging box", dropped=False),
        Label("constraint", "keep p99 under 50ms", dropped=False),
        Label("constraint", "the mobile app reads 'brand' and 'color'", dropped=False),
        Label("measurement", "Requests/sec:   2580.29", dropped=True),  # the baseline
        Label("measurement", "71.66ms", dropped=True),  # the baseline p99
        Label("measurement", "Requests/sec:   4705.52", dropped=False),  # "about 4700 req/s"
        Label("measurement", "34.12ms", dropped=False),
        Label("measurement", "37.78%", dropped=True),  # JSON's share of CPU
        Label("measurement", "Execution Time: 1.961 ms", dropped=True),
        Label("measurement", "412907", dropped=True),  # how many products
        Label("measurement", "43710 ns/op", dropped=True),  # the encode benchmark after
        Label("measurement", "512877 ns/op", dropped=True),  # before
        Label("measurement", "4.3x smaller", dropped=True),
        Label("identifier", "3b8e2f4", dropped=True),
        Label("file edited", "internal/search/hit.go", dropped=False),
        Label("decision", "the full product stays on /v1/products/{id}", dropped=True),
        # noise
        Label("number", "156.09%", dropped=False),
        Label("number", "0.91k", dropped=False),
        Label("number", "Transfer/sec", dropped=False),
        Label("number", "6.2 ms", dropped=False),
        Label("number", "402 runs", dropped=False),
        Label("number", "Planning Time: 0.188 ms", dropped=False),
        Label("number", "rows=1187", dropped=False),
        Label("number", "3.412s", dropped=False),
    ]
    return DevSession(c, summary, labels)


def refunds_migration() -> DevSession:
    """Flask and Alembic: a refunds table added after a merge left two heads; the previous head,
    the new revision and the counts a backfill printed; a ticket named in the request."""
    c = Conversation("/srv/payments", "fresh-refunds-migration")
    c.user(
        "PAY-1182: add a refunds table (id, payment_id FK, amount_cents, reason, created_at) and "
        "backfill it from the old payments.refunded_cents column. Take a dump before you migrate anything."
    )
    c.bash(
        "flask db heads",
        "9b1e5f3c2a7d (head)\n51c0d8e6f4a2 (head)",
    )
    c.bash(
        "flask db history -r 51c0d8e6f4a2:9b1e5f3c2a7d 2>&1 | head -5",
        "e02f7a4b9c13 -> 9b1e5f3c2a7d (head), payouts: add currency\n"
        "e02f7a4b9c13 -> 51c0d8e6f4a2 (head), payments: index on merchant_id\n"
        "77d3c1a9e8b0 -> e02f7a4b9c13 (branchpoint), merchants: soft delete",
    )
    c.say(
        "Two heads: 9b1e5f3c2a7d (payouts currency) and 51c0d8e6f4a2 (merchant index), both from "
        "e02f7a4b9c13 after last week's merge. I'll add a merge revision first so the new migration "
        "has one parent."
    )
    c.bash(
        "pg_dump -Fc payments -f /backups/payments-pre-refunds.dump && ls -lh /backups/payments-pre-refunds.dump",
        "-rw-r--r-- 1 postgres postgres 1.8G Dec  3 10:41 /backups/payments-pre-refunds.dump",
    )
    c.bash(
        "flask db merge -m 'merge payouts and merchant index' 9b1e5f3c2a7d 51c0d8e6f4a2",
        "  Generating /srv/payments/migrations/versions/c7a41e09d2b5_merge_payouts_and_merchant_index.py ...  done",
    )
    c.bash(
        "flask db revision -m 'refunds table'",
        "  Generating /srv/payments/migrations/versions/4c2d9e7a1b3f_refunds_table.py ...  done",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/srv/payments/migrations/versions/4c2d9e7a1b3f_refunds_table.py",
            "old_string": "def upgrade():\n    pass\n",
            "new_string": 'def upgrade():\n    op.create_table(\n        "refunds",\n'
            '        sa.Column("id", sa.BigInteger, primary_key=True),\n'
            '        sa.Column("payment_id", sa.BigInteger, sa.ForeignKey("payments.id", ondelete="RESTRICT"), nullable=False),\n'
            '        sa.Column("amount_cents", sa.BigInteger, nullable=False),\n'
            '        sa.Column("reason", sa.Text),\n'
            '        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.func.now()),\n    )\n',
        },
        "The file /srv/payments/migrations/versions/4c2d9e7a1b3f_refunds_table.py has been updated successfully.",
    )
    c.bash(
        "flask db upgrade",
        "INFO  [alembic.runtime.migration] Context impl PostgresqlImpl.\n"
        "INFO  [alembic.runtime.migration] Will assume transactional DDL.\n"
        "INFO  [alembic.runtime.migration] Running upgrade 9b1e5f3c2a7d, 51c0d8e6f4a2 -> c7a41e09d2b5, merge payouts and merchant index\n"
        "INFO  [alembic.runtime.migration] Running upgrade c7a41e09d2b5 -> 4c2d9e7a1b3f, refunds table",
    )
    c.bash(
        "python scripts/backfill_refunds.py --batch 5000",
        "batch 1: 5000 payments scanned, 212 refunds inserted\nbatch 2: 5000 payments scanned, 198 refunds inserted\n"
        "batch 3: 3117 payments scanned, 131 refunds inserted\ndone: 13117 payments scanned, 541 refunds inserted, 3 skipped (refunded_cents > amount_cents)",
    )
    c.say(
        "541 refunds backfilled; 3 payments were skipped because their refunded_cents exceeds the "
        "payment amount, which the new table can't represent as one refund."
    )
    c.bash(
        "psql payments -c 'SELECT id, amount_cents, refunded_cents FROM payments WHERE refunded_cents > amount_cents'",
        "   id    | amount_cents | refunded_cents \n---------+--------------+----------------\n 1009312 |         4999 |           9998\n"
        " 1011870 |        12000 |          24000\n 1020455 |          350 |            700\n(3 rows)",
    )
    c.say("All three are refunded exactly twice their amount: a double refund, not bad data in the column.")
    c.user(
        "Those are the Stripe webhook replay from October. Leave them out and list them in the PR, finance handles them by hand."
    )
    c.bash(
        "git add migrations scripts && git commit -m 'PAY-1182: refunds table and backfill' && git log -1 --format=%H",
        "[feat/refunds 1f0e6b2] PAY-1182: refunds table and backfill\n 3 files changed, 96 insertions(+)\n"
        "1f0e6b2c9a4d8e7f6a5b4c3d2e1f0a9b8c7d6e5f",
    )
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
The user asked for a refunds table backfilled from payments.refunded_cents, with a dump taken first.

Summary:
1. Primary Request and Intent:
   PAY-1182: add a refunds table (id, payment_id FK, amount_cents, reason, created_at) and backfill it from payments.refunded_cents; take a dump before migrating.

2. Key Technical Concepts:
   - Alembic (Flask-Migrate) heads, merge revisions
   - Batched backfill

3. Files and Code Sections:
   - migrations/versions/4c2d9e7a1b3f_refunds_table.py: creates refunds with a RESTRICT foreign key to payments.
   - A merge revision joining the two heads.
   - scripts/backfill_refunds.py: batched backfill.

4. Errors and fixes:
   - Alembic had two heads after last week's merge: added a merge revision first.

5. Problem Solving:
   Dumped the database to /backups before migrating. The backfill inserted 541 refunds; three payments were refunded twice their amount (the October Stripe webhook replay) and were left out.

6. All user messages:
   - "PAY-1182: add a refunds table (id, payment_id FK, amount_cents, reason, created_at) and backfill it from the old payments.refunded_cents column. Take a dump before you migrate anything."
   - The three double refunds come from the Stripe webhook replay in October: leave them out and list them in the PR; finance handles them manually.

7. Pending Tasks:
   - Open the PR listing the three skipped payments.

8. Current Work:
   Committed the migration and backfill on feat/refunds.

9. Optional Next Step:
   Open the PR.
"""
    labels = [
        Label("request", "add a refunds table", dropped=False),
        Label("constraint", "Take a dump before you migrate anything", dropped=False),
        Label("identifier", "PAY-1182", dropped=False),
        Label("identifier", "9b1e5f3c2a7d", dropped=True),  # the heads before
        Label("identifier", "51c0d8e6f4a2", dropped=True),
        Label("identifier", "c7a41e09d2b5", dropped=True),  # the merge revision
        Label("identifier", "4c2d9e7a1b3f", dropped=False),
        Label("identifier", "1f0e6b2", dropped=True),
        Label("path", "/backups/payments-pre-refunds.dump", dropped=True),  # where the dump is
        Label("measurement", "1.8G", dropped=True),
        Label("measurement", "541 refunds inserted", dropped=False),
        Label("measurement", "13117 payments scanned", dropped=True),
        Label("identifier", "1009312", dropped=True),  # the three payments to list in the PR
        Label("identifier", "1011870", dropped=True),
        Label("identifier", "1020455", dropped=True),
        Label("decision", "finance handles them by hand", dropped=False),
        # noise
        Label("number", "e02f7a4b9c13", dropped=False),
        Label("number", "77d3c1a9e8b0", dropped=False),
        Label("number", "batch 2", dropped=False),
        Label("number", "96 insertions", dropped=False),
    ]
    return DevSession(c, summary, labels)


def h2_advisory_bench() -> DevSession:
    """Rust: cargo audit flags h2 (RUSTSEC), hyper and h2 moved by cargo update, a criterion benchmark
    before and after, the commit made; the user's reason for keeping the MSRV in prose."""
    c = Conversation("/home/lena/tilegate", "fresh-h2-advisory-bench")
    c.user(
        "cargo audit is failing on main. Fix it without raising the MSRV (1.74), the Debian package "
        "builds with that toolchain. Also check we didn't make tile encoding slower."
    )
    c.bash(
        "cargo audit",
        "    Fetching advisory database from `https://github.com/RustSec/advisory-db.git`\n"
        "      Loaded 682 security advisories (from /home/lena/.cargo/advisory-db)\n"
        "    Scanning Cargo.lock for vulnerabilities (311 crate dependencies)\n"
        "Crate:     h2\nVersion:   0.3.24\nTitle:     Degradation of service in h2 servers with CONTINUATION Flood\n"
        "Date:      2024-04-03\nID:        RUSTSEC-2024-0332\nURL:       https://rustsec.org/advisories/RUSTSEC-2024-0332\n"
        "Solution:  Upgrade to ^0.3.26 OR >=0.4.4\nDependency tree:\nh2 0.3.24\n└── hyper 0.14.28\n    └── tilegate 0.9.3\n\n"
        "error: 1 vulnerability found!",
        error=True,
    )
    c.bash(
        "cargo update -p h2 --precise 0.3.26",
        "    Updating crates.io index\n    Updating h2 v0.3.24 -> v0.3.26",
    )
    c.bash("cargo audit 2>&1 | tail -1", "    Scanning Cargo.lock for vulnerabilities (311 crate dependencies)")
    c.bash(
        "cargo +1.74 build --release 2>&1 | tail -2",
        "   Compiling tilegate v0.9.3 (/home/lena/tilegate)\n    Finished release [optimized] target(s) in 1m 52s",
    )
    c.say(
        "h2 0.3.26 builds on 1.74 and clears RUSTSEC-2024-0332. Staying on the 0.3 line keeps hyper 0.14, "
        "so no API change for us. Now the encoding benchmark against the baseline saved before."
    )
    c.bash(
        "cargo bench --bench encode -- --baseline before 2>&1 | tail -12",
        "encode/png_256         time:   [412.18 µs 415.02 µs 418.33 µs]\n"
        "                        change: [+0.4121% +1.1032% +1.8610%] (p = 0.01 < 0.05)\n"
        "                        Change within noise threshold.\n"
        "Found 4 outliers among 100 measurements (4.00%)\n  3 (3.00%) high mild\n  1 (1.00%) high severe\n"
        "encode/mvt_4096        time:   [2.9914 ms 3.0127 ms 3.0366 ms]\n"
        "                        change: [-0.8822% +0.2051% +1.2733%] (p = 0.71 > 0.05)\n"
        "                        No change in performance detected.",
    )
    c.say("Both within noise: png_256 +1.1% (p = 0.01, under the 2% threshold) and mvt_4096 unchanged at 3.01 ms.")
    c.bash(
        "cargo test --release 2>&1 | grep 'test result'",
        "test result: ok. 143 passed; 0 failed; 2 ignored; 0 measured; 0 filtered out; finished in 4.87s\n"
        "test result: ok. 12 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.61s",
    )
    c.bash(
        "git commit -am 'deps: h2 0.3.26 (RUSTSEC-2024-0332)' && git rev-parse --short HEAD",
        "[main 5e1c0d9] deps: h2 0.3.26 (RUSTSEC-2024-0332)\n 1 file changed, 2 insertions(+), 2 deletions(-)\n5e1c0d9",
    )
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
The user asked me to fix the failing cargo audit on main without raising the MSRV, and to check the encoding benchmark.

Summary:
1. Primary Request and Intent:
   Fix cargo audit on main without raising the MSRV of 1.74 (the Debian package builds with it); confirm tile encoding did not get slower.

2. Key Technical Concepts:
   - cargo audit and the RustSec advisory database
   - cargo update --precise
   - criterion baselines

3. Files and Code Sections:
   - Cargo.lock: h2 bumped within the 0.3 line.

4. Errors and fixes:
   - cargo audit reported a CONTINUATION flood advisory in h2 (pulled in by hyper 0.14): fixed by updating h2 to 0.3.26.

5. Problem Solving:
   Staying on h2 0.3 keeps hyper 0.14 and the MSRV; the release build on 1.74 works. The encode benchmarks show no significant regression; all tests pass.

6. All user messages:
   - "cargo audit is failing on main. Fix it without raising the MSRV (1.74), the Debian package builds with that toolchain. Also check we didn't make tile encoding slower."

7. Pending Tasks:
   - None.

8. Current Work:
   Committed the lockfile change.

9. Optional Next Step:
   Push to main.
"""
    labels = [
        Label("request", "cargo audit is failing on main", dropped=False),
        Label("constraint", "without raising the MSRV (1.74)", dropped=False),
        Label("decision", "the Debian package builds with that toolchain", dropped=False),
        Label("identifier", "RUSTSEC-2024-0332", dropped=True),  # the summary says "a CONTINUATION flood advisory"
        Label("identifier", "h2 v0.3.24 -> v0.3.26", dropped=False),
        Label("identifier", "5e1c0d9", dropped=True),
        Label("measurement", "415.02 µs", dropped=True),  # png_256 after
        Label("measurement", "+1.1032%", dropped=True),
        Label("measurement", "3.0127 ms", dropped=True),
        Label("measurement", "1m 52s", dropped=True),  # the release build on 1.74
        Label("measurement", "143 passed", dropped=True),
        Label("failed command", "cargo audit", dropped=False),
        # noise
        Label("number", "682 security advisories", dropped=False),
        Label("number", "311 crate dependencies", dropped=False),
        Label("number", "Found 4 outliers among 100 measurements", dropped=False),
        Label("number", "12 passed", dropped=False),
        Label("number", "2024-04-03", dropped=False),
    ]
    return DevSession(c, summary, labels)


def stuck_orders() -> DevSession:
    """Django and MySQL: orders stuck in "processing" after a deploy, the regression found in git log,
    counts and ids read in mysql, a Celery retry setting; migrations applied."""
    c = Conversation("/home/dev/shopfront", "fresh-stuck-orders")
    c.user(
        "Orders are piling up in 'processing' since yesterday's deploy (OPS-2291). Find out why and "
        "unstick them. Don't touch the payments app, it's under PCI review this week."
    )
    c.bash(
        'mysql -e "SELECT status, COUNT(*) AS n FROM orders_order WHERE created_at > NOW() - INTERVAL 1 DAY GROUP BY status" shop',
        "+------------+------+\n| status     | n    |\n+------------+------+\n| completed  | 8123 |\n| processing |  617 |\n"
        "| cancelled  |   41 |\n+------------+------+\n3 rows in set (0.21 sec)",
    )
    c.bash(
        "git log --oneline -6 -- orders/",
        "e7a90c2 orders: move fulfilment to a celery chord\n3d2b1f8 orders: typed statuses\n"
        "a0c4e11 orders: index on created_at\n7f3e2d9 orders: admin filters\n19b8c6a orders: refund reasons\n"
        "c2d4f6a orders: initial app",
    )
    c.bash(
        "grep -n 'acks_late\\|max_retries\\|chord' orders/tasks.py",
        "12:@shared_task(bind=True, acks_late=True, max_retries=0)\n31:    chord(reserve.s(o) for o in items)(finalise.s(order_id))",
    )
    c.say(
        "e7a90c2 moved fulfilment to a chord whose callback `finalise` has max_retries=0, so when one "
        "reservation times out the chord never calls finalise and the order stays in processing."
    )
    c.bash(
        "tail -n 3 /var/log/celery/worker.log",
        "[2026-12-02 09:14:07,112: ERROR/ForkPoolWorker-3] Chord 'a3f0c9e1-5b7d-4e2a-9c18-6d0b2e4f7a31' raised: TimeoutError('reserve took > 30s')\n"
        "[2026-12-02 09:14:07,113: WARNING/ForkPoolWorker-3] Chord callback for 'finalise' will not be called\n"
        "[2026-12-02 09:14:09,880: INFO/MainProcess] Task orders.tasks.reserve succeeded in 0.41s",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/dev/shopfront/orders/tasks.py",
            "old_string": "@shared_task(bind=True, acks_late=True, max_retries=0)",
            "new_string": "@shared_task(bind=True, acks_late=True, max_retries=5, default_retry_delay=20)",
        },
        "The file /home/dev/shopfront/orders/tasks.py has been updated successfully.",
    )
    c.bash(
        "python manage.py test orders -v 1 2>&1 | tail -3",
        "Ran 88 tests in 6.412s\n\nOK",
    )
    c.bash(
        "python manage.py migrate orders",
        "Operations to perform:\n  Apply all migrations: orders\nRunning migrations:\n  Applying orders.0031_order_retry_count... OK",
    )
    c.bash(
        'python manage.py shell -c "from orders.tasks import requeue_stuck; print(requeue_stuck(hours=24))"',
        "requeued 617 orders, 0 failed",
    )
    c.bash(
        "mysql -e \"SELECT COUNT(*) FROM orders_order WHERE status='processing' AND updated_at < NOW() - INTERVAL 10 MINUTE\" shop",
        "+----------+\n| COUNT(*) |\n+----------+\n|        3 |\n+----------+",
    )
    c.bash(
        "mysql -e \"SELECT id, payment_ref FROM orders_order WHERE status='processing' AND updated_at < NOW() - INTERVAL 10 MINUTE\" shop",
        "+--------+-------------+\n| id     | payment_ref |\n+--------+-------------+\n| 771204 | pi_3Q8aZk   |\n| 771388 | pi_3Q8bXm   |\n"
        "| 771502 | NULL        |\n+--------+-------------+\n3 rows in set (0.01 sec)",
    )
    c.say(
        "614 of the 617 went through. The 3 left are waiting on payments (two pending intents, one without a payment ref), which I won't touch."
    )
    c.bash(
        "git commit -am 'orders: retry the fulfilment callback (OPS-2291)' && git log -1 --format='%h'",
        "[fix/ops-2291 8b4d2e0] orders: retry the fulfilment callback (OPS-2291)\n 2 files changed, 19 insertions(+), 1 deletion(-)\n8b4d2e0",
    )
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
The user reported orders stuck in processing after a deploy and asked me to find the cause and unstick them without touching payments.

Summary:
1. Primary Request and Intent:
   Orders are stuck in 'processing' since yesterday's deploy (OPS-2291): find why and unstick them, without touching the payments app (under PCI review).

2. Key Technical Concepts:
   - Celery chords and callbacks, acks_late, retries
   - Django migrations

3. Files and Code Sections:
   - orders/tasks.py: the fulfilment callback now retries (max_retries=5, 20 s delay) instead of never retrying.

4. Errors and fixes:
   - A reservation timeout made the chord skip its callback, leaving orders in processing.

5. Problem Solving:
   The regression came with the commit moving fulfilment to a Celery chord. After the fix the orders tests pass, the new migration was applied, and the stuck orders were requeued; three remain, all waiting on payments.

6. All user messages:
   - "Orders are piling up in 'processing' since yesterday's deploy (OPS-2291). Find out why and unstick them. Don't touch the payments app, it's under PCI review this week."

7. Pending Tasks:
   - The three orders waiting on payments.

8. Current Work:
   Committed the fix on fix/ops-2291.

9. Optional Next Step:
   Open a PR.
"""
    labels = [
        Label("request", "Find out why and unstick them", dropped=False),
        Label("constraint", "Don't touch the payments app", dropped=False),
        Label("identifier", "OPS-2291", dropped=False),
        Label("identifier", "e7a90c2", dropped=True),  # "the commit moving fulfilment to a Celery chord"
        Label("measurement", "617", dropped=True),  # how many were stuck
        Label("measurement", "requeued 617 orders", dropped=True),
        Label("identifier", "771204", dropped=True),  # the three left, by id
        Label("identifier", "771388", dropped=True),
        Label("identifier", "771502", dropped=True),
        Label("identifier", "0031_order_retry_count", dropped=True),
        Label("identifier", "8b4d2e0", dropped=True),
        Label("edit", "max_retries=5, default_retry_delay=20", dropped=False),
        Label("measurement", "Ran 88 tests", dropped=True),
        Label("error", "TimeoutError('reserve took > 30s')", dropped=True),
        # noise
        Label("number", "8123", dropped=False),
        Label("number", "a0c4e11", dropped=False),
        Label("number", "0.41s", dropped=False),
        Label("number", "a3f0c9e1-5b7d-4e2a-9c18-6d0b2e4f7a31", dropped=False),
    ]
    return DevSession(c, summary, labels)


def cors_allowlist() -> DevSession:
    """TypeScript and Kubernetes: a new origin for a CORS allow-list; a prefix match found and made
    exact; a failing test, then a type error (its "Found 1 error" line), test runs superseded; the
    allow-list's values typed into `kubectl set env`, a rollout's progress lines, search hits.
    Written and labelled before the rule ran on it (round 11)."""
    c = Conversation("/home/noor/orders-api", "fresh-cors-allowlist")
    c.user(
        "The new admin app at https://admin.acme.io gets CORS errors calling the orders API. Add it to the "
        "allow-list. Keep the list in config, not hard-coded, and don't open it to *.acme.io: security "
        "signed off on exact origins only."
    )
    c.bash(
        'rg -n "cors" src/',
        "src/app.ts:14:import cors from 'cors';\n"
        "src/app.ts:41:app.use(cors({ origin: allowedOrigins(config.corsOrigins) }));\n"
        "src/config.ts:27:  corsOrigins: env('CORS_ORIGINS', 'https://app.acme.io'),\n"
        "src/cors.ts:3:export function allowedOrigins(list: string) {",
    )
    c.tool(
        "Read",
        {"file_path": "/home/noor/orders-api/src/cors.ts"},
        "     1\timport type { CorsOptions } from 'cors';\n     2\t\n"
        "     3\texport function allowedOrigins(list: string) {\n"
        "     4\t  const origins = list.split(',').map((o) => o.trim());\n"
        "     5\t  return (origin: string | undefined, cb: (e: Error | null, ok?: boolean) => void) =>\n"
        "     6\t    cb(null, isAllowed(origins, origin));\n     7\t}\n     8\t\n"
        "     9\texport function isAllowed(origins: string[], origin: string | undefined) {\n"
        "    10\t  return origins.some((o) => origin.startsWith(o));\n    11\t}\n",
    )
    c.bash(
        "kubectl -n orders get deploy orders-api -o json | jq -r '.spec.template.spec.containers[0].env[] "
        '| select(.name=="CORS_ORIGINS") | .value\'',
        "https://app.acme.io,https://partners.acme.io",
    )
    c.say(
        "The allow-list comes from CORS_ORIGINS (app and partners today). isAllowed matches by prefix, "
        "so https://app.acme.io.evil.example is allowed too. I'll make it an exact match."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/noor/orders-api/src/cors.ts",
            "old_string": "  return origins.some((o) => origin.startsWith(o));",
            "new_string": "  return origins.includes(origin);",
        },
        "The file /home/noor/orders-api/src/cors.ts has been updated successfully.",
    )
    c.bash(
        "npm test 2>&1 | tail -12",
        " FAIL  test/cors.test.ts\n  ● isAllowed › accepts a configured origin with a trailing slash\n\n"
        "    expect(received).toBe(expected) // Object.is equality\n\n    Expected: true\n    Received: false\n\n"
        "      18 |   expect(isAllowed(['https://app.acme.io/'], 'https://app.acme.io')).toBe(true);\n\n"
        "Test Suites: 1 failed, 11 passed, 12 total\nTests:       1 failed, 63 passed, 64 total\nTime:        6.114 s",
        error=True,
    )
    c.say(
        "Browsers never send a trailing slash in Origin, but a configured origin may carry one, so I'll "
        "strip trailing slashes from the configured list rather than loosen the match."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/noor/orders-api/src/cors.ts",
            "old_string": "  const origins = list.split(',').map((o) => o.trim());",
            "new_string": "  const origins = list.split(',').map((o) => o.trim().replace(/\\/+$/, ''));",
        },
        "The file /home/noor/orders-api/src/cors.ts has been updated successfully.",
    )
    c.bash("npm test 2>&1 | tail -3", "Tests:       64 passed, 64 total\nSnapshots:   0 total\nTime:        5.871 s")
    c.user(
        "Also, the partners origin goes away when their contract ends on 2026-12-31. Leave a TODO with "
        "that date next to the default so whoever touches it next knows."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/noor/orders-api/src/config.ts",
            "old_string": "  corsOrigins: env('CORS_ORIGINS', 'https://app.acme.io'),",
            "new_string": "  // TODO(2026-12-31): drop https://partners.acme.io from CORS_ORIGINS, the partner contract ends\n"
            "  corsOrigins: env('CORS_ORIGINS', 'https://app.acme.io'),",
        },
        "The file /home/noor/orders-api/src/config.ts has been updated successfully.",
    )
    c.bash(
        "npx tsc --noEmit",
        "src/cors.ts:10:27 - error TS2345: Argument of type 'string | undefined' is not assignable to "
        "parameter of type 'string'.\n\n10   return origins.includes(origin);\n                             ~~~~~~\n\n"
        "Found 1 error in src/cors.ts:10\n",
        error=True,
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/noor/orders-api/src/cors.ts",
            "old_string": "  return origins.includes(origin);",
            "new_string": "  return origin !== undefined && origins.includes(origin);",
        },
        "The file /home/noor/orders-api/src/cors.ts has been updated successfully.",
    )
    c.bash(
        "npx tsc --noEmit && npm test -- --silent 2>&1 | tail -3",
        "Tests:       65 passed, 65 total\nSnapshots:   0 total\nTime:        5.402 s",
    )
    c.bash(
        "kubectl -n orders set env deploy/orders-api "
        "CORS_ORIGINS=https://app.acme.io,https://partners.acme.io,https://admin.acme.io",
        "deployment.apps/orders-api env updated",
    )
    c.bash(
        "kubectl -n orders rollout status deploy/orders-api",
        'Waiting for deployment "orders-api" rollout to finish: 1 of 3 updated replicas are available...\n'
        'Waiting for deployment "orders-api" rollout to finish: 2 of 3 updated replicas are available...\n'
        'deployment "orders-api" successfully rolled out',
    )
    c.bash(
        "curl -s -o /dev/null -w '%{http_code}\\n' -X OPTIONS -H 'Origin: https://admin.acme.io' "
        "-H 'Access-Control-Request-Method: GET' https://orders.acme.io/v1/orders && "
        "curl -sI -H 'Origin: https://app.acme.io.evil.example' https://orders.acme.io/v1/orders | grep -ci access-control-allow-origin",
        "204\n0",
    )
    c.say("The admin app's preflight gets 204, and the lookalike origin gets no Access-Control-Allow-Origin header.")
    c.bash(
        "git switch -c fix/cors-admin && git commit -qam 'cors: exact origins, admin app' && git log -1 --format=%h",
        "Switched to a new branch 'fix/cors-admin'\n4e8c21a",
    )
    c.bash("gh pr create --fill", "https://github.com/acme/orders-api/pull/512")
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
The user asked to allow the new admin app's origin in the orders API's CORS configuration, with exact origins only; I found and fixed a prefix match, deployed the new list and opened a PR.

Summary:
1. Primary Request and Intent:
   Allow https://admin.acme.io in the orders API's CORS allow-list, keeping the list in configuration (CORS_ORIGINS) rather than code, and allowing exact origins only, no *.acme.io wildcard (security's sign-off).

2. Key Technical Concepts:
   - CORS preflight, the `cors` middleware's origin callback
   - Kubernetes deployment environment variables

3. Files and Code Sections:
   - src/cors.ts: isAllowed now matches origins exactly (it matched by prefix, which let lookalike domains through); configured origins are normalised (trailing slashes stripped); a missing Origin is refused.
   - src/config.ts: CORS_ORIGINS default unchanged.

4. Errors and fixes:
   - A test expecting a configured origin with a trailing slash to match failed after the exact match; fixed by normalising the configured list.
   - tsc: `origin` may be undefined; handled explicitly.

5. Problem Solving:
   The allow-list now holds app, partners and admin; the rollout finished, the admin preflight succeeds and a lookalike origin is refused. Tests and type checks pass.

6. All user messages:
   - "The new admin app at https://admin.acme.io gets CORS errors calling the orders API. Add it to the allow-list. Keep the list in config, not hard-coded, and don't open it to *.acme.io: security signed off on exact origins only."
   - A follow-up about the partners origin.

7. Pending Tasks:
   - Review and merge the PR.

8. Current Work:
   Opened a PR from fix/cors-admin.

9. Optional Next Step:
   Wait for review.
"""
    labels = [
        Label("request", "Add it to the allow-list", dropped=False),
        Label("constraint", "Keep the list in config, not hard-coded", dropped=False),
        Label("constraint", "don't open it to *.acme.io", dropped=False),
        Label("url", "https://admin.acme.io", dropped=False),
        Label("measurement", "https://app.acme.io,https://partners.acme.io", dropped=False),  # "app, partners"
        Label("edit", "origins.includes(origin)", dropped=False),  # exact match
        Label("failed command", "accepts a configured origin with a trailing slash", dropped=False),
        # the reason for normalising the list rather than the request: said nowhere in the summary
        Label("decision", "Browsers never send a trailing slash in Origin", dropped=True),
        Label("edit", "replace(/\\/+$/, '')", dropped=False),
        Label("request", "the partners origin goes away when their contract ends on 2026-12-31", dropped=True),
        Label("edit", "TODO(2026-12-31)", dropped=True),
        Label("error", "TS2345", dropped=False),
        Label("measurement", "65 passed", dropped=True),
        Label("identifier", "4e8c21a", dropped=True),
        Label("url", "https://github.com/acme/orders-api/pull/512", dropped=True),
        Label("name", "app.acme.io.evil.example", dropped=False),
        # noise
        Label("number", "63 passed", dropped=False),  # the failing run, superseded
        Label("number", "64 passed", dropped=False),  # superseded by the run after the type fix
        Label("number", "Found 1 error", dropped=False),
        Label("number", "11 passed", dropped=False),
        Label("number", "2 of 3 updated replicas", dropped=False),
        Label("number", "src/app.ts:41", dropped=False),
        Label("number", "5.402 s", dropped=False),
        Label("number", "204", dropped=False),
    ]
    return DevSession(c, summary, labels)


def musl_binary() -> DevSession:
    """Rust on a new Debian runner: a link failure (`cannot find -lssl`, then cargo's "could not
    compile … due to 1 previous error"), apt's progress and count lines, a switch to rustls and a
    static musl build whose size the user bounds, a failing test and its tally, then the run that
    passes. Written and labelled before the rule ran on it (round 11)."""
    c = Conversation("/home/ana/tilesrv", "fresh-musl-binary")
    c.user(
        "The release build of tilesrv fails at link time on the new Debian 12 runner. Get it building. "
        "The binary must stay under 20 MB, it ships in a scratch image."
    )
    c.bash(
        "cargo build --release 2>&1 | tail -9",
        "error: linking with `cc` failed: exit status: 1\n  |\n"
        '  = note: LC_ALL="C" PATH="/usr/local/cargo/bin:/usr/bin" VSLANG="1033" "cc" "-m64" "/tmp/rustcXy1/symbols.o" "-lssl" "-lcrypto"\n'
        "  = note: /usr/bin/ld: cannot find -lssl: No such file or directory\n"
        "          /usr/bin/ld: cannot find -lcrypto: No such file or directory\n"
        "          collect2: error: ld returned 1 exit status\n\n"
        'error: could not compile `tilesrv` (bin "tilesrv") due to 1 previous error',
        error=True,
    )
    c.bash(
        "sudo apt-get install -y libssl-dev pkg-config",
        "Reading package lists... Done\nBuilding dependency tree... Done\nReading state information... Done\n"
        "The following NEW packages will be installed:\n  libssl-dev pkg-config\n"
        "0 upgraded, 2 newly installed, 0 to remove and 14 not upgraded.\nNeed to get 2,468 kB of archives.\n"
        "After this operation, 13.9 MB of additional disk space will be used.\n"
        "Get:1 http://deb.debian.org/debian bookworm/main amd64 libssl-dev amd64 3.0.15-1~deb12u1 [2,439 kB]\n"
        "Get:2 http://deb.debian.org/debian bookworm/main amd64 pkg-config amd64 1.8.1-1 [29.4 kB]\n"
        "Fetched 2,468 kB in 0s (18.2 MB/s)\nSetting up libssl-dev:amd64 (3.0.15-1~deb12u1) ...\nSetting up pkg-config (1.8.1-1) ...",
    )
    c.user("Wait, the runtime image is scratch: there's no libssl in it. Use rustls instead of linking OpenSSL.")
    c.tool(
        "Edit",
        {
            "file_path": "/home/ana/tilesrv/Cargo.toml",
            "old_string": 'reqwest = { version = "0.12", features = ["json"] }',
            "new_string": 'reqwest = { version = "0.12", default-features = false, features = ["json", "rustls-tls"] }',
        },
        "The file /home/ana/tilesrv/Cargo.toml has been updated successfully.",
    )
    c.bash(
        "cargo build --release 2>&1 | tail -2 && ls -l target/release/tilesrv && ldd target/release/tilesrv",
        "   Compiling tilesrv v0.9.3 (/home/ana/tilesrv)\n    Finished `release` profile [optimized] target(s) in 2m 41s\n"
        "-rwxr-xr-x 2 ana ana 18734592 Dec  4 16:02 target/release/tilesrv\n"
        "\tlinux-vdso.so.1 (0x00007ffd5e3f1000)\n\tlibgcc_s.so.1 => /lib/x86_64-linux-gnu/libgcc_s.so.1 (0x00007f0c1a2b0000)\n"
        "\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f0c1a0cf000)",
    )
    c.say(
        "No OpenSSL any more, but it still links glibc dynamically, which scratch doesn't have either. "
        "I'll build it static for x86_64-unknown-linux-musl."
    )
    c.bash(
        "rustup target add x86_64-unknown-linux-musl",
        "info: downloading component 'rust-std' for 'x86_64-unknown-linux-musl'\n"
        " 24.9 MiB /  24.9 MiB (100 %)  12.1 MiB/s in  2s ETA:  0s\n"
        "info: installing component 'rust-std' for 'x86_64-unknown-linux-musl'",
    )
    c.bash(
        "cargo build --release --target x86_64-unknown-linux-musl 2>&1 | tail -1 && "
        "ls -l target/x86_64-unknown-linux-musl/release/tilesrv",
        "    Finished `release` profile [optimized] target(s) in 2m 58s\n"
        "-rwxr-xr-x 2 ana ana 19921408 Dec  4 16:09 target/x86_64-unknown-linux-musl/release/tilesrv",
    )
    c.say("19921408 bytes: under 20 MB, but only just, with about 79 KB to spare.")
    c.bash(
        "cargo test --release 2>&1 | tail -12",
        "failures:\n\n---- tls::tests::rejects_self_signed stdout ----\n"
        "thread 'tls::tests::rejects_self_signed' panicked at src/tls.rs:88:9:\n"
        "assertion failed: matches!(err, Error::Tls(_))\n\nfailures:\n    tls::tests::rejects_self_signed\n\n"
        "test result: FAILED. 211 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 3.12s\n\n"
        "error: test failed, to rerun pass `--bin tilesrv`",
        error=True,
    )
    c.say(
        "With rustls a self-signed certificate fails inside reqwest's connector, so the error arrives as "
        "Error::Http. I'll map rustls's certificate errors to Error::Tls in the client wrapper instead of "
        "loosening the test, because callers retry on Http but must not retry a bad certificate."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/ana/tilesrv/src/client.rs",
            "old_string": "        Err(e) => Err(Error::Http(e)),",
            "new_string": "        Err(e) if is_certificate_error(&e) => Err(Error::Tls(e.to_string())),\n        Err(e) => Err(Error::Http(e)),",
        },
        "The file /home/ana/tilesrv/src/client.rs has been updated successfully.",
    )
    c.bash(
        "cargo test --release 2>&1 | grep 'test result'",
        "test result: ok. 212 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 3.07s",
    )
    c.bash(
        "cargo clippy --release -- -D warnings 2>&1 | tail -2",
        "    Checking tilesrv v0.9.3 (/home/ana/tilesrv)\n    Finished `release` profile [optimized] target(s) in 14.02s",
    )
    c.bash(
        "git commit -qam 'build: rustls and a static musl binary for the scratch image' && git log -1 --format=%h",
        "b4f1e0a",
    )
    c.user("Thanks. Put the size check in CI so we notice before it crosses 20 MB.")
    c.tool(
        "Edit",
        {
            "file_path": "/home/ana/tilesrv/.github/workflows/build.yml",
            "old_string": "      - run: cargo build --release --target x86_64-unknown-linux-musl\n",
            "new_string": "      - run: cargo build --release --target x86_64-unknown-linux-musl\n"
            "      - run: test $(stat -c%s target/x86_64-unknown-linux-musl/release/tilesrv) -lt 20971520\n",
        },
        "The file /home/ana/tilesrv/.github/workflows/build.yml has been updated successfully.",
    )
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
The user asked to fix tilesrv's release build on a new Debian 12 runner and keep the binary under 20 MB for a scratch image; I moved TLS to rustls, built a static musl binary, fixed a TLS test and added a CI size check.

Summary:
1. Primary Request and Intent:
   Fix the release build of tilesrv, which fails at link time on the new Debian 12 runner, keeping the binary under 20 MB because it ships in a scratch image; then add a CI check for that size.

2. Key Technical Concepts:
   - Rust linking against system OpenSSL vs rustls
   - Static musl builds for scratch images

3. Files and Code Sections:
   - Cargo.toml: reqwest without default features, with rustls-tls (the scratch image has no libssl, per the user).
   - src/client.rs: certificate errors from rustls mapped to Error::Tls.
   - .github/workflows/build.yml: a step failing the build when the musl binary reaches 20 MB.

4. Errors and fixes:
   - The linker could not find OpenSSL's libraries; installing libssl-dev fixed the build, but the user asked for rustls instead.
   - The glibc build still linked libc dynamically: built for x86_64-unknown-linux-musl instead.
   - tls::tests::rejects_self_signed failed after the switch (rustls's error arrived as Error::Http); fixed by mapping certificate errors to Error::Tls rather than loosening the test.

5. Problem Solving:
   The static musl binary builds and stays under the 20 MB limit; tests and clippy pass.

6. All user messages:
   - "The release build of tilesrv fails at link time on the new Debian 12 runner. Get it building. The binary must stay under 20 MB, it ships in a scratch image."
   - "Wait, the runtime image is scratch: there's no libssl in it. Use rustls instead of linking OpenSSL."
   - "Thanks. Put the size check in CI so we notice before it crosses 20 MB."

7. Pending Tasks:
   - None beyond pushing the change.

8. Current Work:
   Added the CI size check to the build workflow.

9. Optional Next Step:
   Push and watch the runner's build.
"""
    labels = [
        Label("request", "Get it building", dropped=False),
        Label("constraint", "The binary must stay under 20 MB", dropped=False),
        Label("error", "cannot find -lssl", dropped=False),  # "could not find OpenSSL's libraries"
        Label("identifier", "3.0.15-1~deb12u1", dropped=True),  # the libssl-dev installed
        Label("constraint", "Use rustls instead of linking OpenSSL", dropped=False),
        Label("edit", "rustls-tls", dropped=False),
        Label("measurement", "18734592", dropped=True),  # the glibc build's size
        Label("decision", "build it static for x86_64-unknown-linux-musl", dropped=False),
        Label("measurement", "19921408", dropped=True),  # the musl binary: just under the bound
        Label("measurement", "about 79 KB to spare", dropped=True),
        Label("failed command", "rejects_self_signed", dropped=False),
        # why map the error rather than loosen the test: said nowhere in the summary
        Label("decision", "callers retry on Http but must not retry a bad certificate", dropped=True),
        Label("measurement", "212 passed", dropped=True),
        Label("identifier", "b4f1e0a", dropped=True),
        Label("request", "Put the size check in CI", dropped=False),
        Label("edit", "20971520", dropped=False),  # "when the musl binary reaches 20 MB"
        # noise
        Label("number", "2,468 kB", dropped=False),
        Label("number", "13.9 MB", dropped=False),
        Label("number", "18.2 MB/s", dropped=False),
        Label("number", "2 newly installed", dropped=False),
        Label("number", "24.9 MiB", dropped=False),
        Label("number", "2m 41s", dropped=False),
        Label("number", "2m 58s", dropped=False),
        Label("number", "14.02s", dropped=False),
        Label("number", "211 passed", dropped=False),  # the failing run's tally, superseded
        Label("number", "due to 1 previous error", dropped=False),
    ]
    return DevSession(c, summary, labels)


def redis_failover() -> DevSession:
    """Kubernetes on call: a checkout latency alert in one region, traced across two clusters'
    contexts to a node under memory pressure (pod and node names in kubectl's output, a Redis
    master on that node, a batch job's memory in `kubectl top`); the user's constraint on the prod
    cluster said once in prose. Written and labelled before the rule ran on it (round 12)."""
    eu = "gke_acme-prod_europe-west1_prod-eu-1"
    c = Conversation("/home/lena/platform-deploy", "fresh-redis-failover")
    c.user(
        "PagerDuty: checkout p99 latency alert firing since 02:10 UTC, only in EU it seems. Can you find out "
        "what's going on? Read-only for now, I'm on the bridge."
    )
    c.bash(
        "kubectl config get-contexts -o name",
        f"{eu}\ngke_acme-prod_us-east1_prod-us-1\ngke_acme-staging_europe-west1_staging-eu-1",
    )
    c.bash(
        f"kubectl --context {eu} -n checkout get pods -o wide",
        "NAME                              READY   STATUS    RESTARTS      AGE   IP           NODE                                 NOMINATED NODE   READINESS GATES\n"
        "checkout-api-7c9f8d6b5-2xkqp      1/1     Running   0             3d    10.12.4.17   gke-prod-eu-1-pool-b-4f2a9c1e-k8zd   <none>           <none>\n"
        "checkout-api-7c9f8d6b5-8hvtm      1/1     Running   0             3d    10.12.7.33   gke-prod-eu-1-pool-b-4f2a9c1e-q2mn   <none>           <none>\n"
        "checkout-api-7c9f8d6b5-lw4rj      1/1     Running   4 (38m ago)   3d    10.12.9.5    gke-prod-eu-1-pool-b-4f2a9c1e-x7vb   <none>           <none>\n"
        "checkout-worker-5d4b7c8f9-jn2sd   1/1     Running   0             3d    10.12.4.21   gke-prod-eu-1-pool-b-4f2a9c1e-k8zd   <none>           <none>\n"
        "redis-checkout-node-0             2/2     Running   0             12d   10.12.3.8    gke-prod-eu-1-pool-a-91bd03f7-c4tt   <none>           <none>\n"
        "redis-checkout-node-1             2/2     Running   1 (41m ago)   12d   10.12.9.12   gke-prod-eu-1-pool-b-4f2a9c1e-x7vb   <none>           <none>\n"
        "redis-checkout-node-2             2/2     Running   0             12d   10.12.5.40   gke-prod-eu-1-pool-a-91bd03f7-m9pl   <none>           <none>",
    )
    c.say(
        "checkout-api-7c9f8d6b5-lw4rj restarted 4 times in the last 38 minutes and redis-checkout-node-1 "
        "restarted 41 minutes ago. Both run on the same node, gke-prod-eu-1-pool-b-4f2a9c1e-x7vb. "
        "Let me read the API pod's previous logs."
    )
    c.bash(
        f"kubectl --context {eu} -n checkout logs checkout-api-7c9f8d6b5-lw4rj --previous --tail=5",
        '{"level":"warn","ts":"2026-12-05T02:31:07Z","msg":"redis command timeout","addr":"redis-checkout-node-1.redis-checkout-headless:6379","cmd":"GET","timeout_ms":250}\n'
        '{"level":"warn","ts":"2026-12-05T02:31:08Z","msg":"redis command timeout","addr":"redis-checkout-node-1.redis-checkout-headless:6379","cmd":"SETEX","timeout_ms":250}\n'
        '{"level":"warn","ts":"2026-12-05T02:31:08Z","msg":"redis command timeout","addr":"redis-checkout-node-1.redis-checkout-headless:6379","cmd":"GET","timeout_ms":250}\n'
        '{"level":"error","ts":"2026-12-05T02:31:09Z","msg":"readiness dependency failed","dep":"redis","consecutive":12}\n'
        '{"level":"info","ts":"2026-12-05T02:31:10Z","msg":"shutting down","signal":"SIGTERM"}',
    )
    c.bash(
        f"kubectl --context {eu} -n checkout exec redis-checkout-node-0 -c sentinel -- "
        "redis-cli -p 26379 sentinel get-master-addr-by-name mymaster",
        '1) "10.12.9.12"\n2) "6379"',
    )
    c.say(
        "Sentinel still has 10.12.9.12 as master, which is redis-checkout-node-1: the master sits on the "
        "troubled node, so every API pod's Redis calls time out at 250 ms. What is that node doing?"
    )
    c.bash(
        f"kubectl --context {eu} describe node gke-prod-eu-1-pool-b-4f2a9c1e-x7vb | sed -n '/Conditions:/,/Addresses:/p'",
        "Conditions:\n"
        "  Type             Status  LastHeartbeatTime                 Reason                       Message\n"
        "  ----             ------  -----------------                 ------                       -------\n"
        "  MemoryPressure   True    Sat, 05 Dec 2026 02:44:51 +0000   KubeletHasInsufficientMemory kubelet has insufficient memory available\n"
        "  DiskPressure     False   Sat, 05 Dec 2026 02:44:51 +0000   KubeletHasNoDiskPressure     kubelet has no disk pressure\n"
        "  PIDPressure      False   Sat, 05 Dec 2026 02:44:51 +0000   KubeletHasSufficientPID      kubelet has sufficient PID available\n"
        "  Ready            True    Sat, 05 Dec 2026 02:44:51 +0000   KubeletReady                 kubelet is posting ready status\n"
        "Addresses:",
    )
    c.bash(
        f"kubectl --context {eu} top pods -A --sort-by=memory "
        "--field-selector spec.nodeName=gke-prod-eu-1-pool-b-4f2a9c1e-x7vb | head -5",
        "NAMESPACE    NAME                               CPU(cores)   MEMORY(bytes)\n"
        "batch        report-export-28891530-zt6kp       912m         9214Mi\n"
        "checkout     redis-checkout-node-1              88m          2310Mi\n"
        "checkout     checkout-api-7c9f8d6b5-lw4rj       143m         611Mi\n"
        "monitoring   node-exporter-h4x2m                3m           21Mi",
    )
    c.say(
        "report-export-28891530-zt6kp, the nightly report export CronJob that started at 02:00, holds 9214Mi "
        "on a 16 GiB node. That's the memory pressure: it squeezes the Redis master. The job has no memory limit?"
    )
    c.bash(
        f"kubectl --context {eu} -n batch get cronjob report-export "
        "-o jsonpath='{.spec.jobTemplate.spec.template.spec.containers[0].resources}'",
        "{}",
    )
    c.bash(
        "kubectl --context gke_acme-prod_us-east1_prod-us-1 -n batch get cronjob report-export "
        "-o jsonpath='{.spec.jobTemplate.spec.template.spec.containers[0].resources}'",
        '{"limits":{"memory":"4Gi"},"requests":{"memory":"2Gi"}}',
    )
    c.say(
        "In prod-us-1 the same CronJob has a 4Gi limit and a 2Gi request; in EU it has none. The EU values "
        "file must be missing the resources block."
    )
    c.user(
        "Ok that matches what the bridge sees. You can cordon the node and fail Redis over, nothing else: no "
        "helm upgrades on the prod cluster while the change freeze is on. Put the values fix in a PR."
    )
    c.bash(
        f"kubectl --context {eu} cordon gke-prod-eu-1-pool-b-4f2a9c1e-x7vb",
        "node/gke-prod-eu-1-pool-b-4f2a9c1e-x7vb cordoned",
    )
    c.bash(
        f"kubectl --context {eu} -n checkout exec redis-checkout-node-0 -c sentinel -- "
        "sh -c 'redis-cli -p 26379 sentinel failover mymaster && sleep 5 && "
        "redis-cli -p 26379 sentinel get-master-addr-by-name mymaster'",
        'OK\n1) "10.12.3.8"\n2) "6379"',
    )
    c.bash(
        "curl -s 'http://prometheus.monitoring:9090/api/v1/query' --data-urlencode "
        "'query=histogram_quantile(0.99, sum by (le) (rate(checkout_request_seconds_bucket{cluster=\"prod-eu-1\"}[5m])))' "
        "| jq -r '.data.result[0].value[1]'",
        "0.187",
    )
    c.say(
        "The master moved to 10.12.3.8 (redis-checkout-node-0, on pool-a), and EU checkout p99 is down to "
        "187 ms from the 2.4 s the alert fired on."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/lena/platform-deploy/charts/report-export/values-prod-eu.yaml",
            "old_string": 'schedule: "0 2 * * *"\n',
            "new_string": 'schedule: "0 2 * * *"\nresources:\n  requests:\n    memory: 2Gi\n  limits:\n    memory: 4Gi\n',
        },
        "The file /home/lena/platform-deploy/charts/report-export/values-prod-eu.yaml has been updated successfully.",
    )
    c.bash(
        "git checkout -qb fix/report-export-eu-limits && git commit -qam 'report-export: memory limits in prod-eu "
        "like prod-us' && git push -q -u origin HEAD 2>&1 | tail -1 && git log -1 --format=%h",
        "remote:   https://github.com/acme/platform-deploy/pull/new/fix/report-export-eu-limits\n5c2e9a1",
    )
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
The user, on an incident bridge, asked me to investigate a checkout p99 latency alert in EU. I traced it to a node under memory pressure hosting the Redis master, caused by a report-export job without memory limits, then cordoned the node, failed Redis over and opened a PR with the limits.

Summary:
1. Primary Request and Intent:
   Investigate the checkout p99 latency alert firing since 02:10 UTC in the EU production cluster, read-only at first; later the user allowed cordoning the node and a Redis failover, with the values fix going through a PR.

2. Key Technical Concepts:
   - Kubernetes node memory pressure, cordoning
   - Redis Sentinel failover
   - Helm values per cluster, CronJob resource limits

3. Files and Code Sections:
   - charts/report-export/values-prod-eu.yaml: added a resources block (2Gi request, 4Gi limit), matching prod-us-1.

4. Errors and fixes:
   - Checkout API pods restarted after Redis command timeouts (250 ms) against redis-checkout-node-1, the Sentinel master, which ran on a node with MemoryPressure=True.
   - The nightly report-export job on that node used about 9 GiB with no memory limit set in EU (prod-us-1 has 4Gi).

5. Problem Solving:
   Cordoned the node and ran a Sentinel failover; the master moved to redis-checkout-node-0 and EU p99 recovered from about 2.4 s to under 200 ms. The limits fix is in a PR on branch fix/report-export-eu-limits.

6. All user messages:
   - Reported the PagerDuty checkout p99 alert since 02:10 UTC, apparently only in EU; asked me to find out what's going on, read-only, while they were on the bridge.
   - "Ok that matches what the bridge sees. You can cordon the node and fail Redis over, nothing else. Put the values fix in a PR."

7. Pending Tasks:
   - Get the PR reviewed and merged after the change freeze; uncordon the node once the job has limits.

8. Current Work:
   Pushed the branch with the EU values fix.

9. Optional Next Step:
   Share the PR link on the bridge.
"""
    labels = [
        Label("request", "find out what's going on", dropped=False),
        Label("constraint", "Read-only for now", dropped=False),
        Label("identifier", eu, dropped=True),  # the summary says only "the EU production cluster"
        Label("identifier", "checkout-api-7c9f8d6b5-lw4rj", dropped=True),  # the pod that restarted
        Label("measurement", "4 (38m ago)", dropped=True),  # its restarts
        Label("identifier", "gke-prod-eu-1-pool-b-4f2a9c1e-x7vb", dropped=True),  # the node, cordoned
        Label("identifier", "redis-checkout-node-1", dropped=False),
        Label("error", "redis command timeout", dropped=False),  # "Redis command timeouts (250 ms)"
        Label("identifier", "10.12.9.12", dropped=True),  # the old master's address
        Label("error", "KubeletHasInsufficientMemory", dropped=False),  # "MemoryPressure=True"
        Label("identifier", "report-export-28891530-zt6kp", dropped=True),  # the pod that ate the memory
        Label("measurement", "9214Mi", dropped=False),  # "about 9 GiB"
        Label("measurement", "2310Mi", dropped=True),  # the Redis master's own memory
        Label("measurement", '{"limits":{"memory":"4Gi"},"requests":{"memory":"2Gi"}}', dropped=False),
        Label("constraint", "no helm upgrades on the prod cluster while the change freeze is on", dropped=True),
        Label("request", "Put the values fix in a PR", dropped=False),
        Label("identifier", "10.12.3.8", dropped=True),  # the new master
        Label("measurement", "0.187", dropped=True),  # p99 after: "under 200 ms" in the summary is a bound
        Label("edit", "memory: 4Gi", dropped=False),
        Label("identifier", "5c2e9a1", dropped=True),
        Label("url", "https://github.com/acme/platform-deploy/pull/new/fix/report-export-eu-limits", dropped=True),
        # noise
        Label("identifier", "checkout-api-7c9f8d6b5-2xkqp", dropped=False),
        Label("identifier", "node-exporter-h4x2m", dropped=False),
        Label("number", "611Mi", dropped=False),
        Label("number", "143m", dropped=False),
        Label("number", "912m", dropped=False),
        Label("name", "gke_acme-staging_europe-west1_staging-eu-1", dropped=False),
        Label("number", "02:31:09", dropped=False),
        Label("number", '"consecutive":12', dropped=False),
    ]
    return DevSession(c, summary, labels)


def gateway_heap() -> DevSession:
    """Node/TypeScript: a websocket gateway's memory leak hunted with a soak test and memlab's heap
    snapshot diff (leaked object counts and retained sizes the session reasons about), a registry
    keyed two ways, a jest failure on the way, RSS before and after; the user's rule on
    dependencies. Written and labelled before the rule ran on it (round 12)."""
    c = Conversation("/home/sam/ws-gateway", "fresh-gateway-heap")
    c.user(
        "ws-gateway grows by ~300 MB a day in prod and gets OOM-killed every couple of days. Find the leak. "
        "Don't add anything to the production dependencies for this; devDependencies are fine."
    )
    c.bash(
        "npm run soak -- --connections 2000 --duration 600 --heap-snapshots heap/ 2>&1 | tail -6",
        "> ws-gateway@3.8.2 soak\n> ts-node scripts/soak.ts --connections 2000 --duration 600 --heap-snapshots heap/\n\n"
        "connections opened: 2000, closed: 2000, errors: 0\n"
        "messages delivered: 1,184,206\n"
        "rss start 182.4 MB, end 611.9 MB; heapUsed start 96.1 MB, end 503.7 MB\n"
        "snapshots: heap/s1.heapsnapshot heap/s2.heapsnapshot heap/s3.heapsnapshot",
    )
    c.say(
        "RSS went from 182.4 MB to 611.9 MB in ten minutes although every connection was closed, so something "
        "outlives the connections. memlab can diff the three snapshots."
    )
    c.bash(
        "npx memlab find-leaks --baseline heap/s1.heapsnapshot --target heap/s2.heapsnapshot --final heap/s3.heapsnapshot 2>&1 | head -24",
        "MemLab found 2 leak(s)\n\n"
        "--Similar leaks in this run: 1998--\n"
        "--Retained size of leaked objects: 391.2MB--\n"
        "[<synthetic>] (synthetic) @1 [1.9GB]\n"
        "  --2 (shortcut)--->  [Window / global] (object) @7 [52.1MB]\n"
        "  --registry (property)--->  [SubscriptionRegistry] (object) @201553 [391.4MB]\n"
        "  --byKey (property)--->  [Map] (object) @201561 [391.3MB]\n"
        "  --table (internal)--->  (object elements) @2211089 [391.3MB]\n"
        "  --c-4f1d:orders (element)--->  [Subscription] (object) @2210087 [196.4KB]\n"
        "  --socket (property)--->  [WebSocket] (object) @2210101 [194.8KB]\n\n"
        "--Similar leaks in this run: 4--\n"
        "--Retained size of leaked objects: 1.1MB--\n"
        "[<synthetic>] (synthetic) @1 [1.9GB]\n"
        "  --2 (shortcut)--->  [Window / global] (object) @7 [52.1MB]\n"
        "  --soakTimers (property)--->  [Array] (object) @88113 [1.1MB]\n"
        "  --0 (element)--->  [Timeout] (object) @77123 [281.2KB]",
    )
    c.say(
        "The big leak: 1998 Subscription objects, nearly one per closed connection, retaining 391.2 MB through "
        "the registry's byKey Map, each still holding its WebSocket (~195 KB apiece, mostly the socket's buffers). "
        "The second leak, 4 Timeouts, is the soak script's own timers; I'll ignore it."
    )
    c.tool(
        "Read",
        {"file_path": "/home/sam/ws-gateway/src/pubsub/registry.ts"},
        "     1\timport type { WebSocket } from 'ws';\n     2\timport { Subscription } from './subscription';\n     3\t\n"
        "     4\texport class SubscriptionRegistry {\n"
        "     5\t  private byKey = new Map<string, Subscription>();\n     6\t\n"
        "     7\t  subscribe(connId: string, channel: string, socket: WebSocket) {\n"
        "     8\t    this.byKey.set(`${connId}:${channel}`, new Subscription(channel, socket));\n     9\t  }\n    10\t\n"
        "    11\t  unsubscribe(connId: string) {\n"
        "    12\t    this.byKey.delete(connId);\n    13\t  }\n    14\t\n"
        "    15\t  size() {\n    16\t    return this.byKey.size;\n    17\t  }\n    18\t}\n",
    )
    c.say(
        "Found it: subscribe stores under `${connId}:${channel}` but unsubscribe deletes `connId`, which never "
        "matches, so a closed connection's subscriptions stay forever. I'll keep a per-connection index of its keys."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/sam/ws-gateway/src/pubsub/registry.ts",
            "old_string": "  unsubscribe(connId: string) {\n    this.byKey.delete(connId);\n  }",
            "new_string": "  unsubscribe(connId: string) {\n"
            "    for (const key of this.keysByConn.get(connId) ?? []) this.byKey.delete(key);\n"
            "    this.keysByConn.delete(connId);\n  }",
        },
        "The file /home/sam/ws-gateway/src/pubsub/registry.ts has been updated successfully.",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/sam/ws-gateway/src/pubsub/registry.ts",
            "old_string": "    this.byKey.set(`${connId}:${channel}`, new Subscription(channel, socket));",
            "new_string": "    const key = `${connId}:${channel}`;\n    this.byKey.set(key, new Subscription(channel, socket));\n"
            "    if (!this.keysByConn.has(connId)) this.keysByConn.set(connId, new Set());\n"
            "    this.keysByConn.get(connId)!.add(key);",
        },
        "The file /home/sam/ws-gateway/src/pubsub/registry.ts has been updated successfully.",
    )
    c.bash(
        "npx jest src/pubsub 2>&1 | tail -14",
        " FAIL  src/pubsub/registry.test.ts\n"
        "  ● SubscriptionRegistry › drops every channel of a closed connection\n\n"
        "    TypeError: Cannot read properties of undefined (reading 'get')\n\n"
        "      12 |   unsubscribe(connId: string) {\n"
        "    > 13 |     for (const key of this.keysByConn.get(connId) ?? []) this.byKey.delete(key);\n\n"
        "Test Suites: 1 failed, 3 passed, 4 total\nTests:       2 failed, 21 passed, 23 total\nTime:        2.481 s",
        error=True,
    )
    c.say("I never declared the keysByConn field. Adding it next to byKey.")
    c.tool(
        "Edit",
        {
            "file_path": "/home/sam/ws-gateway/src/pubsub/registry.ts",
            "old_string": "  private byKey = new Map<string, Subscription>();\n",
            "new_string": "  private byKey = new Map<string, Subscription>();\n  private keysByConn = new Map<string, Set<string>>();\n",
        },
        "The file /home/sam/ws-gateway/src/pubsub/registry.ts has been updated successfully.",
    )
    c.bash(
        "npx jest src/pubsub 2>&1 | tail -4",
        "Test Suites: 4 passed, 4 total\nTests:       23 passed, 23 total\nSnapshots:   0 total\nTime:        2.302 s",
    )
    c.bash(
        "npm run soak -- --connections 2000 --duration 600 --heap-snapshots heap/ 2>&1 | tail -3 && "
        "npx memlab find-leaks --baseline heap/s1.heapsnapshot --target heap/s2.heapsnapshot --final heap/s3.heapsnapshot 2>&1 | head -3",
        "connections opened: 2000, closed: 2000, errors: 0\n"
        "messages delivered: 1,179,842\n"
        "rss start 181.9 MB, end 204.7 MB; heapUsed start 95.8 MB, end 101.2 MB\n"
        "MemLab found 1 leak(s)\n\n--Similar leaks in this run: 4--",
    )
    c.say(
        "After the fix RSS ends at 204.7 MB, 22.8 MB above the start instead of 429.5 MB, and heapUsed is flat. "
        "Only the soak script's 4 timers remain in memlab's report."
    )
    c.user("Great. Did anything end up in dependencies? And commit it.")
    c.bash(
        "git diff --stat package.json; git commit -qam 'pubsub: unsubscribe drops every channel of a connection' "
        "&& git log -1 --format=%h",
        "9d03b7e",
    )
    c.say("package.json is unchanged: memlab ran through npx, nothing was added. Committed as 9d03b7e.")
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
The user asked me to find a memory leak in ws-gateway (it grows steadily and gets OOM-killed), without adding production dependencies. A soak test plus memlab pointed at SubscriptionRegistry, whose unsubscribe used the wrong key; I fixed it, the tests pass and the soak no longer grows.

Summary:
1. Primary Request and Intent:
   Find the memory leak that makes ws-gateway grow by about 300 MB a day in production until it is OOM-killed; no new production dependencies (dev dependencies are fine). Then commit.

2. Key Technical Concepts:
   - Soak testing with heap snapshots; memlab find-leaks (baseline/target/final)
   - Retained size, leak traces through a Map

3. Files and Code Sections:
   - src/pubsub/registry.ts: subscribe keys entries by `${connId}:${channel}` but unsubscribe deleted `connId`, so nothing was ever removed. Added a keysByConn index (Map<string, Set<string>>) and made unsubscribe delete every key of the connection.

4. Errors and fixes:
   - Leak: roughly 2,000 Subscription objects (one per closed connection) retained about 390 MB through the registry's byKey Map during a 10-minute soak with 2000 connections.
   - Jest failed after the first edit (TypeError reading 'get'): the keysByConn field had not been declared; added it.

5. Problem Solving:
   Before the fix, RSS grew from about 180 MB to about 610 MB during the soak; after it, RSS stays nearly flat and memlab reports only the soak script's own timers.

6. All user messages:
   - "ws-gateway grows by ~300 MB a day in prod and gets OOM-killed every couple of days. Find the leak. Don't add anything to the production dependencies for this; devDependencies are fine."
   - "Great. Did anything end up in dependencies? And commit it."

7. Pending Tasks:
   - None.

8. Current Work:
   Committed the fix; package.json is unchanged.

9. Optional Next Step:
   Deploy and watch the memory graph for a day.
"""
    labels = [
        Label("request", "Find the leak", dropped=False),
        Label("constraint", "Don't add anything to the production dependencies", dropped=False),
        Label("measurement", "611.9 MB", dropped=False),  # "about 610 MB"
        Label("measurement", "182.4 MB", dropped=False),  # "about 180 MB"
        Label("measurement", "Similar leaks in this run: 1998", dropped=False),  # "roughly 2,000"
        Label("measurement", "391.2MB", dropped=False),  # "about 390 MB"
        Label("measurement", "196.4KB", dropped=True),  # what one leaked subscription holds
        Label("decision", "I'll ignore it", dropped=False),  # "only the soak script's own timers"
        Label("edit", "keysByConn", dropped=False),
        Label("error", "Cannot read properties of undefined (reading 'get')", dropped=False),
        Label("measurement", "204.7 MB", dropped=True),  # RSS at the end after the fix
        Label("measurement", "22.8 MB above the start", dropped=True),
        Label("measurement", "heapUsed start 96.1 MB, end 503.7 MB", dropped=True),
        Label("measurement", "23 passed", dropped=True),
        Label("identifier", "9d03b7e", dropped=True),
        Label("request", "And commit it", dropped=False),
        # noise
        Label("number", "1,184,206", dropped=False),
        Label("number", "1,179,842", dropped=False),
        Label("number", "1.9GB", dropped=False),
        Label("number", "52.1MB", dropped=False),
        Label("number", "281.2KB", dropped=False),
        Label("number", "2.481 s", dropped=False),
        Label("number", "21 passed", dropped=False),
        Label("identifier", "@2210087", dropped=False),
        Label("name", "ws-gateway@3.8.2", dropped=False),
    ]
    return DevSession(c, summary, labels)


def login_redirect() -> DevSession:
    """Python/Flask: an open redirect from a security ticket, fixed with a host check; ruff's F821
    of a failed `make lint`, the report's payloads put into a regression test (one of them fails
    first), a header value an edit sets, a bandit finding the user rules out. Written and labelled
    before the rule ran on it (round 12)."""
    c = Conversation("/home/ivo/portal", "fresh-login-redirect")
    c.user(
        "SEC-2291 from the pentest: /login?next= is an open redirect. Fix it and add a regression test with "
        "the payloads from the report. CI runs `make lint` (ruff + bandit), it has to stay green."
    )
    c.bash(
        "rg -n 'next' app/auth/views.py",
        '31:    next_url = request.args.get("next")\n48:        return redirect(next_url or url_for("home.index"))',
    )
    c.bash(
        "sed -n '/Payloads/,/^$/p' docs/pentest/SEC-2291.md",
        "Payloads\n"
        "  /login?next=https://evil.example/\n"
        "  /login?next=//evil.example%2F@portal.acme.io\n"
        "  /login?next=/\\evil.example\n",
    )
    c.say(
        "The view redirects to whatever `next` says. I'll only allow relative paths on our own host: no scheme, "
        "no netloc, and not starting with `//`."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/ivo/portal/app/auth/views.py",
            "old_string": '        return redirect(next_url or url_for("home.index"))',
            "new_string": '        return redirect(next_url if is_safe_next(next_url) else url_for("home.index"))',
        },
        "The file /home/ivo/portal/app/auth/views.py has been updated successfully.",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/ivo/portal/app/auth/views.py",
            "old_string": '@bp.route("/login", methods=["GET", "POST"])\n',
            "new_string": "def is_safe_next(target: str | None) -> bool:\n"
            "    if not target:\n        return False\n"
            "    parts = urlsplit(target)\n"
            '    return not parts.scheme and not parts.netloc and not target.startswith("//")\n\n\n'
            '@bp.route("/login", methods=["GET", "POST"])\n',
        },
        "The file /home/ivo/portal/app/auth/views.py has been updated successfully.",
    )
    c.bash(
        "make lint",
        "ruff check app tests\n"
        "app/auth/views.py:27:13: F821 Undefined name `urlsplit`\n"
        "Found 1 error.\n"
        "make: *** [Makefile:14: lint] Error 1",
        error=True,
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/ivo/portal/app/auth/views.py",
            "old_string": "from flask import Blueprint, redirect, request, url_for\n",
            "new_string": "from urllib.parse import urlsplit\n\nfrom flask import Blueprint, redirect, request, url_for\n",
        },
        "The file /home/ivo/portal/app/auth/views.py has been updated successfully.",
    )
    c.tool(
        "Write",
        {
            "file_path": "/home/ivo/portal/tests/auth/test_login_redirect.py",
            "content": "import pytest\n\n\n"
            '@pytest.mark.parametrize(\n    "target",\n'
            '    ["https://evil.example/", "//evil.example%2F@portal.acme.io", "/\\\\evil.example"],\n)\n'
            "def test_login_never_redirects_off_site(client, user, target):\n"
            '    response = client.post(f"/login?next={target}", data=user.credentials)\n'
            '    assert response.headers["Location"] == "/"\n\n\n'
            "def test_login_keeps_a_local_next(client, user):\n"
            '    response = client.post("/login?next=/invoices/42", data=user.credentials)\n'
            '    assert response.headers["Location"] == "/invoices/42"\n',
        },
        "File created successfully at: /home/ivo/portal/tests/auth/test_login_redirect.py",
    )
    c.bash(
        "pytest tests/auth/test_login_redirect.py -q 2>&1 | tail -6",
        "FAILED tests/auth/test_login_redirect.py::test_login_never_redirects_off_site[/\\\\evil.example] - "
        "AssertionError: assert '/\\\\evil.example' == '/'\n"
        "1 failed, 3 passed in 0.42s",
        error=True,
    )
    c.say(
        "The backslash payload passes the check: urlsplit sees a path, but browsers treat `/\\` like `//` and go "
        "to evil.example. I'll normalise backslashes to slashes before checking."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/ivo/portal/app/auth/views.py",
            "old_string": "    parts = urlsplit(target)\n",
            "new_string": '    target = target.replace("\\\\", "/")\n    parts = urlsplit(target)\n',
        },
        "The file /home/ivo/portal/app/auth/views.py has been updated successfully.",
    )
    c.bash("pytest tests/auth -q 2>&1 | tail -1", "17 passed in 1.08s")
    c.user(
        "Good. Also send Referrer-Policy on the login page so a next= URL doesn't leak to third parties via the "
        "Referer header."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/ivo/portal/app/auth/views.py",
            "old_string": '    return render_template("auth/login.html", form=form)\n',
            "new_string": '    response = make_response(render_template("auth/login.html", form=form))\n'
            '    response.headers["Referrer-Policy"] = "strict-origin-when-cross-origin"\n'
            "    return response\n",
        },
        "The file /home/ivo/portal/app/auth/views.py has been updated successfully.",
    )
    c.bash(
        "make lint",
        "ruff check app tests\nAll checks passed!\nbandit -q -r app\n"
        ">> Issue: [B105:hardcoded_password_string] Possible hardcoded password: 'reset-token'\n"
        "   Severity: Low   Confidence: Medium\n   CWE: CWE-259 (https://cwe.mitre.org/data/definitions/259.html)\n"
        "   Location: app/auth/tokens.py:12:17\n"
        "make: *** [Makefile:14: lint] Error 1",
        error=True,
    )
    c.say(
        "ruff passes now. bandit flags B105 in app/auth/tokens.py, which I didn't touch: it's the token's purpose name, not a password."
    )
    c.user(
        "That B105 is a known false positive, leave it alone, it's tracked separately. Don't add a nosec for it either."
    )
    c.bash(
        "pytest tests/auth -q 2>&1 | tail -1 && git commit -qam 'auth: only local next= targets after login (SEC-2291)' && git log -1 --format=%h",
        "17 passed in 1.11s\n0be41c7",
    )
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
The user asked me to fix the open redirect in /login?next= reported in SEC-2291, add regression tests with the report's payloads, and keep `make lint` green. I added an is_safe_next check, tests, and a Referrer-Policy header on the login page.

Summary:
1. Primary Request and Intent:
   Fix the open redirect in the login view's `next` parameter (pentest ticket SEC-2291), add a regression test using the report's payloads, keep CI's `make lint` (ruff and bandit) passing. Later: send a Referrer-Policy header on the login page so next= URLs don't leak through Referer.

2. Key Technical Concepts:
   - Open redirects; urlsplit scheme/netloc checks; browsers treating backslashes as slashes
   - Referrer-Policy

3. Files and Code Sections:
   - app/auth/views.py: new is_safe_next(target) rejecting any scheme, netloc or leading `//` (after normalising backslashes); the login view falls back to home.index otherwise. The login page response now sets a Referrer-Policy header.
   - tests/auth/test_login_redirect.py: parametrized test with the report's payloads (https://evil.example/, the //evil.example%2F@portal.acme.io form and a backslash variant) plus a local next that must be kept.

4. Errors and fixes:
   - The backslash payload initially passed the check; fixed by replacing backslashes before urlsplit.

5. Problem Solving:
   All auth tests pass. bandit still reports a pre-existing B105 in app/auth/tokens.py, which the user says to leave.

6. All user messages:
   - "SEC-2291 from the pentest: /login?next= is an open redirect. Fix it and add a regression test with the payloads from the report. CI runs `make lint` (ruff + bandit), it has to stay green."
   - "Good. Also send Referrer-Policy on the login page so a next= URL doesn't leak to third parties via the Referer header."
   - "That B105 is a known false positive, leave it alone, it's tracked separately. Don't add a nosec for it either."

7. Pending Tasks:
   - None.

8. Current Work:
   Committed the fix with the tests.

9. Optional Next Step:
   Open the PR referencing SEC-2291.
"""
    labels = [
        Label("request", "Fix it and add a regression test with the payloads from the report", dropped=False),
        Label("constraint", "it has to stay green", dropped=False),
        Label("decision", "only allow relative paths on our own host", dropped=False),
        Label("failed command", "F821 Undefined name `urlsplit`", dropped=True),  # the lint failure: not in the summary
        Label("edit", "from urllib.parse import urlsplit", dropped=True),
        Label("edit", "/\\\\evil.example", dropped=False),  # "a backslash variant"
        Label("error", "AssertionError: assert '/\\\\evil.example' == '/'", dropped=False),
        Label("decision", "normalise backslashes to slashes before checking", dropped=False),
        Label("measurement", "17 passed", dropped=True),
        Label("request", "send Referrer-Policy on the login page", dropped=False),
        Label("edit", "strict-origin-when-cross-origin", dropped=True),  # the header's value
        Label("error", "B105:hardcoded_password_string", dropped=False),
        Label("path", "app/auth/tokens.py:12:17", dropped=False),
        Label("constraint", "Don't add a nosec for it either", dropped=False),
        Label("identifier", "0be41c7", dropped=True),
        # noise
        Label("number", "0.42s", dropped=False),
        Label("number", "1.08s", dropped=False),
        Label("number", "3 passed", dropped=False),
        Label("url", "https://cwe.mitre.org/data/definitions/259.html", dropped=False),
        Label("number", "Makefile:14", dropped=False),
        Label("command", "rg -n 'next' app/auth/views.py", dropped=False),
    ]
    return DevSession(c, summary, labels)


def payout_currency() -> DevSession:
    """Elixir/Ecto and Postgres: a backfill of a null column on staging then prod, with the counts
    a dry run and the run printed (rows updated, skipped, batches, the longest batch) that the
    session compares and reasons about; the user's limit on table locks with its reason, said once.
    Written and labelled before the rule ran on it (round 12)."""
    c = Conversation("/home/kofi/payments", "fresh-payout-currency")
    c.user(
        "Backfill payouts.currency for the legacy rows (null since the 2019 import) from the merchant's "
        "settlement currency. Staging first, then prod. Never hold a lock on payouts for more than a second "
        "or two: finance's reconciliation runs every 15 minutes and times out on locks."
    )
    c.bash(
        'psql "$STAGING_DATABASE_URL" -Atc "SELECT count(*) FILTER (WHERE currency IS NULL), count(*) FROM payouts"',
        "48213|2904177",
    )
    c.bash(
        'psql "$STAGING_DATABASE_URL" -Atc "SELECT count(*) FROM payouts p JOIN merchants m ON m.id = p.merchant_id '
        'WHERE p.currency IS NULL AND m.settlement_currency IS NULL"',
        "312",
    )
    c.say(
        "On staging 48,213 payouts have no currency, and 312 of them belong to merchants without a "
        "settlement_currency, so those can't be filled from the merchant. I'll skip them and report them "
        "rather than guess a currency."
    )
    c.tool(
        "Write",
        {
            "file_path": "/home/kofi/payments/priv/repo/backfills/payout_currency.exs",
            "content": "alias Payments.Repo\nimport Ecto.Query\n\n"
            'dry_run? = "--dry-run" in System.argv()\nbatch_size = 1000\n\n'
            "# one UPDATE per batch of ids, each in its own transaction, so no lock outlives a batch\n"
            "Payments.Backfills.PayoutCurrency.run(batch_size: batch_size, dry_run: dry_run?)\n",
        },
        "File created successfully at: /home/kofi/payments/priv/repo/backfills/payout_currency.exs",
    )
    c.bash(
        "MIX_ENV=staging mix run priv/repo/backfills/payout_currency.exs --dry-run",
        "Compiling 2 files (.ex)\n"
        "[dry run] batch size 1000\n"
        "[dry run] would update 47901 rows in 48 batches\n"
        "[dry run] would skip 312 rows (merchant has no settlement_currency)",
    )
    c.bash(
        "MIX_ENV=staging mix run priv/repo/backfills/payout_currency.exs",
        "batch 1/48: 1000 rows (97 ms)\nbatch 2/48: 1000 rows (104 ms)\n"
        "batch 47/48: 1000 rows (131 ms)\nbatch 48/48: 901 rows (88 ms)\n"
        "updated 47901 rows in 48 batches, longest batch 212 ms\n"
        "skipped 312 rows\n"
        "done in 41.7s",
    )
    c.bash(
        'psql "$STAGING_DATABASE_URL" -Atc "SELECT count(*) FROM payouts WHERE currency IS NULL"',
        "312",
    )
    c.say(
        "Staging: 47,901 rows updated, the longest batch held its lock 212 ms, and exactly the 312 skipped rows are still null."
    )
    c.user(
        "Staging looks right. Go ahead with prod. For the ones you skip, give me their merchant ids in a CSV, finance will sort them out by hand."
    )
    c.bash(
        "MIX_ENV=prod mix run priv/repo/backfills/payout_currency.exs --dry-run",
        "[dry run] batch size 1000\n"
        "[dry run] would update 51877 rows in 52 batches\n"
        "[dry run] would skip 340 rows (merchant has no settlement_currency)",
    )
    c.say("Prod has a few more than staging (its snapshot is a week old): 51,877 to update and 340 to skip.")
    c.bash(
        "MIX_ENV=prod mix run priv/repo/backfills/payout_currency.exs",
        "batch 1/52: 1000 rows (143 ms)\nbatch 2/52: 1000 rows (156 ms)\n"
        "batch 51/52: 1000 rows (388 ms)\nbatch 52/52: 877 rows (121 ms)\n"
        "updated 51877 rows in 52 batches, longest batch 388 ms\n"
        "skipped 340 rows\n"
        "done in 47.2s",
    )
    c.bash(
        'psql "$DATABASE_URL" -c "\\copy (SELECT DISTINCT p.merchant_id FROM payouts p WHERE p.currency IS NULL '
        "ORDER BY 1) TO '/tmp/merchants_without_currency.csv' CSV HEADER\"",
        "COPY 17",
    )
    c.say(
        "Done on prod: 51,877 updated, longest batch 388 ms, well inside your lock limit. The 340 skipped rows "
        "belong to 17 merchants, listed in /tmp/merchants_without_currency.csv."
    )
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
The user asked me to backfill payouts.currency for legacy rows from each merchant's settlement currency, on staging and then prod, without long locks. I wrote a batched Ecto backfill script, ran it on staging then prod, and exported the merchants that could not be backfilled.

Summary:
1. Primary Request and Intent:
   Backfill the null payouts.currency of legacy rows (from the 2019 import) using the merchant's settlement currency; staging first, then prod; keep locks on payouts short because finance's reconciliation runs every 15 minutes. Then give finance a CSV of the merchant ids whose rows were skipped.

2. Key Technical Concepts:
   - Batched backfills with Ecto, one transaction per batch of 1000 ids
   - Dry runs before writes

3. Files and Code Sections:
   - priv/repo/backfills/payout_currency.exs: runs Payments.Backfills.PayoutCurrency with batch_size 1000 and a --dry-run flag; each batch is its own UPDATE/transaction so no lock outlives a batch.

4. Errors and fixes:
   - None.

5. Problem Solving:
   Staging had about 48k payouts without a currency; rows whose merchant has no settlement_currency are skipped and reported instead of guessed. Staging: 47,901 rows updated, the skipped rows remained null as expected. Prod: about 52k rows updated in 52 batches.

6. All user messages:
   - Asked to backfill payouts.currency for the legacy rows from the merchant's settlement currency, staging first then prod, never holding a lock on payouts for long because finance's reconciliation runs every 15 minutes.
   - "Staging looks right. Go ahead with prod. For the ones you skip, give me their merchant ids in a CSV, finance will sort them out by hand."

7. Pending Tasks:
   - Hand the CSV of merchant ids to finance.

8. Current Work:
   Finished the prod backfill and exported the skipped merchants to /tmp/merchants_without_currency.csv.

9. Optional Next Step:
   Share the CSV with finance.
"""
    labels = [
        Label("request", "Backfill payouts.currency for the legacy rows", dropped=False),
        Label("constraint", "Never hold a lock on payouts for more than a second or two", dropped=True),  # "short"
        Label("constraint", "times out on locks", dropped=True),  # the reason, lost
        Label("measurement", "48213", dropped=False),  # "about 48k"
        Label("measurement", "312", dropped=True),  # staging's rows without a merchant currency
        Label("decision", "skip them and report them rather than guess a currency", dropped=False),
        Label("measurement", "would update 47901 rows in 48 batches", dropped=False),
        Label("measurement", "longest batch 212 ms", dropped=True),
        Label("measurement", "would skip 340 rows", dropped=True),
        Label("measurement", "updated 51877 rows in 52 batches", dropped=False),  # "about 52k rows ... in 52 batches"
        Label("measurement", "longest batch 388 ms", dropped=True),
        Label("measurement", "COPY 17", dropped=True),  # 17 merchants
        Label("request", "give me their merchant ids in a CSV", dropped=False),
        Label("path", "/tmp/merchants_without_currency.csv", dropped=False),
        Label("file edited", "priv/repo/backfills/payout_currency.exs", dropped=False),
        # noise
        Label("number", "2904177", dropped=False),
        Label("number", "41.7s", dropped=False),
        Label("number", "47.2s", dropped=False),
        Label("number", "97 ms", dropped=False),
        Label("number", "156 ms", dropped=False),
        Label("number", "901 rows", dropped=False),
        Label("number", "Compiling 2 files", dropped=False),
    ]
    return DevSession(c, summary, labels)


def kafka_lag() -> DevSession:
    """Java, Spring Kafka and Maven: a consumer group falling behind after a deploy, read in
    `kafka-consumer-groups.sh`'s table and the pods' logs; the poll loop outlives
    `max.poll.interval.ms`, fixed by fewer records per poll and a shorter client timeout; a
    checkstyle failure; the lag before and after. Written and labelled before the rule ran on it
    (round 13)."""
    c = Conversation("/home/ines/billing-service", "fresh-kafka-lag")
    c.user(
        "The invoice-events consumer in billing-service keeps falling behind in prod since yesterday's "
        "deploy, the lag just grows. Find out why and fix it. Don't touch the topic's partition count, "
        "three other teams consume invoice-events."
    )
    c.bash(
        "kubectl -n billing get pods -l app=billing-consumer",
        "NAME                                READY   STATUS    RESTARTS   AGE\n"
        "billing-consumer-7d9f6c8b4-x2kqp    1/1     Running   0          21h\n"
        "billing-consumer-7d9f6c8b4-m8zrt    1/1     Running   0          21h\n"
        "billing-consumer-7d9f6c8b4-q4wnd    1/1     Running   1          21h",
    )
    c.bash(
        "kubectl -n billing exec kafka-tools -- kafka-consumer-groups.sh --bootstrap-server kafka-0.kafka:9092 "
        "--describe --group billing-invoice-events",
        "\nGROUP                   TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG     CONSUMER-ID"
        "                                                      HOST          CLIENT-ID\n"
        "billing-invoice-events  invoice-events  0          8812044         8826190         14146   "
        "consumer-billing-invoice-events-1-3f6c2a9e-8b1d-4c7e-9a52-0d4e6f1b7c33  /10.42.1.17   consumer-billing-invoice-events-1\n"
        "billing-invoice-events  invoice-events  1          8790310         8805122         14812   "
        "consumer-billing-invoice-events-1-3f6c2a9e-8b1d-4c7e-9a52-0d4e6f1b7c33  /10.42.1.17   consumer-billing-invoice-events-1\n"
        "billing-invoice-events  invoice-events  2          8801877         8820904         19027   "
        "consumer-billing-invoice-events-1-77b0d4e1-2c9a-4f3e-8d61-5a2b9c0e4f18  /10.42.2.9    consumer-billing-invoice-events-1\n"
        "billing-invoice-events  invoice-events  3          8702455         8799575         97120   "
        "consumer-billing-invoice-events-1-77b0d4e1-2c9a-4f3e-8d61-5a2b9c0e4f18  /10.42.2.9    consumer-billing-invoice-events-1\n"
        "billing-invoice-events  invoice-events  4          8815002         8833418         18416   "
        "consumer-billing-invoice-events-1-c1e8f7a2-6d3b-4a90-b5e4-9f2d1c7a8e06  /10.42.3.21   consumer-billing-invoice-events-1\n"
        "billing-invoice-events  invoice-events  5          8808120         8826943         18823   "
        "consumer-billing-invoice-events-1-c1e8f7a2-6d3b-4a90-b5e4-9f2d1c7a8e06  /10.42.3.21   consumer-billing-invoice-events-1",
    )
    c.say(
        "Total lag is 182,344 messages across the 6 partitions, and partition 3 alone has 97,120 of them. "
        "Three consumers, two partitions each, so it is not a missing consumer. Let me check the logs for rebalances."
    )
    c.bash(
        "kubectl -n billing logs deploy/billing-consumer --since=1h | grep -c 'Revoke previously assigned partitions'",
        "41",
    )
    c.bash(
        "kubectl -n billing logs deploy/billing-consumer --since=1h | grep -i 'poll timeout' | tail -2",
        "2026-12-01 09:41:12.318  WARN 1 --- [ad | billing-invoice-events] o.a.k.c.c.i.ConsumerCoordinator : "
        "[Consumer clientId=consumer-billing-invoice-events-1, groupId=billing-invoice-events] consumer poll "
        "timeout has expired. This means the time between subsequent calls to poll() was longer than the "
        "configured max.poll.interval.ms, which typically implies that the poll loop is spending too much time "
        "processing messages.\n"
        "2026-12-01 09:47:55.902  WARN 1 --- [ad | billing-invoice-events] o.a.k.c.c.i.ConsumerCoordinator : "
        "[Consumer clientId=consumer-billing-invoice-events-1, groupId=billing-invoice-events] consumer poll "
        "timeout has expired. This means the time between subsequent calls to poll() was longer than the "
        "configured max.poll.interval.ms, which typically implies that the poll loop is spending too much time "
        "processing messages.",
    )
    c.say(
        "41 rebalances in the last hour: the group keeps kicking a member out because its poll loop takes "
        "longer than max.poll.interval.ms, then the partitions move and the work restarts from the last commit."
    )
    c.tool(
        "Read",
        {"file_path": "/home/ines/billing-service/src/main/resources/application.yml"},
        "     1\tspring:\n     2\t  kafka:\n     3\t    bootstrap-servers: kafka-0.kafka:9092,kafka-1.kafka:9092\n"
        "     4\t    consumer:\n     5\t      group-id: billing-invoice-events\n"
        "     6\t      max-poll-records: 500\n     7\t      properties:\n"
        "     8\t        max.poll.interval.ms: 300000\n     9\t      enable-auto-commit: false\n",
    )
    c.tool(
        "Read",
        {"file_path": "/home/ines/billing-service/src/main/java/com/acme/billing/tax/TaxClient.java"},
        "    1\tpackage com.acme.billing.tax;\n    2\t\n    3\timport java.net.http.HttpClient;\n"
        "    4\timport java.time.Duration;\n    5\timport java.time.temporal.ChronoUnit;\n    6\t\n"
        "    7\tpublic class TaxClient {\n"
        "    8\t    private final HttpClient http = HttpClient.newBuilder()\n"
        "    9\t        .connectTimeout(Duration.ofSeconds(10))\n   10\t        .build();\n"
        "   11\t    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(10);\n",
    )
    c.bash(
        "git log --oneline -3 -- src/main/java/com/acme/billing/tax/",
        "e07b1c4 tax: call the tax service per invoice line (BILL-2231)\n"
        "91aa3d0 tax: retry on 503\n"
        "4c2f8e1 tax: extract TaxClient",
    )
    c.say(
        "Yesterday's deploy included e07b1c4, which calls the tax service once per invoice line instead of once "
        "per invoice. Each record now takes about 700 ms, and with max-poll-records at 500 one poll's batch needs "
        "roughly 350 s, more than the 300 s max.poll.interval.ms. I'll lower max-poll-records to 50 rather than "
        "raise max.poll.interval.ms, because a longer interval also delays noticing a consumer that is really dead."
    )
    c.user(
        "ok. And the tax client's 10 second timeout is far too generous, the tax service's p99 is 400ms. "
        "Make it 2 seconds."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/ines/billing-service/src/main/resources/application.yml",
            "old_string": "      max-poll-records: 500",
            "new_string": "      max-poll-records: 50",
        },
        "The file /home/ines/billing-service/src/main/resources/application.yml has been updated successfully.",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/ines/billing-service/src/main/java/com/acme/billing/tax/TaxClient.java",
            "old_string": "    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(10);",
            "new_string": "    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(2);",
        },
        "The file /home/ines/billing-service/src/main/java/com/acme/billing/tax/TaxClient.java has been updated successfully.",
    )
    c.bash(
        "mvn -q verify 2>&1 | tail -8",
        "[INFO] Starting audit...\n"
        "[ERROR] src/main/java/com/acme/billing/tax/TaxClient.java:[5,8] (imports) UnusedImports: "
        "Unused import - java.time.temporal.ChronoUnit.\n"
        "Audit done.\n"
        "[ERROR] Failed to execute goal org.apache.maven.plugins:maven-checkstyle-plugin:3.3.1:check (validate) "
        "on project billing-service: You have 1 Checkstyle violation. -> [Help 1]\n"
        "[ERROR] \n[ERROR] To see the full stack trace of the errors, re-run Maven with the -e switch.",
        error=True,
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/ines/billing-service/src/main/java/com/acme/billing/tax/TaxClient.java",
            "old_string": "import java.time.Duration;\nimport java.time.temporal.ChronoUnit;\n",
            "new_string": "import java.time.Duration;\n",
        },
        "The file /home/ines/billing-service/src/main/java/com/acme/billing/tax/TaxClient.java has been updated successfully.",
    )
    c.bash(
        "mvn -q verify 2>&1 | tail -6",
        "[INFO] Tests run: 214, Failures: 0, Errors: 0, Skipped: 2\n"
        "[INFO] \n[INFO] ------------------------------------------------------------------------\n"
        "[INFO] BUILD SUCCESS\n"
        "[INFO] ------------------------------------------------------------------------\n"
        "[INFO] Total time:  01:12 min",
    )
    c.bash(
        "git diff --stat",
        " src/main/java/com/acme/billing/tax/TaxClient.java | 3 +--\n"
        " src/main/resources/application.yml                | 2 +-\n"
        " 2 files changed, 2 insertions(+), 3 deletions(-)",
    )
    c.bash(
        "git commit -am 'billing-consumer: 50 records per poll, 2s tax timeout' && git push -u origin fix/consumer-lag",
        "[fix/consumer-lag 5c1e9a7] billing-consumer: 50 records per poll, 2s tax timeout\n"
        " 2 files changed, 2 insertions(+), 3 deletions(-)\n"
        "To github.com:acme/billing-service.git\n * [new branch]      fix/consumer-lag -> fix/consumer-lag",
    )
    c.user("Deploy the branch to prod through the usual pipeline and tell me when the lag is back down.")
    c.bash(
        "gh workflow run deploy.yml -f ref=fix/consumer-lag -f env=prod && sleep 5 && gh run list --workflow deploy.yml -L 1",
        "STATUS  TITLE                  WORKFLOW    BRANCH            EVENT              ID           ELAPSED  AGE\n"
        "*       Deploy billing-service deploy.yml  fix/consumer-lag  workflow_dispatch  12118830457  4s       4s",
    )
    c.bash(
        "gh run watch 12118830457 --exit-status | tail -2",
        "✓ deploy / rollout in 3m12s\n✓ Run Deploy billing-service (12118830457) completed with 'success'",
    )
    c.bash(
        "sleep 1200; kubectl -n billing exec kafka-tools -- kafka-consumer-groups.sh --bootstrap-server "
        "kafka-0.kafka:9092 --describe --group billing-invoice-events | awk 'NR>2 {sum += $6} END {print sum}'",
        "1204",
    )
    c.bash(
        "kubectl -n billing logs deploy/billing-consumer --since=20m | grep -c 'Revoke previously assigned partitions'",
        "0",
    )
    c.say(
        "Deployed (run 12118830457). Twenty minutes later the total lag is down from 182,344 to 1,204 and there "
        "has been no rebalance since the rollout."
    )
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
The user reported that the invoice-events consumer of billing-service lags more and more in prod since a deploy. I found rebalances caused by a poll loop slower than max.poll.interval.ms, lowered max-poll-records and the tax client timeout, fixed a checkstyle failure, pushed, deployed and checked the lag.

Summary:
1. Primary Request and Intent:
   Find out why the billing-invoice-events consumer group falls behind in prod since yesterday's deploy and fix it, without changing the invoice-events topic's partition count (other teams consume it). Then deploy the fix to prod and report when the lag is back down.

2. Key Technical Concepts:
   - Kafka consumer group rebalances when poll() is not called within max.poll.interval.ms
   - max-poll-records vs. processing time per record
   - Spring Kafka consumer configuration in application.yml

3. Files and Code Sections:
   - src/main/resources/application.yml: consumer settings; max-poll-records lowered, max.poll.interval.ms (300000) left as is.
   - src/main/java/com/acme/billing/tax/TaxClient.java: REQUEST_TIMEOUT lowered to 2 seconds at the user's request; removed an unused import.

4. Errors and fixes:
   - `mvn -q verify` failed on checkstyle after the edit; fixed by cleaning up the imports in TaxClient.java.

5. Problem Solving:
   The lag was about 180k messages, concentrated on one partition, with frequent rebalances in the logs ("consumer poll timeout has expired"). The cause is commit e07b1c4 (tax service called per invoice line), which made each record take ~700 ms, so a batch of 500 records needed ~350 s, over the 300 s interval. Chose fewer records per poll over a longer interval. After the deploy the lag dropped to near zero and there were no more rebalances.

6. All user messages:
   - "The invoice-events consumer in billing-service keeps falling behind in prod since yesterday's deploy, the lag just grows. Find out why and fix it. Don't touch the topic's partition count, three other teams consume invoice-events."
   - Asked to lower the tax client's 10 second timeout to 2 seconds since the tax service's p99 is 400ms.
   - "Deploy the branch to prod through the usual pipeline and tell me when the lag is back down."

7. Pending Tasks:
   - None.

8. Current Work:
   Deployed fix/consumer-lag to prod and confirmed the lag recovered.

9. Optional Next Step:
   Ask the user whether to open a PR to merge fix/consumer-lag into main.
"""
    labels = [
        Label("request", "keeps falling behind in prod since yesterday's deploy", dropped=False),
        Label("constraint", "Don't touch the topic's partition count", dropped=False),
        Label("measurement", "97120", dropped=True),  # one partition's lag, "concentrated on one partition"
        Label("measurement", "182,344", dropped=False),  # "about 180k"
        Label("measurement", "41 rebalances", dropped=True),  # in an hour, "frequent"
        Label("identifier", "e07b1c4", dropped=False),
        Label("identifier", "BILL-2231", dropped=True),  # the ticket of the commit that caused it
        Label(
            "decision", "because a longer interval also delays noticing a consumer that is really dead", dropped=True
        ),
        Label("edit", "max-poll-records: 50", dropped=True),  # the summary says "lowered", not to what
        Label("edit", "Duration.ofSeconds(2)", dropped=False),  # "REQUEST_TIMEOUT lowered to 2 seconds"
        Label("failed command", "mvn -q verify", dropped=False),
        Label("error", "UnusedImports", dropped=False),  # "removed an unused import"
        Label("identifier", "5c1e9a7", dropped=True),  # the fix's commit
        Label("identifier", "12118830457", dropped=True),  # the deploy run
        Label("measurement", "1204", dropped=True),  # the lag after, "near zero"
        Label("file edited", "src/main/resources/application.yml", dropped=False),
        Label("file edited", "TaxClient.java", dropped=False),
        # noise
        Label("name", "billing-consumer-7d9f6c8b4-x2kqp", dropped=False),
        Label("name", "3f6c2a9e-8b1d-4c7e-9a52-0d4e6f1b7c33", dropped=False),
        Label("name", "77b0d4e1-2c9a-4f3e-8d61-5a2b9c0e4f18", dropped=False),
        Label("name", "c1e8f7a2-6d3b-4a90-b5e4-9f2d1c7a8e06", dropped=False),
        Label("number", "Tests run: 214", dropped=False),
        Label("number", "2 files changed", dropped=False),
        Label("number", "01:12 min", dropped=False),
        Label("number", "3m12s", dropped=False),
        Label("path", "10.42.1.17", dropped=False),
        Label("command", "git log --oneline -3", dropped=False),
    ]
    return DevSession(c, summary, labels)


def csv_culture() -> DevSession:
    """C# and .NET 8: a CSV import test that fails only on new de-DE build agents (a decimal parsed
    with the current culture), reproduced under `LANG`, fixed at each call site; `dotnet format`'s
    complaint, a pipeline edit that pins the culture, tallies of `dotnet test` and a licence list.
    Written and labelled before the rule ran on it (round 13)."""
    c = Conversation("/home/jonas/invoicing", "fresh-csv-culture")
    c.user(
        "CsvImportTests fails on the new Azure DevOps agents (build 20931) but passes on my machine. Please fix it. "
        "We must not add any NuGet package for this, legal has to approve every new one."
    )
    c.bash(
        "dotnet test --nologo 2>&1 | tail -3",
        "Passed!  - Failed:     0, Passed:   312, Skipped:     4, Total:   316, Duration: 7 s - "
        "Acme.Invoicing.Tests.dll (net8.0)",
    )
    c.bash(
        "az pipelines runs show --id 20931 --query '{result: result, agent: queue.pool.name}' -o tsv",
        "failed\tLinux-Frankfurt-2026",
    )
    c.bash(
        "az devops invoke --area build --resource logs --route-parameters project=invoicing buildId=20931 logId=14 "
        "--api-version 7.1 -o json | jq -r '.value[]' | grep -B2 -A6 'Failed Acme'",
        "  Passed Acme.Invoicing.Tests.CsvImportTests.Skips_header_row [3 ms]\n"
        "  Passed Acme.Invoicing.Tests.CsvImportTests.Reads_currency_column [2 ms]\n"
        "  Failed Acme.Invoicing.Tests.CsvImportTests.Parses_amount_with_decimal_point [12 ms]\n"
        "  Error Message:\n"
        "   Assert.Equal() Failure: Values differ\n"
        "Expected: 1234.5\n"
        "Actual:   12345\n"
        "  Stack Trace:\n"
        "     at Acme.Invoicing.Tests.CsvImportTests.Parses_amount_with_decimal_point() in "
        "/agent/_work/1/s/tests/Acme.Invoicing.Tests/CsvImportTests.cs:line 58",
    )
    c.bash(
        "az devops invoke --area build --resource logs --route-parameters project=invoicing buildId=20931 logId=3 "
        "--api-version 7.1 -o json | jq -r '.value[]' | grep -E '^(LANG|LC_ALL)='",
        "LANG=de_DE.UTF-8",
    )
    c.say(
        "The new agents run with LANG=de_DE.UTF-8. In German the decimal separator is a comma and the dot is a "
        'thousands separator, so "1234.5" parses as 12345. Let me reproduce it locally under that culture.'
    )
    c.bash(
        "LANG=de_DE.UTF-8 dotnet test --nologo --filter CsvImportTests 2>&1 | tail -2",
        "Failed!  - Failed:     1, Passed:    11, Skipped:     0, Total:    12, Duration: 412 ms - "
        "Acme.Invoicing.Tests.dll (net8.0)",
        error=True,
    )
    c.tool(
        "Read",
        {"file_path": "/home/jonas/invoicing/src/Acme.Invoicing/Import/CsvInvoiceReader.cs"},
        "    1\tusing System;\n    2\tusing System.Globalization;\n    3\tusing System.IO;\n    4\t\n"
        "    5\tnamespace Acme.Invoicing.Import;\n    6\t\n"
        "   40\t        var amount = decimal.Parse(fields[3]);\n"
        "   41\t        var vatRate = decimal.Parse(fields[4]);\n",
    )
    c.bash(
        "grep -rnE '(decimal|double|float)\\.Parse\\(' src/ | grep -v CultureInfo | wc -l",
        "7",
    )
    c.bash(
        "grep -rnE '(decimal|double|float)\\.Parse\\(' src/ | grep -v CultureInfo | cut -d: -f1 | sort -u",
        "src/Acme.Invoicing/Import/CsvInvoiceReader.cs\nsrc/Acme.Invoicing/Import/BankStatementReader.cs\n"
        "src/Acme.Invoicing/Pdf/AmountFormatter.cs",
    )
    c.say(
        "7 parses use the current culture, in 3 files. The two readers parse files we receive, which are always "
        "written with a dot, so they must use the invariant culture. AmountFormatter parses what the user typed "
        "in their own locale, so it stays as it is. I'll pass CultureInfo.InvariantCulture at each reader call "
        "site rather than set CultureInfo.DefaultThreadCurrentCulture at startup, because the PDF renderer "
        "formats amounts in the customer's culture and would silently switch to invariant."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/jonas/invoicing/src/Acme.Invoicing/Import/CsvInvoiceReader.cs",
            "old_string": "        var amount = decimal.Parse(fields[3]);\n        var vatRate = decimal.Parse(fields[4]);",
            "new_string": "        var amount = decimal.Parse(fields[3], NumberStyles.Number, CultureInfo.InvariantCulture);\n"
            "        var vatRate = decimal.Parse(fields[4], NumberStyles.Number, CultureInfo.InvariantCulture);",
        },
        "The file /home/jonas/invoicing/src/Acme.Invoicing/Import/CsvInvoiceReader.cs has been updated successfully.",
    )
    c.tool(
        "MultiEdit",
        {
            "file_path": "/home/jonas/invoicing/src/Acme.Invoicing/Import/BankStatementReader.cs",
            "edits": [
                {
                    "old_string": "decimal.Parse(cols[5])",
                    "new_string": "decimal.Parse(cols[5], NumberStyles.Number, CultureInfo.InvariantCulture)",
                },
                {
                    "old_string": "using System.IO;",
                    "new_string": "using System.Globalization;\nusing System.IO;",
                },
            ],
        },
        "Applied 2 edits to /home/jonas/invoicing/src/Acme.Invoicing/Import/BankStatementReader.cs",
    )
    c.user(
        "Good. Also make the pipeline run the tests under de-DE on purpose, so this can't sneak back in on "
        "whatever agents we get next."
    )
    c.tool(
        "Read",
        {"file_path": "/home/jonas/invoicing/azure-pipelines.yml"},
        "     1\ttrigger:\n     2\t  - main\n     3\tpool: Linux-Frankfurt-2026\n     4\tsteps:\n"
        "     5\t  - script: dotnet build --configuration Release\n"
        "     6\t  - script: dotnet test --no-build --configuration Release\n",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/jonas/invoicing/azure-pipelines.yml",
            "old_string": "  - script: dotnet test --no-build --configuration Release\n",
            "new_string": "  - script: dotnet test --no-build --configuration Release\n"
            "    env:\n      LANG: de_DE.UTF-8\n      LC_ALL: de_DE.UTF-8\n",
        },
        "The file /home/jonas/invoicing/azure-pipelines.yml has been updated successfully.",
    )
    c.bash(
        "dotnet format --verify-no-changes 2>&1 | tail -2",
        "/home/jonas/invoicing/src/Acme.Invoicing/Import/BankStatementReader.cs(1,1): error IMPORTS: "
        "Fix imports ordering. [/home/jonas/invoicing/src/Acme.Invoicing/Acme.Invoicing.csproj]",
        error=True,
    )
    c.bash("dotnet format && dotnet format --verify-no-changes && echo clean", "clean")
    c.bash(
        "LANG=de_DE.UTF-8 dotnet test --nologo 2>&1 | tail -1",
        "Passed!  - Failed:     0, Passed:   312, Skipped:     4, Total:   316, Duration: 8 s - "
        "Acme.Invoicing.Tests.dll (net8.0)",
    )
    c.bash(
        "dotnet list package --include-transitive | grep -c '>'",
        "38",
    )
    c.bash(
        "cat build/allowed-licenses.json",
        '[\n  "MIT",\n  "Apache-2.0",\n  "BSD-2-Clause",\n  "BSD-3-Clause",\n  "MS-PL",\n  "ISC"\n]',
    )
    c.say("No package was added: the project still references the same 38 packages, all under the allowed licences.")
    c.bash(
        "git add -A && git commit -m 'import: parse amounts with the invariant culture; CI tests under de-DE'",
        "[main 8e41b0d] import: parse amounts with the invariant culture; CI tests under de-DE\n"
        " 3 files changed, 9 insertions(+), 3 deletions(-)",
    )
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
The user asked me to fix CsvImportTests, which fails on the new Azure DevOps agents but passes locally, without adding NuGet packages. The agents run with a German locale; I fixed the culture-dependent parsing and made the pipeline test under de-DE.

Summary:
1. Primary Request and Intent:
   Fix the CsvImportTests failure on the new Azure DevOps agents (it passes locally). No new NuGet packages may be added (legal approves each one). Then make the pipeline run tests under de-DE deliberately so the bug cannot come back.

2. Key Technical Concepts:
   - .NET culture-sensitive number parsing (decimal.Parse uses the current culture)
   - CultureInfo.InvariantCulture and NumberStyles
   - Azure DevOps pipeline step environment variables

3. Files and Code Sections:
   - src/Acme.Invoicing/Import/CsvInvoiceReader.cs: amount and VAT rate now parsed with NumberStyles.Number and CultureInfo.InvariantCulture.
   - src/Acme.Invoicing/Import/BankStatementReader.cs: same change, plus the System.Globalization using.
   - src/Acme.Invoicing/Pdf/AmountFormatter.cs: left on the current culture on purpose (it parses user input in their locale).
   - azure-pipelines.yml: the test step now sets a German locale.

4. Errors and fixes:
   - Parses_amount_with_decimal_point failed with 12345 instead of 1234.5 under de-DE: fixed with the invariant culture.
   - dotnet format complained about using ordering: fixed by running dotnet format.

5. Problem Solving:
   The new agents have LANG=de_DE.UTF-8, where "." is a thousands separator. Reproduced locally with LANG=de_DE.UTF-8. Of the culture-dependent parse calls, only the two file readers need the invariant culture. The full suite passes under de-DE; no package was added.

6. All user messages:
   - "CsvImportTests fails on the new Azure DevOps agents (build 20931) but passes on my machine. Please fix it. We must not add any NuGet package for this, legal has to approve every new one."
   - "Good. Also make the pipeline run the tests under de-DE on purpose, so this can't sneak back in on whatever agents we get next."

7. Pending Tasks:
   - None.

8. Current Work:
   Committed the fix and the pipeline change on main.

9. Optional Next Step:
   Push main and watch the next pipeline run on the Frankfurt agents.
"""
    labels = [
        Label("request", "CsvImportTests fails on the new Azure DevOps agents", dropped=False),
        Label("constraint", "We must not add any NuGet package for this", dropped=False),
        Label("identifier", "20931", dropped=False),
        Label("error", "Expected: 1234.5", dropped=False),
        Label("measurement", "7 parses use the current culture", dropped=True),  # the summary says "the parse calls"
        Label("decision", "because the PDF renderer formats amounts in the customer's culture", dropped=True),
        Label("decision", "AmountFormatter parses what the user typed", dropped=False),
        Label("edit", "CultureInfo.InvariantCulture", dropped=False),
        Label("edit", "LC_ALL: de_DE.UTF-8", dropped=True),  # "sets a German locale": which variables, not said
        Label("failed command", "dotnet format --verify-no-changes", dropped=False),
        Label("failed command", "dotnet test --nologo --filter CsvImportTests", dropped=False),
        Label("identifier", "8e41b0d", dropped=True),  # the commit
        Label("measurement", "same 38 packages", dropped=True),  # what the project still references
        Label("name", "Linux-Frankfurt-2026", dropped=False),  # "the Frankfurt agents"
        Label("file edited", "azure-pipelines.yml", dropped=False),
        Label("file edited", "BankStatementReader.cs", dropped=False),
        Label("file read", "AmountFormatter.cs", dropped=False),
        # noise
        Label("number", "Passed:   312", dropped=False),
        Label("number", "Total:    12", dropped=False),
        Label("number", "3 files changed", dropped=False),
        Label("name", "MS-PL", dropped=False),
        Label("name", "BSD-2-Clause", dropped=False),
        Label("name", "ISC", dropped=False),
        Label("name", "Apache-2.0", dropped=False),
        Label("command", "dotnet format && dotnet format --verify-no-changes", dropped=False),
        Label("path", "CsvImportTests.cs:line 58", dropped=False),
    ]
    return DevSession(c, summary, labels)


def eu_timestamps() -> DevSession:
    """Swift (SwiftPM and Xcode): an SDK decodes `createdAt` to nil for one region's orders, whose
    timestamps carry fractional seconds; a decoding strategy with a fallback, SwiftLint, a licence
    script that lists its allowed licences, a simulator that is not installed, and the share of a
    sample the session counts. Written and labelled before the rule ran on it (round 13)."""
    c = Conversation("/Users/mei/acme-sdk-swift", "fresh-eu-timestamps")
    c.user(
        "Order.createdAt comes back nil for every order from the EU region, US orders are fine. Fix the decoder "
        "please. No new dependencies in the package, and it has to keep building for iOS 15."
    )
    c.bash(
        "curl -s https://api.eu.acme.test/v2/orders/ord_8HkQ2 -H \"Authorization: Bearer $ACME_TOKEN\" | jq '.created_at'",
        '"2026-11-28T09:14:03.512+01:00"',
    )
    c.bash(
        "curl -s https://api.us.acme.test/v2/orders/ord_3JxM9 -H \"Authorization: Bearer $ACME_TOKEN\" | jq '.created_at'",
        '"2026-11-28T08:14:03Z"',
    )
    c.say(
        "The EU region sends milliseconds (`.512`) and an offset, the US region whole seconds in UTC. An "
        "`ISO8601DateFormatter` with only `.withInternetDateTime` rejects fractional seconds, so decoding "
        "yields nil."
    )
    c.tool(
        "Read",
        {"file_path": "/Users/mei/acme-sdk-swift/Sources/AcmeSDK/Decoding/JSONDecoder+Acme.swift"},
        "     1\timport Foundation\n     2\t\n     3\textension JSONDecoder {\n"
        "     4\t    static let acme: JSONDecoder = {\n     5\t        let decoder = JSONDecoder()\n"
        "     6\t        let formatter = ISO8601DateFormatter()\n"
        "     7\t        formatter.formatOptions = [.withInternetDateTime]\n"
        "     8\t        decoder.dateDecodingStrategy = .custom { decoder in\n"
        "     9\t            let string = try decoder.singleValueContainer().decode(String.self)\n"
        "    10\t            return formatter.date(from: string) ?? .distantPast\n"
        "    11\t        }\n    12\t        return decoder\n    13\t    }()\n    14\t}\n",
    )
    c.say(
        "Here is the plan:\n```swift\nlet fractional = ISO8601DateFormatter()\n"
        "fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]\n```\n"
        "I'll try the fractional formatter first and fall back to the plain one, rather than one DateFormatter "
        "with a fixed pattern, because the US region still sends timestamps without fractions and a fixed "
        "pattern would break them instead."
    )
    c.bash(
        "swift test --filter OrderDecodingTests 2>&1 | tail -4",
        "Test Case '-[AcmeSDKTests.OrderDecodingTests testDecodesEUTimestamp]' started.\n"
        "/Users/mei/acme-sdk-swift/Tests/AcmeSDKTests/OrderDecodingTests.swift:42: error: "
        "-[AcmeSDKTests.OrderDecodingTests testDecodesEUTimestamp] : XCTAssertNotNil failed\n"
        "Test Case '-[AcmeSDKTests.OrderDecodingTests testDecodesEUTimestamp]' failed (0.004 seconds).\n"
        "Executed 3 tests, with 1 failure (0 unexpected) in 0.006 (0.007) seconds",
        error=True,
    )
    c.tool(
        "Edit",
        {
            "file_path": "/Users/mei/acme-sdk-swift/Sources/AcmeSDK/Decoding/JSONDecoder+Acme.swift",
            "old_string": "        let formatter = ISO8601DateFormatter()\n"
            "        formatter.formatOptions = [.withInternetDateTime]\n"
            "        decoder.dateDecodingStrategy = .custom { decoder in\n"
            "            let string = try decoder.singleValueContainer().decode(String.self)\n"
            "            return formatter.date(from: string) ?? .distantPast\n",
            "new_string": "        let plain = ISO8601DateFormatter()\n"
            "        let fractional = ISO8601DateFormatter()\n"
            "        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]\n"
            "        decoder.dateDecodingStrategy = .custom { decoder in\n"
            "            let container = try decoder.singleValueContainer()\n"
            "            let string = try container.decode(String.self)\n"
            "            if let date = fractional.date(from: string) ?? plain.date(from: string) { return date }\n"
            '            throw DecodingError.dataCorruptedError(in: container, debugDescription: "Unrecognised date: \\(string)")\n',
        },
        "The file /Users/mei/acme-sdk-swift/Sources/AcmeSDK/Decoding/JSONDecoder+Acme.swift has been updated successfully.",
    )
    c.user(
        "Throwing is right, .distantPast was hiding this for months. How many EU orders actually have "
        "fractional seconds? I want to know if it was all of them."
    )
    c.bash(
        "jq '[.[] | select(.created_at | test(\"\\\\.[0-9]+\"))] | length' fixtures/eu_orders_sample.json && "
        "jq 'length' fixtures/eu_orders_sample.json",
        "2318\n2400",
    )
    c.say(
        "2,318 of the 2,400 orders in the EU sample have fractional seconds; the other 82 happen to fall on a "
        "whole second and are printed without them, so they decoded correctly all along."
    )
    c.bash(
        "swift test 2>&1 | tail -1",
        "Executed 148 tests, with 0 failures (0 unexpected) in 2.311 (2.340) seconds",
    )
    c.bash(
        "swiftlint lint --quiet Sources/",
        "/Users/mei/acme-sdk-swift/Sources/AcmeSDK/Decoding/JSONDecoder+Acme.swift:13:1: warning: Line Length "
        "Violation: Line should be 120 characters or less; currently it has 131 characters (line_length)",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/Users/mei/acme-sdk-swift/Sources/AcmeSDK/Decoding/JSONDecoder+Acme.swift",
            "old_string": '            throw DecodingError.dataCorruptedError(in: container, debugDescription: "Unrecognised date: \\(string)")\n',
            "new_string": "            throw DecodingError.dataCorruptedError(\n"
            '                in: container, debugDescription: "Unrecognised date: \\(string)")\n',
        },
        "The file /Users/mei/acme-sdk-swift/Sources/AcmeSDK/Decoding/JSONDecoder+Acme.swift has been updated successfully.",
    )
    c.bash(
        "swiftlint lint Sources/ 2>&1 | tail -1",
        "Done linting! Found 0 violations, 0 serious in 87 files.",
    )
    c.bash(
        "xcodebuild -scheme AcmeSDK -destination 'platform=iOS Simulator,name=iPhone 15,OS=15.5' build 2>&1 | tail -3",
        "xcodebuild: error: Unable to find a destination matching the provided destination specifier:\n"
        "\t\t{ platform:iOS Simulator, OS:15.5, name:iPhone 15 }\n"
        '\tIneligible destinations for the "AcmeSDK" scheme:',
        error=True,
    )
    c.bash(
        "xcrun simctl list runtimes | grep iOS",
        "iOS 17.5 (17.5 - 21F79) - com.apple.CoreSimulator.SimRuntime.iOS-17-5\n"
        "iOS 18.1 (18.1 - 22B81) - com.apple.CoreSimulator.SimRuntime.iOS-18-1",
    )
    c.say(
        "No iOS 15 simulator runtime is installed, so I'll check the deployment target by building for a generic "
        "device with IPHONEOS_DEPLOYMENT_TARGET=15.0 instead."
    )
    c.bash(
        "xcodebuild -scheme AcmeSDK -destination 'generic/platform=iOS' IPHONEOS_DEPLOYMENT_TARGET=15.0 build "
        "2>&1 | tail -1",
        "** BUILD SUCCEEDED **",
    )
    c.bash(
        "./scripts/check-licenses.sh",
        "allowed licences: MIT, Apache-2.0, BSD-2-Clause, BSD-3-Clause, ISC, Zlib\n"
        "swift-log 1.6.1           Apache-2.0  ok\n"
        "swift-collections 1.1.4   Apache-2.0  ok\n"
        "swift-http-types 1.3.0    Apache-2.0  ok\n"
        "3 dependencies, 0 violations",
    )
    c.bash(
        "git add -A && git commit -m 'Decode EU timestamps with fractional seconds; throw on unknown dates'",
        "[fix/eu-timestamps 3d9a7c2] Decode EU timestamps with fractional seconds; throw on unknown dates\n"
        " 2 files changed, 24 insertions(+), 4 deletions(-)",
    )
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
The user reported that Order.createdAt decodes to nil for EU orders. I found that the EU API sends fractional seconds, changed the SDK's date decoding strategy, checked SwiftLint, the iOS 15 build and the licences, and committed.

Summary:
1. Primary Request and Intent:
   Fix the decoder so Order.createdAt is no longer nil for EU-region orders (US orders are fine). Constraints: no new dependencies in the package, and it must keep building for iOS 15. Later the user asked how many EU orders actually carry fractional seconds.

2. Key Technical Concepts:
   - ISO8601DateFormatter and .withFractionalSeconds
   - JSONDecoder custom dateDecodingStrategy
   - Swift Package Manager, SwiftLint, xcodebuild deployment targets

3. Files and Code Sections:
   - Sources/AcmeSDK/Decoding/JSONDecoder+Acme.swift: the custom strategy now tries a formatter with [.withInternetDateTime, .withFractionalSeconds] first, then a plain ISO8601DateFormatter, and throws DecodingError.dataCorruptedError for an unrecognised date instead of returning .distantPast.
   - Tests/AcmeSDKTests/OrderDecodingTests.swift: testDecodesEUTimestamp failed before the fix.

4. Errors and fixes:
   - testDecodesEUTimestamp failed (XCTAssertNotNil) before the fix; passes now.
   - SwiftLint line_length warning on the new throw: wrapped the line.
   - The iPhone 15 / iOS 15.5 simulator destination does not exist on this machine: built for generic/platform=iOS with IPHONEOS_DEPLOYMENT_TARGET=15.0 instead, which succeeded.

5. Problem Solving:
   EU timestamps look like "2026-11-28T09:14:03.512+01:00", US ones "2026-11-28T08:14:03Z". Trying the fractional formatter first with a fallback keeps both working. Nearly all EU orders in the sample carry fractional seconds; the few without happen to fall on a whole second. All 148 tests pass, SwiftLint is clean, and the dependency licences check passes with no new dependencies.

6. All user messages:
   - "Order.createdAt comes back nil for every order from the EU region, US orders are fine. Fix the decoder please. No new dependencies in the package, and it has to keep building for iOS 15."
   - "Throwing is right, .distantPast was hiding this for months. How many EU orders actually have fractional seconds? I want to know if it was all of them."

7. Pending Tasks:
   - None.

8. Current Work:
   Committed the decoder fix on the fix/eu-timestamps branch.

9. Optional Next Step:
   Open a PR for fix/eu-timestamps.
"""
    labels = [
        Label("request", "Order.createdAt comes back nil for every order from the EU region", dropped=False),
        Label("constraint", "No new dependencies in the package", dropped=False),
        Label("constraint", "it has to keep building for iOS 15", dropped=False),
        Label("measurement", "2318", dropped=True),  # the answer to the user's question, "nearly all"
        Label("decision", "a fixed pattern would break them instead", dropped=False),  # "keeps both working"
        Label("edit", ".withFractionalSeconds", dropped=False),
        Label("edit", "Unrecognised date", dropped=True),  # the error's text the edit set
        Label("failed command", "swift test --filter OrderDecodingTests", dropped=False),
        Label("failed command", "name=iPhone 15,OS=15.5", dropped=False),
        Label("identifier", "3d9a7c2", dropped=True),  # the commit
        Label("url", "https://api.eu.acme.test/v2/orders/ord_8HkQ2", dropped=True),
        Label("file edited", "Sources/AcmeSDK/Decoding/JSONDecoder+Acme.swift", dropped=False),
        # noise
        Label("number", "Executed 148 tests", dropped=False),
        Label("number", "Found 0 violations", dropped=False),
        Label("number", "2 files changed", dropped=False),
        Label("name", "Zlib", dropped=False),
        Label("name", "swift-log 1.6.1", dropped=False),
        Label("name", "swift-collections 1.1.4", dropped=False),
        Label("name", "3 dependencies, 0 violations", dropped=False),
        Label("command", "xcrun simctl list runtimes", dropped=False),
        Label("name", "22B81", dropped=False),
        Label("path", "OrderDecodingTests.swift:42", dropped=False),
    ]
    return DevSession(c, summary, labels)


def digest_twice() -> DevSession:
    """Elixir (Phoenix, Oban, mix and Fly.io): a nightly digest sent twice one night and not at all
    the next; a commit in a `git log` listing that disabled Oban's peer, a cron schedule moved, a
    uniqueness window, a regex an edit put in, an Oban upgrade, an image deployed. Written and
    labelled before the rule ran on it (round 14)."""
    c = Conversation("/home/ines/digest", "fresh-digest-twice")
    c.user(
        "The nightly digest email went out twice on Tuesday and not at all on Wednesday. Find out why and fix it. "
        "Don't touch lib/digest/mailer.ex, it's shared with the billing app."
    )
    c.bash(
        "fly logs -a digest-prod --no-tail | grep DigestWorker | head -6",
        "2026-12-01T02:00:00.114Z app[e2865d1f] ams [info] [Oban] DigestWorker job=88121 state=executing\n"
        "2026-12-01T02:00:00.131Z app[5683e4a2] ams [info] [Oban] DigestWorker job=88122 state=executing\n"
        "2026-12-01T02:03:41.902Z app[e2865d1f] ams [info] [Oban] DigestWorker job=88121 state=completed\n"
        "2026-12-01T02:03:44.517Z app[5683e4a2] ams [info] [Oban] DigestWorker job=88122 state=completed\n"
        "2026-12-02T02:00:00.098Z app[e2865d1f] ams [info] [Oban] DigestWorker job=88420 state=executing\n"
        "2026-12-02T02:00:30.099Z app[e2865d1f] ams [error] [Oban] DigestWorker job=88420 state=discarded "
        'error=%DBConnection.ConnectionError{message: "connection not available and request was dropped from '
        'queue after 30000ms"}',
    )
    c.say(
        "Two machines each inserted and ran a digest job at 02:00 on Tuesday (jobs 88121 and 88122), so the cron "
        "plugin ran on both. On Wednesday the only job was discarded after a 30 s pool timeout with no retry."
    )
    c.bash(
        "git log --oneline -6 -- config/",
        "c0d94b1 config: bump pool_size to 15\n"
        "a4f2e91 Disable Oban peer on prod to cut DB load\n"
        "3b7d0c6 digest: batch recipients by 500\n"
        "91e2f5a Add Fly.io release command\n"
        "6d8a0b3 Move secrets to runtime.exs\n"
        "2f4c7e8 Initial Oban setup",
    )
    c.tool(
        "Read",
        {"file_path": "/home/ines/digest/config/prod.exs"},
        "     1\timport Config\n     2\t\n     3\tconfig :digest, Oban,\n     4\t  peer: false,\n"
        "     5\t  queues: [mailers: 5],\n     6\t  plugins: [\n"
        '     7\t    {Oban.Plugins.Cron, crontab: [{"0 2 * * *", Digest.Workers.DigestWorker, max_attempts: 1}]}\n'
        "     8\t  ]\n",
    )
    c.say(
        "a4f2e91 set `peer: false` two weeks ago. With no peer, every node thinks it is the leader, so each of the "
        "two machines runs the Cron plugin and inserts its own digest job. Before that only the leader inserted it. "
        "And `max_attempts: 1` means a single timeout loses the night's digest."
    )
    c.user(
        "ok. The ops team said the peer was turned off because of the Postgres notifier load, so don't just turn it "
        "back on. Also please stop sending digests to our QA accounts, anything at acme-qa.test."
    )
    c.say(
        "Then I'll keep `peer: false` and make the job unique instead: unique over 23 hours in the available, "
        "scheduled and executing states, so a second node's insert is a no-op. I'll also give it 3 attempts and move "
        "the run to 06:30 Berlin time, away from the 02:00 backup window that holds the pool."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/ines/digest/config/prod.exs",
            "old_string": '    {Oban.Plugins.Cron, crontab: [{"0 2 * * *", Digest.Workers.DigestWorker, max_attempts: 1}]}\n',
            "new_string": "    {Oban.Plugins.Cron,\n"
            '     timezone: "Europe/Berlin",\n'
            '     crontab: [{"30 6 * * *", Digest.Workers.DigestWorker, max_attempts: 3}]}\n',
        },
        "The file /home/ines/digest/config/prod.exs has been updated successfully.",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/ines/digest/lib/digest/workers/digest_worker.ex",
            "old_string": "  use Oban.Worker, queue: :mailers\n",
            "new_string": "  use Oban.Worker,\n    queue: :mailers,\n"
            "    unique: [period: 82_800, states: [:available, :scheduled, :executing]]\n\n"
            "  @qa_address ~r/@acme-qa\\.test$/i\n",
        },
        "The file /home/ines/digest/lib/digest/workers/digest_worker.ex has been updated successfully.",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/ines/digest/lib/digest/workers/digest_worker.ex",
            "old_string": "    recipients = Accounts.digest_subscribers()\n",
            "new_string": "    recipients = Enum.reject(Accounts.digest_subscribers(), &Regex.match?(@qa_address, &1.email))\n",
        },
        "The file /home/ines/digest/lib/digest/workers/digest_worker.ex has been updated successfully.",
    )
    c.bash(
        "mix test 2>&1 | tail -4",
        "....................................................\n"
        "Finished in 4.3 seconds (1.2s async, 3.1s sync)\n"
        "57 tests, 0 failures\n\nRandomized with seed 402117",
    )
    c.tool(
        "Write",
        {
            "file_path": "/home/ines/digest/test/digest/workers/digest_worker_test.exs",
            "content": "defmodule Digest.Workers.DigestWorkerTest do\n  use Digest.DataCase, async: true\n"
            "  use Oban.Testing, repo: Digest.Repo\n\n"
            '  test "a second insert within the window is a no-op" do\n'
            "    {:ok, first} = Oban.insert(Digest.Workers.DigestWorker.new(%{}))\n"
            "    {:ok, second} = Oban.insert(Digest.Workers.DigestWorker.new(%{}))\n"
            "    assert second.conflict?\n    assert second.id == first.id\n  end\nend\n",
        },
        "File created successfully at: /home/ines/digest/test/digest/workers/digest_worker_test.exs",
    )
    c.bash(
        "mix test 2>&1 | tail -4",
        "** (CompileError) test/digest/workers/digest_worker_test.exs:6: undefined function conflict?/1\n"
        "    (elixir 1.17.3) lib/kernel/parallel_compiler.ex:429: Kernel.ParallelCompiler.require_file/2",
        error=True,
    )
    c.bash(
        "grep oban mix.lock",
        '  "oban": {:hex, :oban, "2.17.3", "ddfd5c0f1b2c2e1ac6b3a1c5f0e9d2a1b7f6e4c3d2a1b0c9f8e7d6c5b4a39281", [:mix], '
        '[{:ecto_sql, "~> 3.10", [hex: :ecto_sql, repo: "hexpm", optional: false]}], "hexpm", "0f1e2d3c"},',
    )
    c.say("`conflict?` on the returned job needs Oban 2.18 or later; we are on 2.17.3, so I'll upgrade Oban.")
    c.bash(
        "mix deps.update oban",
        "Resolving Hex dependencies...\nResolution completed in 0.214s\nUpgraded:\n  oban 2.17.3 => 2.18.2\n"
        "* Updating oban (Hex package)",
    )
    c.bash(
        "mix test 2>&1 | tail -3",
        "Finished in 4.4 seconds (1.2s async, 3.2s sync)\n58 tests, 0 failures\n\nRandomized with seed 118840",
    )
    c.say("58 tests, 0 failures: the 57 from before plus the new uniqueness test.")
    c.bash(
        "mix format --check-formatted",
        "** (Mix) mix format failed due to --check-formatted.\nThe following files are not formatted:\n\n"
        "  * lib/digest/workers/digest_worker.ex",
        error=True,
    )
    c.bash("mix format && mix format --check-formatted && echo ok", "ok")
    c.bash(
        "git add -A && git commit -m 'digest: unique job, 3 attempts, 06:30 Berlin; skip QA addresses; oban 2.18.2'",
        "[fix/digest-twice 7c1e9b4] digest: unique job, 3 attempts, 06:30 Berlin; skip QA addresses; oban 2.18.2\n"
        " 5 files changed, 31 insertions(+), 6 deletions(-)",
    )
    c.user("Deploy it.")
    c.bash(
        "fly deploy -a digest-prod 2>&1 | grep -E 'image|Visit|machines'",
        "image: registry.fly.io/digest-prod:deployment-01JEB7K2Q9W4X8M3T6R5N1P0ZD\n"
        "image size: 88 MB\n"
        "Updating existing machines in 'digest-prod' with rolling strategy\n"
        "Visit your newly deployed app at https://digest-prod.fly.dev/",
    )
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
The user reported the nightly digest was sent twice on Tuesday and not at all on Wednesday. I read the Fly logs and the Oban config, found that a recent commit disabled Oban's peer so both machines ran the cron plugin, and fixed it without re-enabling the peer, then deployed.

Summary:
1. Primary Request and Intent:
   Find out why the nightly digest email went out twice on Tuesday and not on Wednesday, and fix it. Constraint: do not touch lib/digest/mailer.ex (shared with the billing app). Later: keep the Oban peer disabled (ops turned it off because of the Postgres notifier load), stop sending digests to QA accounts at acme-qa.test, then deploy.

2. Key Technical Concepts:
   - Oban Cron plugin, peer/leadership, unique jobs, max_attempts
   - Fly.io machines and rolling deploys
   - Elixir regex, mix format

3. Files and Code Sections:
   - config/prod.exs: the Cron plugin now has timezone "Europe/Berlin", the digest runs at 06:30 with max_attempts: 3 (was 02:00 UTC with max_attempts: 1). peer: false kept.
   - lib/digest/workers/digest_worker.ex: the worker is unique (about a day's window over available/scheduled/executing) and rejects recipients whose email is at acme-qa.test.
   - test/digest/workers/digest_worker_test.exs: new test that a second insert is a no-op.

4. Errors and fixes:
   - Tuesday: two machines each inserted a digest job at 02:00, because a recent commit set peer: false and every node ran the Cron plugin.
   - Wednesday: the only job hit a 30 s DB pool timeout and was discarded (max_attempts: 1).
   - The new test did not compile (conflict?/1 undefined): it needs a newer Oban, so I upgraded Oban.
   - mix format --check-formatted failed on the worker: ran mix format.

5. Problem Solving:
   Kept peer: false as ops asked and made the job unique instead, with retries, and moved the run away from the 02:00 backup window. All tests pass with the new one.

6. All user messages:
   - "The nightly digest email went out twice on Tuesday and not at all on Wednesday. Find out why and fix it. Don't touch lib/digest/mailer.ex, it's shared with the billing app."
   - "ok. The ops team said the peer was turned off because of the Postgres notifier load, so don't just turn it back on. Also please stop sending digests to our QA accounts, anything at acme-qa.test."
   - "Deploy it."

7. Pending Tasks:
   - None.

8. Current Work:
   Committed the fix on fix/digest-twice and deployed it to Fly with a rolling update (https://digest-prod.fly.dev/).

9. Optional Next Step:
   Check tomorrow's 06:30 run in the logs.
"""
    labels = [
        Label("request", "went out twice on Tuesday and not at all on Wednesday", dropped=False),
        Label("constraint", "Don't touch lib/digest/mailer.ex", dropped=False),
        Label("constraint", "don't just turn it back on", dropped=False),
        Label("request", "stop sending digests to our QA accounts", dropped=False),
        Label("identifier", "a4f2e91", dropped=True),  # the commit that disabled the peer ("a recent commit")
        Label("identifier", "digest-prod", dropped=True),  # the Fly app every command names; the summary says "Fly"
        Label("identifier", "registry.fly.io/digest-prod:deployment-01JEB7K2Q9W4X8M3T6R5N1P0ZD", dropped=True),
        Label("identifier", "oban 2.17.3 => 2.18.2", dropped=True),  # "upgraded Oban", no version
        Label("identifier", "7c1e9b4", dropped=True),  # the commit
        Label("edit", '"30 6 * * *"', dropped=False),  # "runs at 06:30"
        Label("edit", "Europe/Berlin", dropped=False),
        Label("edit", "period: 82_800", dropped=True),  # "about a day's window"
        Label("edit", "@acme-qa\\.test$/i", dropped=True),  # the regex; the summary says only the domain
        Label("decision", "away from the 02:00 backup window", dropped=False),
        Label("decision", "make the job unique instead", dropped=False),
        Label("measurement", "58 tests, 0 failures", dropped=True),  # the tally the model reasons about
        Label("failed command", "mix format --check-formatted", dropped=False),
        Label("error", "undefined function conflict?/1", dropped=False),
        Label("file edited", "config/prod.exs", dropped=False),
        Label("file edited", "test/digest/workers/digest_worker_test.exs", dropped=False),
        Label("url", "https://digest-prod.fly.dev/", dropped=False),
        # noise
        Label("number", "Finished in 4.3 seconds", dropped=False),
        Label("number", "Finished in 4.4 seconds", dropped=False),
        Label("number", "57 tests, 0 failures", dropped=False),
        Label("number", "image size: 88 MB", dropped=False),
        Label("number", "5 files changed", dropped=False),
        Label("number", "Resolution completed in 0.214s", dropped=False),
        Label("name", "c0d94b1", dropped=False),
        Label("name", "3b7d0c6", dropped=False),
        Label("name", "e2865d1f", dropped=False),
        Label("name", "402117", dropped=False),
        Label("number", "88121", dropped=False),
        Label("command", "grep oban mix.lock", dropped=False),
    ]
    return DevSession(c, summary, labels)


def ingest_oom() -> DevSession:
    """Scala (sbt, Parquet) on GKE with gcloud: an ingest job OOMKilled since a release; commits
    beyond the first of a `git log --oneline` listing, a cluster and a bucket named only in
    commands, a heap default in an entrypoint's parameter expansion, settings chosen as a set, an
    image built with its tag, a peak RSS measured. Written and labelled before the rule ran on it
    (round 14)."""
    c = Conversation("/home/tomas/ingest", "fresh-ingest-oom")
    c.user(
        "The ingest job on GKE keeps getting OOMKilled since Friday's 1.15.0 release. Find out why and fix it. "
        "Don't raise the memory limit, the node pool is at its quota."
    )
    c.bash(
        "gcloud container clusters get-credentials ingest-prod --region europe-west1 --project acme-data",
        "Fetching cluster endpoint and auth data.\nkubeconfig entry generated for ingest-prod.",
    )
    c.bash(
        "kubectl -n ingest describe pod ingest-7d9f6c5b8-m2xkq | grep -A4 'Last State'",
        "    Last State:     Terminated\n      Reason:       OOMKilled\n      Exit Code:    137\n"
        "      Started:      Fri, 04 Dec 2026 22:10:31 +0000\n      Finished:     Fri, 04 Dec 2026 22:17:02 +0000",
    )
    c.bash(
        "kubectl -n ingest get deploy ingest -o jsonpath='{.spec.template.spec.containers[0].resources}'",
        '{"limits":{"memory":"2Gi"},"requests":{"cpu":"1","memory":"2Gi"}}',
    )
    c.bash(
        "git log --oneline v1.14.0..v1.15.0",
        "5c3e1a0 Release 1.15.0\n"
        "e81c2d7 ingest: raise parquet batch to 100k rows\n"
        "b5a90f3 reader: read whole row groups into memory\n"
        "2d7f4b9 deps: bump parquet-hadoop to 1.14.3\n"
        "f09a8c1 docs: document the backfill flag",
    )
    c.say(
        "Two of these matter: e81c2d7 raised the batch from 10k to 100k rows, and b5a90f3 makes the reader hold a "
        "whole row group in memory instead of streaming pages. Together a batch of wide rows no longer fits a 2Gi "
        "container, and the JVM isn't capped below the limit either."
    )
    c.tool(
        "Read",
        {"file_path": "/home/tomas/ingest/docker/entrypoint.sh"},
        '     1\t#!/bin/sh\n     2\tset -eu\n     3\texec java -jar /app/ingest.jar "$@"\n',
    )
    c.tool(
        "Read",
        {"file_path": "/home/tomas/ingest/src/main/scala/com/acme/ingest/IngestConfig.scala"},
        "     1\tpackage com.acme.ingest\n     2\t\n     3\tfinal case class IngestConfig(\n"
        "     4\t    batchRows: Int = 100000,\n     5\t    rowGroupBufferMiB: Int = 512,\n"
        "     6\t    readers: Int = 4\n     7\t)\n",
    )
    c.say(
        "So the settings I'll go with: batch 20,000 rows, a row-group buffer of 64 MiB, and 2 parallel readers. "
        "With the heap capped at 1536m that leaves room for metaspace and direct buffers under 2Gi."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/tomas/ingest/src/main/scala/com/acme/ingest/IngestConfig.scala",
            "old_string": "    batchRows: Int = 100000,\n    rowGroupBufferMiB: Int = 512,\n    readers: Int = 4\n",
            "new_string": "    batchRows: Int = 20000,\n    rowGroupBufferMiB: Int = 64,\n    readers: Int = 2\n",
        },
        "The file /home/tomas/ingest/src/main/scala/com/acme/ingest/IngestConfig.scala has been updated successfully.",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/tomas/ingest/docker/entrypoint.sh",
            "old_string": 'exec java -jar /app/ingest.jar "$@"\n',
            "new_string": 'exec java -Xmx"${HEAP_MAX:-1536m}" -XX:MaxDirectMemorySize=256m -jar /app/ingest.jar "$@"\n',
        },
        "The file /home/tomas/ingest/docker/entrypoint.sh has been updated successfully.",
    )
    c.bash(
        "sbt -batch test 2>&1 | tail -5",
        "[error] /home/tomas/ingest/src/test/scala/com/acme/ingest/IngestConfigSpec.scala:14:38: type mismatch;\n"
        "[error]  found   : Int(512)\n[error]  required: IngestConfig\n[error] one error found\n"
        "[error] (Test / compileIncremental) Compilation failed",
        error=True,
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/tomas/ingest/src/test/scala/com/acme/ingest/IngestConfigSpec.scala",
            "old_string": "    IngestConfig().rowGroupBufferMiB shouldBe IngestConfig(512)\n",
            "new_string": "    IngestConfig().rowGroupBufferMiB shouldBe 64\n",
        },
        "The file /home/tomas/ingest/src/test/scala/com/acme/ingest/IngestConfigSpec.scala has been updated successfully.",
    )
    c.bash(
        "sbt -batch test 2>&1 | tail -3",
        "[info] Tests: succeeded 212, failed 0, canceled 0, ignored 2, pending 0\n[info] All tests passed.\n"
        "[success] Total time: 97 s (01:37), completed Dec 5, 2026, 3:14:07 PM",
    )
    c.bash(
        '/usr/bin/time -v sbt -batch "run --input gs://acme-raw-events/2026/12/04/ --dry-run" 2>&1 | '
        "grep -E 'Maximum resident|Elapsed'",
        "\tElapsed (wall clock) time (h:mm:ss or m:ss): 6:41.22\n\tMaximum resident set size (kbytes): 1389212",
    )
    c.say(
        "Peak RSS on Friday's input is about 1.33 GiB now, comfortably under the 2Gi limit; before the change the "
        "same dry run was killed."
    )
    c.user("Good. Build and push the image, and how long does a full day take now?")
    c.bash(
        "gcloud builds submit --tag europe-west1-docker.pkg.dev/acme-data/ingest/ingest:1.15.1 --project acme-data "
        ". 2>&1 | tail -2",
        "ID                                    CREATE_TIME                DURATION  SOURCE  IMAGES  STATUS\n"
        "4f1c2a9e-77b0-4d1e-9a61-0c5e3b2d8f14  2026-12-05T15:20:11+00:00  3M12S     "
        "gs://acme-data_cloudbuild/source/1733412011.93-5b1e.tgz  "
        "europe-west1-docker.pkg.dev/acme-data/ingest/ingest:1.15.1  SUCCESS",
    )
    c.bash(
        "kubectl -n ingest set image deploy/ingest ingest=europe-west1-docker.pkg.dev/acme-data/ingest/ingest:1.15.1 "
        "&& kubectl -n ingest rollout status deploy/ingest",
        'deployment.apps/ingest image updated\nWaiting for deployment "ingest" rollout to finish: 1 old replicas are '
        'pending termination...\ndeployment "ingest" successfully rolled out',
    )
    c.bash(
        "kubectl -n ingest logs deploy/ingest --since=2h | grep 'Ingested'",
        "2026-12-05T17:02:48Z INFO  IngestJob - Ingested 48211904 rows from gs://acme-raw-events/2026/12/04/ "
        "in 41.87 min",
    )
    c.say("A full day (48.2M rows for 2026-12-04) took 41.87 minutes with the new settings, and no restarts.")
    c.bash(
        "git add -A && git commit -m 'ingest: smaller batches and buffers, cap JVM heap (OOMKilled since 1.15.0)'",
        "[fix/ingest-oom 9ab4e3f] ingest: smaller batches and buffers, cap JVM heap (OOMKilled since 1.15.0)\n"
        " 3 files changed, 5 insertions(+), 5 deletions(-)",
    )
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
The user asked why the GKE ingest job is OOMKilled since the 1.15.0 release. I found the two commits in 1.15.0 that raised the batch size and made the reader hold whole row groups, lowered the batch, buffer and readers, capped the JVM heap, verified memory, built and rolled out 1.15.1.

Summary:
1. Primary Request and Intent:
   Find and fix why the ingest job on GKE is OOMKilled since Friday's 1.15.0 release, without raising the 2Gi memory limit (the node pool is at quota). Later: build and push the image, and report how long a full day's ingest takes.

2. Key Technical Concepts:
   - Kubernetes OOMKilled (exit 137), memory limits
   - JVM heap (-Xmx) vs container limit, direct memory
   - Parquet row groups and batch sizes
   - Cloud Build, Artifact Registry

3. Files and Code Sections:
   - src/main/scala/com/acme/ingest/IngestConfig.scala: batchRows 100000 -> 20000 (and smaller buffer, fewer readers).
   - docker/entrypoint.sh: java now runs with a capped heap (-Xmx) and -XX:MaxDirectMemorySize=256m.
   - src/test/scala/com/acme/ingest/IngestConfigSpec.scala: fixed an assertion that no longer compiled.

4. Errors and fixes:
   - Pod ingest-7d9f6c5b8-m2xkq: OOMKilled, exit code 137, limit 2Gi.
   - sbt test failed to compile (type mismatch in IngestConfigSpec): fixed the assertion; all tests pass.

5. Problem Solving:
   Release 1.15.0 raised the parquet batch to 100k rows and made the reader keep whole row groups in memory, which no longer fits 2Gi, and the JVM was not capped. With smaller batches and buffers and a capped heap, peak memory on Friday's input is well under the limit.

6. All user messages:
   - "The ingest job on GKE keeps getting OOMKilled since Friday's 1.15.0 release. Find out why and fix it. Don't raise the memory limit, the node pool is at its quota."
   - "Good. Build and push the image, and how long does a full day take now?"

7. Pending Tasks:
   - None.

8. Current Work:
   Built and pushed the 1.15.1 image with Cloud Build, rolled it out to the ingest deployment; a full day (about 48M rows) took about 42 minutes with no restarts. Committed on fix/ingest-oom.

9. Optional Next Step:
   Watch tonight's run for restarts.
"""
    labels = [
        Label("request", "keeps getting OOMKilled since Friday's 1.15.0 release", dropped=False),
        Label("constraint", "Don't raise the memory limit", dropped=False),
        Label("request", "how long does a full day take now", dropped=False),
        Label("identifier", "ingest-prod", dropped=True),  # the cluster, named only in a command
        Label("identifier", "e81c2d7", dropped=True),  # commits the model singles out of the listing
        Label("identifier", "b5a90f3", dropped=True),
        Label("url", "gs://acme-raw-events", dropped=True),  # the bucket the job reads
        Label("identifier", "europe-west1-docker.pkg.dev/acme-data/ingest/ingest:1.15.1", dropped=True),
        Label("identifier", "9ab4e3f", dropped=True),  # the commit
        Label("edit", "HEAP_MAX:-1536m", dropped=True),  # "a capped heap"
        Label("edit", "batchRows: Int = 20000", dropped=False),
        Label("edit", "MaxDirectMemorySize=256m", dropped=False),
        Label(
            "decision", "a row-group buffer of 64 MiB, and 2 parallel readers", dropped=True
        ),  # "smaller buffer, fewer readers"
        Label("measurement", "1389212", dropped=True),  # peak RSS; "well under the limit"
        Label("measurement", "41.87 min", dropped=False),  # "about 42 minutes"
        Label("measurement", "48211904", dropped=False),  # "about 48M rows"
        Label("failed command", "sbt -batch test", dropped=False),
        Label("error", "OOMKilled", dropped=False),
        Label("file edited", "docker/entrypoint.sh", dropped=False),
        # noise
        Label("number", "Total time: 97 s", dropped=False),
        Label("number", "Tests: succeeded 212", dropped=False),
        Label("number", "3M12S", dropped=False),
        Label("number", "6:41.22", dropped=False),
        Label("name", "4f1c2a9e-77b0-4d1e-9a61-0c5e3b2d8f14", dropped=False),
        Label("name", "2d7f4b9", dropped=False),
        Label("name", "5c3e1a0", dropped=False),
        Label("name", "f09a8c1", dropped=False),
        Label("path", "gs://acme-data_cloudbuild/source/1733412011.93-5b1e.tgz", dropped=False),
        Label("number", "3 files changed", dropped=False),
        Label("command", "kubectl -n ingest rollout status deploy/ingest", dropped=False),
    ]
    return DevSession(c, summary, labels)


def plus_email_release() -> DevSession:
    """Dart and Flutter (flutter test, Gradle signing, gh release): a login crash on emails with a
    '+', a regex an edit put in, a test's hostile input, a tool's version line the model reasons
    from, a tally said again after adding tests, an artefact a build wrote, a docs line added, a
    release URL printed. Written and labelled before the rule ran on it (round 14)."""
    c = Conversation("/Users/noor/wallet-app", "fresh-plus-email-release")
    c.user(
        "Users with a + in their email (like anna+work@gmail.com) get a crash on the login screen. Fix it, add "
        "tests, and cut release 3.8.0 to GitHub. Keep minSdk at 23."
    )
    c.bash(
        "flutter --version",
        "Flutter 3.24.5 • channel stable • https://github.com/flutter/flutter.git\n"
        "Framework • revision dec2ee5c1f (3 weeks ago) • 2024-11-13 11:13:06 -0800\n"
        "Engine • revision a18df97ca5\nTools • Dart 3.5.4 • DevTools 2.37.3",
    )
    c.tool(
        "Read",
        {"file_path": "/Users/noor/wallet-app/lib/auth/email_validator.dart"},
        "     1\tfinal _email = RegExp(r'^[\\w.-]+@[\\w-]+\\.[\\w.]+$');\n     2\t\n"
        "     3\tString normalizeEmail(String input) {\n"
        "     4\t  final match = _email.firstMatch(input.trim())!;\n"
        "     5\t  return match.group(0)!.toLowerCase();\n     6\t}\n",
    )
    c.say(
        "The pattern has no `+` in the local part, so `firstMatch` returns null and the `!` throws: that's the "
        "crash. The same validator backs the sign-up form, so the rule has to be that anything the backend accepts "
        "the client accepts too; the backend allows `+` and dots in the local part and several labels in the domain."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/Users/noor/wallet-app/lib/auth/email_validator.dart",
            "old_string": "final _email = RegExp(r'^[\\w.-]+@[\\w-]+\\.[\\w.]+$');\n",
            "new_string": "final _email = RegExp(r'^[\\w.+-]+@[\\w-]+(\\.[\\w-]+)+$');\n",
        },
        "The file /Users/noor/wallet-app/lib/auth/email_validator.dart has been updated successfully.",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/Users/noor/wallet-app/lib/auth/email_validator.dart",
            "old_string": "  final match = _email.firstMatch(input.trim())!;\n  return match.group(0)!.toLowerCase();\n",
            "new_string": "  final match = _email.firstMatch(input.trim());\n"
            "  if (match == null) throw const FormatException('not an email address');\n"
            "  return match.group(0)!.toLowerCase();\n",
        },
        "The file /Users/noor/wallet-app/lib/auth/email_validator.dart has been updated successfully.",
    )
    c.bash(
        "flutter test test/auth 2>&1 | tail -1",
        "00:02 +5: All tests passed!",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/Users/noor/wallet-app/test/auth/email_validator_test.dart",
            "old_string": "}\n",
            "new_string": "  test('accepts plus addressing', () {\n"
            "    expect(normalizeEmail(' Anna+Work@Gmail.com '), 'anna+work@gmail.com');\n  });\n\n"
            "  test('rejects a double at sign with a FormatException', () {\n"
            "    expect(() => normalizeEmail('anna+work@@gmail.com'), throwsFormatException);\n  });\n}\n",
        },
        "The file /Users/noor/wallet-app/test/auth/email_validator_test.dart has been updated successfully.",
    )
    c.bash(
        "flutter test test/auth 2>&1 | tail -1",
        "00:03 +7: All tests passed!",
    )
    c.say("7 passing now: the 5 that were there plus the two new cases.")
    c.bash(
        "flutter analyze",
        "Analyzing wallet-app...\nNo issues found! (ran in 4.2s)",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/Users/noor/wallet-app/pubspec.yaml",
            "old_string": "version: 3.7.2+41\n",
            "new_string": "version: 3.8.0+42\n",
        },
        "The file /Users/noor/wallet-app/pubspec.yaml has been updated successfully.",
    )
    c.bash(
        "flutter build appbundle --release 2>&1 | tail -6",
        "FAILURE: Build failed with an exception.\n\n* What went wrong:\n"
        "Execution failed for task ':app:signReleaseBundle'.\n"
        "> A failure occurred while executing com.android.build.gradle.internal.tasks.FinalizeBundleTask$BundleToolRunnable\n"
        "   > java.io.FileNotFoundException: /Users/noor/keys/upload-keystore.jks (No such file or directory)",
        error=True,
    )
    c.bash("ls ~/keystores/", "upload-keystore.jks")
    c.tool(
        "Edit",
        {
            "file_path": "/Users/noor/wallet-app/android/key.properties",
            "old_string": "storeFile=/Users/noor/keys/upload-keystore.jks\n",
            "new_string": "storeFile=/Users/noor/keystores/upload-keystore.jks\n",
        },
        "The file /Users/noor/wallet-app/android/key.properties has been updated successfully.",
    )
    c.bash(
        "flutter build appbundle --release 2>&1 | tail -2",
        "Running Gradle task 'bundleRelease'...                            187.4s\n"
        "✓ Built build/app/outputs/bundle/release/app-release.aab (41.2MB)",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/Users/noor/wallet-app/docs/RELEASING.md",
            "old_string": "## Build\n",
            "new_string": "## Build\n\n- Check that `android/key.properties` points at the upload keystore in ~/keystores "
            "before `flutter build appbundle`.\n",
        },
        "The file /Users/noor/wallet-app/docs/RELEASING.md has been updated successfully.",
    )
    c.bash(
        "git add -A && git commit -m 'Accept plus addressing in emails; 3.8.0+42' && git tag v3.8.0 && git push origin "
        "main v3.8.0 2>&1 | tail -2",
        "[main 4e7b2d1] Accept plus addressing in emails; 3.8.0+42\n 5 files changed, 19 insertions(+), 3 deletions(-)\n"
        "To github.com:acme/wallet-app.git\n * [new tag]         v3.8.0 -> v3.8.0",
    )
    c.bash(
        "gh release create v3.8.0 build/app/outputs/bundle/release/app-release.aab --title 'Wallet 3.8.0' "
        "--notes 'Fixes the login crash for emails with a +'",
        "https://github.com/acme/wallet-app/releases/tag/v3.8.0",
    )
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
The user reported a login crash for emails with a '+'. I fixed the email validator's pattern and its null handling, added tests, bumped the version, fixed the release signing path, built the app bundle and published release 3.8.0 on GitHub.

Summary:
1. Primary Request and Intent:
   Fix the login-screen crash for users with a + in their email (e.g. anna+work@gmail.com), add tests, and cut release 3.8.0 to GitHub. Constraint: keep minSdk at 23.

2. Key Technical Concepts:
   - Dart RegExp, null assertion (!) on firstMatch
   - flutter test, flutter analyze
   - Android release signing (key.properties), app bundles
   - gh release create

3. Files and Code Sections:
   - lib/auth/email_validator.dart: the pattern now allows + in the local part and multi-label domains; normalizeEmail throws a FormatException instead of crashing on a null match.
   - test/auth/email_validator_test.dart: new tests for plus addressing and an invalid address.
   - pubspec.yaml: version 3.7.2+41 -> 3.8.0+42.
   - android/key.properties: storeFile now points at ~/keystores/upload-keystore.jks.
   - docs/RELEASING.md: added a note about the keystore path.

4. Errors and fixes:
   - Crash: firstMatch returned null for a + address and the ! threw.
   - flutter build appbundle failed in :app:signReleaseBundle (keystore not found at ~/keys): fixed the path in key.properties.

5. Problem Solving:
   The validator also backs the sign-up form, so it must accept what the backend accepts. Tests and analyze are clean.

6. All user messages:
   - "Users with a + in their email (like anna+work@gmail.com) get a crash on the login screen. Fix it, add tests, and cut release 3.8.0 to GitHub. Keep minSdk at 23."

7. Pending Tasks:
   - None.

8. Current Work:
   Committed, tagged v3.8.0, pushed, and created the GitHub release with the app bundle attached.

9. Optional Next Step:
   Upload the bundle to the Play Console if the user wants it.
"""
    labels = [
        Label("request", "get a crash on the login screen", dropped=False),
        Label("request", "cut release 3.8.0 to GitHub", dropped=False),
        Label("constraint", "Keep minSdk at 23", dropped=False),
        Label("identifier", "Flutter 3.24.5", dropped=True),  # the tool's version line; the summary never says it
        Label("edit", "[\\w.+-]+@[\\w-]+(\\.[\\w-]+)+$", dropped=True),  # the new pattern, described only
        Label("edit", "anna+work@@gmail.com", dropped=True),  # the test's hostile input; "an invalid address"
        Label("identifier", "accepts plus addressing", dropped=False),  # "new tests for plus addressing"
        Label("identifier", "rejects a double at sign with a FormatException", dropped=True),
        Label("measurement", "+7: All tests passed", dropped=True),  # the tally said again after adding tests
        Label("edit", "points at the upload keystore in ~/keystores", dropped=True),  # "a note about the keystore path"
        Label("decision", "anything the backend accepts the client accepts", dropped=False),
        Label("identifier", "build/app/outputs/bundle/release/app-release.aab", dropped=True),  # the artefact
        Label("url", "https://github.com/acme/wallet-app/releases/tag/v3.8.0", dropped=True),
        Label("identifier", "4e7b2d1", dropped=True),  # the commit
        Label("failed command", "flutter build appbundle --release", dropped=False),
        Label("edit", "version: 3.8.0+42", dropped=False),
        Label("file edited", "android/key.properties", dropped=False),
        Label("file edited", "docs/RELEASING.md", dropped=False),
        # noise
        Label("number", "+5: All tests passed", dropped=False),
        Label("number", "ran in 4.2s", dropped=False),
        Label("number", "187.4s", dropped=False),
        Label("number", "41.2MB", dropped=False),
        Label("name", "Dart 3.5.4", dropped=False),
        Label("name", "DevTools 2.37.3", dropped=False),
        Label("name", "dec2ee5c1f", dropped=False),
        Label("name", "a18df97ca5", dropped=False),
        Label("number", "5 files changed", dropped=False),
        Label("command", "ls ~/keystores/", dropped=False),
    ]
    return DevSession(c, summary, labels)


def vpc_moved_blocks() -> DevSession:
    """Terraform/HCL on AWS: a state migration of a prod network stack into a module with `moved`
    blocks (a plan that would have destroyed 17 resources, a moved block refused while the old
    resource was still declared, a tag change accepted with the user's reason), the state's S3
    version id the user asked for, tflint missing. Written and labelled before the rule ran on it
    (round 15)."""
    c = Conversation("/home/dana/infra", "fresh-vpc-moved")
    c.user(
        "We refactored the prod network into modules/vpc last sprint but never migrated the state. Wire "
        "envs/prod to the module and migrate the state so the plan shows nothing destroyed. Nothing may be "
        "recreated: the NAT gateways take ten minutes to come back and every egress call from prod goes "
        "through them."
    )
    c.bash(
        "terraform -chdir=envs/prod state list | wc -l && terraform -chdir=envs/prod state list | "
        "grep -E 'aws_(vpc|subnet|nat_gateway|eip|route_table|internet_gateway)'",
        "64\n"
        "aws_eip.nat[0]\naws_eip.nat[1]\naws_eip.nat[2]\n"
        "aws_internet_gateway.main\n"
        "aws_nat_gateway.public[0]\naws_nat_gateway.public[1]\naws_nat_gateway.public[2]\n"
        "aws_route_table.private[0]\naws_route_table.private[1]\naws_route_table.private[2]\n"
        "aws_route_table.public\n"
        'aws_subnet.private["eu-west-1a"]\naws_subnet.private["eu-west-1b"]\naws_subnet.private["eu-west-1c"]\n'
        'aws_subnet.public["eu-west-1a"]\naws_subnet.public["eu-west-1b"]\naws_subnet.public["eu-west-1c"]\n'
        "aws_vpc.main",
    )
    c.tool(
        "Read",
        {"file_path": "/home/dana/infra/modules/vpc/main.tf"},
        '     1\tresource "aws_vpc" "this" {\n     2\t  cidr_block           = var.cidr\n'
        "     3\t  enable_dns_hostnames = true\n     4\t  tags                 = merge(var.tags, { Name = var.name })\n"
        "     5\t}\n     6\t\n"
        '     7\tresource "aws_subnet" "private" {\n     8\t  for_each          = var.private_subnets\n'
        "     9\t  vpc_id            = aws_vpc.this.id\n    10\t  cidr_block        = each.value\n"
        "    11\t  availability_zone = each.key\n"
        '    12\t  tags = merge(var.tags, { "kubernetes.io/role/internal-elb" = "1" })\n    13\t}\n'
        '    ...\n    58\tresource "aws_nat_gateway" "this" {\n    59\t  count         = length(var.azs)\n'
        "    60\t  allocation_id = aws_eip.nat[count.index].id\n"
        "    61\t  subnet_id     = aws_subnet.public[var.azs[count.index]].id\n    62\t}\n",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/dana/infra/envs/prod/main.tf",
            "old_string": "# network: see modules/vpc (not wired yet)\n",
            "new_string": 'module "vpc" {\n  source          = "../../modules/vpc"\n  name            = "prod"\n'
            '  cidr            = "10.40.0.0/16"\n  azs             = ["eu-west-1a", "eu-west-1b", "eu-west-1c"]\n'
            "  private_subnets = local.private_subnets\n  public_subnets  = local.public_subnets\n"
            "  tags            = local.tags\n}\n",
        },
        "The file /home/dana/infra/envs/prod/main.tf has been updated successfully.",
    )
    c.bash(
        "terraform -chdir=envs/prod plan -lock=false -no-color 2>&1 | grep -E '^  # |^Plan:'",
        "  # aws_eip.nat[0] will be destroyed\n  # aws_eip.nat[1] will be destroyed\n  # aws_eip.nat[2] will be destroyed\n"
        "  # aws_internet_gateway.main will be destroyed\n"
        "  # aws_nat_gateway.public[0] will be destroyed\n  # aws_nat_gateway.public[1] will be destroyed\n"
        "  # aws_nat_gateway.public[2] will be destroyed\n"
        "  # aws_route_table.private[0] will be destroyed\n  # aws_route_table.private[1] will be destroyed\n"
        "  # aws_route_table.private[2] will be destroyed\n  # aws_route_table.public will be destroyed\n"
        '  # aws_subnet.private["eu-west-1a"] will be destroyed\n  # aws_subnet.private["eu-west-1b"] will be destroyed\n'
        '  # aws_subnet.private["eu-west-1c"] will be destroyed\n  # aws_subnet.public["eu-west-1a"] will be destroyed\n'
        '  # aws_subnet.public["eu-west-1b"] will be destroyed\n  # aws_vpc.main will be destroyed\n'
        "  # module.vpc.aws_eip.nat[0] will be created\n  # module.vpc.aws_eip.nat[1] will be created\n"
        "  # module.vpc.aws_eip.nat[2] will be created\n  # module.vpc.aws_internet_gateway.this will be created\n"
        "  # module.vpc.aws_nat_gateway.this[0] will be created\n  # module.vpc.aws_nat_gateway.this[1] will be created\n"
        "  # module.vpc.aws_nat_gateway.this[2] will be created\n"
        "  # module.vpc.aws_route_table.private[0] will be created\n"
        "  # module.vpc.aws_vpc.this will be created\n"
        "Plan: 17 to add, 0 to change, 17 to destroy.",
    )
    c.say(
        "As expected without a migration, Terraform sees the old addresses gone and new ones to create: 17 to "
        "destroy and 17 to add, NAT gateways included. I'll map each old address to its module address. I can do "
        "that with `terraform state mv` now, or with `moved` blocks that go through review like any other change."
    )
    c.user(
        "Moved blocks, not state mv. We only ever apply from the Atlantis pipeline, never from a laptop, and a "
        "state mv is an apply in all but name. Before anything touches the state, tell me the current version id "
        "of the state object so we can roll back to it."
    )
    c.bash(
        "aws s3api list-object-versions --bucket acme-tfstate-prod --prefix network/terraform.tfstate "
        "--max-items 1 --query 'Versions[0].[VersionId,LastModified]' --output text",
        "3HL4kqtJlcpXroDTDmJ.rmSpXd3dIbrHY\t2026-11-28T16:02:11+00:00",
    )
    c.say(
        "The current state object is version 3HL4kqtJlcpXroDTDmJ.rmSpXd3dIbrHY, written 2026-11-28 16:02 UTC. "
        "Nothing touches it until Atlantis applies the PR."
    )
    c.tool(
        "Write",
        {
            "file_path": "/home/dana/infra/envs/prod/moved.tf",
            "content": "moved {\n  from = aws_vpc.main\n  to   = module.vpc.aws_vpc.this\n}\n\n"
            "moved {\n  from = aws_internet_gateway.main\n  to   = module.vpc.aws_internet_gateway.this\n}\n\n"
            "moved {\n  from = aws_nat_gateway.public\n  to   = module.vpc.aws_nat_gateway.this\n}\n\n"
            "moved {\n  from = aws_eip.nat\n  to   = module.vpc.aws_eip.nat\n}\n\n"
            "moved {\n  from = aws_route_table.private\n  to   = module.vpc.aws_route_table.private\n}\n\n"
            "moved {\n  from = aws_route_table.public\n  to   = module.vpc.aws_route_table.public\n}\n\n"
            "moved {\n  from = aws_subnet.private\n  to   = module.vpc.aws_subnet.private\n}\n\n"
            "moved {\n  from = aws_subnet.public\n  to   = module.vpc.aws_subnet.public\n}\n",
        },
        "File created successfully at: /home/dana/infra/envs/prod/moved.tf",
    )
    c.bash(
        "terraform -chdir=envs/prod plan -lock=false -no-color 2>&1 | tail -12",
        "Error: Moved object still exists\n\n  on moved.tf line 16:\n  16: moved {\n\n"
        "This statement declares a move from aws_eip.nat, but that resource is still declared at main.tf:88.\n\n"
        "Change your configuration so that this resource will be declared as module.vpc.aws_eip.nat instead.",
        error=True,
    )
    c.say(
        "The old `aws_eip.nat` block is still in envs/prod/main.tf (the refactor removed the others but left "
        "this one behind). Removing it."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/dana/infra/envs/prod/main.tf",
            "old_string": 'resource "aws_eip" "nat" {\n  count  = 3\n  domain = "vpc"\n'
            '  tags   = merge(local.tags, { Name = "prod-nat-${count.index}" })\n}\n',
            "new_string": "",
        },
        "The file /home/dana/infra/envs/prod/main.tf has been updated successfully.",
    )
    c.bash(
        "terraform -chdir=envs/prod plan -lock=false -no-color 2>&1 | grep -E '^  # |^      [~+-] |^Plan:'",
        "  # aws_eip.nat[0] has moved to module.vpc.aws_eip.nat[0]\n"
        "  # aws_vpc.main has moved to module.vpc.aws_vpc.this\n"
        '  # module.vpc.aws_subnet.private["eu-west-1a"] will be updated in-place\n'
        '      ~ tags                                = {\n          + "kubernetes.io/role/internal-elb" = "1"\n'
        '  # module.vpc.aws_subnet.private["eu-west-1b"] will be updated in-place\n'
        '  # module.vpc.aws_subnet.private["eu-west-1c"] will be updated in-place\n'
        "Plan: 0 to add, 3 to change, 0 to destroy.",
    )
    c.say(
        "Nothing is destroyed or created now. The 3 in-place changes are a tag the module puts on private "
        "subnets, kubernetes.io/role/internal-elb = 1. I can suppress it with a variable if you want a plan with "
        "no changes at all."
    )
    c.user(
        "Keep the tag, we want it anyway: the EKS load balancer controller only places internal load balancers "
        "in subnets that carry it. Lint and open the PR."
    )
    c.bash("tflint --recursive", "Exit code 127\nbash: tflint: command not found", error=True)
    c.bash(
        'docker run --rm -v "$PWD":/data -t ghcr.io/terraform-linters/tflint:v0.53.0 --recursive',
        '1 issue(s) found:\n\nWarning: Missing version constraint for provider "random" in `required_providers` '
        "(terraform_required_providers)\n\n  on modules/vpc/main.tf line 71:\n"
        '  71: resource "random_id" "flow_logs" {\n',
    )
    c.bash("terraform fmt -check -recursive", "envs/prod/main.tf\nExit code 3", error=True)
    c.bash(
        "terraform fmt -recursive && terraform fmt -check -recursive && echo formatted", "envs/prod/main.tf\nformatted"
    )
    c.bash(
        "git checkout -b infra/vpc-moved && git add -A && git commit -m 'prod: wire modules/vpc, moved blocks "
        "for the network stack'",
        "Switched to a new branch 'infra/vpc-moved'\n[infra/vpc-moved 5d1a9e3] prod: wire modules/vpc, moved "
        "blocks for the network stack\n 2 files changed, 49 insertions(+), 7 deletions(-)\n create mode 100644 "
        "envs/prod/moved.tf",
    )
    c.bash(
        "git push -u origin infra/vpc-moved && gh pr create --fill --label atlantis",
        "branch 'infra/vpc-moved' set up to track 'origin/infra/vpc-moved'.\nhttps://github.com/acme/infra/pull/1432",
    )
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
The user wanted the prod environment wired to the refactored VPC module and the Terraform state migrated without destroying anything. I added the module call, mapped old addresses to module addresses with moved blocks (the user's choice over state mv), removed a leftover resource block, confirmed the plan only updates tags, linted, and opened a PR.

Summary:
1. Primary Request and Intent:
   Wire envs/prod to modules/vpc and migrate the network resources' state so the plan destroys and recreates nothing (the NAT gateways carry all of prod's egress). Use moved blocks rather than terraform state mv, since applies only happen through Atlantis. Tell the user the state object's current version id before anything changes. Later: keep the module's internal-elb subnet tag, lint, open the PR.

2. Key Technical Concepts:
   - Terraform moved blocks vs terraform state mv
   - Atlantis as the only apply path
   - S3 object versioning of the state bucket
   - kubernetes.io/role/internal-elb subnet tag for the EKS load balancer controller

3. Files and Code Sections:
   - envs/prod/main.tf: added the module "vpc" block (name prod, 10.40.0.0/16, three eu-west-1 AZs); removed the leftover aws_eip.nat resource.
   - envs/prod/moved.tf: new, eight moved blocks from the old root addresses (vpc, internet gateway, NAT gateways, EIPs, route tables, subnets) to module.vpc.
   - modules/vpc/main.tf: read; private subnets carry the internal-elb tag.

4. Errors and fixes:
   - Without moves the plan destroyed and recreated the whole network stack.
   - "Moved object still exists" for aws_eip.nat: the old block was still declared in main.tf; removed it.
   - terraform fmt -check flagged envs/prod/main.tf: ran terraform fmt.

5. Problem Solving:
   The final plan has nothing to add or destroy, only in-place tag updates on the three private subnets, which the user accepted. tflint (run through its Docker image) reported one warning, a provider version constraint in the module.

6. All user messages:
   - "We refactored the prod network into modules/vpc last sprint but never migrated the state. Wire envs/prod to the module and migrate the state so the plan shows nothing destroyed. ..."
   - "Moved blocks, not state mv. We only ever apply from the Atlantis pipeline, never from a laptop ... tell me the current version id of the state object so we can roll back to it."
   - "Keep the tag, we want it anyway ... Lint and open the PR."

7. Pending Tasks:
   - Atlantis plan/apply on the PR.

8. Current Work:
   Branch infra/vpc-moved is pushed and the PR is open: https://github.com/acme/infra/pull/1432

9. Optional Next Step:
   Watch the Atlantis plan on the PR and confirm it matches the local one.
"""
    labels = [
        Label("request", "migrate the state so the plan shows nothing destroyed", dropped=False),
        Label("constraint", "Nothing may be recreated", dropped=False),  # "destroys and recreates nothing"
        Label("decision", "the NAT gateways take ten minutes to come back", dropped=True),  # reason, only half kept
        Label("constraint", "never from a laptop", dropped=False),
        Label("decision", "a state mv is an apply in all but name", dropped=True),  # the reason for moved blocks
        Label("request", "tell me the current version id", dropped=False),
        Label("identifier", "3HL4kqtJlcpXroDTDmJ.rmSpXd3dIbrHY", dropped=True),  # what the user asked to be told
        Label("identifier", "acme-tfstate-prod", dropped=True),  # the state bucket
        Label("identifier", "network/terraform.tfstate", dropped=True),
        Label("measurement", "Plan: 17 to add, 0 to change, 17 to destroy.", dropped=True),  # "the whole stack"
        Label("measurement", "Plan: 0 to add, 3 to change, 0 to destroy.", dropped=False),
        Label("error", "Moved object still exists", dropped=False),
        Label("error", "still declared at main.tf:88", dropped=True),  # where: the summary says only main.tf
        Label(
            "decision", "only places internal load balancers", dropped=False
        ),  # "for the EKS load balancer controller"
        Label("failed command", "tflint --recursive", dropped=True),  # "run through its Docker image", not why
        Label("error", "tflint: command not found", dropped=True),
        Label("identifier", "ghcr.io/terraform-linters/tflint:v0.53.0", dropped=True),
        Label("measurement", 'Missing version constraint for provider "random"', dropped=False),
        Label("edit", 'count  = 3\n  domain = "vpc"', dropped=False),  # "removed the leftover aws_eip.nat"
        Label("edit", "10.40.0.0/16", dropped=False),
        Label("file edited", "envs/prod/moved.tf", dropped=False),
        Label("file edited", "envs/prod/main.tf", dropped=False),
        Label("file read", "modules/vpc/main.tf", dropped=False),
        Label("identifier", "5d1a9e3", dropped=True),  # the commit
        Label("url", "https://github.com/acme/infra/pull/1432", dropped=False),
        Label("failed command", "terraform fmt -check -recursive", dropped=False),
        # noise
        Label("number", "64", dropped=False),
        Label("number", "2 files changed", dropped=False),
        Label("name", "2026-11-28T16:02:11+00:00", dropped=False),
        Label("path", "module.vpc.aws_eip.nat", dropped=False),
        Label("command", "git push -u origin infra/vpc-moved", dropped=False),
    ]
    return DevSession(c, summary, labels)


def churn_plan_rank() -> DevSession:
    """R (Quarto, renv, tidymodels): a churn notebook's holdout AUC fell from 0.81 to 0.74 after an R
    upgrade; `read.csv` now gives strings (R 4's stringsAsFactors), so `as.numeric` made a feature all
    NA, imputed to a constant; counts from `table`, a missing package, lintr absent, the user's reason
    for an explicit order. Written and labelled before the rule ran on it (round 15)."""
    c = Conversation("/home/priya/churn", "fresh-churn-plan-rank")
    c.user(
        "The churn notebook (analysis/churn.qmd) used to give a holdout AUC around 0.81, and since last week it "
        "says 0.74. Nobody touched the model code. Find out what changed. Don't update renv.lock without asking "
        "me: the Q3 board deck numbers were produced with it."
    )
    c.bash(
        "git log --oneline -5",
        "e71c0a2 renv: snapshot after R 4.4.2 upgrade\n2b9f4d1 churn: add tenure buckets\n"
        "9a0c3e5 churn: holdout by signup month\n61d7e0b data: refresh customers export\nf44d210 Initial churn notebook",
    )
    c.bash(
        "git show e71c0a2 --stat && git show e71c0a2 -- renv.lock | grep -E '^[-+] +\"(Version|Package)\"' | head -12",
        "commit e71c0a2\n\n renv.lock | 412 ++++++++++++++++++++++++++++++++++++++-------------------------\n"
        " 1 file changed, 236 insertions(+), 176 deletions(-)\n"
        '-    "Version": "3.6.3",\n+    "Version": "4.4.2",\n'
        '       "Package": "dplyr",\n-      "Version": "1.0.10",\n+      "Version": "1.1.4",\n'
        '       "Package": "recipes",\n-      "Version": "1.0.4",\n+      "Version": "1.1.0",\n'
        '       "Package": "glmnet",\n-      "Version": "4.1-6",\n+      "Version": "4.1-8",',
    )
    c.bash(
        "quarto render analysis/churn.qmd --to html",
        "processing file: churn.qmd\n  |..........                                |  22% [load]\n\n"
        "Quitting from lines 12-19 [load] (churn.qmd)\nError in `library()`:\n"
        "! there is no package called 'arrow'\nBacktrace:\n    x\n 1. \\-base::library(arrow)\nExecution halted",
        error=True,
    )
    c.say(
        "The project library is missing arrow; `renv::restore()` installs what renv.lock pins without changing the lockfile."
    )
    c.bash(
        "Rscript -e 'renv::restore(prompt = FALSE)' 2>&1 | tail -3",
        "- Installing arrow ...                          OK [built from source in 6.2m]\n"
        "- Installing tzdb ...                           OK [linked from cache]\nSuccessfully installed 2 packages.",
    )
    c.bash(
        "quarto render analysis/churn.qmd --to html 2>&1 | grep -vE '^ +\\|' | tail -8",
        "processing file: churn.qmd\n"
        "Warning in eval(expr, envir, enclos) : NAs introduced by coercion\n"
        "train: 48213 rows, holdout: 12054 rows\n"
        "glmnet: lambda.1se = 0.0031\n"
        "holdout AUC: 0.742\n"
        "output file: churn.knit.md\n\nOutput created: churn.html",
    )
    c.tool(
        "Read",
        {"file_path": "/home/priya/churn/analysis/churn.qmd"},
        "    12\t```{r load}\n    13\tlibrary(arrow)\n    14\tlibrary(tidymodels)\n"
        '    15\tcustomers <- read.csv("data/customers.csv")\n'
        "    16\tcustomers$plan_rank <- as.numeric(customers$plan)\n"
        '    17\tevents <- read_parquet("data/events.parquet")\n    18\t```\n'
        "    ...\n    41\trec <- recipe(churned ~ ., data = train) |>\n"
        "    42\t  step_impute_median(all_numeric_predictors()) |>\n    43\t  step_normalize(all_numeric_predictors())\n",
    )
    c.say(
        "This is the R upgrade, not the packages: R 4.0 changed read.csv's default to stringsAsFactors = FALSE. "
        "Under R 3.6.3 `plan` was a factor and as.numeric gave its level codes (basic 1, plus 2, pro 3). Now it is "
        "a character vector, as.numeric gives NA for every row (that's the coercion warning), and "
        "step_impute_median turns the column into a constant, so the model lost its second-strongest feature."
    )
    c.bash(
        'Rscript -e \'c <- read.csv("data/customers.csv"); print(class(c$plan)); print(table(c$plan)); '
        "print(sum(is.na(suppressWarnings(as.numeric(c$plan)))))'",
        '[1] "character"\n\nbasic  plus   pro \n31877 19215  9175 \n[1] 60267',
    )
    c.user(
        "Makes sense. Make the order explicit, basic < plus < pro. Alphabetical happened to be right, but the "
        "team plan we launch in January would sort last and it isn't the most expensive. And make the notebook "
        "fail loudly if a plan it doesn't know shows up."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/priya/churn/analysis/churn.qmd",
            "old_string": "customers$plan_rank <- as.numeric(customers$plan)\n",
            "new_string": 'plan_levels <- c("basic", "plus", "pro")\n'
            "customers$plan_rank <- as.integer(factor(customers$plan, levels = plan_levels))\n"
            "stopifnot(!anyNA(customers$plan_rank))\n",
        },
        "The file /home/priya/churn/analysis/churn.qmd has been updated successfully.",
    )
    c.bash(
        "quarto render analysis/churn.qmd --to html 2>&1 | grep -vE '^ +\\|' | tail -6",
        "processing file: churn.qmd\ntrain: 48213 rows, holdout: 12054 rows\nglmnet: lambda.1se = 0.0027\n"
        "holdout AUC: 0.811\n\nOutput created: churn.html",
    )
    c.bash(
        "Rscript -e 'lintr::lint(\"analysis/churn.qmd\")'",
        "Error in loadNamespace(x) : there is no package called 'lintr'\nCalls: loadNamespace -> withRestarts -> "
        "withOneRestart -> doWithOneRestart\nExecution halted",
        error=True,
    )
    c.say(
        "lintr isn't in the project library, and installing it would change renv.lock, which you asked me not to "
        "do without asking, so I've left linting out."
    )
    c.bash(
        "git checkout -b fix/churn-plan-rank && git commit -am 'churn: explicit plan order (R 4 read.csv gives "
        "strings)'",
        "Switched to a new branch 'fix/churn-plan-rank'\n[fix/churn-plan-rank 0d3b7f2] churn: explicit plan order "
        "(R 4 read.csv gives strings)\n 1 file changed, 3 insertions(+), 1 deletion(-)",
    )
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
The user's churn notebook lost AUC (0.81 to 0.74) with no model code change. The cause was the R 4 upgrade: read.csv no longer makes factors, so the plan rank feature became NA and was imputed to a constant. I made the plan order explicit with a guard, and AUC is back.

Summary:
1. Primary Request and Intent:
   Find out why analysis/churn.qmd's holdout AUC dropped from about 0.81 to 0.74 when nobody changed the model code. Do not update renv.lock without asking (the Q3 board deck numbers came from it). Then: make the plan order explicit (basic < plus < pro) and make the notebook fail if an unknown plan appears.

2. Key Technical Concepts:
   - R 4.0's stringsAsFactors = FALSE default in read.csv
   - renv lockfile and renv::restore
   - tidymodels recipes (median imputation, normalisation), glmnet
   - Quarto rendering

3. Files and Code Sections:
   - analysis/churn.qmd: plan_rank is now built from a factor with explicit levels basic, plus, pro, and the notebook stops if any plan_rank is NA.
   - renv.lock: unchanged; the last commit moved R and several packages (dplyr 1.1.4, recipes 1.1.0, glmnet 4.1-8).

4. Errors and fixes:
   - quarto render failed: the arrow package was missing from the project library; renv::restore() installed it without touching the lockfile.
   - "NAs introduced by coercion": as.numeric on a character plan column gave NA for every row.

5. Problem Solving:
   The plan column is character under R 4, so plan_rank was entirely NA and median imputation made it constant. With explicit levels the holdout AUC is 0.811 again (train 48213 rows, holdout 12054).

6. All user messages:
   - "The churn notebook (analysis/churn.qmd) used to give a holdout AUC around 0.81, and since last week it says 0.74. Nobody touched the model code. Find out what changed. Don't update renv.lock without asking me: the Q3 board deck numbers were produced with it."
   - "Makes sense. Make the order explicit, basic < plus < pro. ... And make the notebook fail loudly if a plan it doesn't know shows up."

7. Pending Tasks:
   - None.

8. Current Work:
   The fix is committed on the branch fix/churn-plan-rank.

9. Optional Next Step:
   Ask whether to open a PR.
"""
    labels = [
        Label("request", "used to give a holdout AUC around 0.81", dropped=False),
        Label("constraint", "Don't update renv.lock without asking me", dropped=False),
        Label("identifier", "e71c0a2", dropped=True),  # the commit that brought the regression: "the last commit"
        Label("identifier", '"Version": "3.6.3"', dropped=True),  # the R version before; the summary says "R 4"
        Label("failed command", "quarto render analysis/churn.qmd --to html", dropped=False),
        Label("error", "there is no package called 'arrow'", dropped=False),
        Label("measurement", "built from source in 6.2m", dropped=True),
        Label("measurement", "holdout AUC: 0.742", dropped=False),
        Label("measurement", "holdout AUC: 0.811", dropped=False),
        Label("measurement", "31877 19215  9175", dropped=True),  # the plans' counts
        Label("measurement", "[1] 60267", dropped=True),  # every row NA: "entirely NA"
        Label("measurement", "lambda.1se = 0.0031", dropped=True),
        Label("file read", "analysis/churn.qmd", dropped=False),
        Label("file edited", "analysis/churn.qmd", dropped=False),
        Label("edit", "as.numeric(customers$plan)", dropped=True),  # what it was; the summary gives only the new
        Label("edit", "stopifnot(!anyNA(customers$plan_rank))", dropped=False),
        Label("decision", "the team plan we launch in January would sort last", dropped=True),  # the reason
        Label("request", "make the notebook fail loudly", dropped=False),
        Label("failed command", "lintr::lint", dropped=True),
        Label("error", "there is no package called 'lintr'", dropped=True),
        Label("decision", "installing it would change renv.lock", dropped=True),  # why linting was left out
        Label("identifier", "0d3b7f2", dropped=True),  # the commit
        Label("identifier", "step_impute_median", dropped=False),
        # noise
        Label("number", "412", dropped=False),
        Label("number", "22%", dropped=False),
        Label("path", "churn.knit.md", dropped=False),
        Label("name", "lines 12-19", dropped=False),
        Label("command", "git log --oneline -5", dropped=False),
    ]
    return DevSession(c, summary, labels)


def ledger_space_leak() -> DevSession:
    """Haskell (cabal, GHC RTS heap profile) in Kubernetes: a polling service's memory grows to 2 GB a
    day; a profiling build refused, hp2pretty missing, a heap profile by closure type read, a lazy
    Map and fold plus an unpruned map fixed, a boundary test failing, residency measured before and
    after, the user's reason for the window. Written and labelled before the rule ran on it (round 15)."""
    c = Conversation("/home/tomas/ledger-sync", "fresh-ledger-leak")
    c.user(
        "ledger-sync's memory grows to about 2 GB over a day until the pod gets OOM-killed. It's the Haskell "
        "service with the servant API and the polling loop. Find the leak. We stay on GHC 9.6.6: the Nix binary "
        "cache only has 9.6, so no compiler bump."
    )
    c.bash(
        "kubectl top pod -n ledger -l app=ledger-sync && kubectl get pod -n ledger -l app=ledger-sync "
        "-o jsonpath='{.items[0].status.containerStatuses[0].restartCount}'",
        "NAME                           CPU(cores)   MEMORY(bytes)\nledger-sync-7d9c6b8f5-x2lqp    41m          1873Mi\n"
        "14",
    )
    c.bash(
        "cabal build --enable-profiling exe:ledger-sync 2>&1 | tail -6",
        "Building library for ledger-sync-0.4.2..\n[ 3 of 11] Compiling Ledger.Types\n\n"
        "src/Ledger/Types.hs:9:1: error:\n    Could not find module 'Data.Aeson'\n"
        "    Perhaps you haven't installed the profiling libraries for package 'aeson-2.1.2.1'?",
        error=True,
    )
    c.say(
        "The Nix-provided package set has no profiling libraries, so a cost-centre profile is out. A heap profile "
        "by closure type (`+RTS -hT`) needs no profiling build, so I'll use that on a replay of a day's events."
    )
    c.bash(
        "cabal run ledger-sync -- --replay fixtures/day.jsonl +RTS -hT -i0.5 -s -RTS 2>&1 | "
        "grep -E 'maximum residency|total memory'",
        "   1,912,604,160 bytes maximum residency (31 sample(s))\n"
        "            3731 MiB total memory in use (0 MB lost due to fragmentation)",
    )
    c.bash("hp2pretty ledger-sync.hp", "Exit code 127\nbash: hp2pretty: command not found", error=True)
    c.bash(
        "awk '/BEGIN_SAMPLE 61.0/,/END_SAMPLE 61.0/' ledger-sync.hp | sort -k2 -n -r | head -8",
        "THUNK_2_0\t412886016\n"
        "Data.Map.Internal.Bin\t298012480\n"
        "GHC.Num.Integer.IS\t96011904\n"
        "Data.Time.Clock.Internal.UTCTime.UTCTime\t95998720\n"
        "ARR_WORDS\t8388608\n"
        "Ledger.Types.EventId\t6012416\n"
        "BEGIN_SAMPLE 61.0\nEND_SAMPLE 61.0",
    )
    c.tool(
        "Read",
        {"file_path": "/home/tomas/ledger-sync/src/Ledger/Sync.hs"},
        "     1\tmodule Ledger.Sync (run, SyncState (..)) where\n     2\t\n"
        "     3\timport qualified Data.Map.Lazy as Map\n     4\timport Data.List (foldl)\n"
        "    ...\n    21\tdata SyncState = SyncState\n    22\t  { seen  :: Map.Map EventId UTCTime\n"
        "    23\t  , count :: Integer\n    24\t  }\n    ...\n    40\tstep :: SyncState -> [Event] -> SyncState\n"
        "    41\tstep st batch = st\n"
        "    42\t  { seen  = foldl (\\m e -> Map.insert (eventId e) (eventAt e) m) (seen st) batch\n"
        "    43\t  , count = count st + fromIntegral (length batch)\n    44\t  }\n",
    )
    c.say(
        "Two leaks. The thunks: `step` builds the new `seen` with a lazy foldl into a lazy Map, and `count` is a "
        "lazy field, so every poll adds a chain of unevaluated updates (THUNK_2_0 is the biggest closure type, "
        "about 413 MB). And `seen` is never pruned: it holds every event id since start, about 1.2 million after "
        "a day's replay."
    )
    c.user(
        "Prune `seen` to 48 hours. Upstream replays at most 24 hours of events after one of their outages, so 48 "
        "leaves a full day of margin. And no bang patterns sprinkled everywhere, put StrictData on the module."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/tomas/ledger-sync/src/Ledger/Sync.hs",
            "old_string": "module Ledger.Sync (run, SyncState (..)) where\n\nimport qualified Data.Map.Lazy as Map\n"
            "import Data.List (foldl)\n",
            "new_string": "{-# LANGUAGE StrictData #-}\nmodule Ledger.Sync (run, SyncState (..), prune) where\n\n"
            "import qualified Data.Map.Strict as Map\nimport Data.List (foldl')\n",
        },
        "The file /home/tomas/ledger-sync/src/Ledger/Sync.hs has been updated successfully.",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/tomas/ledger-sync/src/Ledger/Sync.hs",
            "old_string": "  { seen  = foldl (\\m e -> Map.insert (eventId e) (eventAt e) m) (seen st) batch\n",
            "new_string": "  { seen  = foldl' (\\m e -> Map.insert (eventId e) (eventAt e) m) (seen st) batch\n",
        },
        "The file /home/tomas/ledger-sync/src/Ledger/Sync.hs has been updated successfully.",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/tomas/ledger-sync/src/Ledger/Sync.hs",
            "old_string": "-- pruning: TODO\n",
            "new_string": "retention :: NominalDiffTime\nretention = 48 * 3600\n\n"
            "prune :: UTCTime -> SyncState -> SyncState\n"
            "prune now st = st {seen = Map.filter (> addUTCTime (negate retention) now) (seen st)}\n",
        },
        "The file /home/tomas/ledger-sync/src/Ledger/Sync.hs has been updated successfully.",
    )
    c.bash(
        "cabal test 2>&1 | tail -9",
        "Ledger.Sync\n  step counts every event [v]\n  prune drops events older than the window [v]\n"
        "  prune keeps events newer than the window [x]\n\nFailures:\n\n"
        "  test/SyncSpec.hs:61:5: \n  1) Ledger.Sync prune keeps events newer than the window\n"
        "       expected: 3\n        but got: 2\n\n23 examples, 1 failure",
        error=True,
    )
    c.say(
        "The spec treats an event exactly 48 hours old as still inside the window; `>` drops it. Changing the "
        "comparison to `>=`."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/tomas/ledger-sync/src/Ledger/Sync.hs",
            "old_string": "Map.filter (> addUTCTime",
            "new_string": "Map.filter (>= addUTCTime",
        },
        "The file /home/tomas/ledger-sync/src/Ledger/Sync.hs has been updated successfully.",
    )
    c.bash("cabal test 2>&1 | tail -2", "Finished in 0.0412 seconds\n23 examples, 0 failures")
    c.bash(
        "cabal run ledger-sync -- --replay fixtures/day.jsonl +RTS -s -RTS 2>&1 | "
        "grep -E 'maximum residency|total memory'",
        "      61,402,112 bytes maximum residency (9 sample(s))\n"
        "             148 MiB total memory in use (0 MB lost due to fragmentation)",
    )
    c.bash(
        "git checkout -b fix/ledger-leak && git commit -am 'sync: strict Map and fold, StrictData, prune seen after 48h'",
        "Switched to a new branch 'fix/ledger-leak'\n[fix/ledger-leak a8e4c21] sync: strict Map and fold, StrictData, "
        "prune seen after 48h\n 1 file changed, 12 insertions(+), 5 deletions(-)",
    )
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
The user asked to find the memory leak in the Haskell ledger-sync service. A profiling build was not possible, so I used a closure-type heap profile on a replay, found a lazy fold into a lazy Map plus an unbounded map of seen events, made the module strict, added pruning, fixed a boundary test, and measured residency before and after.

Summary:
1. Primary Request and Intent:
   Find why ledger-sync's memory grows to about 2 GB a day until the pod is OOM-killed, and fix it. Stay on GHC 9.6.6 (the Nix binary cache only has 9.6). Later: prune the seen map to 48 hours and use StrictData on the module instead of bang patterns.

2. Key Technical Concepts:
   - Space leaks from lazy folds and lazy Map values; Data.Map.Strict, foldl'
   - StrictData
   - GHC RTS heap profiling by closure type (+RTS -hT) and +RTS -s

3. Files and Code Sections:
   - src/Ledger/Sync.hs: StrictData, Data.Map.Strict, foldl' in step; a new prune function that keeps the seen map's last 48 hours (retention = 48 * 3600), exported.

4. Errors and fixes:
   - cabal build --enable-profiling failed: no profiling libraries for aeson in the Nix package set. Used -hT instead.
   - The spec "prune keeps events newer than the window" failed (expected 3, got 2): an event exactly 48 hours old must be kept, so the comparison became >=.

5. Problem Solving:
   The heap profile was dominated by thunks and Map nodes. Maximum residency on a day's replay went from about 1.9 GB to about 61 MB after the fix. All 23 specs pass.

6. All user messages:
   - "ledger-sync's memory grows to about 2 GB over a day until the pod gets OOM-killed. It's the Haskell service with the servant API and the polling loop. Find the leak. We stay on GHC 9.6.6: the Nix binary cache only has 9.6, so no compiler bump."
   - "Prune `seen` to 48 hours. ... And no bang patterns sprinkled everywhere, put StrictData on the module."

7. Pending Tasks:
   - Deploy the fix and watch the pod's memory.

8. Current Work:
   Committed on branch fix/ledger-leak.

9. Optional Next Step:
   Ask the user whether to open a PR and deploy.
"""
    labels = [
        Label("request", "memory grows to about 2 GB over a day", dropped=False),
        Label("constraint", "We stay on GHC 9.6.6", dropped=False),
        Label("measurement", "1873Mi", dropped=True),  # the pod's memory when looked at
        Label("measurement", "14", dropped=True),  # restarts: the OOM kills counted; not in the summary
        Label("failed command", "cabal build --enable-profiling", dropped=False),
        Label("error", "Could not find module 'Data.Aeson'", dropped=False),  # "no profiling libraries for aeson"
        Label("measurement", "1,912,604,160 bytes maximum residency", dropped=False),  # "about 1.9 GB"
        Label("measurement", "3731 MiB total memory in use", dropped=True),
        Label("failed command", "hp2pretty ledger-sync.hp", dropped=True),
        Label("error", "hp2pretty: command not found", dropped=True),
        Label("measurement", "THUNK_2_0\t412886016", dropped=True),  # "dominated by thunks", no figure
        Label("measurement", "about 1.2 million", dropped=True),  # how many ids the map held
        Label("file read", "src/Ledger/Sync.hs", dropped=False),
        Label("file edited", "src/Ledger/Sync.hs", dropped=False),
        Label("edit", "Data.Map.Lazy", dropped=True),  # what was there before; the summary names only the new
        Label("edit", "Map.filter (>= addUTCTime", dropped=False),
        Label("edit", "retention = 48 * 3600", dropped=False),
        Label("decision", "Upstream replays at most 24 hours of events", dropped=True),  # the reason for 48 h
        Label("constraint", "no bang patterns sprinkled everywhere", dropped=False),
        Label("error", "expected: 3", dropped=False),
        Label("measurement", "61,402,112 bytes maximum residency", dropped=False),  # "about 61 MB"
        Label("measurement", "148 MiB total memory in use", dropped=True),
        Label("measurement", "23 examples, 0 failures", dropped=False),
        Label("identifier", "a8e4c21", dropped=True),  # the commit
        Label("identifier", "ledger-sync-7d9c6b8f5-x2lqp", dropped=True),  # the pod
        # noise
        Label("number", "0.0412 seconds", dropped=False),
        Label("number", "31 sample(s)", dropped=False),
        Label("name", "BEGIN_SAMPLE 61.0", dropped=False),
        Label("path", "fixtures/day.jsonl", dropped=False),
        Label("name", "Data.Map.Internal.Bin", dropped=False),
    ]
    return DevSession(c, summary, labels)


def kiosk_sidebar_overlap() -> DevSession:
    """CSS/SCSS in a Vue 3 app (Vite, Playwright screenshots, Stylelint): after a design-system bump
    the sidebar overlaps the content between 768 and 1023 px; pixel diffs read from Playwright's
    output, a grid track that cannot shrink, a container query refused for the stores' iPads (the
    user's reason in prose), a Stylelint failure on the way. Written and labelled before the rule
    ran on it (round 16)."""
    c = Conversation("/home/ines/storefront", "fresh-kiosk-sidebar")
    c.user(
        "Since we bumped @acme/ui to 5.2 the filter sidebar on the product list overlaps the grid on tablet widths. "
        "Desktop and phone look fine. Can you fix it? The visual tests in CI are red too."
    )
    c.bash(
        "npx playwright test tests/visual/product-list.spec.ts --project=tablet 2>&1 | tail -25",
        "Running 6 tests using 2 workers\n\n"
        "  \u2713  1 [tablet] \u203a product-list.spec.ts:12:3 \u203a empty state (1.9s)\n"
        "  \u2718  2 [tablet] \u203a product-list.spec.ts:20:3 \u203a grid with filters open (3.4s)\n"
        "  \u2718  3 [tablet] \u203a product-list.spec.ts:31:3 \u203a grid at 800px (3.1s)\n"
        "  \u2713  4 [tablet] \u203a product-list.spec.ts:44:3 \u203a grid with filters closed (2.2s)\n"
        "  \u2718  5 [tablet] \u203a product-list.spec.ts:52:3 \u203a long product names (3.3s)\n"
        "  \u2713  6 [tablet] \u203a product-list.spec.ts:63:3 \u203a pagination (2.0s)\n\n"
        "  1) [tablet] \u203a product-list.spec.ts:20:3 \u203a grid with filters open\n\n"
        "    Error: Screenshot comparison failed:\n\n"
        "      48213 pixels (ratio 0.04 of all image pixels) are different.\n\n"
        "    Expected: tests/visual/product-list.spec.ts-snapshots/grid-filters-open-tablet-linux.png\n"
        "    Received: test-results/product-list-grid-with-filters-open-tablet/grid-filters-open-tablet-actual.png\n\n"
        "  2) [tablet] \u203a product-list.spec.ts:31:3 \u203a grid at 800px\n\n"
        "    Error: Screenshot comparison failed:\n\n"
        "      61877 pixels (ratio 0.06 of all image pixels) are different.\n\n"
        "  3) [tablet] \u203a product-list.spec.ts:52:3 \u203a long product names\n\n"
        "    Error: Screenshot comparison failed:\n\n"
        "      35402 pixels (ratio 0.03 of all image pixels) are different.\n\n"
        "  3 failed\n  3 passed (14.8s)",
        error=True,
    )
    c.bash(
        "git diff HEAD~1 -- package.json && npm ls @acme/ui",
        'diff --git a/package.json b/package.json\n@@ -18,7 +18,7 @@\n-    "@acme/ui": "5.1.4",\n'
        '+    "@acme/ui": "5.2.0",\n storefront@3.8.0 /home/ines/storefront\n\u2514\u2500\u2500 @acme/ui@5.2.0',
    )
    c.bash(
        "grep -n -A6 'layout-with-aside' node_modules/@acme/ui/dist/layout.css",
        "214:.layout-with-aside {\n215-  display: grid;\n216-  grid-template-columns: var(--aside-width, 18rem) 1fr;\n"
        "217-  gap: var(--space-6);\n218-  min-width: 0;\n219-}\n--\n"
        "231:.layout-with-aside > .aside { position: sticky; top: var(--header-height); }",
    )
    c.bash(
        "cat node_modules/@acme/ui/CHANGELOG.md | sed -n '1,30p'",
        "# Changelog\n\n## 5.2.0\n\n### Changed\n\n- `layout-with-aside`: the aside is now sticky below the header.\n"
        "- `layout-with-aside`: columns use `1fr` instead of `minmax(0, 1fr)` so that content can size the track "
        "(#1288).\n- Spacing scale: `--space-6` is now 2rem (was 1.5rem).\n\n### Fixed\n\n- Focus ring clipped in `Tabs`.\n\n"
        "## 5.1.4\n\n- Select: keyboard navigation skips disabled options.",
    )
    c.tool(
        "Read",
        {"file_path": "/home/ines/storefront/src/components/ProductList.vue"},
        '     1\t<template>\n     2\t  <div class="layout-with-aside product-list">\n'
        '     3\t    <FilterSidebar class="aside" :filters="filters" />\n'
        '     4\t    <ul class="product-grid">\n     5\t      <ProductCard v-for="p in products" :key="p.sku" :product="p" />\n'
        "     6\t    </ul>\n     7\t  </div>\n     8\t</template>\n    ...\n"
        '    41\t<style scoped lang="scss">\n    42\t.product-grid {\n'
        "    43\t  display: grid;\n    44\t  grid-template-columns: repeat(auto-fill, minmax(14rem, 1fr));\n"
        "    45\t  gap: var(--space-4);\n    46\t}\n    47\t</style>\n",
    )
    c.say(
        "That's the cause. With `1fr` instead of `minmax(0, 1fr)` the content column's minimum is its min-content "
        "width. Our product grid's min-content is one 14rem card plus the longest unbreakable product name, so at "
        "tablet widths the track refuses to shrink below it and the grid overflows under the sticky sidebar. The "
        "bigger `--space-6` (2rem) makes it worse. The cleanest fix is a container query on the list, so the cards "
        "follow the space they actually get."
    )
    c.user(
        "No container queries. The store kiosks are iPads stuck on iOS 15.4 (MDM won't update them until the new "
        "fleet arrives in spring) and Safari 15.4 doesn't support them. Plain media queries and grid only. And "
        "don't override anything inside @acme/ui's own classes from our side, the design-system team asked us not to."
    )
    c.say(
        "Understood: no container queries, no overrides of @acme/ui's classes. I'll wrap the layout in our own class "
        "and give the content column its own `minmax(0, 1fr)` through the `--aside-width`-style custom property "
        "route if there is one, otherwise on our wrapper."
    )
    c.bash(
        "grep -n 'var(--' node_modules/@acme/ui/dist/layout.css | sed -n '1,12p'",
        "3:  --aside-width: 18rem;\n4:  --header-height: 4rem;\n216:  grid-template-columns: var(--aside-width, 18rem) 1fr;\n"
        "217:  gap: var(--space-6);\n231:.layout-with-aside > .aside { position: sticky; top: var(--header-height); }",
    )
    c.say(
        "There's no custom property for the second track, so the layout stays theirs and I'll make the grid inside "
        "the track able to shrink: `min-width: 0` on the list and a smaller card minimum below 1024px."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/ines/storefront/src/components/ProductList.vue",
            "old_string": ".product-grid {\n  display: grid;\n  grid-template-columns: repeat(auto-fill, minmax(14rem, 1fr));\n"
            "  gap: var(--space-4);\n}",
            "new_string": ".product-grid {\n  display: grid;\n  min-width: 0;\n"
            "  grid-template-columns: repeat(auto-fill, minmax(min(14rem, 100%), 1fr));\n  gap: var(--space-4);\n\n"
            "  @media (min-width: 768px) and (max-width: 1023px) {\n"
            "    grid-template-columns: repeat(auto-fill, minmax(11rem, 1fr));\n  }\n}",
        },
        "The file /home/ines/storefront/src/components/ProductList.vue has been updated successfully.",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/ines/storefront/src/components/ProductCard.vue",
            "old_string": ".product-card__name {\n  font-weight: 600;\n}",
            "new_string": ".product-card__name {\n  font-weight: 600;\n  overflow-wrap: anywhere;\n}",
        },
        "The file /home/ines/storefront/src/components/ProductCard.vue has been updated successfully.",
    )
    c.bash(
        "npx stylelint 'src/**/*.{vue,scss}'",
        "src/components/ProductList.vue\n"
        '  52:5  \u2716  Expected media feature range notation to be "context"   media-feature-range-notation\n\n'
        '\u2716 1 problem (1 error, 0 warnings)\n  1 error potentially fixable with the "--fix" option.',
        error=True,
    )
    c.say(
        "Stylelint wants range syntax (`width >= 768px`), but Safari only supports media query range syntax from "
        "16.4, so that would break the kiosks too. I'll disable the rule for this one line with the reason rather "
        "than change the config for everyone."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/ines/storefront/src/components/ProductList.vue",
            "old_string": "  @media (min-width: 768px) and (max-width: 1023px) {",
            "new_string": "  /* stylelint-disable-next-line media-feature-range-notation -- Safari 15.4 kiosks: no range syntax */\n"
            "  @media (min-width: 768px) and (max-width: 1023px) {",
        },
        "The file /home/ines/storefront/src/components/ProductList.vue has been updated successfully.",
    )
    c.bash("npx stylelint 'src/**/*.{vue,scss}' && echo ok", "ok")
    c.bash(
        "npx playwright test tests/visual/product-list.spec.ts --project=tablet 2>&1 | tail -12",
        "Running 6 tests using 2 workers\n\n"
        "  \u2713  1 [tablet] \u203a product-list.spec.ts:12:3 \u203a empty state (1.8s)\n"
        "  \u2713  2 [tablet] \u203a product-list.spec.ts:20:3 \u203a grid with filters open (2.9s)\n"
        "  \u2713  3 [tablet] \u203a product-list.spec.ts:31:3 \u203a grid at 800px (2.7s)\n"
        "  \u2713  4 [tablet] \u203a product-list.spec.ts:44:3 \u203a grid with filters closed (2.1s)\n"
        "  \u2718  5 [tablet] \u203a product-list.spec.ts:52:3 \u203a long product names (3.0s)\n"
        "  \u2713  6 [tablet] \u203a product-list.spec.ts:63:3 \u203a pagination (2.0s)\n\n"
        "  1) [tablet] \u203a product-list.spec.ts:52:3 \u203a long product names\n\n"
        "    Error: Screenshot comparison failed:\n\n"
        "      1264 pixels (ratio 0.01 of all image pixels) are different.\n\n"
        "  1 failed\n  5 passed (13.1s)",
        error=True,
    )
    c.say(
        "The remaining difference is intended: long names now wrap (`overflow-wrap: anywhere`) instead of pushing "
        "the track wider, so the old snapshot shows the broken layout. I'll look at it before updating it."
    )
    c.tool(
        "Read",
        {
            "file_path": "/home/ines/storefront/test-results/product-list-long-product-names-tablet/long-product-names-tablet-diff.png"
        },
        "[image: two product cards whose names now break onto a second line; no overlap with the sidebar]",
    )
    c.bash(
        "npx playwright test tests/visual/product-list.spec.ts --project=tablet -g 'long product names' "
        "--update-snapshots 2>&1 | tail -2 && npx playwright test tests/visual 2>&1 | tail -2",
        "  1 passed (3.2s)\n  42 passed (48.6s)",
    )
    c.bash(
        "git add -A && git commit -m 'product list: let the grid shrink on tablets after @acme/ui 5.2'",
        "[fix/tablet-sidebar 5b0c9e2] product list: let the grid shrink on tablets after @acme/ui 5.2\n"
        " 3 files changed, 9 insertions(+), 2 deletions(-)",
    )
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
The user reported the product list's filter sidebar overlapping the grid on tablet widths after the @acme/ui 5.2 bump, with visual tests red. I read the failing screenshot tests, the design system's layout CSS and changelog, found the content track no longer shrinks, fixed the grid on our side under the user's constraints, handled a Stylelint rule, and updated one snapshot on purpose.

Summary:
1. Primary Request and Intent:
   Fix the filter sidebar overlapping the product grid on tablet widths since @acme/ui went to 5.2 (desktop and phone are fine), and get the visual tests green. Constraints: no container queries (store kiosks are iPads on iOS 15.4 / Safari 15.4), only media queries and grid; do not override @acme/ui's own classes.

2. Key Technical Concepts:
   - CSS grid: `1fr` vs `minmax(0, 1fr)`, min-content sizing of tracks, `min-width: 0`
   - Media queries vs container queries; Safari 15.4 support
   - Playwright screenshot comparisons and snapshot updates
   - Stylelint media-feature-range-notation

3. Files and Code Sections:
   - src/components/ProductList.vue: `.product-grid` gets `min-width: 0`, `minmax(min(14rem, 100%), 1fr)`, and a tablet media query (768–1023px) with 11rem cards; a stylelint-disable comment for the range notation rule.
   - src/components/ProductCard.vue: `overflow-wrap: anywhere` on the product name.
   - node_modules/@acme/ui/dist/layout.css (read): `.layout-with-aside` uses `var(--aside-width, 18rem) 1fr`.

4. Errors and fixes:
   - Playwright tablet project: 3 screenshot tests failed (grid with filters open, grid at 800px, long product names). Fixed by the grid change; "long product names" then differed only by the intended wrapping, and its snapshot was updated after checking the diff image.
   - Stylelint: media-feature-range-notation wanted range syntax, which Safari 15.4 does not support; disabled for that line with the reason.

5. Problem Solving:
   @acme/ui 5.2 changed the aside layout's content column from `minmax(0, 1fr)` to `1fr` (#1288) and `--space-6` to 2rem, so the column could not shrink below the product grid's min-content width. There is no custom property for that track, so the fix is inside our grid. All 42 visual tests pass.

6. All user messages:
   - "Since we bumped @acme/ui to 5.2 the filter sidebar on the product list overlaps the grid on tablet widths. Desktop and phone look fine. Can you fix it? The visual tests in CI are red too."
   - "No container queries. The store kiosks are iPads stuck on iOS 15.4 ... Plain media queries and grid only. And don't override anything inside @acme/ui's own classes from our side, the design-system team asked us not to."

7. Pending Tasks:
   - None.

8. Current Work:
   Committed the fix on branch fix/tablet-sidebar.

9. Optional Next Step:
   Push the branch and open a PR once the user agrees.
"""
    labels = [
        Label("request", "filter sidebar on the product list overlaps the grid", dropped=False),
        Label("constraint", "No container queries", dropped=False),
        Label("decision", "MDM won't update them until the new fleet arrives in spring", dropped=True),
        Label("constraint", "don't override anything inside @acme/ui's own classes", dropped=False),
        Label(
            "failed command", "npx playwright test tests/visual/product-list.spec.ts --project=tablet", dropped=False
        ),
        Label("measurement", "48213 pixels", dropped=True),  # the summary counts failed tests, not pixels
        Label("measurement", "61877 pixels", dropped=True),
        Label("measurement", "35402 pixels", dropped=True),
        Label("measurement", "3 failed", dropped=False),
        Label("identifier", "5.1.4", dropped=True),  # the version before the bump
        Label("identifier", "#1288", dropped=False),
        Label("measurement", "was 1.5rem", dropped=True),  # the old spacing; the summary gives the new one
        Label("file read", "node_modules/@acme/ui/dist/layout.css", dropped=False),
        Label("file read", "src/components/ProductList.vue", dropped=False),
        Label("file edited", "src/components/ProductList.vue", dropped=False),
        Label("file edited", "src/components/ProductCard.vue", dropped=False),
        Label("edit", "minmax(14rem, 1fr)", dropped=True),  # the old track; the summary gives the new one only
        Label("edit", "minmax(11rem, 1fr)", dropped=False),  # "11rem cards"
        Label("edit", "overflow-wrap: anywhere", dropped=False),
        Label("failed command", "npx stylelint", dropped=False),
        Label("error", "Expected media feature range notation", dropped=False),
        Label(
            "decision", "Safari only supports media query range syntax from 16.4", dropped=False
        ),  # "which Safari 15.4 does not support"
        Label("measurement", "1264 pixels", dropped=True),
        Label("measurement", "42 passed", dropped=False),
        Label("identifier", "5b0c9e2", dropped=True),  # the commit
        # noise
        Label("number", "14.8s", dropped=False),
        Label("number", "1.9s", dropped=False),
        Label("path", "grid-filters-open-tablet-linux.png", dropped=False),
        Label("command", "npm ls @acme/ui", dropped=False),
        Label("name", "var(--header-height)", dropped=False),
    ]
    return DevSession(c, summary, labels)


def prisma_rollback() -> DevSession:
    """TypeScript, Prisma and Postgres: a migration that failed halfway in production (a unique index
    over duplicated emails), `migrate deploy` refusing with P3009, rolled back by hand rather than
    fixed forward for the user's reason (a nightly export reads the old column), duplicates counted
    in psql, the migration marked rolled back. Written and labelled before the rule ran on it (round 16)."""
    c = Conversation("/home/kofi/crm-api", "fresh-prisma-rollback")
    c.user(
        "The deploy of crm-api 4.7 failed at the migration step and now every deploy fails with P3009. Prod is "
        "still serving 4.6. Help me get out of this. DATABASE_URL for prod is in .env.prod, read-only on my "
        'laptop, use `psql "$PROD_RO"` for looking and ask me before anything that writes.'
    )
    c.bash(
        "npx prisma migrate status --schema prisma/schema.prisma 2>&1 | tail -14",
        'Prisma schema loaded from prisma/schema.prisma\nDatasource "db": PostgreSQL database "crm", schema '
        '"public" at "crm-prod.c9x2.eu-west-1.rds.amazonaws.com:5432"\n\n'
        "23 migrations found in prisma/migrations\n\n"
        "Following migration have failed:\n20261203101500_split_contact_name\n\n"
        "During development if the failed migration(s) have not been deployed to a production database you can "
        "then fix the migration(s) and run prisma migrate dev.\n\n"
        "The failed migration(s) can be marked as rolled back or applied:\n\n"
        "- If you rolled back the migration(s) manually:\nprisma migrate resolve --rolled-back "
        '"20261203101500_split_contact_name"',
        error=True,
    )
    c.tool(
        "Read",
        {"file_path": "/home/kofi/crm-api/prisma/migrations/20261203101500_split_contact_name/migration.sql"},
        '     1\t-- AlterTable\n     2\tALTER TABLE "Contact" ADD COLUMN "firstName" TEXT,\n'
        '     3\tADD COLUMN "lastName" TEXT;\n     4\t\n'
        '     5\tUPDATE "Contact" SET "firstName" = split_part("name", \' \', 1),\n'
        '     6\t  "lastName" = NULLIF(substr("name", length(split_part("name", \' \', 1)) + 2), \'\');\n     7\t\n'
        '     8\t-- CreateIndex\n     9\tCREATE UNIQUE INDEX "Contact_email_key" ON "Contact"(lower("email"));\n'
        '    10\t\n    11\t-- AlterTable\n    12\tALTER TABLE "Contact" DROP COLUMN "name";\n',
    )
    c.bash(
        'psql "$PROD_RO" -c "select migration_name, started_at, finished_at, rolled_back_at, '
        'left(logs, 300) as logs from _prisma_migrations order by started_at desc limit 2"',
        "          migration_name          |          started_at           | finished_at | rolled_back_at | logs\n"
        "----------------------------------+-------------------------------+-------------+----------------+------\n"
        " 20261203101500_split_contact_name | 2026-12-04 22:14:09.331+00    |             |                | "
        "Database error code: 23505\n\nDatabase error:\nERROR: could not create unique index "
        '"Contact_email_key"\nDETAIL: Key (lower(email))=(m.osei@harbourfreight.example) is duplicated.\n'
        " 20261119083000_contact_tags      | 2026-11-19 08:31:40.118+00    | 2026-11-19 08:31:41.902+00 |  |\n(2 rows)",
    )
    c.say(
        "Postgres runs a Prisma migration file as separate statements without a wrapping transaction, so the first "
        "two statements (the new columns and the UPDATE) went through and the unique index failed; `name` was not "
        "dropped. I'll check what state the table is really in."
    )
    c.bash(
        "psql \"$PROD_RO\" -c '\\d \"Contact\"' | sed -n '1,16p'",
        '                         Table "public.Contact"\n'
        "   Column    |              Type              | Collation | Nullable |      Default\n"
        "-------------+--------------------------------+-----------+----------+-------------------\n"
        " id          | text                           |           | not null |\n"
        " name        | text                           |           | not null |\n"
        " email       | text                           |           | not null |\n"
        " companyId   | text                           |           |          |\n"
        " createdAt   | timestamp(3) without time zone |           | not null | CURRENT_TIMESTAMP\n"
        " firstName   | text                           |           |          |\n"
        " lastName    | text                           |           |          |\n"
        'Indexes:\n    "Contact_pkey" PRIMARY KEY, btree (id)\n    "Contact_companyId_idx" btree ("companyId")',
    )
    c.bash(
        'psql "$PROD_RO" -At -c "select count(*) from (select lower(email) from \\"Contact\\" group by 1 having '
        'count(*) > 1) d" -c "select count(*) from \\"Contact\\"" -c "select count(*) from \\"Contact\\" where '
        'lower(email) in (select lower(email) from \\"Contact\\" group by 1 having count(*) > 1)"',
        "214\n318442\n451",
    )
    c.say(
        "214 email addresses are shared (case-insensitively) by 451 contacts out of 318,442, so the unique index "
        "can't go in until those are merged. Two ways out: finish forward (a migration that dedupes, then the index) "
        "or roll back the partial changes and mark the migration rolled back."
    )
    c.user(
        "Roll back. Don't fix forward tonight: the finance export at 02:00 UTC still reads Contact.name and the "
        "merge of duplicate contacts is a product decision Dana has to make, not us. Write the down SQL, show it to "
        "me, I'll run it with the admin role."
    )
    c.tool(
        "Write",
        {
            "file_path": "/home/kofi/crm-api/prisma/rollbacks/20261203101500_split_contact_name.down.sql",
            "content": "-- Undo the parts of 20261203101500_split_contact_name that ran on prod on 2026-12-04.\n"
            'BEGIN;\nDROP INDEX IF EXISTS "Contact_email_key";\n'
            'ALTER TABLE "Contact" DROP COLUMN IF EXISTS "firstName", DROP COLUMN IF EXISTS "lastName";\nCOMMIT;\n',
        },
        "File created successfully at: /home/kofi/crm-api/prisma/rollbacks/20261203101500_split_contact_name.down.sql",
    )
    c.say(
        "Here's the down script (prisma/rollbacks/20261203101500_split_contact_name.down.sql). It's idempotent, in "
        "one transaction, and leaves `name` untouched. After you run it: `npx prisma migrate resolve --rolled-back "
        "20261203101500_split_contact_name`. Then 4.7 must not ship with that migration as is, or the next deploy "
        "fails the same way."
    )
    c.user(
        "Ran it. resolve too. Output pasted:\n\nBEGIN\nDROP INDEX\nALTER TABLE\nCOMMIT\n\nMigration 20261203101500_split_contact_name marked as rolled back."
    )
    c.bash(
        "npx prisma migrate status --schema prisma/schema.prisma 2>&1 | tail -4",
        "23 migrations found in prisma/migrations\n\nFollowing migration have not yet been applied:\n"
        "20261203101500_split_contact_name\n\nTo apply migrations in production run prisma migrate deploy.",
    )
    c.bash(
        "git mv prisma/migrations/20261203101500_split_contact_name prisma/pending/20261203101500_split_contact_name",
        "fatal: destination directory does not exist, source=prisma/migrations/20261203101500_split_contact_name, "
        "destination=prisma/pending/20261203101500_split_contact_name",
        error=True,
    )
    c.bash(
        "mkdir -p prisma/pending && git mv prisma/migrations/20261203101500_split_contact_name prisma/pending/ && "
        "git restore --source v4.6.0 -- prisma/schema.prisma && npx prisma validate",
        "Prisma schema loaded from prisma/schema.prisma\nThe schema at prisma/schema.prisma is valid \U0001f680",
    )
    c.bash(
        "npx prisma migrate status --schema prisma/schema.prisma 2>&1 | tail -2",
        "22 migrations found in prisma/migrations\n\nDatabase schema is up to date!",
    )
    c.bash(
        "npm test -- --silent 2>&1 | tail -5",
        "Test Suites: 2 failed, 38 passed, 40 total\nTests:       4 failed, 311 passed, 315 total\n"
        "  \u25cf contacts \u203a splits display names into first and last (contacts.service.spec.ts:48)\n"
        "Snapshots:   0 total\nTime:        21.344 s",
        error=True,
    )
    c.say(
        "The four failures are the 4.7 tests for the split name, which needs the columns that are now parked. "
        "I'll mark them skipped with a pointer to the parked migration rather than delete them."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/kofi/crm-api/src/contacts/contacts.service.spec.ts",
            "old_string": "describe('split name', () => {",
            "new_string": "// Parked with prisma/pending/20261203101500_split_contact_name until duplicates are merged.\n"
            "describe.skip('split name', () => {",
        },
        "The file /home/kofi/crm-api/src/contacts/contacts.service.spec.ts has been updated successfully.",
    )
    c.bash(
        "npm test -- --silent 2>&1 | tail -3",
        "Test Suites: 1 skipped, 39 passed, 39 of 40 total\nTests:       4 skipped, 311 passed, 315 total\n"
        "Time:        20.871 s",
    )
    c.bash(
        "git add -A && git commit -m 'Park split_contact_name until duplicate emails are merged; add its rollback'",
        "[hotfix/4.7.1 e07d3aa] Park split_contact_name until duplicate emails are merged; add its rollback\n"
        " 4 files changed, 9 insertions(+), 3 deletions(-)\n rename prisma/{migrations => pending}/"
        "20261203101500_split_contact_name/migration.sql (100%)\n create mode 100644 prisma/rollbacks/"
        "20261203101500_split_contact_name.down.sql",
    )
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
The user's 4.7 deploy of crm-api failed at a Prisma migration and every later deploy failed with P3009. I inspected prod read-only, found the migration half-applied because of duplicate emails, wrote a down script that the user ran, marked the migration rolled back, parked the migration, and fixed the tests.

Summary:
1. Primary Request and Intent:
   Get crm-api's deploys working again after the 4.7 deploy failed at its migration (P3009); prod still runs 4.6. Use the read-only prod connection for looking and ask before anything that writes. Later: roll back rather than fix forward; write the down SQL for the user to run.

2. Key Technical Concepts:
   - Prisma migrate status / deploy / resolve --rolled-back, the _prisma_migrations table
   - Prisma migrations are not wrapped in a transaction on Postgres, so a failure leaves earlier statements applied
   - Case-insensitive unique index on lower(email)

3. Files and Code Sections:
   - prisma/migrations/20261203101500_split_contact_name/migration.sql (read; now moved to prisma/pending/): adds firstName/lastName, fills them with split_part, a unique index on lower(email), drops name.
   - prisma/rollbacks/20261203101500_split_contact_name.down.sql (new): in one transaction, drops the index if it exists and the two new columns.
   - prisma/schema.prisma: restored from v4.6.0.
   - src/contacts/contacts.service.spec.ts: the split name tests are skipped with a pointer to the parked migration.

4. Errors and fixes:
   - The migration failed with 23505: could not create unique index "Contact_email_key", a duplicated lower(email). The columns had been added and filled; name was not dropped.
   - git mv into prisma/pending failed because the directory did not exist; created it first.
   - 4 tests of the split name failed after the schema was restored; skipped them.

5. Problem Solving:
   214 email addresses are shared by 451 of the 318,442 contacts, so the index cannot be created until duplicates are merged. The user chose to roll back: the down script was run by the user with the admin role and the migration marked rolled back; migrate status now says the schema is up to date.

6. All user messages:
   - "The deploy of crm-api 4.7 failed at the migration step and now every deploy fails with P3009. Prod is still serving 4.6. Help me get out of this. ... use `psql "$PROD_RO"` for looking and ask me before anything that writes."
   - "Roll back. Don't fix forward tonight: the finance export at 02:00 UTC still reads Contact.name and the merge of duplicate contacts is a product decision Dana has to make, not us. Write the down SQL, show it to me, I'll run it with the admin role."
   - "Ran it. resolve too." (with the output of the script and of migrate resolve)

7. Pending Tasks:
   - The duplicate contacts need a merge decision from Dana before the split migration can return.

8. Current Work:
   Committed on hotfix/4.7.1: the migration parked, its rollback script, the schema as of v4.6.0, the tests skipped.

9. Optional Next Step:
   Ask the user whether to tag and deploy 4.7.1.
"""
    labels = [
        Label("request", "now every deploy fails with P3009", dropped=False),
        Label("constraint", "ask me before anything that writes", dropped=False),
        Label("failed command", "npx prisma migrate status", dropped=False),  # "every later deploy failed with P3009"
        Label("identifier", "20261203101500_split_contact_name", dropped=False),
        Label("identifier", "20261119083000_contact_tags", dropped=True),  # the last migration that applied
        Label("identifier", "crm-prod.c9x2.eu-west-1.rds.amazonaws.com", dropped=True),
        Label("error", "could not create unique index", dropped=False),
        Label("identifier", "m.osei@harbourfreight.example", dropped=True),  # the duplicate the error named
        Label("measurement", "2026-12-04 22:14:09", dropped=True),  # when the failed migration started
        Label("decision", "without a wrapping transaction", dropped=False),
        Label("measurement", "214", dropped=False),
        Label("measurement", "318442", dropped=False),  # "318,442"
        Label("measurement", "451", dropped=False),
        Label("decision", "the finance export at 02:00 UTC still reads Contact.name", dropped=False),
        Label("file edited", "prisma/rollbacks/20261203101500_split_contact_name.down.sql", dropped=False),
        Label("file read", "prisma/migrations/20261203101500_split_contact_name/migration.sql", dropped=False),
        Label("failed command", "git mv prisma/migrations", dropped=False),
        Label("error", "fatal: destination directory does not exist", dropped=False),
        Label("measurement", "4 failed, 311 passed", dropped=False),  # "4 tests ... failed"
        Label("error", "splits display names into first and last", dropped=False),  # "4 tests of the split name failed"
        Label("file edited", "src/contacts/contacts.service.spec.ts", dropped=False),
        Label("edit", "describe.skip('split name'", dropped=False),
        Label("measurement", "4 skipped, 311 passed", dropped=True),  # the run after; the summary says only skipped
        Label("identifier", "e07d3aa", dropped=True),  # the commit
        Label("measurement", "22 migrations found", dropped=True),
        # noise
        Label("number", "21.344 s", dropped=False),
        Label("name", "Contact_companyId_idx", dropped=False),
        Label("number", "5432", dropped=False),
        Label("command", "npx prisma validate", dropped=False),
    ]
    return DevSession(c, summary, labels)


def firmware_flash_overflow() -> DevSession:
    """C and Zephyr (west, nRF52840, arm-none-eabi tools): a sensor firmware that no longer links
    after a BLE feature (FLASH overflowed), the sizes read from the link map and `nm --size-sort`,
    float printf found as the cost, the user's rules on LTO and MCUboot partitions with their
    reasons, a flash tool missing. Written and labelled before the rule ran on it (round 16)."""
    c = Conversation("/home/elin/beacon-fw", "fresh-flash-overflow")
    c.user(
        "After merging the BLE battery service branch, the nrf52840 build doesn't link anymore: FLASH overflow. "
        "Get it under the limit again. Keep -Os, and do not turn on LTO: Ozone loses source stepping with LTO and "
        "that's how Jonas debugs the field units."
    )
    c.bash(
        "west build -b nrf52840dk/nrf52840 app -p always 2>&1 | tail -14",
        "[171/178] Linking C executable zephyr/zephyr_pre0.elf\n"
        "FAILED: zephyr/zephyr_pre0.elf zephyr/zephyr_pre0.map\n"
        ": && ccache /opt/zephyr-sdk-0.16.8/arm-zephyr-eabi/bin/arm-zephyr-eabi-gcc -gdwarf-4 -Os "
        "zephyr/CMakeFiles/zephyr_pre0.dir/misc/empty_file.c.obj -o zephyr/zephyr_pre0.elf ...\n"
        "/opt/zephyr-sdk-0.16.8/arm-zephyr-eabi/bin/../lib/gcc/arm-zephyr-eabi/12.2.0/../../../../"
        "arm-zephyr-eabi/bin/ld.bfd: zephyr/zephyr_pre0.elf section `text' will not fit in region `FLASH'\n"
        "/opt/zephyr-sdk-0.16.8/arm-zephyr-eabi/bin/../lib/gcc/arm-zephyr-eabi/12.2.0/../../../../"
        "arm-zephyr-eabi/bin/ld.bfd: region `FLASH' overflowed by 6212 bytes\n"
        "collect2: error: ld returned 1 exit status\nninja: build stopped: subcommand failed.\n"
        "FATAL ERROR: command exited with status 1: /usr/bin/cmake --build /home/elin/beacon-fw/build",
        error=True,
    )
    c.bash(
        "grep -n 'FLASH\\|slot0_partition' build/zephyr/zephyr.dts | head -6 && grep -n PARTITION app/boards/nrf52840dk_nrf52840.overlay",
        '412:\t\t\t\tslot0_partition: partition@c000 {\n413:\t\t\t\t\tlabel = "image-0";\n'
        "414:\t\t\t\t\treg = < 0xc000 0x76000 >;\n"
        "7:\t/* MCUBOOT PARTITIONS: must match the bootloader flashed on shipped units */",
    )
    c.say(
        "The app slot (slot0_partition) is 0x76000 = 483,328 bytes because MCUboot takes the first 48 KB and the "
        "second slot mirrors the first. The image is 6,212 bytes over it. I'll find what grew."
    )
    c.bash(
        "git stash && west build -b nrf52840dk/nrf52840 app -p always 2>&1 | grep -A3 'Memory region' ; git stash pop",
        "No local changes to save\nNo stash entries found.",
        error=True,
    )
    c.say(
        "Nothing to stash: the working tree is clean and the branch itself carries the BLE code. I'll build main "
        "in a worktree for the baseline instead."
    )
    c.bash(
        "git worktree add ../beacon-main main && west build -b nrf52840dk/nrf52840 ../beacon-main/app -d build-main "
        "-p always 2>&1 | grep -A3 'Memory region'",
        "Preparing worktree (checking out 'main')\nHEAD is now at 9a7b6c5 sensors: debounce the reed switch\n"
        "Memory region         Used Size  Region Size  %age Used\n"
        "           FLASH:      451208 B       472 KB     93.36%\n"
        "             RAM:       91144 B       256 KB     34.77%",
    )
    c.bash(
        "git diff main --stat -- app/prj.conf app/src && git diff main -- app/prj.conf",
        " app/prj.conf            |  6 ++++\n app/src/battery.c       | 88 ++++++++++++++++++++++++\n"
        " app/src/main.c          | 11 ++-\n 3 files changed, 103 insertions(+), 2 deletions(-)\n"
        "diff --git a/app/prj.conf b/app/prj.conf\n@@ -31,3 +31,9 @@ CONFIG_BT_PERIPHERAL=y\n"
        "+CONFIG_BT_BAS=y\n+CONFIG_BT_DIS=y\n+CONFIG_BT_DIS_PNP=n\n+\n+# battery voltage in the logs\n"
        "+CONFIG_CBPRINTF_FP_SUPPORT=y",
    )
    c.bash(
        "arm-none-eabi-nm --size-sort -S -r build/zephyr/zephyr.elf | head -12",
        "Exit code 127\nbash: arm-none-eabi-nm: command not found",
        error=True,
    )
    c.bash(
        "/opt/zephyr-sdk-0.16.8/arm-zephyr-eabi/bin/arm-zephyr-eabi-nm --size-sort -S -r build/zephyr/zephyr_pre0.elf "
        "| head -12",
        "0001a4c0 00003a10 T bt_smp_pkey_ready_cb\n"
        "000311f4 00002f6c T _dtoa_r\n"
        "0003421c 00001e40 T __aeabi_ddiv\n"
        "00040f28 00001b3c T bt_gatt_dis_register\n"
        "00044a10 00001784 T __aeabi_dmul\n"
        "00048a90 000015d8 T cbvprintf\n"
        "0004d2e0 00001200 R bt_gatt_bas_attrs\n"
        "0004e4e0 00000f70 T __aeabi_dadd\n"
        "0004f450 00000e9c T __ieee754_sqrt\n"
        "00050a10 00000c88 T battery_sample\n"
        "00051698 00000b20 T __floatsidf\n"
        "000521b8 00000a40 T __fixdfsi",
    )
    c.say(
        "The double-precision soft-float routines (`_dtoa_r` 12,140 bytes, `__aeabi_ddiv` 7,744, `__aeabi_dmul` "
        "6,020, `__aeabi_dadd` 3,952) are new relative to main: CONFIG_CBPRINTF_FP_SUPPORT pulls in float "
        "formatting, and battery.c computes the voltage in double. Together that is about 30 KB, far more than "
        "the BLE services themselves (DIS about 7 KB)."
    )
    c.tool(
        "Read",
        {"file_path": "/home/elin/beacon-fw/app/src/battery.c"},
        "    ...\n    40\tstatic void battery_sample(struct k_work *work)\n    41\t{\n"
        "    42\t\tint32_t raw = adc_read_mv(&vbat_channel);\n"
        "    43\t\tdouble volts = (double)raw * VBAT_DIVIDER / 1000.0;\n"
        "    44\t\tuint8_t level = soc_from_voltage(volts);\n    45\t\n"
        '    46\t\tLOG_INF("vbat %.3f V, %u%%", volts, level);\n'
        "    47\t\tbt_bas_set_battery_level(level);\n    48\t}\n",
    )
    c.user(
        "Millivolts as integers are fine for the log, nobody needs floats there. And whatever you do, don't touch the "
        "partition layout in the overlay: the 2,000 units in the field run MCUboot with those slots and a new layout "
        "means they can't take the OTA."
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/elin/beacon-fw/app/src/battery.c",
            "old_string": "\tdouble volts = (double)raw * VBAT_DIVIDER / 1000.0;\n\tuint8_t level = soc_from_voltage(volts);\n\n"
            '\tLOG_INF("vbat %.3f V, %u%%", volts, level);',
            "new_string": "\tint32_t millivolts = raw * VBAT_DIVIDER;\n\tuint8_t level = soc_from_millivolts(millivolts);\n\n"
            '\tLOG_INF("vbat %d mV, %u%%", millivolts, level);',
        },
        "The file /home/elin/beacon-fw/app/src/battery.c has been updated successfully.",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/elin/beacon-fw/app/prj.conf",
            "old_string": "\n# battery voltage in the logs\nCONFIG_CBPRINTF_FP_SUPPORT=y",
            "new_string": "",
        },
        "The file /home/elin/beacon-fw/app/prj.conf has been updated successfully.",
    )
    c.bash(
        "west build -b nrf52840dk/nrf52840 app -p always 2>&1 | tail -8",
        "/home/elin/beacon-fw/app/src/battery.c:44:25: error: implicit declaration of function 'soc_from_millivolts'; "
        "did you mean 'soc_from_voltage'? [-Werror=implicit-function-declaration]\n"
        "   44 |         uint8_t level = soc_from_millivolts(millivolts);\n"
        "      |                         ^~~~~~~~~~~~~~~~~~~\n"
        "      |                         soc_from_voltage\ncc1: all warnings being treated as errors\n"
        "ninja: build stopped: subcommand failed.",
        error=True,
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/elin/beacon-fw/app/src/soc.c",
            "old_string": "uint8_t soc_from_voltage(double volts)\n{\n\tfor (size_t i = 0; i < ARRAY_SIZE(curve); i++) {\n"
            "\t\tif (volts >= curve[i].volts) {",
            "new_string": "uint8_t soc_from_millivolts(int32_t millivolts)\n{\n"
            "\tfor (size_t i = 0; i < ARRAY_SIZE(curve); i++) {\n\t\tif (millivolts >= curve[i].millivolts) {",
        },
        "The file /home/elin/beacon-fw/app/src/soc.c has been updated successfully.",
    )
    c.bash(
        "sed -i 's/{ \\([0-9]\\)\\.\\([0-9]\\{3\\}\\), /{ \\1\\2, /' app/src/soc.c && sed -i "
        "'s/double volts;/int32_t millivolts;/; s/soc_from_voltage(double volts)/soc_from_millivolts(int32_t millivolts)/' "
        "app/src/soc.h app/src/soc.c && grep -n 'millivolts\\|{ 4' app/src/soc.h app/src/soc.c | head -5",
        "app/src/soc.h:6:uint8_t soc_from_millivolts(int32_t millivolts);\n"
        "app/src/soc.c:8:\t{ 4200, 100 },\napp/src/soc.c:9:\t{ 4100, 90 },\n"
        "app/src/soc.c:14:struct point { int32_t millivolts; uint8_t percent; };\n"
        "app/src/soc.c:21:uint8_t soc_from_millivolts(int32_t millivolts)",
    )
    c.bash(
        "west build -b nrf52840dk/nrf52840 app -p always 2>&1 | grep -A3 'Memory region'",
        "Memory region         Used Size  Region Size  %age Used\n"
        "           FLASH:      460896 B       472 KB     95.36%\n"
        "             RAM:       98296 B       256 KB     37.49%",
    )
    c.bash(
        "west twister -T app/tests -p native_sim 2>&1 | tail -3",
        "INFO    - 14 test scenarios (14 configurations) selected, 0 configurations filtered (0 by static filter, "
        "0 at runtime).\nINFO    - 14 of 14 executed test configurations passed (100.00%), 0 failed, 0 errored, 0 skipped "
        "with 0 warnings in 71.52 seconds\nINFO    - Total complete:   14/  14  100%  built (not run):    0, failed:    0, "
        "errored:    0",
    )
    c.bash(
        "west flash -d build --runner nrfjprog",
        "-- west flash: rebuilding\nninja: no work to do.\n-- west flash: using runner nrfjprog\n"
        "FATAL ERROR: required program nrfjprog not found; install it or add its location to PATH",
        error=True,
    )
    c.say("nrfjprog isn't installed on this machine; the J-Link runner is. Flashing with `--runner jlink` instead.")
    c.bash(
        "west flash -d build --runner jlink 2>&1 | tail -3",
        "-- runners.jlink: Flashing file: /home/elin/beacon-fw/build/zephyr/zephyr.hex\n"
        "-- runners.jlink: J-Link (SEGGER J-Link V7.94e) serial 683412957 connected\n"
        "-- runners.jlink: Flash done. 460896 bytes programmed, verified",
    )
    c.bash(
        "git add -A && git commit -m 'battery: integer millivolts, drop float printf (-21 KB flash)'",
        "[feat/ble-battery 7c2d41b] battery: integer millivolts, drop float printf (-21 KB flash)\n"
        " 4 files changed, 14 insertions(+), 15 deletions(-)",
    )
    summary = """This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:

Analysis:
The user's Zephyr firmware for the nRF52840 stopped linking after the BLE battery service was merged (FLASH overflow). I compared the flash use with main, found the symbols that grew, removed float formatting and double math from the battery code, rebuilt, ran the tests and flashed a board.

Summary:
1. Primary Request and Intent:
   Make the nrf52840 build link again (FLASH overflow after merging the BLE battery service). Constraints: keep -Os, do not enable LTO (Ozone loses source stepping, and that is how Jonas debugs field units). Later: integer millivolts are fine for the log; do not touch the partition layout in the overlay (units in the field run MCUboot with those slots and could not take the OTA).

2. Key Technical Concepts:
   - Zephyr west build / twister / flash, nRF52840, MCUboot slots
   - Soft-float double routines and CONFIG_CBPRINTF_FP_SUPPORT pulling in float formatting
   - Reading symbol sizes with nm --size-sort

3. Files and Code Sections:
   - app/src/battery.c: battery_sample computes integer millivolts and logs "vbat %d mV"; calls soc_from_millivolts.
   - app/src/soc.c, app/src/soc.h: soc_from_voltage(double) became soc_from_millivolts(int32_t), the curve in millivolts.
   - app/prj.conf: CONFIG_CBPRINTF_FP_SUPPORT removed.
   - app/boards/nrf52840dk_nrf52840.overlay: read only (the MCUboot partitions), untouched.

4. Errors and fixes:
   - Link failed: region FLASH overflowed by 6212 bytes. Fixed by removing the double math and float printf.
   - arm-none-eabi-nm was not on PATH; used the Zephyr SDK's arm-zephyr-eabi-nm.
   - Implicit declaration of soc_from_millivolts (-Werror): changed soc.c and soc.h to the new function.
   - west flash with nrfjprog failed (not installed); flashed with the J-Link runner.

5. Problem Solving:
   The app slot is 0x76000 bytes. main used 93.36% of flash; the branch overflowed. The growth came from double-precision soft-float routines (_dtoa_r, __aeabi_ddiv, __aeabi_dmul, __aeabi_dadd) pulled in by float printf and the double voltage math, about 30 KB. After the fix flash use is 460896 B (95.36%). All 14 twister scenarios pass.

6. All user messages:
   - "After merging the BLE battery service branch, the nrf52840 build doesn't link anymore: FLASH overflow. Get it under the limit again. Keep -Os, and do not turn on LTO: Ozone loses source stepping with LTO and that's how Jonas debugs the field units."
   - "Millivolts as integers are fine for the log, nobody needs floats there. And whatever you do, don't touch the partition layout in the overlay: ... a new layout means they can't take the OTA."

7. Pending Tasks:
   - None.

8. Current Work:
   The fix is committed on feat/ble-battery and flashed to the dev kit.

9. Optional Next Step:
   Ask whether to push the branch.
"""
    labels = [
        Label("request", "the nrf52840 build doesn't link anymore", dropped=False),
        Label("constraint", "do not turn on LTO", dropped=False),
        Label("failed command", "west build -b nrf52840dk/nrf52840 app -p always", dropped=False),
        Label("error", "region `FLASH' overflowed by 6212 bytes", dropped=False),
        Label("identifier", "zephyr-sdk-0.16.8", dropped=True),  # the SDK version in use
        Label("measurement", "483,328 bytes", dropped=True),  # the slot's size in bytes; the summary has 0x76000 only
        Label("decision", "MCUboot takes the first 48 KB", dropped=True),
        Label("measurement", "451208 B", dropped=True),  # main's flash use; the summary keeps only the percentage
        Label("measurement", "93.36%", dropped=False),
        Label("identifier", "9a7b6c5", dropped=True),  # main's head used as the baseline
        Label("identifier", "CONFIG_CBPRINTF_FP_SUPPORT", dropped=False),
        Label("failed command", "arm-none-eabi-nm --size-sort", dropped=False),
        Label("error", "arm-none-eabi-nm: command not found", dropped=False),
        Label("measurement", "12,140 bytes", dropped=True),  # _dtoa_r's size
        Label("decision", "DIS about 7 KB", dropped=True),  # the BLE services are not the cost
        Label("file read", "app/src/battery.c", dropped=False),
        Label("file edited", "app/src/battery.c", dropped=False),
        Label("file edited", "app/src/soc.c", dropped=False),
        Label("file edited", "app/src/soc.h", dropped=False),
        Label("file edited", "app/prj.conf", dropped=False),
        Label("edit", 'LOG_INF("vbat %.3f V, %u%%", volts, level)', dropped=True),  # the old log line
        Label("constraint", "don't touch the partition layout in the overlay", dropped=False),
        Label(
            "decision", "the 2,000 units in the field run MCUboot", dropped=False
        ),  # "units in the field run MCUboot"
        Label("error", "implicit declaration of function 'soc_from_millivolts'", dropped=False),
        Label("measurement", "460896 B", dropped=False),
        Label("measurement", "14 of 14 executed test configurations passed", dropped=False),
        Label("failed command", "west flash -d build --runner nrfjprog", dropped=False),
        Label("error", "required program nrfjprog not found", dropped=False),
        Label("identifier", "683412957", dropped=True),  # the J-Link probe's serial
        Label("identifier", "7c2d41b", dropped=True),  # the commit
        # noise
        Label("number", "71.52 seconds", dropped=False),
        Label("name", "bt_smp_pkey_ready_cb", dropped=False),  # the biggest symbol, not what grew
        Label("number", "0x76000", dropped=False),
        Label("command", "git stash", dropped=False),
        Label("name", "__floatsidf", dropped=False),
    ]
    return DevSession(c, summary, labels)


SESSIONS = (
    empty_cart,
    flaky_retry,
    axum_upgrade,
    orders_latency,
    email_backfill,
    invoice_idor,
    split_utils,
    gcc14_ci,
    installer_docs,
    oom_incident,
    log_lifecycle,
    ratelimit_review,
    backup_prune,
    ini_leak,
    revenue_mismatch,
    double_emails,
    invite_links,
    gradle_build_time,
    log_volume,
    mysql_index,
    android_crash,
    nan_loss,
    beat_timezone,
    nginx_headers,
    image_size,
    leaked_key,
    jinja_advisory,
    search_throughput,
    refunds_migration,
    h2_advisory_bench,
    stuck_orders,
    cors_allowlist,
    musl_binary,
    redis_failover,
    gateway_heap,
    login_redirect,
    payout_currency,
    kafka_lag,
    csv_culture,
    eu_timestamps,
    digest_twice,
    ingest_oom,
    plus_email_release,
    vpc_moved_blocks,
    churn_plan_rank,
    ledger_space_leak,
    kiosk_sidebar_overlap,
    prisma_rollback,
    firmware_flash_overflow,
)
