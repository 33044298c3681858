//! The one notification pump: a connection that LISTENs on a channel, its messages driven
//! through `poll_message` on a task of its own (so no notification is dropped by the driver,
//! and nobody awaits the connection), each notification handed to whoever listens. The
//! console's feed and the simulator's orchestrator listen on `gavel_events` through
//! [`Notifications`], every payload kept; presence listens on `gavel_presence` through
//! [`Pump`] itself, into a bounded queue of its own.

use std::future::poll_fn;

use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};
use tokio::task::JoinHandle;
use tokio_postgres::{AsyncMessage, Client, Notification};

use super::connect::Target;
use super::error::{Doing, Result};

/// The task driving a listening connection; dropping it ends the connection.
pub struct Pump(JoinHandle<()>);

impl Pump {
    /// Connects to `target`, hands every notification to `hand` until it returns `false` or the
    /// connection ends, and LISTENs on `channel` (an identifier of gavel's own). The client is
    /// for queries on the same connection.
    pub async fn listen(
        target: &Target,
        channel: &str,
        mut hand: impl FnMut(Notification) -> bool + Send + 'static,
    ) -> Result<(Client, Pump)> {
        let (client, mut connection) = target.connect().await?;
        let pump = Pump(tokio::spawn(async move {
            loop {
                match poll_fn(|cx| connection.poll_message(cx)).await {
                    Some(Ok(AsyncMessage::Notification(n))) => {
                        if !hand(n) {
                            return;
                        }
                    }
                    Some(Ok(_)) => {}
                    Some(Err(e)) => {
                        tracing::warn!("database connection failed: {e}");
                        return;
                    }
                    None => return,
                }
            }
        }));
        client
            .batch_execute(&format!("LISTEN {channel}"))
            .await
            .doing(format_args!("LISTEN {channel}"))?;
        Ok((client, pump))
    }
}

impl Drop for Pump {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A connection listening on `gavel_events`: its client, for queries, and the payloads of its
/// notifications, in the order they arrived. The channel closes when the connection ends;
/// dropping this ends the connection.
pub struct Notifications {
    pub client: Client,
    pub payloads: UnboundedReceiver<String>,
    _pump: Pump,
}

/// A drop of its own keeps it whole: a task that reads only `payloads` (closures capture the
/// fields they use apart) still owns the pump, and so the connection.
impl Drop for Notifications {
    fn drop(&mut self) {}
}

impl Notifications {
    /// Connects to `target` and LISTENs on `gavel_events`.
    pub async fn open(target: &Target) -> Result<Notifications> {
        let (sender, payloads) = unbounded_channel();
        let (client, pump) = Pump::listen(target, "gavel_events", move |n| {
            sender.send(n.payload().to_owned()).is_ok()
        })
        .await?;
        Ok(Notifications {
            client,
            payloads,
            _pump: pump,
        })
    }
}
