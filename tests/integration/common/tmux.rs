//! A private tmux server for driving the real binary headless, at 160x48.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

/// A private tmux server and a scratch directory, both removed when the test ends however it
/// ends.
pub struct Tmux {
    socket: String,
    /// A scratch directory for the test's files.
    pub dir: PathBuf,
}

impl Tmux {
    pub fn new() -> Tmux {
        static COUNTER: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let socket = format!("gavel-smoke-{}-{n}", std::process::id());
        let dir = std::env::temp_dir().join(&socket);
        std::fs::create_dir_all(&dir).unwrap();
        Tmux { socket, dir }
    }

    /// Writes `text` to the file `name` in the scratch directory; returns its path.
    pub fn file(&self, name: &str, text: &str) -> PathBuf {
        let path = self.dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    /// Starts `command` in a new session, at home in the scratch directory (`XDG_DATA_HOME`,
    /// `XDG_CONFIG_HOME`, `XDG_STATE_HOME`), so that it neither reads the user's config nor
    /// writes the user's data or log.
    pub fn start(&self, command: &str) {
        let data = format!("XDG_DATA_HOME={}", self.dir.join("data").display());
        let config = format!("XDG_CONFIG_HOME={}", self.dir.join("config").display());
        let state = format!("XDG_STATE_HOME={}", self.dir.join("state").display());
        self.run(&[
            "new-session",
            "-e",
            &data,
            "-e",
            &config,
            "-e",
            &state,
            "-d",
            "-x",
            "160",
            "-y",
            "48",
            "-s",
            "smoke",
            command,
        ]);
    }

    pub fn run(&self, args: &[&str]) -> String {
        let output = Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .output()
            .expect("tmux is installed (scripts/test installs it)");
        assert!(
            output.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    pub fn screen(&self) -> String {
        self.run(&["capture-pane", "-p", "-t", "smoke"])
    }

    /// The screen with its colours, as escape sequences.
    pub fn coloured_screen(&self) -> String {
        self.run(&["capture-pane", "-p", "-e", "-t", "smoke"])
    }

    /// A pane variable such as `#{alternate_on}` or `#{cursor_flag}`.
    pub fn display(&self, format: &str) -> String {
        self.run(&["display-message", "-p", "-t", "smoke", format])
            .trim()
            .to_owned()
    }

    /// Types `line` as it is, then Enter.
    pub fn type_line(&self, line: &str) {
        self.run(&["send-keys", "-t", "smoke", "-l", line]);
        self.keys("Enter");
    }

    /// Resizes the session's window (and so its pane) to `width` x `height`.
    pub fn resize(&self, width: u16, height: u16) {
        let (width, height) = (width.to_string(), height.to_string());
        self.run(&["resize-window", "-t", "smoke", "-x", &width, "-y", &height]);
    }

    pub fn keys(&self, keys: &str) {
        self.run(&["send-keys", "-t", "smoke", keys]);
    }

    /// Waits until the screen satisfies `ready`, failing with the last screen after 30 s.
    pub fn wait_for(&self, what: &str, ready: impl Fn(&str) -> bool) -> String {
        self.wait_within(what, Duration::from_secs(30), ready).0
    }

    /// Waits until the screen satisfies `ready`, polling it, failing with the last screen once
    /// `limit` has passed: the screen, and how long it took to show.
    pub fn wait_within(
        &self,
        what: &str,
        limit: Duration,
        ready: impl Fn(&str) -> bool,
    ) -> (String, Duration) {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if ready(&screen) {
                return (screen, start.elapsed());
            }
            assert!(
                start.elapsed() < limit,
                "timed out after {limit:?} waiting for {what}; screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The process the session runs (the first of its pane).
    pub fn pid(&self) -> u32 {
        let pid = self.display("#{pane_pid}");
        pid.parse()
            .unwrap_or_else(|_| panic!("no pane pid: {pid:?}"))
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
