//! Wire-up only: command line -> logging -> configuration -> the chosen command. Every failure
//! ends as a `gavel: ...` message on standard error and a non-zero status, a panic included (no
//! backtrace); a reader that closes the pipe early (`| head`) ends the command quietly.

mod commands;

use std::io::{self, Write};
use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use clap::Parser;

use gavel::cli::{self, Cli, Commands};
use gavel::config::Config;
use gavel::logging;
use gavel::text::inert;

/// jemalloc, not glibc's malloc: a console under a stream of rows allocates and frees small
/// values all the time (rows read, filed and copied for the reports worker; a frame's text),
/// and spent a fifth of its time in glibc's allocator; with jemalloc's per-thread caches its
/// CPU at 1,000 turns/s fell from 1.86x-2.11x a bare listener's to 1.64x-1.70x, and its memory
/// is no higher (benches/runs/2026-11-26-ef2e266).
#[global_allocator]
static ALLOCATOR: Allocator = Allocator(tikv_jemallocator::Jemalloc);

/// jemalloc, except for zeroed blocks below [`Allocator::FRESH_FROM_THE_SYSTEM`]: those are
/// taken as any block and zeroed here. A large block (over 32 KiB) that jemalloc reuses, it
/// zeroes by handing its pages back to the system (`madvise(MADV_DONTNEED)`), so the kernel
/// faults each 4 KiB in again, zeroed, at its next touch, and flushes the other cores' TLBs.
/// The similarity model takes such a block for every matrix product's result: embedding real
/// rounds cost 1.17 million page faults for 57,574 tokens and a tenth of its CPU, where zeroing
/// pages still mapped costs microseconds (benches/README.md, under Semantic similarity).
struct Allocator(tikv_jemallocator::Jemalloc);

impl Allocator {
    /// From this size (`oversize_threshold`) jemalloc serves blocks from an arena that hands
    /// freed pages back at once: they come zeroed by the system, and zeroing them here would
    /// only touch every page.
    const FRESH_FROM_THE_SYSTEM: usize = 8 << 20;
}

// SAFETY: every call is jemalloc's with the caller's arguments, but for `alloc_zeroed` below
// FRESH_FROM_THE_SYSTEM, which is jemalloc's `alloc` of the same layout, then that block
// zeroed (layout.size() bytes, all of them the block's).
unsafe impl std::alloc::GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        unsafe { self.0.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        if layout.size() >= Allocator::FRESH_FROM_THE_SYSTEM {
            return unsafe { self.0.alloc_zeroed(layout) };
        }
        let block = unsafe { self.0.alloc(layout) };
        if !block.is_null() {
            unsafe { block.write_bytes(0, layout.size()) };
        }
        block
    }

    unsafe fn dealloc(&self, block: *mut u8, layout: std::alloc::Layout) {
        unsafe { self.0.dealloc(block, layout) }
    }

    unsafe fn realloc(&self, block: *mut u8, layout: std::alloc::Layout, size: usize) -> *mut u8 {
        unsafe { self.0.realloc(block, layout, size) }
    }
}

/// jemalloc's settings, read when it starts: pages left unused go back to the system from one
/// thread of jemalloc's own, after a few seconds, so that no thread of the console's (the draw
/// loop's least of all) stops to hand them back.
#[unsafe(export_name = "_rjem_malloc_conf")]
static JEMALLOC_SETTINGS: Settings =
    Settings(c"background_thread:true,max_background_threads:1".as_ptr());

/// A C string's address, as jemalloc reads its settings.
#[repr(transparent)]
struct Settings(*const std::ffi::c_char);

// SAFETY: it points at a static string, never written.
unsafe impl Sync for Settings {}

fn main() -> ExitCode {
    count_cores_once();
    report_panics();
    let result = run(Cli::parse());
    commands::note_embedding();
    match result {
        Ok(code) => code,
        Err(e) if closed_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            let message: Vec<String> = format!("{e:#}").lines().map(inert).collect();
            let _ = writeln!(io::stderr(), "gavel: {}", message.join("\n"));
            ExitCode::FAILURE
        }
    }
}

/// Names the process's cores once, in `RAYON_NUM_THREADS` (unless it is set): rayon reads it
/// for its pool, and candle for each matrix product of the similarity model, which without it
/// counts the cores anew by reading /proc/cpuinfo, some 25 times a chunk of text embedded (a
/// twentieth of embedding's CPU). The count is the one rayon takes when none is named.
fn count_cores_once() {
    if std::env::var_os("RAYON_NUM_THREADS").is_some() {
        return;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    // SAFETY: gavel has started no thread yet, so none reads the environment meanwhile.
    unsafe { std::env::set_var("RAYON_NUM_THREADS", cores.to_string()) };
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

/// The configuration in force: the file's (or the defaults), the model `--model` names, the
/// stronger model when `gavel models fetch` put it in the data dir; round vectors kept where it
/// says. Fails when the chosen model cannot be used.
fn configure(file: Option<&Path>, model: Option<String>) -> Result<Config> {
    let mut config = Config::load(file)?;
    if let Some(model) = model {
        config.signals.model = Some(model);
    }
    config.signals = config.signals.with_fetched_model();
    if let Some(dir) = config.signals.vector_dir() {
        gavel::embed::keep_vectors_in(dir);
    }
    config.signals.model_choice().check()?;
    Ok(config)
}

fn run(cli: Cli) -> Result<ExitCode> {
    let config = configure(cli.config.as_deref(), cli.model)?;
    let log_dir = cli.log_dir.unwrap_or_else(logging::default_dir);
    match cli.command {
        Commands::Check { fixtures } => commands::check::run(&fixtures, &config.limits),
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
            debates,
            output,
        } => match format.rows() {
            Some(_) if !debates.is_empty() => Err(anyhow::anyhow!(
                "--debate names a debate to write as a recording: add --format recording"
            )),
            Some(format) => commands::export::run(
                &commands::contexts::databases(&db.db, &config)?,
                format,
                since,
                until,
                output.as_deref(),
                &config.limits,
            ),
            None => commands::export::recordings(
                &commands::contexts::databases(&db.db, &config)?,
                &debates,
                output.as_deref(),
                &config.limits,
            ),
        },
        Commands::Trace { session, db, json } => {
            let databases = commands::contexts::databases(&db.db, &config)?;
            commands::trace::run(&session, &databases, json, &config.limits)
        }
        Commands::Calibrate {
            fixtures,
            db,
            grid,
            json,
            per_debate,
            html,
            similarity,
        } => commands::calibrate::run(
            &fixtures,
            &db,
            grid,
            (json, per_debate, html.as_deref()),
            similarity,
            &config,
        ),
        Commands::Models { command } => commands::models::run(command, &config),
        Commands::Migrate { db, subscribe_to } => {
            commands::migrate::run(db.db.as_deref(), subscribe_to.as_deref())
        }
        Commands::Grant {
            db,
            viewer,
            operator,
            publisher,
            revoke,
        } => commands::grant::run(db.db.as_deref(), &viewer, &operator, &publisher, &revoke),
        Commands::Settings { command } => commands::settings::run(command, &config),
        Commands::Simulate {
            db,
            fixtures,
            speed,
        } => commands::simulate::run(db.db.as_deref(), &fixtures, speed, config, &log_dir),
        Commands::Watch {
            db,
            read_from,
            console,
        } => commands::watch::run(&db, read_from.as_deref(), &console, config, &log_dir),
        Commands::Demo {
            fixtures,
            console,
            speed,
            postgres,
        } => commands::demo::run(&fixtures, &console, speed, postgres, config, &log_dir),
    }
}
