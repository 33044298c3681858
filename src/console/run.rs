//! The console's run: the terminal in the console's modes for its lifetime (see
//! [`crate::console::terminal`]: restored on quit, error, panic and signal, suspended by Ctrl-Z); keys
//! read on their own thread; the active theme file watched for edits; the reports worker
//! ([`crate::console::reports`]), handed the rows landed once a frame, its figures coming back
//! as events; the draw loop; on quitting, leave taken of the other consoles.
//!
//! The loop never awaits I/O: it waits for the next event (or signal), drains every event
//! already queued, applies them all, and draws once, at most 60 times a second on average (see
//! [`crate::pace::Pace`]), and only when something on screen may have changed (rows for debates off screen
//! draw nothing). A signal comes before any event and is looked for again before each draw, so
//! that nothing is drawn to a terminal that hung up; a draw that fails because it did ends the
//! console as the hangup.

use std::io::{self, BufWriter, Stdout, Write};
use std::mem::ManuallyDrop;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crossterm::event::{self, Event as TermEvent};
use futures_util::FutureExt;
use ratatui::layout::Rect;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

use crate::config::{self, Config, Notify, theme};
use crate::console::app::{Command, Event, Model, update};
use crate::console::pager;
use crate::console::reports::ReportsWorker;
use crate::console::screen;
use crate::console::terminal::{self, Input, OsSignals, Panicked, Request};
use crate::console::ui::{self, view};
use crate::pace::{FRAME, Pace};

/// How often the clock ticks: gated countdowns show whole seconds.
const TICK: Duration = Duration::from_secs(1);

/// A frame's output is written in as few system calls as this allows (stdout alone writes
/// every 1 KiB).
const OUTPUT_BUFFER: usize = 1 << 18;

/// How long a failed draw waits for the hangup that may have caused it.
const HANGUP_GRACE: Duration = Duration::from_secs(1);

/// How long a console that quits waits, at most, for its backend to take leave of the other
/// consoles (its presence row deleted), after the terminal is restored.
const GOODBYE: Duration = Duration::from_secs(2);

/// The terminal the console draws on.
type Screen = screen::Screen<BufWriter<Stdout>>;

/// Why the console could not run, or stopped.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// There is no terminal to run on.
    #[error("{0}")]
    NotATerminal(terminal::NotATerminal),
    /// The theme file cannot be watched for edits.
    #[error("{0}")]
    Theme(config::Error),
    /// The terminal failed: its modes, a draw, the signals that concern it.
    #[error("{0}")]
    Terminal(io::Error),
}

impl From<io::Error> for Error {
    fn from(cause: io::Error) -> Error {
        Error::Terminal(cause)
    }
}

/// The console's results.
pub(super) type Result<T, E = Error> = std::result::Result<T, E>;

/// How the console ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// The operator quit, or the events ended.
    Quit,
    /// A signal ended it (SIGTERM, SIGHUP, SIGINT or SIGQUIT: its number).
    Signal(i32),
    /// A thread panicked (the panic was reported as it happened).
    Panicked,
}

impl Ended {
    /// The process's exit status: success, 128 + the signal's number (as a shell reports a
    /// process that a signal ended), or 101 after a panic (as Rust reports one).
    pub fn exit_code(self) -> ExitCode {
        match self {
            Ended::Quit => ExitCode::SUCCESS,
            Ended::Signal(number) => ExitCode::from(u8::try_from(128 + number).unwrap_or(u8::MAX)),
            Ended::Panicked => ExitCode::from(101),
        }
    }
}

/// Runs the console until the operator quits, the events end or a signal ends it; edits to
/// `theme_file` apply live; the reports are computed as `config` says. Fails at once, in one
/// line, without a terminal.
pub async fn run(
    model: Model,
    config: &Config,
    theme_file: Option<&Path>,
    events: (UnboundedSender<Event>, UnboundedReceiver<Event>),
    commands: UnboundedSender<Command>,
) -> Result<Ended> {
    terminal::require().map_err(Error::NotATerminal)?;
    let (sender, receiver) = events;
    let _watcher = match theme_file {
        Some(path) => {
            let sender = sender.clone();
            let watcher = theme::watch(path, move |theme| {
                let _ = sender.send(Event::Theme(theme.map(Box::new)));
            });
            Some(watcher.map_err(Error::Theme)?)
        }
        None => None,
    };
    // Caught before the terminal changes, so that none can leave it changed.
    let signals = OsSignals::listen()?;
    let panicked = terminal::leave_on_panic();
    let stop = Arc::new(AtomicBool::new(false));
    let entered = terminal::enter(model.settings.mouse);
    let reports = ReportsWorker::of(config);
    reports.wake(sender.clone());
    let reading = Arc::new(Reading::default());
    let reader = spawn_key_reader(sender, stop.clone(), reading.clone());
    let leaving = commands.clone();
    let result = match entered {
        Ok(()) => {
            let parts = Parts {
                receiver,
                commands,
                signals,
                panicked,
                reading,
                reports,
            };
            draw_loop(model, parts).await
        }
        Err(e) => Err(e.into()),
    };
    stop.store(true, Ordering::Relaxed);
    let left = terminal::leave();
    // The key reader is waited for only after a quit: on a terminal that hung up, crossterm's
    // read never returns, and the process is ending anyway.
    match result? {
        // After SIGHUP the terminal may be gone: restoring it could not have worked.
        Ended::Signal(number) => Ok(Ended::Signal(number)),
        // The panic hook restored it and said so.
        Ended::Panicked => Ok(Ended::Panicked),
        Ended::Quit => {
            let _ = reader.join();
            // The backend ends once it took leave; a backend already gone has nothing to take.
            if leaving.send(Command::Leave).is_ok() {
                let _ = tokio::time::timeout(GOODBYE, leaving.closed()).await;
            }
            left.map(|()| Ended::Quit).map_err(Into::into)
        }
    }
}

/// What the draw loop works with besides the model.
struct Parts {
    receiver: UnboundedReceiver<Event>,
    commands: UnboundedSender<Command>,
    signals: OsSignals,
    panicked: Panicked,
    reading: Arc<Reading>,
    reports: ReportsWorker,
}

/// Applies events and draws until the console ends. [`Command::Copy`] and [`Command::Page`]
/// are the terminal's business: the loop carries them out itself; every other command goes to
/// the backend.
async fn draw_loop(mut model: Model, mut parts: Parts) -> Result<Ended> {
    // Never dropped: the console leaves its modes itself ([`terminal::leave`]), and every
    // frame is written out whole, so that nothing is left to write, perhaps to a terminal that
    // hung up.
    let (width, height) = crossterm::terminal::size()?;
    let out = BufWriter::with_capacity(OUTPUT_BUFFER, io::stdout());
    let mut terminal = ManuallyDrop::new(Screen::of(out, Rect::new(0, 0, width, height))?);
    model.screen.size = (width, height);
    model.prepare_frame();
    model.take_dirty();
    draw(&mut terminal, &mut model)?;
    parts.reports.sync(&mut model);
    let mut console = Console {
        model,
        terminal,
        parts,
    };
    console.run().await
}

/// The draw loop's state: the model, the terminal it is drawn on, and the rest.
struct Console {
    model: Model,
    terminal: ManuallyDrop<Screen>,
    parts: Parts,
}

/// What a frame's worth of events asks of the terminal besides a draw.
#[derive(Default)]
struct Asked {
    /// Ctrl-Z, or SIGTSTP.
    suspending: bool,
    /// A text to show in the pager, with its title.
    paging: Option<(String, String)>,
}

impl Console {
    async fn run(&mut self) -> Result<Ended> {
        let mut ticks = tokio::time::interval(TICK);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        // Frames at one per [`FRAME`] on average, with one frame of slack: a frame may follow the
        // one before at once when that one came at least a frame after its own predecessor (a
        // countdown's tick, then a row, both drawn as they come).
        let mut pace = Pace::new(FRAME, Instant::now());
        loop {
            let history = self.model.history_due();
            let event = tokio::select! {
                biased;
                request = self.parts.signals.next() => match request {
                    Request::End(number) => return Ok(Ended::Signal(number)),
                    Request::Suspend => {
                        suspend(&mut self.terminal, &mut self.model)?;
                        continue;
                    }
                    Request::Resize => match resized(&mut self.terminal) {
                        Some(event) => event,
                        None => continue,
                    },
                },
                () = self.parts.panicked.wait() => return Ok(Ended::Panicked),
                _ = ticks.tick() => Event::Tick(chrono::Utc::now()),
                () = until(history.unwrap_or_default()), if history.is_some() => {
                    Event::Tick(chrono::Utc::now())
                }
                event = self.parts.receiver.recv() => match event {
                    Some(event) => event,
                    None => return Ok(Ended::Quit),
                },
            };
            let asked = match self.gather(event, pace.next()).await {
                Ok(asked) => asked,
                Err(ended) => return Ok(ended),
            };
            if self.model.quit {
                return Ok(Ended::Quit);
            }
            if let Some(text) = self.model.announcement() {
                notify(&mut self.terminal, self.model.settings.notify, &text);
            }
            if let Some((title, text)) = asked.paging
                && let Some(ended) = self.page(&title, &text).await?
            {
                return Ok(ended);
            }
            self.model.prepare_frame();
            if self.model.take_dirty() || asked.suspending {
                let drawn = if asked.suspending {
                    suspend(&mut self.terminal, &mut self.model)
                } else {
                    draw(&mut self.terminal, &mut self.model).map_err(Into::into)
                };
                if let Err(e) = drawn {
                    return hung_up(&mut self.parts.signals).await.ok_or(e);
                }
                pace.went(Instant::now());
            }
            // After the frame: the worker's wake does not hold up a row on its way to the screen.
            self.parts.reports.sync(&mut self.model);
        }
    }

    /// Applies `first` and every event that lands until the next frame is due at `due` (or one
    /// asks for the terminal); a signal or a panic meanwhile ends the console.
    async fn gather(&mut self, first: Event, due: Instant) -> Result<Asked, Ended> {
        let mut pending = vec![first];
        let mut asked = Asked::default();
        loop {
            match self.parts.signals.next().now_or_never() {
                Some(Request::End(number)) => return Err(Ended::Signal(number)),
                Some(Request::Suspend) => asked.suspending = true,
                Some(Request::Resize) => pending.extend(resized(&mut self.terminal)),
                None => {}
            }
            if self.parts.panicked.wait().now_or_never().is_some() {
                return Err(Ended::Panicked);
            }
            while let Ok(event) = self.parts.receiver.try_recv() {
                pending.push(event);
            }
            for event in pending.drain(..) {
                self.handle_event(event, &mut asked);
            }
            let wait = due.saturating_duration_since(Instant::now());
            if wait.is_zero() || self.model.quit || asked.suspending || asked.paging.is_some() {
                return Ok(asked);
            }
            tokio::time::sleep(wait).await;
        }
    }

    /// Applies one event, carrying out the commands that are the terminal's business.
    fn handle_event(&mut self, event: Event, asked: &mut Asked) {
        if let Event::Key(key) = &event
            && terminal::is_suspend_key(key)
        {
            asked.suspending = true;
            return;
        }
        for command in update(&mut self.model, event) {
            match command {
                Command::Copy(text) => copy(&mut self.terminal, &text),
                Command::Page { title, text } => asked.paging = Some((title, text)),
                // The backend outlives the console; a closed channel means it is gone.
                command => {
                    let _ = self.parts.commands.send(command);
                }
            }
        }
        self.parts.reports.relieve(&mut self.model);
    }

    /// Shows `text` in the operator's pager, the console's modes left meanwhile; a signal
    /// that ends the pager ends the console.
    async fn page(&mut self, title: &str, text: &str) -> Result<Option<Ended>> {
        self.parts.reading.pause().await;
        terminal::leave()?;
        let shown = pager::show(title, text, &mut self.parts.signals).await;
        terminal::enter(self.model.settings.mouse)?;
        self.parts.reading.resume();
        measure(&self.terminal, &mut self.model)?;
        self.terminal.clear()?;
        match shown {
            Ok(outcome) => {
                for command in update(&mut self.model, Event::Paged(outcome)) {
                    let _ = self.parts.commands.send(command);
                }
                Ok(None)
            }
            Err(number) => Ok(Some(Ended::Signal(number))),
        }
    }
}

/// Sleeps until the wall time `wall` (not at all once it has passed).
async fn until(wall: chrono::DateTime<chrono::Utc>) {
    let left = (wall - chrono::Utc::now()).to_std().unwrap_or_default();
    tokio::time::sleep(left).await;
}

/// Announces `text` as `how` says: the bell, or a desktop notification by OSC 9 or OSC 777
/// (inside tmux, only with `allow-passthrough` on). A terminal that cannot take it is not
/// worth ending the console for: a failure is logged.
fn notify(terminal: &mut Screen, how: Notify, text: &str) {
    let text = crate::text::one_line(text);
    let sequence = match how {
        Notify::Off => return,
        Notify::Bell => "\x07".to_owned(),
        Notify::Osc9 => format!("\x1b]9;{text}\x07"),
        Notify::Osc777 => format!("\x1b]777;notify;gavel;{text}\x07"),
    };
    let backend = terminal.out();
    if let Err(e) = backend
        .write_all(sequence.as_bytes())
        .and_then(|()| backend.flush())
    {
        tracing::warn!("announcing a waiting decision failed: {e}");
    }
}

/// After a failed draw: the signal that ended the console, if one comes soon (a terminal that
/// hung up fails the draw, and its SIGHUP may still be on its way).
async fn hung_up(signals: &mut OsSignals) -> Option<Ended> {
    let deadline = tokio::time::Instant::now() + HANGUP_GRACE;
    loop {
        match tokio::time::timeout_at(deadline, signals.next()).await {
            Ok(Request::End(number)) => return Some(Ended::Signal(number)),
            Ok(Request::Suspend | Request::Resize) => continue,
            Err(_) => return None,
        }
    }
}

/// Draws a frame of `model` at the size the terminal last said it was (a resize event), first
/// recording its layout in the model for `update` to read.
fn draw(terminal: &mut Screen, model: &mut Model) -> io::Result<()> {
    let (width, height) = model.screen.size;
    model.record_frame(ui::geometry(model));
    terminal.draw(Rect::new(0, 0, width, height), |frame, kept| {
        view(model, frame, kept)
    })
}

/// Suspends the console (see [`terminal::suspend`]) and, once it is continued, redraws the
/// whole screen.
fn suspend(terminal: &mut Screen, model: &mut Model) -> Result<()> {
    tracing::info!("suspended");
    terminal::suspend(model.settings.mouse)?;
    tracing::info!("resumed");
    measure(terminal, model)?;
    terminal.clear()?;
    draw(terminal, model)?;
    Ok(())
}

/// Tells `model` the terminal's size as it is now: it may have changed while the console was
/// away from it (suspended, or the pager's).
fn measure(terminal: &Screen, model: &mut Model) -> io::Result<()> {
    let size = terminal.size()?;
    model.screen.size = (size.width, size.height);
    Ok(())
}

/// After the terminal said it was resized: the next frame is written whole (the terminal may
/// have cut what it showed, even if its size came back), and the new size, as the event a
/// resize is to the model, unless it cannot be read.
fn resized(terminal: &mut Screen) -> Option<Event> {
    terminal.invalidate();
    match terminal.size() {
        Ok(size) => Some(Event::Resize(size.width, size.height)),
        Err(e) => {
            tracing::warn!("the terminal's size cannot be read: {e}");
            None
        }
    }
}

/// Puts `text` on the clipboard with OSC 52 (see [`terminal::clipboard`]).
fn copy(terminal: &mut Screen, text: &str) {
    let out = terminal.out();
    let written = out
        .write_all(terminal::clipboard(text).as_bytes())
        .and_then(|()| out.flush());
    if let Err(e) = written {
        tracing::warn!("copying to the clipboard failed: {e}");
    }
}

/// Whether the key reader may read the terminal: not while a pager has it.
#[derive(Default)]
struct Reading {
    paused: Mutex<bool>,
    changed: Condvar,
    /// The reader is waiting, not reading.
    idle: AtomicBool,
}

/// How long [`Reading::pause`] waits for a read under way to end (a read polls for 100 ms).
const READ_GRACE: Duration = Duration::from_millis(500);

impl Reading {
    /// Stops the reader and waits until it is not reading, yielding to the runtime's other
    /// tasks (the feed, the action writer) meanwhile.
    async fn pause(&self) {
        *self.paused.lock().unwrap_or_else(|e| e.into_inner()) = true;
        let start = Instant::now();
        while !self.idle.load(Ordering::Acquire) && start.elapsed() < READ_GRACE {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }

    fn resume(&self) {
        *self.paused.lock().unwrap_or_else(|e| e.into_inner()) = false;
        self.changed.notify_all();
    }

    /// Waits while paused (or until `stop`).
    fn wait(&self, stop: &AtomicBool) {
        let mut paused = self.paused.lock().unwrap_or_else(|e| e.into_inner());
        while *paused && !stop.load(Ordering::Relaxed) {
            self.idle.store(true, Ordering::Release);
            paused = self
                .changed
                .wait_timeout(paused, Duration::from_millis(100))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        self.idle.store(false, Ordering::Release);
    }
}

/// Reads terminal input (keys, mouse, resizes) on a thread of its own and forwards it as events;
/// it holds off while `reading` is paused.
fn spawn_key_reader(
    events: UnboundedSender<Event>,
    stop: Arc<AtomicBool>,
    reading: Arc<Reading>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            reading.wait(&stop);
            match terminal::wait_for_input(Duration::from_millis(100)) {
                Input::Idle => continue,
                Input::Ready => {}
                Input::HungUp => {
                    // As the kernel says it to a terminal's foreground job; a job started from a
                    // script (`gavel demo; echo done`) is not told, so it is said here.
                    tracing::info!("the terminal hung up");
                    let _ = signal_hook::low_level::raise(signal_hook::consts::SIGHUP);
                    return;
                }
            }
            // Everything crossterm has ready, while the terminal is still there.
            loop {
                match event::poll(Duration::ZERO) {
                    Ok(true) => {}
                    Ok(false) => break,
                    Err(e) => {
                        tracing::error!("reading the terminal failed: {e}");
                        return;
                    }
                }
                let forwarded = match event::read() {
                    Ok(TermEvent::Key(key)) => events.send(Event::Key(key)),
                    Ok(TermEvent::Resize(width, height)) => {
                        events.send(Event::Resize(width, height))
                    }
                    Ok(TermEvent::Mouse(mouse)) => events.send(Event::Mouse(mouse)),
                    Ok(_) => Ok(()),
                    Err(e) => {
                        tracing::error!("reading the terminal failed: {e}");
                        return;
                    }
                };
                if forwarded.is_err() {
                    return;
                }
                if terminal::wait_for_input(Duration::ZERO) == Input::HungUp {
                    break;
                }
            }
        }
    })
}
