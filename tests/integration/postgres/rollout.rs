//! Settings rollouts on a live database: the console hears every version published (by anyone)
//! on gavel_settings and reads the history again; it writes its own promote and roll back, each
//! a version in the history; the database's refusals are shown as its reasons (a version no
//! longer in force, a role that may not publish); and the console's counts of each arm equal
//! the database's after a rollout is simulated end to end.

use crossterm::event::KeyCode;
use gavel::config::Config;
use gavel::console::app::{Event, Model};
use gavel::console::reports::ReportsWorker;
use gavel::domain::{SettingsValues, VersionKind};
use gavel::simulate::Fixture;
use gavel::store::postgres::{Publication, publish};
use tokio_postgres::Client;

use crate::common;
use common::pg::{Console, Database, migrated_database, play_into, server, target_as, with_logins};
use common::rows::settings_values;

/// Publishes `values` to `share_bp` of `standard` debates, as another publisher would.
pub(super) async fn published(client: &Client, values: &SettingsValues, share_bp: u32) -> i64 {
    let change = Publication::Publish {
        values,
        share_bp,
        evidence: None,
    };
    publish(client, "standard", &change, "by hand, for the test")
        .await
        .unwrap()
        .unwrap()
        .version
}

/// The latest version of `standard` as the console knows it: its number and kind.
fn latest(model: &Model) -> Option<(i64, VersionKind)> {
    let latest = model.rollout.latest_of(0, "standard")?;
    Some((latest.version, latest.kind))
}

/// Presses `y` in the confirmation of a version being written, and waits for the outcome: the
/// footer's message then.
pub(super) async fn confirm(console: &mut Console) -> String {
    console.press("y");
    console
        .until("the outcome", |m| {
            m.desk
                .flash
                .as_ref()
                .is_some_and(|f| !f.text.starts_with("writing"))
        })
        .await;
    console.flash()
}

/// Presses `action`'s key in the rollout view, types `reason`, and stops at the confirmation.
pub(super) fn draft(console: &mut Console, action: char, reason: &str) {
    console.press(&action.to_string());
    console.press(reason);
    console.handle(Event::Key(KeyCode::Enter.into()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_hears_each_version_writes_its_own_and_shows_the_database_s_refusals() {
    let Database { target, client, .. } = migrated_database("rollout_live").await;
    let mut console = Console::live(target).await;
    console
        .until("the empty history", |m| {
            m.rollout
                .history(0)
                .is_some_and(|h| h.is_ok_and(<[_]>::is_empty))
        })
        .await;

    published(&client, &settings_values(0.9), 10_000).await;
    let canary = published(&client, &settings_values(0.85), 3_000).await;
    console
        .until("the canary heard", |m| {
            latest(m) == Some((canary, VersionKind::Publish))
        })
        .await;
    assert_eq!(console.model.rollout.rollouts().len(), 1);

    // Promote from the console: a new version, heard back like any other.
    console.press("R");
    draft(&mut console, 'm', "the canary holds up");
    let said = confirm(&mut console).await;
    assert_eq!(
        said,
        format!(
            "version {} of standard: promoted version {canary} to every debate",
            canary + 1
        )
    );
    console
        .until("the promote heard", |m| {
            latest(m) == Some((canary + 1, VersionKind::Promote))
        })
        .await;
    assert!(console.model.rollout.rollouts().is_empty());

    // A roll back opened, and another publisher rolls the version back first: the database
    // refuses the second, saying why.
    draft(&mut console, 'b', "second thoughts");
    publish(
        &client,
        "standard",
        &Publication::Rollback { version: canary },
        "first",
    )
    .await
    .unwrap()
    .unwrap();
    let why = confirm(&mut console).await;
    assert!(
        why.starts_with(&format!(
            "nothing was written: version {canary} of standard cannot be rolled back"
        )),
        "{why}"
    );
    let versions: i64 = client
        .query_one("SELECT count(*) FROM gavel_controller_settings", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(
        versions, 4,
        "two published, the console's promote, the other's roll back"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn publishing_is_a_privilege_of_its_own_the_database_refusing_an_operator() {
    let server = server();
    let owner = with_logins(&server, "rollout_roles", &["carol"], &["bob"]).await;
    gavel::store::postgres::grant_publishers(&owner, &["carol".to_owned()])
        .await
        .unwrap();
    published(&owner, &settings_values(0.85), 3_000).await;
    // carol may only watch decisions, and publish: her console is read-only, and promotes.
    let mut carol = Console::live(target_as(&server, "rollout_roles", "carol", "c")).await;
    carol
        .until("the rollout", |m| !m.rollout.rollouts().is_empty())
        .await;
    assert!(carol.model.settings.read_only);
    carol.press("R");
    draft(&mut carol, 'm', "carol publishes");
    let said = confirm(&mut carol).await;
    assert!(said.contains("promoted version"), "{said}");
    let by: String = owner
        .query_one(
            "SELECT published_by FROM gavel_controller_settings ORDER BY version DESC LIMIT 1",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(by, "carol", "stamped by the database");

    published(&owner, &settings_values(0.8), 3_000).await;
    let mut bob = Console::live(target_as(&server, "rollout_roles", "bob", "b")).await;
    bob.until("the rollout", |m| !m.rollout.rollouts().is_empty())
        .await;
    bob.press("R");
    draft(&mut bob, 'm', "bob would like it everywhere");
    let why = confirm(&mut bob).await;
    assert!(
        why.contains("publishing settings is a privilege of its own"),
        "{why}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_arm_s_counts_are_the_database_s_after_a_simulated_rollout() {
    let Database { target, client, .. } = migrated_database("rollout_counts").await;
    let stable = published(&client, &settings_values(0.9), 10_000).await;
    let canary = published(&client, &settings_values(0.8), 5_000).await;
    play_into(&target, Fixture::bundled().unwrap()).await;
    let in_arm = |arm: &'static str, version: i64| {
        let client = &client;
        async move {
            let n: i64 = client
                .query_one(
                    "SELECT count(*) FROM debate_sessions WHERE debate_type = 'standard' \
                     AND status <> 'running' AND settings_arm = $1 AND settings_version = $2",
                    &[&arm, &version],
                )
                .await
                .unwrap()
                .get(0);
            n as u64
        }
    };
    let (stable_count, canary_count) = (
        in_arm("stable", stable).await,
        in_arm("canary", canary).await,
    );
    assert!(stable_count + canary_count > 0, "standard debates ran");

    let mut console = Console::live(target).await;
    console
        .until("every debate over", |m| {
            m.debates.len() == 9 && m.debates.summaries().all(|s| !s.is_running())
        })
        .await;
    let mut reports = ReportsWorker::of(&Config::default());
    reports.catch_up(&mut console.model);
    let figures = console.model.reports.figures();
    let [comparison] = figures.rollout.as_slice() else {
        panic!("one rollout: {:?}", figures.rollout);
    };
    assert_eq!(
        (comparison.stable.finished, comparison.canary.finished),
        (stable_count, canary_count)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_console_writing_a_version_shows_on_the_others_as_editing_the_rollout() {
    let Database { target, client, .. } = migrated_database("rollout_presence").await;
    published(&client, &settings_values(0.85), 3_000).await;
    let mut alice = Console::live(target.clone()).await;
    let mut bob = Console::live(target).await;
    alice
        .until("the rollout", |m| !m.rollout.rollouts().is_empty())
        .await;
    bob.until("alice", |m| !m.live.peers.is_empty()).await;
    alice.press("R");
    alice.press("b");
    let opened = std::time::Instant::now();
    bob.until("alice editing", |m| {
        m.live
            .peers
            .iter()
            .any(|p| p.status.editing.as_deref() == Some("standard"))
    })
    .await;
    assert!(
        opened.elapsed() < std::time::Duration::from_secs(1),
        "said at once, not at the heartbeat"
    );
    alice.handle(Event::Key(KeyCode::Esc.into()));
    bob.until("alice done", |m| {
        m.live.peers.iter().all(|p| p.status.editing.is_none())
    })
    .await;
}
