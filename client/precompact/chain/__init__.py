"""Layer 3's wire: the program's account layout and signed message (wire), the checked JSON-RPC
client (rpc), the record's one decoder (record) and the IDL. Reads Layer 1 only through values it
is given; never Layer 2. Posting, which needs the verifier, is ops.anchoring."""
