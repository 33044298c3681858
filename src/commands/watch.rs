//! `gavel watch`: the console on a database an orchestrator writes to, or on a subscriber of
//! it (`--read-from`), writing the database itself; or on several databases at once, each a
//! context (`--db` repeated, or the config's `[[contexts]]`).

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context as _, Result, bail};
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

use gavel::cli::Console;
use gavel::config::Config;
use gavel::config::theme::Theme;
use gavel::console::app::{Command, Context, Contexts, Event, Model, Reading};
use gavel::console::backend::{fleets, live};
use gavel::console::terminal;
use gavel::logging;
use gavel::store::postgres::{Sides, Target};

use super::contexts::{Wanted, names, wanted};
use super::{console_model, target, warn_all};

/// Runs the console on the databases `db` names (the config's `[[contexts]]` when none, else
/// DATABASE_URL and the environment) until it ends; on one, reading from the one `read_from`
/// names when given (a subscriber of it).
pub fn run(
    db: &[String],
    read_from: Option<&str>,
    console: &Console,
    config: Config,
    log_dir: &Path,
) -> Result<ExitCode> {
    terminal::require()?;
    let _guard = logging::init(log_dir)?;
    let mut wanted = wanted(db, &config)?;
    if wanted.len() > 1 {
        if read_from.is_some() {
            bail!("--read-from reads one --db apart; it cannot go with several databases");
        }
        return several(wanted, console, config);
    }
    let one = wanted.pop();
    let written = match &one {
        Some(one) => one.target.clone(),
        None => target(None)?,
    };
    let source = format!("watch: {}", written.describe());
    let sides = match read_from {
        None => Sides::one(written),
        Some(raw) => {
            let read = Target::parse(raw).context("--read-from")?;
            warn_all(&read.warnings());
            Sides::split(written, read)
        }
    };
    let (mut model, theme_file) = console_model(source, console, &config, true)?;
    if let Some(one) = one {
        model.settings.read_only |= one.read_only;
        if let (None, Some(theme)) = (&console.theme, &one.theme) {
            model.settings.theme = Theme::load(theme)?.0;
        }
    }
    if sides.reads_elsewhere() {
        model.live.reading = Some(Reading::new(sides.read().describe()));
    }
    let limits = config.limits;
    attached(model, &config, theme_file.as_deref(), |events| {
        live::start(sides, events, None, limits)
    })
}

/// The console on several databases: each a context, named and made unique, with its own
/// feed, writer, rights and presence.
fn several(wanted: Vec<Wanted>, console: &Console, config: Config) -> Result<ExitCode> {
    let names = names(&wanted);
    let mut contexts = Vec::with_capacity(wanted.len());
    let mut sides = Vec::with_capacity(wanted.len());
    for (w, name) in wanted.into_iter().zip(names) {
        let theme = match &w.theme {
            Some(theme) => Some(
                Theme::load(theme)
                    .with_context(|| format!("the theme of context {name}"))?
                    .0,
            ),
            None => None,
        };
        contexts.push(Context::new(name, w.read_only, theme));
        sides.push(Sides::one(w.target));
    }
    let listed: Vec<&str> = contexts.iter().map(|c| c.name.as_str()).collect();
    let source = format!("watch: {}", listed.join(", "));
    let (mut model, theme_file) = console_model(source, console, &config, true)?;
    model.live.contexts = Contexts::new(contexts);
    let limits = config.limits;
    attached(model, &config, theme_file.as_deref(), |events| {
        fleets::start(sides, events, limits)
    })
}

/// Runs `model` attached to the backend `start` makes on the console's events channel, on one
/// thread, until the console ends.
fn attached(
    model: Model,
    config: &Config,
    theme_file: Option<&Path>,
    start: impl FnOnce(UnboundedSender<Event>) -> UnboundedSender<Command>,
) -> Result<ExitCode> {
    // One thread: a row hops from the connection to the feed to the draw loop without
    // waking another (the reports and the key reader have threads of their own).
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let ended = rt.block_on(async {
        let (events, receiver) = unbounded_channel();
        let commands = start(events.clone());
        gavel::console::run(model, config, theme_file, (events, receiver), commands).await
    });
    // Not waiting on the backend's blocking tasks: after a signal, tokio's handlers
    // would swallow a second SIGTERM or SIGINT while a drop waited on them.
    rt.shutdown_background();
    Ok(ended?.exit_code())
}
