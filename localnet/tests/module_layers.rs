//! The RPC modules depend on each other in one direction only: each imports modules below it
//! (the error, parameters, configs and response shapes at the bottom), none imports the
//! dispatch in `rpc/mod.rs`, and no two import each other, directly or around a circle.
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Each RPC module and the sibling modules it names through `super::`.
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/rpc");
    let mut graph = BTreeMap::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let module = path.file_stem().unwrap().to_str().unwrap().to_string();
        if module == "mod" {
            continue;
        }
        let source = std::fs::read_to_string(&path).unwrap();
        let named: BTreeSet<String> = source
            .split("super::")
            .skip(1)
            .map(|rest| {
                rest.chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '{')
                    .collect()
            })
            // `use super::*` in a module's own unit tests names the module itself.
            .filter(|name: &String| !name.is_empty() && *name != module)
            .collect();
        graph.insert(module, named);
    }
    graph
}

#[test]
fn rpc_modules_import_only_sibling_modules_and_never_in_a_circle() {
    let graph = imports();
    for (module, named) in &graph {
        for name in named {
            assert!(
                graph.contains_key(name),
                "rpc/{module}.rs imports `super::{name}`, which is not a sibling module \
                 (the dispatch in rpc/mod.rs is above every module)"
            );
        }
    }
    // Peel off modules that import nothing left; whatever remains sits on a circle.
    let mut left = graph.clone();
    while let Some(leaf) = left
        .iter()
        .find(|(_, named)| named.iter().all(|name| !left.contains_key(name)))
        .map(|(module, _)| module.clone())
    {
        left.remove(&leaf);
    }
    assert!(left.is_empty(), "import circle among {:?}", left.keys());
}
