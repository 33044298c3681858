//! `gavel demo`: the console on recorded debates played in memory, or (`--postgres`) through a
//! throwaway PostgreSQL server, as `gavel watch` would see them.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Result;
use tokio::runtime::Runtime;
use tokio::sync::mpsc::unbounded_channel;
use tokio::sync::watch;

use gavel::cli;
use gavel::config::Config;
use gavel::console::app::{Command, Model};
use gavel::console::backend::{demo, live};
use gavel::console::{Ended, terminal};
use gavel::logging;
use gavel::progress::Progress;
use gavel::simulate::postgres::simulate;
use gavel::simulate::{Fixture, Playback, TimeSource};
use gavel::store::postgres::{LocalServer, Sides, Target, migrate};

use super::{console_model, load_fixtures, print, runtime};

/// Plays `fixtures` (the bundled ones when none) at `speed` under the console.
pub fn run(
    fixtures: &[PathBuf],
    console: &cli::Console,
    speed: f64,
    postgres: bool,
    config: Config,
    log_dir: &Path,
) -> Result<ExitCode> {
    let fixtures = load_fixtures(fixtures, &config.limits)?;
    terminal::require()?;
    let _guard = logging::init(log_dir)?;
    let playback = Playback {
        paused: false,
        speed,
    };
    let source = if postgres {
        String::new()
    } else {
        format!("demo: {} recorded debates", fixtures.len())
    };
    let (mut model, theme_file) = console_model(source, console, &config, postgres)?;
    model.time.playback = playback;
    let ready = Ready { model, theme_file };
    let rt = runtime()?;
    let ended = if postgres {
        on_postgres(rt, fixtures, config, ready)?
    } else {
        in_memory(rt, fixtures, config, ready)?
    };
    Ok(ended.exit_code())
}

/// The demo through a throwaway server, whose address is printed on exit.
fn on_postgres(
    rt: Runtime,
    fixtures: Vec<Fixture>,
    config: Config,
    mut ready: Ready,
) -> Result<Ended> {
    ready.model.about.simulated = true;
    eprintln!("gavel: starting a throwaway PostgreSQL ...");
    let server = LocalServer::start()?;
    // Where the demo's database is (for psql in another terminal), in the header
    // and again on exit.
    let source = format!("demo --postgres: {}", server.url("gavel"));
    ready.model.about.source = source.clone();
    let result = rt.block_on(demo_postgres(&server, fixtures, config, ready));
    rt.shutdown_background();
    drop(server);
    print(&format!("{source} (removed on exit)\n"))?;
    result
}

/// The demo played in memory.
fn in_memory(rt: Runtime, fixtures: Vec<Fixture>, config: Config, ready: Ready) -> Result<Ended> {
    let playback = ready.model.time.playback;
    let ended = rt.block_on(async {
        let (events, receiver) = unbounded_channel();
        let config = Arc::new(config);
        let commands = demo::start(
            fixtures,
            config.clone(),
            events.clone(),
            TimeSource::system(),
        );
        let _ = commands.send(Command::SetPlayback(playback));
        let theme_file = ready.theme_file.as_deref();
        gavel::console::run(
            ready.model,
            &config,
            theme_file,
            (events, receiver),
            commands,
        )
        .await
    })?;
    rt.shutdown_background();
    Ok(ended)
}

/// A console ready to run.
struct Ready {
    model: Model,
    theme_file: Option<PathBuf>,
}

/// Migrates a throwaway server's database, simulates into it and watches it.
async fn demo_postgres(
    server: &LocalServer,
    fixtures: Vec<Fixture>,
    config: Config,
    ready: Ready,
) -> Result<Ended> {
    let playback = ready.model.time.playback;
    let admin = Target::exact(&server.url("postgres"))?
        .connect_driven()
        .await?;
    admin.batch_execute("CREATE DATABASE gavel").await?;
    let target = Target::exact(&server.url("gavel"))?;
    migrate(&mut target.connect_driven().await?).await?;
    let (clock_tx, clock) = watch::channel(playback);
    let config = Arc::new(config);
    let simulator = {
        let (target, config) = (target.clone(), config.clone());
        tokio::spawn(async move {
            if let Err(e) =
                simulate(&target, fixtures, config, clock, false, &Progress::none()).await
            {
                tracing::error!("the simulator stopped: {e:#}");
            }
        })
    };
    let (events, receiver) = unbounded_channel();
    let commands = live::start(
        Sides::one(target),
        events.clone(),
        Some(clock_tx),
        config.limits,
    );
    let theme_file = ready.theme_file.as_deref();
    let result = gavel::console::run(
        ready.model,
        &config,
        theme_file,
        (events, receiver),
        commands,
    )
    .await;
    simulator.abort();
    Ok(result?)
}
