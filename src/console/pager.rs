//! The operator's pager for text handed out whole (a round's turns, a trace): `$PAGER` run by
//! `sh -c` (as git runs it), `less` when unset, the text on its standard input. The text is
//! plain and already inert (see `crate::text::inert_lines`), so no pager option that passes
//! escapes through (`less -R`) is needed. The caller leaves the console's terminal modes first
//! and takes them back after.

use std::process::Stdio;

use tokio::io::AsyncWriteExt;
use tokio::process::Command;

use crate::console::terminal::{self, OsSignals, Request};

/// The pager when `$PAGER` is unset or blank.
pub const DEFAULT: &str = "less";

/// The pager to run: `$PAGER`, else [`DEFAULT`].
pub fn command() -> String {
    std::env::var("PAGER")
        .ok()
        .filter(|p| !p.trim().is_empty())
        .unwrap_or_else(|| DEFAULT.to_owned())
}

/// Why the pager did not show the text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// `sh -c PAGER` could not be started; `cause` is the system's word for it.
    #[error("cannot start {pager}: {cause}")]
    Start { pager: String, cause: String },
    /// The pager ended with a failure status.
    #[error("{pager} ended with {status}")]
    Failed { pager: String, status: String },
    /// Waiting for the pager failed.
    #[error("waiting for {pager} failed: {cause}")]
    Wait { pager: String, cause: String },
}

/// Shows `title`, a blank line and `text` in the pager and waits for it to end: `Ok(Ok(()))`
/// when it exited successfully, `Ok(Err(why))` when it could not run or failed. Meanwhile
/// Ctrl-C belongs to the pager (SIGINT is ignored), Ctrl-Z stops gavel with it, and any other
/// ending signal ends the pager and is returned as `Err(number)`.
pub async fn show(
    title: &str,
    text: &str,
    signals: &mut OsSignals,
) -> Result<Result<(), Error>, i32> {
    let pager = command();
    let mut child = match Command::new("sh")
        .arg("-c")
        .arg(&pager)
        .stdin(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
    {
        Ok(child) => child,
        Err(e) => {
            let cause = e.to_string();
            return Ok(Err(Error::Start { pager, cause }));
        }
    };
    let body = format!("{title}\n\n{text}");
    let writer = child.stdin.take().map(|mut stdin| {
        tokio::spawn(async move {
            // A pager quit before reading everything closes the pipe: nothing to report.
            let _ = stdin.write_all(body.as_bytes()).await;
        })
    });
    let status = loop {
        tokio::select! {
            status = child.wait() => break status,
            request = signals.next() => match request {
                // The pager is told of a resize itself; the console measures on its return.
                Request::End(libc::SIGINT) | Request::Resize => {}
                Request::End(number) => {
                    let _ = child.start_kill();
                    return Err(number);
                }
                Request::Suspend => {
                    if let Err(e) = terminal::stop() {
                        tracing::warn!("cannot stop with the pager: {e}");
                    }
                }
            },
        }
    };
    if let Some(writer) = writer {
        writer.abort();
    }
    Ok(match status {
        Ok(status) if status.success() => Ok(()),
        Ok(status) => Err(Error::Failed {
            pager,
            status: status.to_string(),
        }),
        Err(e) => Err(Error::Wait {
            pager,
            cause: e.to_string(),
        }),
    })
}
