#[test]
fn committed_idl_matches_a_fresh_generation() {
    let fresh = precompact_idl_gen::generate().expect("IDL builds");
    let committed = std::fs::read_to_string(precompact_idl_gen::committed_path())
        .expect("client/precompact/idl/precompact.json exists (run scripts/gen-idl)");
    assert!(
        committed == fresh,
        "committed IDL is stale: run scripts/gen-idl and commit the result"
    );
}
