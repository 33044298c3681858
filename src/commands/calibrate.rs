//! `gavel calibrate`: replays finished debates (recordings, or those of one database or of
//! several together) under a grid of thresholds and reports what each setting would have saved
//! and decided, as tables, JSON or an HTML report to share.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result};

use gavel::calibrate::html::{self, Made, Published, PublishedIn, Section};
use gavel::calibrate::{
    self, AxisSpec, Calibration, ContextDebates, Measuring, RecordedDebate, Report,
    SimilaritySource, Window,
};
use gavel::config::{Config, SimilarityKind};
use gavel::progress::Stage;
use gavel::simulate::{Fixture, play_in_shadow};
use gavel::text::inert;

use super::contexts::{self, Named, read_each};
use super::{load_fixtures, print, runtime, stop_on_interrupt};

/// One report per similarity source (the recorded one when none is named) over `grid` (the
/// configured one when empty), as tables or, `json`, as JSON; `per_debate` adds each debate's
/// outcomes; `html` writes the report to share to that file instead of the tables (with each
/// database's published settings history when `db` is given). The debates are those of the
/// databases `db` names together when it is given (an empty value: the config's
/// `[[contexts]]`, else the environment's), else `fixtures`. The JSON says where they came
/// from (and with several databases, how many each gave), their window, the similarity source
/// and its measure.
pub fn run(
    fixtures: &[PathBuf],
    db: &[String],
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
    let databases = match db {
        [] => None,
        given => {
            let named: Vec<String> = given.iter().filter(|d| !d.is_empty()).cloned().collect();
            Some(contexts::databases(&named, config)?)
        }
    };
    let databases = databases.as_deref();
    let fixtures = match databases {
        Some(_) => Vec::new(),
        None => load_fixtures(fixtures, &config.limits)?,
    };
    let sources = if similarity.is_empty() {
        vec![SimilaritySource::Recorded]
    } else {
        similarity
    };
    let titled = sources.len() > 1 || sources[0] != SimilaritySource::Recorded;
    let mut debates_source = None;
    let mut reports = serde_json::Map::new();
    let mut sections = Vec::new();
    for source in sources {
        let measuring = measuring(source, config);
        let Debates {
            records,
            window,
            counts,
        } = records(databases, &fixtures, source, config)?;
        let debates_source = debates_source.get_or_insert_with(|| match databases {
            Some(databases) => databases_source(databases, counts.as_deref()),
            None => fixtures_source(&fixtures),
        });
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
                source: debates_source.as_str(),
                contexts: counts.as_deref(),
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
        let published = match databases {
            Some(databases) => published(databases)?,
            None => Vec::new(),
        };
        let source = debates_source.unwrap_or_default();
        write_html(path, &sections, source, &published)?;
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

/// The debates to replay, the window of time they span (a database's debates), and with several
/// databases, how many each gave.
struct Debates {
    records: Vec<RecordedDebate>,
    window: Option<Window>,
    counts: Option<Vec<ContextDebates>>,
}

/// The debates to replay, their similarities from `source`: the finished ones of `databases`
/// (each one's records under its context's name, and its count of debates, when there are
/// several), with the window they span, else `fixtures` played in shadow mode.
fn records(
    databases: Option<&[Named]>,
    fixtures: &[Fixture],
    source: SimilaritySource,
    config: &Config,
) -> Result<Debates> {
    Ok(match databases {
        Some(databases) => {
            let several = databases.len() > 1;
            let read = runtime()?.block_on(read_each(databases, |database| async move {
                let what = match several {
                    true => format!("reading and measuring context {}", database.name),
                    false => "reading and measuring".to_owned(),
                };
                let stage = Stage::open(&what, "debates");
                let mut client = database.target.connect_driven().await?;
                let measuring = measuring(source, config);
                let limits = &config.limits;
                Ok(calibrate::read_database(&mut client, limits, &measuring, &stage).await?)
            }))?;
            together(databases, read)
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
            Debates {
                records,
                window: None,
                counts: None,
            }
        }
    })
}

/// The records `read` of each of `databases` as one set, with the window they span together;
/// with several databases, each record under its context's name, and each context's count.
fn together(databases: &[Named], read: Vec<(Vec<RecordedDebate>, Option<Window>)>) -> Debates {
    if let [_] = databases {
        let (records, window) = read.into_iter().next().unwrap_or_default();
        return Debates {
            records,
            window,
            counts: None,
        };
    }
    let mut all = Vec::new();
    let mut window = None;
    let mut counts = Vec::with_capacity(databases.len());
    for (database, (records, its_window)) in databases.iter().zip(read) {
        if let Some(w) = its_window {
            window = Window::widen(window, Some(w.first), Some(w.last));
        }
        counts.push(ContextDebates {
            name: database.name.clone(),
            database: database.target.describe(),
            debates: records.len() as u32,
        });
        all.extend(records.into_iter().map(|r| r.in_context(&database.name)));
    }
    Debates {
        records: all,
        window,
        counts: Some(counts),
    }
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

/// Where the debates came from: the database (without its secrets), or several databases and
/// how many debates each gave (`counts`).
fn databases_source(databases: &[Named], counts: Option<&[ContextDebates]>) -> String {
    match counts {
        Some(counts) => {
            let each: Vec<String> = counts
                .iter()
                .map(|c| format!("context {} ({}): {} debates", c.name, c.database, c.debates))
                .collect();
            format!(
                "the finished debates of {} databases: {}",
                counts.len(),
                each.join(", ")
            )
        }
        None => format!(
            "the finished debates of the database {}",
            contexts::describe(databases)
        ),
    }
}

/// Where the recordings replayed came from: the first twenty named.
fn fixtures_source(fixtures: &[Fixture]) -> String {
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

/// The settings history published in each of `databases`, or why it could not be read (a
/// database not migrated to V5 has none): the report says which, under each context's name
/// when there are several.
fn published(databases: &[Named]) -> Result<Vec<PublishedIn>> {
    let several = databases.len() > 1;
    runtime()?.block_on(async {
        let mut each = Vec::with_capacity(databases.len());
        for database in databases {
            let read: Published = async {
                let client = database.target.connect_driven().await?;
                gavel::store::postgres::settings_history(&client, None).await
            }
            .await
            .map_err(|e| format!("{e:#}"));
            each.push(PublishedIn {
                context: several.then(|| database.name.clone()),
                history: read,
            });
        }
        Ok(each)
    })
}

/// Writes the HTML report of `sections` (and the `published` settings history) to `path`,
/// saying so on stderr.
fn write_html(
    path: &Path,
    sections: &[Section],
    source: String,
    published: &[PublishedIn],
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
