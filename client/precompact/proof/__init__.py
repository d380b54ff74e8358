"""Proof an auditor checks without precompact: bundles (bundle), the transactions in them
(transaction), and the ledger walk over the record's whole history (history, ledger). Imports the
verifier and below."""
