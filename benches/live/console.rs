//! gavel as a black box: `gavel watch --db URL` (or with `--read-from SUBSCRIBER`, or on
//! several databases, `--db a=URL --db b=URL`) on a pseudo-terminal of 160x48 (its
//! controlling terminal), from a fresh home, its output read on a thread into a vt100 screen
//! emulator. What counts
//! is the emulated screen, never the byte stream (ratatui writes only the cells that changed).
//!
//! The screen is read when the output pauses (no byte for 2 ms, or at the latest every 50 ms
//! of unbroken output), so a frame is not read half drawn; a marker then counts as seen at the
//! time of the last read before the pause (when its frame was flushed), and only numbers
//! already sent count. Terminal queries (cursor position, device attributes) are answered.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use super::markers::{Markers, Observer, now_ns};

pub const ROWS: u16 = 48;
pub const COLUMNS: u16 = 160;
/// With `1`, every console the bench starts runs at the lowest CPU priority (`SCHED_IDLE`,
/// nice 19), and so does the bench's thread reading its screen: the writers and the server keep
/// their rate on a machine the consoles would starve, and the consoles get what is left (their
/// own lag is then the machine's, not the feed's).
pub const IDLE: &str = "GAVEL_BENCH_IDLE_CONSOLES";

/// The header's sign that the feed is live.
pub const LIVE: &str = "● live";

/// The header's sign that the feeds of several databases, the contexts `names`, are all live:
/// `│ ● a ● b │`.
pub fn live_in(names: &[&str]) -> String {
    let each: Vec<String> = names.iter().map(|name| format!("● {name}")).collect();
    format!("│ {} │", each.join(" "))
}

/// What the reader thread last saw.
#[derive(Default)]
pub struct View {
    /// The screen's text at the last pause.
    pub text: String,
    /// When the screen first held something other than blanks.
    pub first_frame: Option<u64>,
    /// When the header first showed [`LIVE`] (or the sign that every context is live).
    pub live: Option<u64>,
}

/// A running `gavel watch` and the thread reading its screen; killed when dropped.
pub struct Console {
    child: Child,
    keys: Arc<File>,
    stop: Arc<AtomicBool>,
    reader: Option<JoinHandle<()>>,
    view: Arc<Mutex<View>>,
    /// When the process was spawned.
    pub spawned: u64,
    scratch: PathBuf,
}

impl Console {
    /// Starts `bin watch --db url` on a fresh pseudo-terminal; markers seen on its screen are
    /// recorded in `markers` as seen by `who`.
    pub fn spawn(bin: &str, url: &str, markers: Markers, who: Observer) -> Result<Console> {
        Console::spawn_configured(bin, url, markers, who, "")
    }

    /// The same with `config` as its configuration file (empty: none, the defaults).
    pub fn spawn_configured(
        bin: &str,
        url: &str,
        markers: Markers,
        who: Observer,
        config: &str,
    ) -> Result<Console> {
        Console::launch(bin, &["--db", url], markers, who, (config, LIVE))
    }

    /// `bin watch` on the databases `contexts` (name, URL): `--db URL` for one, as
    /// [`Console::spawn`]; `--db NAME=URL` each for several, one console over them all.
    pub fn spawn_on(
        bin: &str,
        contexts: &[(&str, &str)],
        markers: Markers,
        who: Observer,
    ) -> Result<Console> {
        if let [(_, url)] = contexts {
            return Console::spawn(bin, url, markers, who);
        }
        let named: Vec<String> = contexts
            .iter()
            .map(|(name, url)| format!("{name}={url}"))
            .collect();
        let databases: Vec<&str> = named.iter().flat_map(|db| ["--db", db]).collect();
        let names: Vec<&str> = contexts.iter().map(|(name, _)| *name).collect();
        Console::launch(bin, &databases, markers, who, ("", &live_in(&names)))
    }

    /// `bin watch --db primary --read-from subscriber`: reading the subscriber, writing the
    /// primary.
    pub fn spawn_reading(
        bin: &str,
        (primary, subscriber): (&str, &str),
        markers: Markers,
        who: Observer,
    ) -> Result<Console> {
        let databases = ["--db", primary, "--read-from", subscriber];
        Console::launch(bin, &databases, markers, who, ("", LIVE))
    }

    /// `bin watch` with `databases` (`--db URL`, and `--read-from URL`), `config` its
    /// configuration file (empty: none) and `live` the header's sign that it is live.
    fn launch(
        bin: &str,
        databases: &[&str],
        markers: Markers,
        who: Observer,
        (config, live): (&str, &str),
    ) -> Result<Console> {
        let (master, slave) = open_pty()?;
        let scratch = std::env::temp_dir().join(format!(
            "gavel-bench-live-{}-{}",
            std::process::id(),
            now_ns()
        ));
        std::fs::create_dir_all(scratch.join("gavel"))
            .with_context(|| format!("creating {}", scratch.display()))?;
        if !config.is_empty() {
            std::fs::write(scratch.join("gavel").join("config.toml"), config)
                .context("writing the console's configuration")?;
        }
        let mut command = Command::new(bin);
        command
            .arg("--log-dir")
            .arg(&scratch)
            .arg("watch")
            .args(databases)
            .env("TERM", "xterm-256color")
            // A fresh home: no configuration, data, state or cache of this machine's user.
            .env("XDG_CONFIG_HOME", &scratch)
            .env("XDG_DATA_HOME", scratch.join("data"))
            .env("XDG_STATE_HOME", scratch.join("state"))
            .env("XDG_CACHE_HOME", scratch.join("cache"))
            .env("HOME", &scratch)
            .env_remove("DATABASE_URL")
            .stdin(Stdio::from(slave.try_clone()?))
            .stdout(Stdio::from(slave.try_clone()?))
            .stderr(Stdio::from(slave));
        let idle = super::knob(IDLE, 0u8)? == 1;
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            command.pre_exec(move || {
                if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                let lowest = libc::sched_param { sched_priority: 0 };
                if idle
                    && (libc::sched_setscheduler(0, libc::SCHED_IDLE, &lowest) < 0
                        || libc::setpriority(libc::PRIO_PROCESS, 0, 19) < 0)
                {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let spawned = now_ns();
        let child = command
            .spawn()
            .with_context(|| format!("cannot start {bin}"))?;
        // The slave's copies went with `command`: reads end (EIO) when gavel exits.
        drop(command);
        let master = File::from(master);
        let keys = Arc::new(master.try_clone()?);
        let view = Arc::new(Mutex::new(View::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let reader = {
            let (view, stop, replies) = (view.clone(), stop.clone(), master.try_clone()?);
            let live = live.to_owned();
            std::thread::spawn(move || {
                // The screen reader of a console at the lowest priority is there too: parsing 30
                // consoles' frames would otherwise take the cores from the writers.
                if idle {
                    let lowest = libc::sched_param { sched_priority: 0 };
                    // SAFETY: sets this thread's policy; the parameter is valid for SCHED_IDLE.
                    unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &lowest) };
                }
                let looking = Looking {
                    view: &view,
                    live: &live,
                    markers: (&markers, who),
                };
                read_screen(master, replies, &looking, &stop);
            })
        };
        Ok(Console {
            child,
            keys,
            stop,
            reader: Some(reader),
            view,
            spawned,
            scratch,
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// What the screen showed at its last pause.
    pub fn view(&self) -> MutexGuard<'_, View> {
        self.view.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A handle to type into the console (from another task).
    pub fn keys(&self) -> Keys {
        Keys(self.keys.clone())
    }

    /// Waits until the screen satisfies `done`; fails with the screen when `limit` passes or
    /// gavel exits first.
    pub async fn wait_for(
        &mut self,
        what: &str,
        limit: Duration,
        done: impl Fn(&View) -> bool,
    ) -> Result<()> {
        let started = Instant::now();
        loop {
            if done(&self.view()) {
                return Ok(());
            }
            if let Some(status) = self.child.try_wait()? {
                bail!(
                    "gavel exited ({status}) before {what}; its screen:\n{}",
                    self.view().text
                );
            }
            if started.elapsed() > limit {
                bail!(
                    "gavel did not show {what} within {limit:?}; its screen:\n{}",
                    self.view().text
                );
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Waits for the console to go live (within `limit`), then opens debate `id` with `:id`.
    pub async fn open(&mut self, id: &str, limit: Duration) -> Result<()> {
        self.wait_for(LIVE, limit, |v| v.live.is_some()).await?;
        self.show(id).await
    }

    /// Opens debate `id` with `:id` and waits (10 s at most) until its rounds are on screen.
    pub async fn show(&mut self, id: &str) -> Result<()> {
        let title = format!("rounds · {id} ·");
        self.keys().send(&format!(":{id}\r"))?;
        self.wait_for(&title, Duration::from_secs(10), |v| v.text.contains(&title))
            .await
    }

    /// Quits with `q` (then `:q`), killing it if it is still there after 10 s.
    pub async fn quit(mut self) -> Result<()> {
        for keys in ["q", ":q\r"] {
            self.keys().send(keys)?;
            let started = Instant::now();
            while started.elapsed() < Duration::from_secs(5) {
                if self.child.try_wait()?.is_some() {
                    return Ok(());
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
        println!("live: gavel did not quit within 10 s of `q`; killed");
        Ok(())
    }
}

impl Drop for Console {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        self.stop.store(true, Ordering::Relaxed);
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
        let _ = std::fs::remove_dir_all(&self.scratch);
    }
}

/// Types into a console.
#[derive(Clone)]
pub struct Keys(Arc<File>);

impl Keys {
    pub fn send(&self, text: &str) -> Result<()> {
        (&*self.0)
            .write_all(text.as_bytes())
            .context("typing into gavel's terminal")
    }
}

/// A pseudo-terminal pair of [`ROWS`] x [`COLUMNS`], both ends closed on exec.
fn open_pty() -> Result<(OwnedFd, OwnedFd)> {
    let (mut master, mut slave): (RawFd, RawFd) = (-1, -1);
    // SAFETY: openpty writes two descriptors; the name, termios and size may be null.
    let opened = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    if opened != 0 {
        return Err(std::io::Error::last_os_error()).context("openpty");
    }
    // SAFETY: both descriptors were just opened and are owned here alone.
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    let size = libc::winsize {
        ws_row: ROWS,
        ws_col: COLUMNS,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: valid descriptors and a valid winsize.
    unsafe {
        for fd in [master.as_raw_fd(), slave.as_raw_fd()] {
            if libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) < 0 {
                return Err(std::io::Error::last_os_error()).context("FD_CLOEXEC");
            }
        }
        if libc::ioctl(master.as_raw_fd(), libc::TIOCSWINSZ, &size) < 0 {
            return Err(std::io::Error::last_os_error()).context("TIOCSWINSZ");
        }
    }
    Ok((master, slave))
}

/// Answers to the terminal queries gavel (crossterm) may send, collected while parsing.
#[derive(Default)]
struct Replies(Vec<u8>);

impl vt100::Callbacks for Replies {
    fn unhandled_csi(
        &mut self,
        screen: &mut vt100::Screen,
        i1: Option<u8>,
        _: Option<u8>,
        params: &[&[u16]],
        c: char,
    ) {
        let first = params.first().and_then(|p| p.first()).copied();
        match (i1, c, first) {
            // Cursor position report.
            (None, 'n', Some(6)) => {
                let (row, col) = screen.cursor_position();
                self.0
                    .extend(format!("\x1b[{};{}R", row + 1, col + 1).as_bytes());
            }
            // Primary device attributes (also how crossterm learns there is no keyboard
            // enhancement).
            (None, 'c', None | Some(0)) => self.0.extend(b"\x1b[?62;22c"),
            _ => {}
        }
    }
}

/// Where the reader thread files what it sees.
struct Looking<'a> {
    view: &'a Mutex<View>,
    /// The header's sign that the console is live.
    live: &'a str,
    markers: (&'a Markers, Observer),
}

fn read_screen(mut master: File, mut replies: File, looking: &Looking, stop: &AtomicBool) {
    let mut parser = vt100::Parser::new_with_callbacks(ROWS, COLUMNS, 0, Replies::default());
    let mut buffer = vec![0; 1 << 16];
    // Since when output has been arriving without a pause, and when it was last read.
    let mut unread: Option<u64> = None;
    let mut last_read = 0;
    while !stop.load(Ordering::Relaxed) {
        let mut poll = libc::pollfd {
            fd: master.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let wait = if unread.is_some() { 2 } else { 50 };
        // SAFETY: one valid pollfd.
        let ready = unsafe { libc::poll(&mut poll, 1, wait) };
        if ready > 0 {
            match master.read(&mut buffer) {
                // EIO: gavel exited and closed the terminal.
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    last_read = now_ns();
                    parser.process(&buffer[..n]);
                    let answers = std::mem::take(&mut parser.callbacks_mut().0);
                    if !answers.is_empty() && replies.write_all(&answers).is_err() {
                        break;
                    }
                    let since = *unread.get_or_insert(last_read);
                    if last_read - since < 50_000_000 {
                        continue;
                    }
                }
            }
        }
        if unread.take().is_some() {
            look(parser.screen(), last_read, looking);
        }
    }
}

/// Reads the screen as it stood at `at`: the first frame, the live sign, the newest marker.
fn look(screen: &vt100::Screen, at: u64, looking: &Looking) {
    let (markers, who) = looking.markers;
    let text = screen.contents();
    let sent = markers.sent();
    if let Some(k) = newest_marker(&text, sent) {
        markers.seen_upto(who, k, at);
    }
    let mut view = looking.view.lock().unwrap_or_else(|p| p.into_inner());
    if view.first_frame.is_none() && !text.trim().is_empty() {
        view.first_frame = Some(at);
    }
    if view.live.is_none() && text.contains(looking.live) {
        view.live = Some(at);
    }
    view.text = text;
}

/// The highest `mk` + 7 digits on the screen that is at most `sent`.
fn newest_marker(text: &str, sent: u64) -> Option<u64> {
    text.match_indices("mk")
        .filter_map(|(at, _)| {
            let digits = text.get(at + 2..at + 9)?;
            let after = text.as_bytes().get(at + 9);
            if !digits.bytes().all(|b| b.is_ascii_digit()) || after.is_some_and(u8::is_ascii_digit)
            {
                return None;
            }
            digits.parse().ok()
        })
        .filter(|&k| k <= sent)
        .max()
}
