//! `gen-idl` writes the fresh IDL over the committed one; `gen-idl --check` only compares.
use std::process::ExitCode;

fn main() -> ExitCode {
    let check = match std::env::args().nth(1).as_deref() {
        None => false,
        Some("--check") => true,
        Some(other) => {
            eprintln!("gen-idl: unknown argument {other:?}; use no argument to write or --check to compare");
            return ExitCode::from(2);
        }
    };
    let fresh = match precompact_idl_gen::generate() {
        Ok(fresh) => fresh,
        Err(e) => {
            eprintln!("gen-idl: {e}");
            return ExitCode::FAILURE;
        }
    };
    let path = precompact_idl_gen::committed_path();
    if check {
        if std::fs::read_to_string(&path).ok().as_deref() == Some(fresh.as_str()) {
            println!("IDL up to date: {}", path.display());
            ExitCode::SUCCESS
        } else {
            eprintln!(
                "gen-idl: {} differs from a fresh generation; run scripts/gen-idl and commit it",
                path.display()
            );
            ExitCode::FAILURE
        }
    } else if let Err(e) = std::fs::write(&path, fresh) {
        eprintln!("gen-idl: cannot write {}: {e}", path.display());
        ExitCode::FAILURE
    } else {
        println!("wrote {}", path.display());
        ExitCode::SUCCESS
    }
}
