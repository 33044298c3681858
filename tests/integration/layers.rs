//! The layering, enforced: every top-level module of `src/` has a layer, and a module may import
//! (`crate::x`) only modules of lower layers. So no module reaches up (the core never imports the
//! store or the console, the store never the console) and no two modules import each other,
//! directly or round a loop. The console's own parts (`src/console/`) are layered the same way,
//! their imports read as `crate::console::x`; inside the console's `update/`, no module imports
//! one that imports it back. ARCHITECTURE.md names the layers in the same order (checked here
//! too); a new module fails this test until it is given one here.

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
    (
        "the escape sequences a frame's cells are written as",
        &["escapes"],
    ),
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

/// The modules named after `prefix` (`crate::`, `crate::console::`, `super::`) in `code`
/// (comments left out), with the line of each first mention: `prefix x::...` and each head of
/// `prefix {x, y::z}`; a `prefix` inside a path (`super::super::x`) starts none.
fn imports(code: &str, prefix: &str) -> BTreeMap<String, usize> {
    let mut found = BTreeMap::new();
    for (number, line) in code.lines().enumerate() {
        let line = line.split("//").next().unwrap_or("");
        for (at, _) in line.match_indices(prefix) {
            // `super::super::x` names no `x` beside the file.
            if line[..at].ends_with(|c: char| c == ':' || c == '_' || c.is_ascii_alphanumeric()) {
                continue;
            }
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

/// The loops among `modules` (as [`modules_in`] gives them), whose imports of each other are
/// written after one of `prefixes`: a module that imports one that imports it back, directly
/// or round others, each loop told once as the imports that close it.
fn loops(modules: &BTreeMap<String, Vec<(String, String)>>, prefixes: &[&str]) -> Vec<String> {
    // Each module's imports of the others: the other, and where it is first named.
    let mut named: BTreeMap<&str, BTreeMap<String, String>> = BTreeMap::new();
    for (module, files) in modules {
        let imported = named.entry(module.as_str()).or_default();
        for (file, code) in files {
            for prefix in prefixes {
                for (other, line) in imports(code, prefix) {
                    if other != *module && modules.contains_key(&other) {
                        imported.entry(other).or_insert(format!("{file}:{line}"));
                    }
                }
            }
        }
    }
    let mut found = Vec::new();
    for &start in named.keys() {
        // Every path from `start` through modules after it in order: each loop is found once,
        // from its first module.
        let mut paths = vec![vec![start]];
        while let Some(path) = paths.pop() {
            let last = path[path.len() - 1];
            for other in named[last].keys() {
                if other == start {
                    let mut closed = path.clone();
                    closed.push(start);
                    let told: Vec<String> = closed
                        .windows(2)
                        .map(|pair| {
                            format!(
                                "{}: {} imports {}",
                                named[pair[0]][pair[1]], pair[0], pair[1]
                            )
                        })
                        .collect();
                    found.push(told.join(", "));
                } else if other.as_str() > start && !path.contains(&other.as_str()) {
                    let mut longer = path.clone();
                    longer.push(other.as_str());
                    paths.push(longer);
                }
            }
        }
    }
    found.sort();
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

/// The layers the sentence of `doc` that begins with `opening` names, up to its end: parted by
/// `;`, each layer's modules the names in backquotes outside parentheses (which remark on
/// them); `None` when `doc` has no such sentence.
fn layers_named(doc: &str, opening: &str) -> Option<Vec<Vec<String>>> {
    let doc = doc.split_whitespace().collect::<Vec<_>>().join(" ");
    let start = doc.find(opening)? + opening.len();
    let (mut layers, mut names, mut name) = (Vec::new(), Vec::new(), None::<String>);
    let mut depth = 0;
    let mut chars = doc[start..].chars().peekable();
    while let Some(c) = chars.next() {
        match (c, &mut name) {
            ('`', Some(_)) => names.extend(name.take().filter(|_| depth == 0)),
            (c, Some(name)) => name.push(c),
            ('`', None) => name = Some(String::new()),
            ('(', None) => depth += 1,
            (')', None) => depth -= 1,
            (';', None) if depth == 0 => layers.push(std::mem::take(&mut names)),
            ('.', None) if depth == 0 && chars.peek().is_none_or(|c| c.is_whitespace()) => break,
            _ => {}
        }
    }
    layers.push(names);
    Some(layers)
}

/// How the layers ARCHITECTURE.md names (`doc`, as [`layers_named`] reads them) differ from
/// `layers`, `what` they are; `None` when they do not.
fn disagreement(what: &str, doc: &[Vec<String>], layers: Layers) -> Option<String> {
    let test: Vec<Vec<String>> = layers
        .iter()
        .map(|(_, modules)| modules.iter().map(|m| m.to_string()).collect())
        .collect();
    if doc == test {
        return None;
    }
    let told = |layers: &[Vec<String>]| {
        let layers: Vec<String> = layers.iter().map(|modules| modules.join(" ")).collect();
        layers.join("; ")
    };
    let first = (0..)
        .find(|&i| doc.get(i) != test.get(i))
        .unwrap_or_default();
    let layer = |layers: &[Vec<String>]| {
        layers
            .get(first)
            .map_or_else(|| "nothing".to_owned(), |m| format!("[{}]", m.join(" ")))
    };
    Some(format!(
        "ARCHITECTURE.md and tests/integration/layers.rs disagree on the {what}: layer {} is {} \
         in ARCHITECTURE.md, {} in the test\n  ARCHITECTURE.md: {}\n  the test:        {}",
        first + 1,
        layer(doc),
        layer(&test),
        told(doc),
        told(&test)
    ))
}

#[test]
fn architecture_md_names_the_layers_of_this_test_in_the_same_order() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("ARCHITECTURE.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let found: Vec<String> = [
        (
            "top-level modules' layers",
            "The layers, lowest first, as the test lists them:",
            LAYERS,
        ),
        (
            "console's layers",
            "The same test layers the console's parts (`crate::console::x`), lowest first:",
            CONSOLE_LAYERS,
        ),
    ]
    .into_iter()
    .filter_map(
        |(what, opening, layers)| match layers_named(&doc, opening) {
            None => Some(format!(
                "ARCHITECTURE.md has no sentence beginning \"{opening}\" to name the {what}"
            )),
            Some(named) => disagreement(what, &named, layers),
        },
    )
    .collect();
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn a_layer_the_doc_leaves_out_or_moves_is_named() {
    let doc = "Intro. The layers, lowest first:\n the leaves `domain` and `text` (which import\n \
               nothing; not `store`); `store`; `console` (over `store.rs`), wired by `main.rs`. \
               After: `cli`.";
    let named = layers_named(doc, "The layers, lowest first:").unwrap();
    let as_doc = |layers: &[&[&str]]| -> Vec<Vec<String>> {
        layers
            .iter()
            .map(|modules| modules.iter().map(|m| m.to_string()).collect())
            .collect()
    };
    assert_eq!(
        named,
        as_doc(&[&["domain", "text"], &["store"], &["console", "main.rs"]])
    );
    assert_eq!(layers_named(doc, "The console's parts:"), None);
    const TOY: Layers = &[
        ("low", &["domain", "text"]),
        ("mid", &["kept"]),
        ("high", &["store"]),
    ];
    let left_out = as_doc(&[&["domain", "text"], &["store"]]);
    assert_eq!(
        disagreement("toy layers", &left_out, TOY).unwrap(),
        "ARCHITECTURE.md and tests/integration/layers.rs disagree on the toy layers: layer 2 is \
         [store] in ARCHITECTURE.md, [kept] in the test\n  ARCHITECTURE.md: domain text; store\n  \
         the test:        domain text; kept; store"
    );
    let same = as_doc(&[&["domain", "text"], &["kept"], &["store"]]);
    assert_eq!(disagreement("toy layers", &same, TOY), None);
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
fn no_module_of_the_console_update_imports_one_that_imports_it() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/console/app/update");
    let found = loops(
        &modules_in(&dir),
        &["super::", "crate::console::app::update::"],
    );
    assert!(
        found.is_empty(),
        "{}: modules that import one that imports them back (update() in mod.rs dispatches; \
         a helper two modules share belongs below both):\n{}",
        dir.display(),
        found.join("\n")
    );
}

/// Modules made of `files`: each file's module, path and code.
fn tree(files: &[(&str, &str, &str)]) -> BTreeMap<String, Vec<(String, String)>> {
    let mut modules: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for (module, file, code) in files {
        modules
            .entry(module.to_string())
            .or_default()
            .push((file.to_string(), code.to_string()));
    }
    modules
}

#[test]
fn an_import_back_directly_or_round_a_loop_is_caught() {
    // The knot `update/` once had, and a pair importing each other.
    let knot = tree(&[
        (
            "events",
            "events.rs",
            "use super::HELD_BACK;\nuse super::keys::on_key;",
        ),
        (
            "keys",
            "keys.rs",
            "use super::{nav::move_by, overlay::on_overlay_key};",
        ),
        ("nav", "nav.rs", "use super::PAGE;"),
        ("overlay", "overlay.rs", "use super::prompt::on_filter_key;"),
        (
            "prompt",
            "prompt.rs",
            "\nuse crate::console::app::update::events::apply_theme;",
        ),
        (
            "desk",
            "desk.rs",
            "use super::time_travel::resume; // super::nav",
        ),
        (
            "time_travel",
            "time_travel.rs",
            "super::desk::recorded(); super::super::prompt::Prompt",
        ),
    ]);
    let prefixes = ["super::", "crate::console::app::update::"];
    assert_eq!(
        loops(&knot, &prefixes),
        [
            "desk.rs:1: desk imports time_travel, time_travel.rs:1: time_travel imports desk",
            "events.rs:2: events imports keys, keys.rs:1: keys imports overlay, \
             overlay.rs:1: overlay imports prompt, prompt.rs:2: prompt imports events",
        ]
    );
    let untied = tree(&[
        (
            "keys",
            "keys.rs",
            "use super::{nav::move_by, prompt::open_line};",
        ),
        ("nav", "nav.rs", "use super::PAGE;"),
        ("prompt", "prompt.rs", "use super::nav::move_by;"),
    ]);
    assert_eq!(loops(&untied, &prefixes), Vec::<String>::new());
}

#[test]
fn an_import_up_a_layer_or_round_a_loop_or_from_a_module_with_no_layer_is_caught() {
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
