//! The one notification pump: a connection that LISTENs on its channels, its messages driven
//! through `poll_message` on a task of its own (so no notification is dropped by the driver,
//! and nobody awaits the connection), each notification handed to whoever listens. The
//! console's feed and the simulator's orchestrator listen on `gavel_events` through
//! [`Notifications`], every payload kept; the console's feed also hears presence on
//! `gavel_presence` and new settings versions on `gavel_settings` ([`Beside`]), each into a
//! bounded queue of its own. A console listens on
//! one connection because NOTIFY wakes every backend listening in the database at every commit,
//! whatever its channel: a second listening connection would double what each commit costs
//! the server for the console.

use std::future::poll_fn;

use tokio::sync::mpsc::{self, UnboundedReceiver, unbounded_channel};
use tokio::task::JoinHandle;
use tokio_postgres::{AsyncMessage, Client, Notification};

use super::connect::Target;
use super::error::{Doing, Result};

/// The task driving a listening connection; dropping it ends the connection.
pub struct Pump(JoinHandle<()>);

impl Pump {
    /// Connects to `target`, hands every notification to `hand` until it returns `false` or the
    /// connection ends, and LISTENs on `channels` (identifiers of gavel's own). The client is
    /// for queries on the same connection.
    pub async fn listen(
        target: &Target,
        channels: &[&str],
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
        let listen: String = channels.iter().map(|c| format!("LISTEN {c};")).collect();
        client.batch_execute(&listen).await.doing(&listen)?;
        Ok((client, pump))
    }
}

impl Drop for Pump {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A connection listening on `gavel_events` (and on [`Beside`] channels, whose messages go to
/// their own queues): its client, for queries, and the payloads of its `gavel_events`
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

/// A channel a [`Notifications`] connection also LISTENs on, and the bounded queue its messages
/// go to (the sending backend's pid and the payload); a message that finds the queue full is
/// dropped, and one that finds it closed too, without ending the connection.
#[derive(Clone)]
pub struct Beside {
    pub channel: &'static str,
    pub queue: mpsc::Sender<(i32, String)>,
}

impl Notifications {
    /// Connects to `target` and LISTENs on `gavel_events`, and on the channels `beside` names.
    pub async fn open(target: &Target, beside: Vec<Beside>) -> Result<Notifications> {
        let (sender, payloads) = unbounded_channel();
        let channels: Vec<&str> = std::iter::once("gavel_events")
            .chain(beside.iter().map(|b| b.channel))
            .collect();
        let (client, pump) = Pump::listen(target, &channels, move |n| {
            match beside.iter().find(|b| b.channel == n.channel()) {
                Some(beside) => {
                    let _dropped_when_full = beside
                        .queue
                        .try_send((n.process_id(), n.payload().to_owned()));
                    true
                }
                None => sender.send(n.payload().to_owned()).is_ok(),
            }
        })
        .await?;
        Ok(Notifications {
            client,
            payloads,
            _pump: pump,
        })
    }
}
