//! `gavel calibrate`: replays finished debates (recordings, or a database's) under a grid of
//! thresholds and reports what each setting would have saved and decided, as tables, JSON or
//! an HTML report to share.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result};

use gavel::calibrate::html::{self, Made, Published, Section};
use gavel::calibrate::{
    self, AxisSpec, Calibration, Measuring, RecordedDebate, Report, SimilaritySource, Window,
};
use gavel::config::{Config, SimilarityKind};
use gavel::progress::Stage;
use gavel::simulate::{Fixture, play_in_shadow};
use gavel::text::inert;

use super::{load_fixtures, print, runtime, stop_on_interrupt, target};

/// One report per similarity source (the recorded one when none is named) over `grid` (the
/// configured one when empty), as tables or, `json`, as JSON; `per_debate` adds each debate's
/// outcomes; `html` writes the report to share to that file instead of the tables (with the
/// database's published settings history when `db` is given). The debates are the database's
/// when `db` is given, else `fixtures`. The JSON says where they came from, their window, the
/// similarity source and its measure.
pub fn run(
    fixtures: &[PathBuf],
    db: Option<&str>,
    grid: Vec<AxisSpec>,
    (json, per_debate, html): (bool, bool, Option<&Path>),
    similarity: Vec<SimilaritySource>,
    config: &Config,
) -> Result<ExitCode> {
    stop_on_interrupt()?;
    let grid = if grid.is_empty() {
        config.calibration.grid.clone()
    } else {
        grid
    };
    let current = calibrate::Setting::current(&config.controller);
    let (settings, skipped) = calibrate::settings(&grid, &current).map_err(anyhow::Error::msg)?;
    let fixtures = match db {
        Some(_) => Vec::new(),
        None => load_fixtures(fixtures, &config.limits)?,
    };
    let sources = if similarity.is_empty() {
        vec![SimilaritySource::Recorded]
    } else {
        similarity
    };
    let titled = sources.len() > 1 || sources[0] != SimilaritySource::Recorded;
    let debates_source = fixtures_source(db, &fixtures)?;
    let mut reports = serde_json::Map::new();
    let mut sections = Vec::new();
    for source in sources {
        let measuring = measuring(source, config);
        let (records, window) = records(db, &fixtures, source, config)?;
        let replaying = Stage::spinner(&format!(
            "replaying {} settings over {} debates",
            settings.len(),
            records.len()
        ));
        let report = Report::run(
            &records,
            settings.clone(),
            skipped,
            &current,
            &config.controller,
            per_debate,
        );
        drop(replaying);
        if json {
            let calibration = Calibration {
                source: &debates_source,
                similarity: source,
                measure: measuring.measure.label(),
                window,
                report: &report,
            };
            reports.insert(
                source.name().to_owned(),
                serde_json::to_value(&calibration)?,
            );
        } else if html.is_none() {
            print_report(&report, source, &measuring, titled, per_debate)?;
        }
        if html.is_some() {
            let title = title(source, &measuring);
            sections.push(Section::new(title, report, &records, &config.controller));
        }
    }
    if let Some(path) = html {
        let published = match db {
            Some(url) => Some(published(url)?),
            None => None,
        };
        write_html(path, &sections, debates_source, published.as_ref())?;
    }
    if json {
        // One source prints its report as before; several, one report per source.
        let value = if reports.len() == 1 {
            reports
                .into_iter()
                .next()
                .map(|(_, v)| v)
                .unwrap_or_default()
        } else {
            serde_json::Value::Object(reports)
        };
        print(&format!("{}\n", serde_json::to_string_pretty(&value)?))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// How a source's similarity is measured.
fn measuring(source: SimilaritySource, config: &Config) -> Measuring {
    match source {
        SimilaritySource::Recorded => Measuring::recorded(config.signals.measure()),
        SimilaritySource::Lexical => Measuring::remeasured(gavel::signals::Measure::Lexical),
        SimilaritySource::Semantic => Measuring::remeasured(config.signals.semantic()),
    }
}

/// The debates to replay, their similarities from `source`: the database's finished ones
/// (`db`, empty for the environment's), with the window they span, else `fixtures` played in
/// shadow mode.
fn records(
    db: Option<&str>,
    fixtures: &[Fixture],
    source: SimilaritySource,
    config: &Config,
) -> Result<(Vec<RecordedDebate>, Option<Window>)> {
    Ok(match db {
        Some(url) => {
            let target = target(Some(url).filter(|u| !u.is_empty()))?;
            let stage = Stage::open("reading and measuring", "debates");
            runtime()?.block_on(async {
                let mut client = target.connect_driven().await?;
                let measuring = measuring(source, config);
                calibrate::read_database(&mut client, &config.limits, &measuring, &stage).await
            })?
        }
        None => {
            // Played with the measure under calibration (a recording's own similarities stand
            // only for `recorded`), so the decisions hold the similarities asked for and are
            // read back as recorded: nothing is measured twice, or with a measure not asked for.
            let mut config = config.clone();
            let own_similarity = source == SimilaritySource::Recorded;
            config.signals.similarity = match source {
                SimilaritySource::Recorded => config.signals.similarity,
                SimilaritySource::Lexical => SimilarityKind::Lexical,
                SimilaritySource::Semantic => SimilarityKind::Semantic,
            };
            let measuring = Measuring::recorded(config.signals.measure());
            let shared = Arc::new(config);
            let stage = Stage::count("playing", fixtures.len() as u64, "recordings");
            let play = |fixture: &Fixture| match own_similarity {
                true => play_in_shadow(fixture, shared.clone()),
                false => {
                    let similarity = BTreeMap::new();
                    play_in_shadow(
                        &Fixture {
                            similarity,
                            ..fixture.clone()
                        },
                        shared.clone(),
                    )
                }
            };
            let records = calibrate::from_recordings(fixtures, play, &measuring, &stage);
            (records, None)
        }
    })
}

/// A report as tables, under its source's title when there are several.
fn print_report(
    report: &Report,
    source: SimilaritySource,
    measuring: &Measuring,
    titled: bool,
    per_debate: bool,
) -> Result<()> {
    for issue in &report.issues {
        eprintln!("gavel: note: {}", inert(issue));
    }
    if titled {
        print(&format!("{}\n", title(source, measuring)))?;
    }
    print(&report.table())?;
    if let Some(best) = report.closest_to_recorded() {
        print(&format!(
            "closest to the recorded decisions: similarity {:.2}, novelty {} ({}/{} \
             rounds decided alike)\n",
            best.setting.similarity_threshold,
            best.setting.novelty_threshold,
            best.decisions_agreed,
            best.decisions_recorded
        ))?;
    }
    if per_debate {
        print(&report.outcomes_table())?;
    }
    if titled {
        print("\n")?;
    }
    Ok(())
}

/// A report's title: its similarity source and measure.
fn title(source: SimilaritySource, measuring: &Measuring) -> String {
    let measure = match source {
        SimilaritySource::Recorded => format!("as recorded, else {}", measuring.measure.label()),
        _ => measuring.measure.label(),
    };
    format!("similarity: {} — {measure}", source.name())
}

/// Where the debates came from, for the HTML report (a database without its secrets).
fn fixtures_source(db: Option<&str>, fixtures: &[Fixture]) -> Result<String> {
    Ok(match db {
        Some(url) => format!(
            "the finished debates of the database {}",
            gavel::store::postgres::Target::from_env(Some(url).filter(|u| !u.is_empty()))?
                .describe()
        ),
        None => {
            let names: Vec<&str> = fixtures
                .iter()
                .take(20)
                .map(|f| f.source.as_str())
                .collect();
            let more = match fixtures.len() {
                n if n > 20 => format!(" and {} more", n - 20),
                _ => String::new(),
            };
            format!(
                "{} recordings played in shadow mode: {}{more}",
                fixtures.len(),
                names.join(", ")
            )
        }
    })
}

/// The settings history published in the database `url` (empty for the environment's), or
/// why it could not be read (a database not migrated to V5 has none): the report says which.
fn published(url: &str) -> Result<Published> {
    let target = target(Some(url).filter(|u| !u.is_empty()))?;
    let read = runtime()?.block_on(async {
        let client = target.connect_driven().await?;
        gavel::store::postgres::settings_history(&client, None).await
    });
    Ok(read.map_err(|e| format!("{e:#}")))
}

/// Writes the HTML report of `sections` (and the `published` settings history) to `path`,
/// saying so on stderr.
fn write_html(
    path: &Path,
    sections: &[Section],
    source: String,
    published: Option<&Published>,
) -> Result<()> {
    let made = Made {
        // The program as its name, not the path it was run from.
        command: html::command_line(
            std::iter::once("gavel".to_owned()).chain(std::env::args().skip(1)),
        ),
        source,
        at: chrono::Utc::now()
            .format("%Y-%m-%d %H:%M:%S UTC")
            .to_string(),
        version: format!("gavel {}", env!("CARGO_PKG_VERSION")),
    };
    std::fs::write(path, html::render(&made, sections, published))
        .with_context(|| format!("cannot write the report to {}", path.display()))?;
    eprintln!(
        "gavel: wrote the calibration report to {} ({} measure{})",
        path.display(),
        sections.len(),
        if sections.len() == 1 { "" } else { "s" }
    );
    Ok(())
}
