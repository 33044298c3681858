//! The terminal's modes and the process signals that concern them: the console's modes (raw
//! input, the alternate screen, a hidden cursor, mouse capture) entered and always left again,
//! whether the console quits, fails, panics (on any thread) or is signalled; a suspend (Ctrl-Z,
//! SIGTSTP) that hands the shell a restored terminal and takes the modes back on `fg`; the
//! signals that end the console; the check that there is a terminal at all; and the wait for
//! input that notices a terminal that hung up.

use std::io::{self, IsTerminal};
use std::task::Poll;

use crossterm::event::{
    DisableMouseCapture, EnableMouseCapture, KeyCode, KeyEvent, KeyEventKind, KeyModifiers,
};
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use crossterm::{cursor, execute};
use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGTSTP, SIGWINCH};
use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

/// A standard stream the console needs to be a terminal is not one.
#[derive(Debug, thiserror::Error)]
#[error(
    "the console needs a terminal and {stream} is not one \
     (in scripts use simulate, trace, export or calibrate)"
)]
pub struct NotATerminal {
    /// `standard input` or `standard output`.
    pub stream: &'static str,
}

/// Fails, in one line, unless standard input and standard output are both terminals.
pub fn require() -> Result<(), NotATerminal> {
    let streams = [
        ("standard input", io::stdin().is_terminal()),
        ("standard output", io::stdout().is_terminal()),
    ];
    for (stream, is_terminal) in streams {
        if !is_terminal {
            return Err(NotATerminal { stream });
        }
    }
    Ok(())
}

/// Enters the console's modes: raw input, the alternate screen, the cursor hidden, and mouse
/// capture when `mouse` is on.
pub fn enter(mouse: bool) -> io::Result<()> {
    enable_raw_mode()?;
    execute!(io::stdout(), EnterAlternateScreen, cursor::Hide)?;
    if mouse {
        execute!(io::stdout(), EnableMouseCapture)?;
    }
    Ok(())
}

/// Leaves every mode [`enter`] may have entered: mouse capture off, the cursor shown, the main
/// screen back, raw input off. Each step is taken even when an earlier one fails; the first
/// failure is returned.
pub fn leave() -> io::Result<()> {
    let steps = [
        execute!(io::stdout(), DisableMouseCapture, cursor::Show),
        execute!(io::stdout(), LeaveAlternateScreen),
        disable_raw_mode(),
    ];
    steps.into_iter().collect()
}

/// Makes a panic on any thread leave the terminal's modes before the panic is reported, and
/// tells the console (see [`Panicked`]) so that it ends rather than run on in a restored
/// terminal.
pub(crate) fn leave_on_panic() -> Panicked {
    on_panic(|| {
        let _ = leave();
    })
}

/// Makes a panic on any thread run `first`, then the panic hook there was, then tell the
/// [`Panicked`] returned.
pub fn on_panic(first: impl Fn() + Send + Sync + 'static) -> Panicked {
    let (tell, told) = watch::channel(false);
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        first();
        report(info);
        tell.send_replace(true);
    }));
    Panicked(told)
}

/// Told of a panic on any thread, once [`on_panic`] is in place.
pub struct Panicked(watch::Receiver<bool>);

impl Panicked {
    /// Returns once a panic happened (at once if one already did). Cancel-safe.
    pub async fn wait(&mut self) {
        if self.0.wait_for(|panicked| *panicked).await.is_err() {
            // The hook (which holds the sender) is gone: no panic will be told.
            std::future::pending::<()>().await;
        }
    }
}

/// Stops the process as a shell's Ctrl-Z would, with the terminal restored first; returns when
/// it is continued (`fg`, SIGCONT) with the console's modes back. The caller redraws the whole
/// screen: the alternate screen comes back empty.
///
/// The stop is SIGTSTP's own default action (as vim does it), so the kernel's rule for an
/// orphaned process group applies: with no shell with job control to continue it (`ssh -t host
/// gavel watch`, `tmux new 'gavel demo'`) the stop is discarded and the console carries on.
pub fn suspend(mouse: bool) -> io::Result<()> {
    leave()?;
    stop()?;
    enter(mouse)
}

/// Raises SIGTSTP with its default action in place, then puts the console's handler back: the
/// process stops until continued.
pub fn stop() -> io::Result<()> {
    let check = |result: libc::c_int| {
        if result == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    };
    // SAFETY: `sigaction` is given valid, zero-initialised structures (the documented way to
    // fill one) and `raise` a valid signal; the handler taken out is put back unchanged.
    unsafe {
        let mut default: libc::sigaction = std::mem::zeroed();
        default.sa_sigaction = libc::SIG_DFL;
        let mut handler: libc::sigaction = std::mem::zeroed();
        check(libc::sigaction(SIGTSTP, &default, &mut handler))?;
        let raised = check(libc::raise(SIGTSTP));
        let restored = check(libc::sigaction(SIGTSTP, &handler, std::ptr::null_mut()));
        raised.and(restored)
    }
}

/// The OSC 52 sequence that puts `text` on the terminal's clipboard (the `c` selection): ESC ]
/// 52 ; c ; base64 BEL. Inside tmux it reaches the outer terminal (and a tmux paste buffer) when
/// tmux's `set-clipboard` is `on`.
pub fn clipboard(text: &str) -> String {
    use base64::Engine;
    let encoded = base64::engine::general_purpose::STANDARD.encode(text);
    format!("\x1b]52;c;{encoded}\x07")
}

/// Ctrl-Z pressed, which suspends the console (raw input delivers it as a key, not as
/// SIGTSTP).
pub(crate) fn is_suspend_key(key: &KeyEvent) -> bool {
    key.kind == KeyEventKind::Press
        && key.modifiers.contains(KeyModifiers::CONTROL)
        && key.code == KeyCode::Char('z')
}

/// What a signal asks of the console.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request {
    /// SIGTSTP: suspend.
    Suspend,
    /// SIGWINCH: the terminal changed size (said at once: crossterm's resize event waits for
    /// the next key).
    Resize,
    /// SIGTERM, SIGHUP, SIGINT or SIGQUIT (its number): restore the terminal and end.
    End(i32),
}

/// What waiting on the terminal's input found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Input {
    /// There is input to read.
    Ready,
    /// Nothing came in time.
    Idle,
    /// The terminal hung up (its window closed, its tmux server or ssh connection went away).
    HungUp,
}

/// Waits up to `timeout` for input on standard input, the console's terminal (see
/// [`require`]). crossterm's reader must not be called on a terminal that hung up: it then reads
/// nothing in a loop that never returns, spinning a core, so the key reader asks here first.
pub(crate) fn wait_for_input(timeout: std::time::Duration) -> Input {
    let mut fd = libc::pollfd {
        fd: libc::STDIN_FILENO,
        events: libc::POLLIN,
        revents: 0,
    };
    let millis = libc::c_int::try_from(timeout.as_millis()).unwrap_or(libc::c_int::MAX);
    // SAFETY: one valid pollfd, for the duration of the call.
    match unsafe { libc::poll(&mut fd, 1, millis) } {
        0 => Input::Idle,
        n if n < 0 => match io::Error::last_os_error().kind() {
            io::ErrorKind::Interrupted => Input::Idle,
            _ => Input::HungUp,
        },
        _ if fd.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0 => Input::HungUp,
        _ => Input::Ready,
    }
}

/// The signals the console answers, caught from [`OsSignals::listen`] on. A task of their own
/// waits on them and hands over what each asks for, so that the draw loop, which looks for a
/// signal several times a frame, looks at one queue rather than six.
pub struct OsSignals {
    asked: mpsc::Receiver<Request>,
    waiting: JoinHandle<()>,
}

impl OsSignals {
    /// Signals caught but not yet taken, at most (a signal caught again meanwhile is one).
    const QUEUED: usize = 8;

    /// Starts catching SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGTSTP and SIGWINCH. Must be called
    /// inside a tokio runtime.
    pub fn listen() -> io::Result<OsSignals> {
        let mut caught: Vec<(i32, Signal)> = [SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGTSTP, SIGWINCH]
            .into_iter()
            .map(|number| Ok((number, signal(SignalKind::from_raw(number))?)))
            .collect::<io::Result<_>>()?;
        let (hand, asked) = mpsc::channel(OsSignals::QUEUED);
        let waiting = tokio::spawn(async move {
            loop {
                let request = std::future::poll_fn(|cx| {
                    for (number, caught) in &mut caught {
                        if let Poll::Ready(Some(())) = caught.poll_recv(cx) {
                            return Poll::Ready(match *number {
                                SIGTSTP => Request::Suspend,
                                SIGWINCH => Request::Resize,
                                number => Request::End(number),
                            });
                        }
                    }
                    Poll::Pending
                })
                .await;
                if hand.send(request).await.is_err() {
                    return;
                }
            }
        });
        Ok(OsSignals { asked, waiting })
    }

    /// What the next signal caught asks for. Cancel-safe: a signal is taken only when returned.
    pub async fn next(&mut self) -> Request {
        match self.asked.recv().await {
            Some(request) => request,
            // The runtime is shutting down: no signal comes any more.
            None => std::future::pending().await,
        }
    }
}

impl Drop for OsSignals {
    fn drop(&mut self) {
        self.waiting.abort();
    }
}
