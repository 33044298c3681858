//! The documentation's examples run as tests: every ```` ```console ```` block of README.md
//! and of docs/**/*.md (each `$ gavel ...` line and the output under it, standard error
//! included, `? N` for a status other than 0) is run by trycmd against the gavel binary, so
//! an example that stops being true fails. The commands run from the checkout (paths are the
//! repository's: `fixtures/`, `tests/data/`), at home in a scratch directory of their own (no
//! config, no kept vectors, as a new user), with `DATABASE_URL` naming a throwaway database
//! into which the bundled recordings were played (`gavel trace`, `export`, `calibrate --db`).
//! Times and scratch paths in the output are written `[..]` in the docs.

use crate::common;

use common::pg::{migrated_database, play_into};
use gavel::simulate::Fixture;

#[test]
fn the_documentations_examples_hold() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let database = runtime.block_on(async {
        let database = migrated_database("docs").await;
        play_into(&database.target, Fixture::bundled().unwrap()).await;
        database
    });
    let home = common::scratch_home().join("docs");
    std::fs::create_dir_all(&home).unwrap();
    let cases = trycmd::TestCases::new();
    cases
        .register_bin("gavel", std::path::Path::new(env!("CARGO_BIN_EXE_gavel")))
        .env("HOME", home.display().to_string())
        .env("XDG_CONFIG_HOME", home.join("config").display().to_string())
        .env("XDG_DATA_HOME", home.join("data").display().to_string())
        .env("XDG_STATE_HOME", home.join("state").display().to_string())
        .env("DATABASE_URL", &database.url)
        .timeout(std::time::Duration::from_secs(120))
        .case("README.md")
        .case("docs/**/*.md");
    cases.run();
    drop(database);
}
