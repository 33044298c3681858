//! Progress of a command's long work on stderr, and how far it got when Ctrl-C stopped it.
//!
//! A [`Stage`] is one step of a command (playing recordings, reading debates, replaying a grid,
//! a download, a migration): an indicatif bar with its count, rate and time left, drawn on
//! stderr only when stderr is a terminal (nothing extra when it is piped). The stage in hand is
//! known process-wide, so an interrupt can say how far it got ([`interrupted`]) and remove what
//! the stage leaves half-written.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use indicatif::{HumanCount, ProgressBar, ProgressDrawTarget, ProgressStyle};

/// The stage in hand: what it does, its unit, its bar, and files to remove if interrupted.
struct Current {
    id: u64,
    what: String,
    unit: String,
    bar: ProgressBar,
    leaves: Vec<PathBuf>,
}

static CURRENT: Mutex<Option<Current>> = Mutex::new(None);

fn current() -> std::sync::MutexGuard<'static, Option<Current>> {
    CURRENT.lock().unwrap_or_else(|e| e.into_inner())
}

/// One step of a command's work, shown until it is dropped; its counter ([`Progress`]) is
/// reached through it.
pub struct Stage {
    id: u64,
    progress: Progress,
}

impl Stage {
    /// Starts `what` (e.g. "playing") over `total` items counted in `unit`: a bar with the
    /// count, the rate and the time left.
    pub fn count(what: &str, total: u64, unit: &str) -> Stage {
        Stage::start(what, Some(total), unit, &bar(what, unit))
    }

    /// Starts `what` over items counted in `unit` whose total is not known yet (until
    /// `Progress::set_total`).
    pub fn open(what: &str, unit: &str) -> Stage {
        Stage::start(what, None, unit, &bar(what, unit))
    }

    /// Starts `what`, shown with the time it has taken.
    pub fn spinner(what: &str) -> Stage {
        Stage::start(
            what,
            None,
            "",
            &format!("{{spinner}} {what} ({{elapsed}}) {{msg}}"),
        )
    }

    fn start(what: &str, total: Option<u64>, unit: &str, template: &str) -> Stage {
        let target = if std::io::stderr().is_terminal() {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        let bar = ProgressBar::with_draw_target(total, target);
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.enable_steady_tick(Duration::from_millis(120));
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        *current() = Some(Current {
            id,
            what: what.to_owned(),
            unit: unit.to_owned(),
            bar: bar.clone(),
            leaves: Vec::new(),
        });
        Stage {
            id,
            progress: Progress(bar),
        }
    }

    /// `path` is half-written while the stage runs: an interrupt removes it.
    pub fn leaves(&self, path: PathBuf) {
        if let Some(current) = current().as_mut().filter(|c| c.id == self.id) {
            current.leaves.push(path);
        }
    }
}

/// The template of a bar: count, rate, time left.
fn bar(what: &str, unit: &str) -> String {
    format!(
        "{{spinner}} {what} [{{wide_bar}}] {{human_pos}}/{{human_len}} {unit} \
         ({{per_sec}}, {{eta}} left) {{msg}}"
    )
}

impl std::ops::Deref for Stage {
    type Target = Progress;

    fn deref(&self) -> &Progress {
        &self.progress
    }
}

impl Drop for Stage {
    fn drop(&mut self) {
        self.progress.0.finish_and_clear();
        let mut current = current();
        if current.as_ref().is_some_and(|c| c.id == self.id) {
            *current = None;
        }
    }
}

/// A stage's counter, shared by the threads doing its work; [`Progress::none`] counts for
/// nobody.
#[derive(Clone)]
pub struct Progress(ProgressBar);

impl Progress {
    /// A counter shown nowhere, for work no stage follows.
    pub fn none() -> Progress {
        Progress(ProgressBar::hidden())
    }

    /// `n` more items done.
    pub fn inc(&self, n: u64) {
        self.0.inc(n);
    }

    /// The total, once it is known.
    pub(crate) fn set_total(&self, total: u64) {
        self.0.set_length(total);
    }

    /// A few words after the count.
    pub fn say(&self, message: String) {
        self.0.set_message(message);
    }
}

/// Runs `print` with the stage in hand's bar off the screen, so that lines written to a
/// terminal it shares are not drawn over.
pub fn suspend<R>(print: impl FnOnce() -> R) -> R {
    let bar = current().as_ref().map(|c| c.bar.clone());
    match bar {
        Some(bar) => bar.suspend(print),
        None => print(),
    }
}

/// After Ctrl-C: the stage in hand's bar taken off the screen, the files it leaves half-written
/// removed, and how far it got (e.g. `playing recordings: 37 of 100 recordings done in 12.3 s`);
/// `None` when no stage runs.
pub fn interrupted() -> Option<String> {
    let current = current().take()?;
    // Read before the bar is taken off: finishing it counts it complete.
    let (position, length, elapsed) = (
        current.bar.position(),
        current.bar.length(),
        current.bar.elapsed(),
    );
    current.bar.finish_and_clear();
    for path in &current.leaves {
        let _ = std::fs::remove_file(path).or_else(|_| std::fs::remove_dir_all(path));
    }
    let of = length
        .map(|total| format!(" of {}", HumanCount(total)))
        .unwrap_or_default();
    Some(format!(
        "{}: {}{of} {} done in {:.1} s",
        current.what,
        HumanCount(position),
        current.unit,
        elapsed.as_secs_f64()
    ))
}
