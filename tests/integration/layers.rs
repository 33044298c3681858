//! The layering, enforced: every top-level module of `src/` has a layer, and a module may import
//! (`crate::x`) only modules of lower layers. So no module reaches up (the core never imports the
//! store or the console, the store never the console) and no two modules import each other,
//! directly or round a loop. ARCHITECTURE.md describes the layers; a new module fails this test
//! until it is given one here.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, lowest first, and the top-level modules in each.
const LAYERS: &[(&str, &[&str])] = &[
    (
        "leaves: plain helpers that import nothing of gavel's",
        &[
            "domain", "text", "progress", "pace", "keymap", "memory", "terminal",
        ],
    ),
    ("the pager, on the terminal", &["pager"]),
    ("embeddings", &["embed"]),
    ("signals", &["signals"]),
    ("policy: the controller and the judge", &["policy"]),
    ("the store", &["store"]),
    ("calibration", &["calibrate"]),
    ("reports over debates", &["audit"]),
    ("configuration", &["config", "logging"]),
    ("the simulator", &["simulate"]),
    ("themes", &["theme"]),
    ("the simulator writing into PostgreSQL", &["orchestrator"]),
    ("the console's state and update", &["app"]),
    ("the console's view", &["ui"]),
    ("backends: commands carried out", &["executor"]),
    (
        "the console's run and its backends",
        &["tui", "demo", "live"],
    ),
    ("the command line", &["cli"]),
    ("the commands", &["commands"]),
];

/// Every top-level module of `src/` (files and folders, not `lib.rs` and `main.rs`).
fn top_level_modules(src: &Path) -> BTreeSet<String> {
    std::fs::read_dir(src)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter_map(|path| {
            let name = path.file_name()?.to_str()?.to_owned();
            if path.is_dir() {
                Some(name)
            } else {
                let stem = name.strip_suffix(".rs")?;
                (stem != "lib" && stem != "main").then(|| stem.to_owned())
            }
        })
        .collect()
}

/// Every `.rs` file under `path` (itself, if it is one).
fn rust_files(path: &Path) -> Vec<PathBuf> {
    if path.is_file() {
        return vec![path.to_owned()];
    }
    let mut files = Vec::new();
    for entry in std::fs::read_dir(path).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files
}

/// The top-level modules named after `crate::` in `code` (comments left out), with the line of
/// each first mention: `crate::x::...` and each head of `crate::{x, y::z}`.
fn imports(code: &str) -> BTreeMap<String, usize> {
    let mut found = BTreeMap::new();
    for (number, line) in code.lines().enumerate() {
        let line = line.split("//").next().unwrap_or("");
        for (at, _) in line.match_indices("crate::") {
            let rest = &line[at + "crate::".len()..];
            let heads: Vec<&str> = match rest.strip_prefix('{') {
                Some(group) => group.split('}').next().unwrap_or("").split(',').collect(),
                None => vec![rest],
            };
            for head in heads {
                let name: String = head
                    .trim()
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    found.entry(name).or_insert(number + 1);
                }
            }
        }
    }
    found
}

#[test]
fn every_import_goes_down_the_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let modules = top_level_modules(&src);
    let layer_of: BTreeMap<&str, usize> = LAYERS
        .iter()
        .enumerate()
        .flat_map(|(rank, (_, members))| members.iter().map(move |m| (*m, rank)))
        .collect();
    let unplaced: Vec<&String> = modules
        .iter()
        .filter(|m| !layer_of.contains_key(m.as_str()))
        .collect();
    assert!(
        unplaced.is_empty(),
        "top-level modules with no layer (add them to LAYERS): {unplaced:?}"
    );
    let mut upward = Vec::new();
    for module in &modules {
        let path = match src.join(module) {
            dir if dir.is_dir() => dir,
            _ => src.join(format!("{module}.rs")),
        };
        let rank = layer_of[module.as_str()];
        for file in rust_files(&path) {
            let code = std::fs::read_to_string(&file).unwrap();
            for (other, line) in imports(&code) {
                let Some(&other_rank) = layer_of.get(other.as_str()) else {
                    continue;
                };
                if other != *module && other_rank >= rank {
                    upward.push(format!(
                        "{}:{line}: {module} ({}) imports {other} ({})",
                        file.strip_prefix(&src).unwrap().display(),
                        LAYERS[rank].0,
                        LAYERS[other_rank].0
                    ));
                }
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports that do not go down the layers:\n{}",
        upward.join("\n")
    );
}

#[test]
fn imports_are_found_in_paths_and_groups_and_not_in_comments() {
    let code = "use crate::domain::Debate;\nuse crate::{store::Feed, app};\n\
                // crate::ui is only a comment\nlet x = crate::text::inert(s); // crate::tui\n";
    let found: Vec<(String, usize)> = imports(code).into_iter().collect();
    assert_eq!(
        found,
        [
            ("app".to_owned(), 2),
            ("domain".to_owned(), 1),
            ("store".to_owned(), 2),
            ("text".to_owned(), 4),
        ]
    );
}
