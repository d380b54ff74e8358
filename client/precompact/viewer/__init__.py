"""`precompact view`: a read-only local web page of the project's sessions, savepoints, their
proof and what compaction dropped. `pages` gathers what each page shows from the library through
`api` (the index, the verifier's report, resurrect, recall, restore.dropped) and knows no web
library; `app` serves it (Starlette, Jinja2 templates that escape everything) behind the guard
that refuses any request without the token, from a foreign Host or Origin, or not a GET; `serve`
binds 127.0.0.1 on a free port. Only `edges/cli.py` imports this package, when `view` runs, so
the hook never loads it or its libraries. May import everything below the edges; calls only api."""
