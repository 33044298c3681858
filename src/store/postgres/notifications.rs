//! The one notification pump: a connection that LISTENs on `gavel_events`, its messages driven
//! through `poll_message` on a task of its own (so no notification is dropped, and nobody
//! awaits the connection), the payloads handed out on a channel. The console's feed and the
//! simulator's orchestrator both listen through it.

use std::future::poll_fn;

use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};
use tokio::task::JoinHandle;
use tokio_postgres::{AsyncMessage, Client};

use super::connect::Target;
use super::error::{Doing, Result};

/// A listening connection: its client, for queries, and the payloads of its notifications,
/// in the order they arrived. The channel closes when the connection ends; dropping this ends
/// the connection.
pub struct Notifications {
    pub client: Client,
    pub payloads: UnboundedReceiver<String>,
    driver: JoinHandle<()>,
}

impl Notifications {
    /// Connects to `target` and LISTENs on `gavel_events`.
    pub async fn open(target: &Target) -> Result<Notifications> {
        let (client, mut connection) = target.connect().await?;
        let (sender, payloads) = unbounded_channel();
        let driver = tokio::spawn(async move {
            loop {
                match poll_fn(|cx| connection.poll_message(cx)).await {
                    Some(Ok(AsyncMessage::Notification(n))) => {
                        if sender.send(n.payload().to_owned()).is_err() {
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
        });
        let notifications = Notifications {
            client,
            payloads,
            driver,
        };
        notifications
            .client
            .batch_execute("LISTEN gavel_events")
            .await
            .doing("LISTEN gavel_events")?;
        Ok(notifications)
    }
}

impl Drop for Notifications {
    fn drop(&mut self) {
        self.driver.abort();
    }
}
