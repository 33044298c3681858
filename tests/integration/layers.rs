//! The layering, enforced: every top-level module of `src/` has a layer, and a module may import
//! (`crate::x`) only modules of lower layers. So no module reaches up (the core never imports the
//! store or the console, the store never the console) and no two modules import each other,
//! directly or round a loop. The console's own parts (`src/console/`) are layered the same way,
//! their imports read as `crate::console::x`. ARCHITECTURE.md describes the layers; a new module
//! fails this test until it is given one here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Layers, lowest first: a name for each and the modules in it.
type Layers = &'static [(&'static str, &'static [&'static str])];

/// The top-level modules' layers.
const LAYERS: Layers = &[
    (
        "the core's leaves, which import nothing of gavel's",
        &["domain", "text", "progress", "pace"],
    ),
    ("embeddings", &["embed"]),
    ("signals", &["signals"]),
    ("policy: the controller and the judge", &["policy"]),
    ("the store", &["store"]),
    ("calibration", &["calibrate"]),
    ("reports over debates", &["audit"]),
    (
        "configuration, keys and themes; logging",
        &["config", "logging"],
    ),
    ("the simulator", &["simulate"]),
    ("the console", &["console"]),
    ("the command line", &["cli"]),
    ("the commands", &["commands"]),
];

/// The layers of the console's parts, under `src/console/`.
const CONSOLE_LAYERS: Layers = &[
    ("the terminal's modes and signals", &["terminal"]),
    ("the regions a frame keeps from the one before", &["kept"]),
    ("the screen frames are written to", &["screen"]),
    ("the pager, on the terminal", &["pager"]),
    ("the console's state and update", &["app"]),
    ("the console's view", &["ui"]),
    ("the reports worker", &["reports"]),
    ("backends: commands carried out", &["backend"]),
    ("the console's run", &["run"]),
];

/// The `.rs` files of each module directly in `dir` (a file `x.rs` or a folder `x/`; not
/// `lib.rs`, `main.rs` or `mod.rs`), each as its path under `dir` and its code.
fn modules_in(dir: &Path) -> BTreeMap<String, Vec<(String, String)>> {
    let mut modules = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        let name = match name.strip_suffix(".rs") {
            Some("lib" | "main" | "mod") => continue,
            Some(stem) => stem.to_owned(),
            None if path.is_dir() => name,
            None => continue,
        };
        let files = rust_files(&path)
            .into_iter()
            .map(|file| {
                let code = std::fs::read_to_string(&file).unwrap();
                (file.strip_prefix(dir).unwrap().display().to_string(), code)
            })
            .collect();
        modules.insert(name, files);
    }
    modules
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

/// The modules named after `prefix` (`crate::`, `crate::console::`) in `code` (comments left
/// out), with the line of each first mention: `prefix x::...` and each head of
/// `prefix {x, y::z}`.
fn imports(code: &str, prefix: &str) -> BTreeMap<String, usize> {
    let mut found = BTreeMap::new();
    for (number, line) in code.lines().enumerate() {
        let line = line.split("//").next().unwrap_or("");
        for (at, _) in line.match_indices(prefix) {
            let rest = &line[at + prefix.len()..];
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

/// What breaks `layers` among `modules` (as [`modules_in`] gives them), whose imports of each
/// other are written `prefix x`: a module with no layer, an import that does not go down.
fn breaches(
    modules: &BTreeMap<String, Vec<(String, String)>>,
    prefix: &str,
    layers: Layers,
) -> Vec<String> {
    let layer_of: BTreeMap<&str, usize> = layers
        .iter()
        .enumerate()
        .flat_map(|(rank, (_, members))| members.iter().map(move |m| (*m, rank)))
        .collect();
    let mut found: Vec<String> = modules
        .keys()
        .filter(|m| !layer_of.contains_key(m.as_str()))
        .map(|m| format!("{m} has no layer (add it to the table)"))
        .collect();
    for (module, files) in modules {
        let Some(&rank) = layer_of.get(module.as_str()) else {
            continue;
        };
        for (file, code) in files {
            for (other, line) in imports(code, prefix) {
                let Some(&other_rank) = layer_of.get(other.as_str()) else {
                    continue;
                };
                if other != *module && other_rank >= rank {
                    found.push(format!(
                        "{file}:{line}: {module} ({}) imports {other} ({})",
                        layers[rank].0, layers[other_rank].0
                    ));
                }
            }
        }
    }
    found
}

/// Asserts that the modules in `dir` keep to `layers`.
fn assert_layered(dir: &str, prefix: &str, layers: Layers) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let found = breaches(&modules_in(&dir), prefix, layers);
    assert!(
        found.is_empty(),
        "{}: modules that do not keep to the layers:\n{}",
        dir.display(),
        found.join("\n")
    );
}

#[test]
fn every_import_goes_down_the_layers() {
    assert_layered("src", "crate::", LAYERS);
}

#[test]
fn inside_the_console_every_import_goes_down_its_layers() {
    assert_layered("src/console", "crate::console::", CONSOLE_LAYERS);
}

#[test]
fn an_import_up_a_layer_or_round_a_loop_or_from_a_module_with_no_layer_is_caught() {
    let tree = |files: &[(&str, &str, &str)]| {
        let mut modules: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
        for (module, file, code) in files {
            modules
                .entry(module.to_string())
                .or_default()
                .push((file.to_string(), code.to_string()));
        }
        modules
    };
    const TOY: Layers = &[("low", &["domain"]), ("high", &["console", "store"])];
    let down = tree(&[
        ("domain", "domain/mod.rs", "pub struct Debate;"),
        ("console", "console.rs", "use crate::domain::Debate;"),
    ]);
    assert_eq!(breaches(&down, "crate::", TOY), Vec::<String>::new());
    let up = tree(&[
        ("domain", "domain/mod.rs", "pub struct Debate;"),
        (
            "domain",
            "domain/debate.rs",
            "\n// crate::console\nuse crate::console::Model;",
        ),
        ("console", "console.rs", "use crate::domain::Debate;"),
        ("store", "store.rs", "use crate::{console, domain};"),
        ("new", "new.rs", ""),
    ]);
    assert_eq!(
        breaches(&up, "crate::", TOY),
        [
            "new has no layer (add it to the table)",
            "domain/debate.rs:3: domain (low) imports console (high)",
            "store.rs:1: store (high) imports console (high)",
        ]
    );
}

#[test]
fn imports_are_found_in_paths_and_groups_and_not_in_comments() {
    let code = "use crate::domain::Debate;\nuse crate::{store::Feed, console};\n\
                // crate::config is only a comment\nlet x = crate::text::inert(s); // crate::cli\n";
    let found: Vec<(String, usize)> = imports(code, "crate::").into_iter().collect();
    assert_eq!(
        found,
        [
            ("console".to_owned(), 2),
            ("domain".to_owned(), 1),
            ("store".to_owned(), 2),
            ("text".to_owned(), 4),
        ]
    );
    let inside = "use crate::console::app::Model;\nuse crate::console::{pager, ui::view};\n";
    let found: Vec<(String, usize)> = imports(inside, "crate::console::").into_iter().collect();
    assert_eq!(
        found,
        [
            ("app".to_owned(), 1),
            ("pager".to_owned(), 2),
            ("ui".to_owned(), 2)
        ]
    );
}
