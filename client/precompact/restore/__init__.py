"""Bringing a savepoint back: resurrect (choose, have the verifier check it, then keep what only
git had, record the lineage, restore the state), the SessionStart brief (brief) and uncompact (a
verified savepoint written back as a session). Imports recall, the verifier and below."""
