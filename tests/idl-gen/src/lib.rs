//! Generates the program's IDL without the Anchor CLI: `anchor-lang-idl` compiles the program
//! with the `idl-build` feature and collects what its generated test prints.
use std::path::{Path, PathBuf};

fn repo_root() -> PathBuf {
    // Read at run time: the target directory is shared between clones, so a binary built in
    // another (maybe deleted) clone must still find this one.
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from);
    manifest
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf())
        .join("../..")
}

/// Where the committed IDL lives: packaged with the Python client, which loads it.
pub fn committed_path() -> PathBuf {
    repo_root().join("client/precompact/idl/precompact.json")
}

/// A fresh IDL, as pretty JSON with a trailing newline.
pub fn generate() -> Result<String, String> {
    // anchor-lang-idl 0.1.4 turns RUSTUP_TOOLCHAIN into a malformed `+{toolchain}` argument,
    // and builds with its own RUSTFLAGS: give the nested build its own target directory so it
    // neither fails nor invalidates the main build's artifacts.
    std::env::remove_var("RUSTUP_TOOLCHAIN");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target"))
        .join("idl-build");
    std::env::set_var("CARGO_TARGET_DIR", target);
    let idl = anchor_lang_idl::build::IdlBuilder::new()
        .program_path(repo_root().join("programs/precompact"))
        .build()
        .map_err(|e| format!("IDL build failed: {e:#}"))?;
    let text = serde_json::to_string_pretty(&idl).map_err(|e| e.to_string())?;
    Ok(text + "\n")
}
