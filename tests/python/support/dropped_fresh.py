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


SESSIONS = (empty_cart, flaky_retry)
