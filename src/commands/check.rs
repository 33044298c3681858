//! `gavel check`: validates recordings, every problem in every file at once.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use gavel::domain::Limits;
use gavel::simulate::Fixture;

use super::print;

/// Reports each file as ok (with its size) or with its problems; fails when any has one.
pub fn run(paths: &[PathBuf], limits: &Limits) -> Result<ExitCode> {
    let mut failed = false;
    for loaded in Fixture::load_each(paths, limits) {
        match loaded {
            Ok(fixture) => print(&format!(
                "{}: ok ({} turns, {} rounds)\n",
                fixture.source,
                fixture.turns.len(),
                fixture.last_round()
            ))?,
            Err(errors) => {
                failed = true;
                eprintln!("{errors}");
            }
        }
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
