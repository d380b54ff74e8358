"""What a savepoint costs on chain (#48): one transaction carrying two signatures, the payer's and
the Ed25519 precompile's, each charged the base fee (Solana's fee schedule counts precompile
signatures: `solana_fee::calculate_signature_fee`). Measured on precompact-localnet, whose bank
prices transactions as the runtime does, from the signing key's balance around a savepoint of
the installed binary; and every doc that states the fee states this number."""

from __future__ import annotations

from precompact.chain import rpc
from precompact.chain import wire as chain
from support.commands import INSTANCE, precompact
from support.localnet import REPO
from support.projects import funded_project

LAMPORTS_PER_SIGNATURE = 5_000
SIGNATURES_PER_SAVEPOINT = 2  # the payer's, and the Ed25519 instruction's
SAVEPOINT_FEE = LAMPORTS_PER_SIGNATURE * SIGNATURES_PER_SAVEPOINT
LAMPORTS_PER_SOL = 1_000_000_000


def test_a_savepoint_costs_its_two_signatures_and_the_record_keeps_its_rent(localnet, tmp_path):
    made = funded_project(tmp_path, localnet.url, INSTANCE)
    project, authority = made.path, made.authority()
    client = rpc.Cluster(localnet.url, timeout=10)
    record = str(chain.record_address(authority.pubkey(), chain.instance_id(INSTANCE))[0])

    first = precompact(project, "savepoint", "--no-transcript")
    assert first.returncode == 0, first.stdout + first.stderr
    rent = client.balance(record)
    assert rent > 0
    for _ in range(2):
        before = client.balance(str(authority.pubkey()))
        saved = precompact(project, "savepoint", "--no-transcript")
        assert saved.returncode == 0, saved.stdout + saved.stderr
        assert before - client.balance(str(authority.pubkey())) == SAVEPOINT_FEE
        assert client.balance(record) == rent


def test_every_doc_that_states_the_savepoint_fee_states_the_measured_one():
    """README.md and docs/setup.md state it in SOL, docs/claude-code.md in lamports and SOL; none
    states the one-signature fee (0.000005 SOL, 5,000 lamports) as a savepoint's."""
    in_sol = f"{SAVEPOINT_FEE / LAMPORTS_PER_SOL:.5f}".rstrip("0")
    fee_lines = {
        "README.md": f"and {in_sol} SOL a savepoint",
        "docs/setup.md": f"and {in_sol} SOL a savepoint",
        "docs/claude-code.md": f"({SAVEPOINT_FEE:,} lamports, {in_sol} SOL, where precompile signatures are charged",
    }
    for doc, line in fee_lines.items():
        text = " ".join((REPO / doc).read_text().split())
        assert line in text, f"{doc} does not state the savepoint fee as {line!r}"
        assert "0.000005 SOL" not in text, f"{doc} states one signature's fee (0.000005 SOL) somewhere"
