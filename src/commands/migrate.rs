//! `gavel migrate`: brings a database's schema up to date and sets up the roles; with
//! `--subscribe-to PRIMARY`, also makes it a subscriber of the primary's publication, for
//! consoles to read from (docs/live.md, "Consoles off the primary").

use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use tokio_postgres::Client;

use gavel::progress::Stage;
use gavel::store::postgres::{
    OPERATOR_ROLE, Publisher, Subscribed, Target, VIEWER_ROLE, check_publisher, ensure_roles,
    keep_local, migrate_each, migrations, subscribe, sync,
};

use super::{print, runtime, stop_on_interrupt, target, warn_all};

/// How long a new subscription's first copy is waited for before gavel leaves it to finish on
/// its own.
const COPY_WAIT: Duration = Duration::from_secs(120);

/// Applies the migrations not applied yet, each counted on stderr as it starts (one on a large
/// table can take minutes); a role that may not create roles only warns. With `subscribe_to`,
/// the primary is checked first, then this database is migrated and subscribed.
pub fn run(db: Option<&str>, subscribe_to: Option<&str>) -> Result<ExitCode> {
    stop_on_interrupt()?;
    let target = target(db)?;
    runtime()?.block_on(async {
        let publisher = match subscribe_to {
            Some(primary) => {
                let primary_target = super::target(Some(primary))?;
                let client = primary_target
                    .connect_driven()
                    .await
                    .context("connecting to the primary (--subscribe-to)")?;
                let publisher = check_publisher(&client)
                    .await
                    .with_context(|| format!("the primary {}", primary_target.describe()))?;
                Some((primary, publisher))
            }
            None => None,
        };
        let mut client = target.connect_driven().await?;
        migrate_schema(&target, &mut client).await?;
        match &publisher {
            Some((primary, publisher)) => {
                subscribe_here(&target, &client, primary, publisher).await?
            }
            None => {
                keep_local(&client).await?;
            }
        }
        match ensure_roles(&client).await {
            Ok(warnings) => {
                warn_all(&warnings);
                print(&format!("roles {VIEWER_ROLE} and {OPERATOR_ROLE} ready\n"))?;
            }
            Err(e) => eprintln!(
                "gavel: warning: roles not set up ({e:#}); run `gavel grant` as a role \
                 that may create roles"
            ),
        }
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

/// Applies the migrations, counting them on stderr; says what it applied.
async fn migrate_schema(target: &Target, client: &mut Client) -> Result<()> {
    let stage = Stage::count("migrating", migrations().len() as u64, "migrations");
    let mut started = false;
    let applied = migrate_each(client, |name| {
        if std::mem::replace(&mut started, true) {
            stage.inc(1);
        }
        stage.say(name.to_owned());
    })
    .await?;
    drop(stage);
    if applied.is_empty() {
        print(&format!("{}: up to date\n", target.describe()))?;
    } else {
        print(&format!(
            "{}: applied {}\n",
            target.describe(),
            applied.join(", ")
        ))?;
    }
    Ok(())
}

/// Subscribes this database to the primary's publication and, for a new subscription, waits
/// for the first copy of the primary's tables (up to [`COPY_WAIT`]).
async fn subscribe_here(
    target: &Target,
    client: &Client,
    primary: &str,
    publisher: &Publisher,
) -> Result<()> {
    let here = target.describe();
    match subscribe(client, primary, publisher).await? {
        Subscribed::Already { name, enabled } => {
            print(&format!("{here}: subscribed already ({name})\n"))?;
            if !enabled {
                warn_all(&[format!(
                    "subscription {name} is disabled: nothing arrives until ALTER SUBSCRIPTION \
                     {name} ENABLE"
                )]);
            }
        }
        Subscribed::Created(name) => {
            let stage = Stage::spinner("copying the primary's tables");
            let started = Instant::now();
            let copied = loop {
                let now = sync(client).await?;
                if now.errors > 0 {
                    anyhow::bail!(
                        "subscription {name} failed {} time(s) copying or applying the \
                         primary's rows: see the subscriber's server log (the subscription \
                         stays and retries; DROP SUBSCRIPTION {name} to undo it)",
                        now.errors
                    );
                }
                if now.ready == now.tables || started.elapsed() > COPY_WAIT {
                    break now;
                }
                stage.say(format!("{} of {} tables", now.ready, now.tables));
                tokio::time::sleep(Duration::from_millis(100)).await;
            };
            drop(stage);
            print(&format!(
                "{here}: subscribed to the primary ({name}); {} of {} tables copied\n",
                copied.ready, copied.tables
            ))?;
        }
    }
    Ok(())
}
