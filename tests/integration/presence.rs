//! Presence and soft claims: consoles on one database see each other within a heartbeat or
//! two, each under the database role that really wrote its row (a row's claim is not trusted,
//! a notification names a row and says nothing itself, another role's row cannot be taken),
//! and one whose heartbeats stop (a killed console's) is gone within two heartbeats.
//! A confirmation opened on a waiting decision shows on the other consoles within a second;
//! acting on it asks first; the database still takes one action; a viewer claims nothing.
//!
//! Against a real PostgreSQL started by the test (login roles are the cluster's).

use std::time::{Duration, Instant};

use crossterm::event::KeyCode;
use gavel::console::app::{Command, Event, Overlay, update};
use gavel::domain::{Claim, Peer, Status};
use gavel::store::postgres::{CHANNEL, HEARTBEAT, LINGER, Sides};

use crate::common;
use common::pg::{Console, SESSION, action_count, decide, server, target_as, with_logins};
use common::{char, demo_model, key, select};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consoles_see_each_other_under_their_real_roles_and_a_silent_one_goes() {
    let server = server();
    let _owner = with_logins(&server, "presence", &["bob", "mallory"], &[]).await;

    // alice's console runs as postgres; bob's as bob.
    let mut alice = Console::live(target_as(&server, "presence", "postgres", "a")).await;
    let mut bob = Console::attach_to(
        Sides::one(target_as(&server, "presence", "bob", "b")),
        "bob",
    );
    bob.until("alice", |m| {
        m.live
            .peers
            .iter()
            .any(|p| p.status.operator == "alice" && p.role == "postgres")
    })
    .await;
    alice
        .until("bob's console", |m| {
            m.live.peers.iter().any(|p| p.role == "bob")
        })
        .await;
    assert_eq!(
        alice.model.live.peers.len(),
        1,
        "{:?}",
        alice.model.live.peers
    );

    // mallory writes a row claiming to be alice: she is shown as alice under her own role.
    let forger = target_as(&server, "presence", "mallory", "m")
        .connect_driven()
        .await
        .unwrap();
    let forged = r#"{"operator": "alice", "looking": "s\u001b[2J"}"#;
    say(&forger, 42, forged).await.unwrap();
    bob.until("the forged row", |m| {
        m.live.peers.iter().any(|p| p.role == "mallory")
    })
    .await;
    let shown = bob
        .model
        .live
        .peers
        .iter()
        .find(|p| p.role == "mallory")
        .unwrap();
    assert_eq!(shown.status.operator, "alice");
    assert_eq!(shown.status.looking.as_deref(), Some("s\u{1b}[2J"));

    // She cannot take alice's row: neither write it nor delete it.
    let alices: i64 = forger
        .query_one(
            "SELECT console FROM gavel_presence WHERE role = 'postgres'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    let taken = say(&forger, alices, r#"{"operator": "mallory"}"#).await;
    let refused = taken.unwrap_err();
    assert!(
        refused
            .as_db_error()
            .is_some_and(|e| e.message().contains("is role postgres's")),
        "{refused}"
    );
    let deleted = forger
        .execute("DELETE FROM gavel_presence WHERE console = $1", &[&alices])
        .await;
    assert!(deleted.is_err(), "{deleted:?}");
    // Nor speak for it on the channel: a payload is a key to read, never a status.
    for payload in [alices.to_string(), r#"{"operator": "mallory"}"#.to_owned()] {
        forger
            .execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &payload])
            .await
            .unwrap();
    }
    bob.settle(Duration::from_millis(500)).await;
    assert!(
        bob.model
            .live
            .peers
            .iter()
            .all(|p| p.status.operator == "alice"),
        "{:?}",
        bob.model.live.peers
    );

    // mallory writes nothing more (as a killed console would), only notifies her key to be
    // read again: gone within two heartbeats all the same.
    let silent = Instant::now();
    let waking = tokio::spawn(async move {
        loop {
            let _ = forger
                .execute("SELECT pg_notify($1, '42')", &[&CHANNEL])
                .await;
            tokio::time::sleep(Duration::from_millis(700)).await;
        }
    });
    bob.until("mallory gone", |m| {
        m.live.peers.iter().all(|p| p.role != "mallory")
    })
    .await;
    waking.abort();
    assert!(
        silent.elapsed() <= LINGER + HEARTBEAT,
        "gone after {:?}",
        silent.elapsed()
    );
    assert!(silent.elapsed() >= LINGER - Duration::from_secs(1));
    // alice, who keeps beating, stays.
    assert!(bob.model.live.peers.iter().any(|p| p.role == "postgres"));
}

/// A console over its rate (four messages at once, then one a second) is not dropped from
/// view: the row its last message named is read at the next top-up, within a second, though it
/// says nothing more (no heartbeat would catch it up).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_heard_over_a_consoles_rate_shows_within_a_second_without_another_message() {
    let server = server();
    let _owner = with_logins(&server, "presence_rate", &["carol"], &[]).await;
    let mut alice = Console::live(target_as(&server, "presence_rate", "postgres", "a")).await;
    let carol = target_as(&server, "presence_rate", "carol", "c")
        .connect_driven()
        .await
        .unwrap();
    let looking = |n: usize| format!(r#"{{"operator": "carol", "looking": "debate-{n}"}}"#);
    let shows = |n: usize| {
        move |m: &gavel::console::app::Model| {
            let wanted = format!("debate-{n}");
            m.live
                .peers
                .iter()
                .any(|p| p.role == "carol" && p.status.looking.as_deref() == Some(&wanted))
        }
    };
    // Each message heard on its own: the first, then the three more the burst allows.
    for n in 1..=4 {
        say(&carol, 7, &looking(n)).await.unwrap();
        alice.until("carol's message", shows(n)).await;
    }
    // One over the rate, then silence.
    let said = Instant::now();
    say(&carol, 7, &looking(5)).await.unwrap();
    alice.until("carol's last message", shows(5)).await;
    assert!(
        said.elapsed() < Duration::from_secs(2),
        "carol's last message showed after {:?}",
        said.elapsed()
    );
}

/// Writes `status` as presence row `key`, as a console does.
async fn say(
    client: &tokio_postgres::Client,
    key: i64,
    status: &str,
) -> Result<(), tokio_postgres::Error> {
    let updated = client
        .execute(
            "UPDATE gavel_presence SET status = $2 WHERE console = $1",
            &[&key, &status],
        )
        .await?;
    if updated == 0 {
        client
            .execute(
                "INSERT INTO gavel_presence (console, status) VALUES ($1, $2)",
                &[&key, &status],
            )
            .await?;
    }
    Ok(())
}

/// A console hears the others on its feed's connection, reads them on a connection of its own
/// and speaks on another: with all three backends terminated, it comes back on each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_console_whose_backends_are_terminated_is_heard_again_and_hears_again() {
    let server = server();
    let owner = with_logins(&server, "presence_back", &["bob"], &[]).await;
    for id in ["s", "t"] {
        owner.execute(SESSION, &[&id]).await.unwrap();
    }
    let mut alice = Console::live(target_as(&server, "presence_back", "postgres", "a")).await;
    let mut bob = Console::live(target_as(&server, "presence_back", "bob", "b")).await;
    let alice_looking = |m: &gavel::console::app::Model| {
        m.live
            .peers
            .iter()
            .find(|p| p.role == "postgres")
            .map(|p| p.status.looking.clone())
    };
    bob.until("alice", |m| alice_looking(m).is_some()).await;

    let terminated = owner
        .query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE application_name IN ('a', 'a presence')",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(
        terminated.len(),
        3,
        "alice's feed, and her presence's writing and reading backends"
    );

    // Heard again: what she says now reaches bob.
    alice
        .until("the live link again", |m| {
            m.live.link == Some(gavel::console::app::Link::Live)
        })
        .await;
    let other = match alice_looking(&bob.model).flatten().as_deref() {
        Some("s") => "t",
        _ => "s",
    };
    alice.select(other);
    // Any event lets the console say what changed.
    alice.handle(Event::Resize(160, 48));
    bob.until("alice looking at the other debate", |m| {
        alice_looking(m) == Some(Some(other.to_owned()))
    })
    .await;
    // Hears again: a newcomer writing its row as consoles do is heard on alice's new
    // connections.
    let carol = target_as(&server, "presence_back", "bob", "c")
        .connect_driven()
        .await
        .unwrap();
    let beating = tokio::spawn(async move {
        loop {
            say(&carol, 7, r#"{"operator": "carol"}"#).await.unwrap();
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    });
    alice
        .until("carol", |m| {
            m.live.peers.iter().any(|p| p.status.operator == "carol")
        })
        .await;
    beating.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_shows_at_once_asks_before_a_take_over_and_the_race_still_lands_once() {
    let server = server();
    let owner = with_logins(&server, "claims", &["carol"], &["bob"]).await;
    owner.execute(SESSION, &[&"s"]).await.unwrap();
    decide(&owner, "s", 1, Some("continue_baseline")).await;

    let mut alice = Console::at_pending(target_as(&server, "claims", "postgres", "a"), "s").await;
    let mut bob = Console::at_pending(target_as(&server, "claims", "bob", "b"), "s").await;
    let mut carol = Console::at_pending(target_as(&server, "claims", "carol", "c"), "s").await;
    bob.until("alice's console", |m| {
        m.live.peers.iter().any(|p| p.role == "postgres")
    })
    .await;

    // alice opens the confirmation: bob sees her deciding within a second.
    alice.press("a");
    assert!(matches!(
        alice.model.desk.overlay,
        Some(Overlay::Confirm(_))
    ));
    let opened = Instant::now();
    bob.until("alice's claim", |m| m.deciding("s", 1).is_some())
        .await;
    assert!(
        opened.elapsed() < Duration::from_secs(1),
        "{:?}",
        opened.elapsed()
    );
    let (who, _) = bob.model.deciding("s", 1).unwrap();
    assert_eq!(who, "alice (role postgres)");

    // bob asks to accept too: he is asked first; any other key leaves it to her.
    bob.press("a");
    assert!(matches!(bob.model.desk.overlay, Some(Overlay::TakeOver(_))));
    bob.press("x");
    assert!(bob.model.desk.overlay.is_none());
    assert_eq!(action_count(&owner).await, 0);
    // He takes over: both confirm, the database still takes one.
    bob.press("ay");
    assert!(matches!(bob.model.desk.overlay, Some(Overlay::Confirm(_))));
    bob.press("y");
    alice.press("y");
    alice.answer().await;
    bob.answer().await;
    assert_eq!(action_count(&owner).await, 1);

    // A viewer sees claims but makes none: carol's open dialog is refused, she claims nothing.
    carol.press("a");
    assert!(carol.model.desk.overlay.is_none());
    assert!(
        carol
            .model
            .live
            .said
            .as_ref()
            .is_some_and(|s| s.claim.is_none())
    );
}

/// Another console, of role `role`, calling itself `operator`, deciding round 1 of `claimed`.
fn peer(operator: &str, role: &str, claimed: Option<&str>) -> Peer {
    Peer {
        console: 7,
        role: role.into(),
        status: Status {
            operator: operator.into(),
            looking: claimed.map(str::to_owned),
            claim: claimed.map(|id| Claim {
                session_id: id.into(),
                round: 1,
            }),
            editing: None,
        },
        since: Some("2026-11-25T21:00:00Z".parse().unwrap()),
        claimed_at: None,
    }
}

#[test]
fn a_claim_shows_in_the_list_the_panel_and_the_dialogs_and_p_offers_the_free_first() {
    let (mut model, _) = demo_model();
    select(&mut model, "fasting-insulin-0412");
    update(&mut model, char('p'));
    assert_eq!(
        model.selected_summary().map(|s| &*s.id),
        Some("review-pdac-methylation")
    );
    let claims = vec![peer("alice", "bob", Some("review-pdac-methylation"))];
    update(&mut model, Event::Presence(claims));
    select(&mut model, "fasting-insulin-0412");
    update(&mut model, char('p'));
    assert_eq!(
        model.selected_summary().map(|s| &*s.id),
        Some("fasting-insulin-0412"),
        "p offers the decision nobody is deciding first"
    );
    select(&mut model, "review-pdac-methylation");
    update(&mut model, char('a'));
    assert!(matches!(model.desk.overlay, Some(Overlay::TakeOver(_))));
    insta::assert_snapshot!("claim_take_over", common::screen_at(&model, 120, 30));
    update(&mut model, char('y'));
    assert!(matches!(model.desk.overlay, Some(Overlay::Confirm(_))));
    insta::assert_snapshot!("claim_confirm", common::screen_at(&model, 120, 30));
}

#[test]
fn who_lists_the_other_consoles_escaped() {
    let (mut model, _) = demo_model();
    let forged = peer(
        "alice\u{1b}]0;owned\u{7}",
        "mallory",
        Some("review-pdac-methylation"),
    );
    update(&mut model, Event::Presence(vec![forged]));
    update(&mut model, char(':'));
    for c in "who".chars() {
        update(&mut model, char(c));
    }
    update(&mut model, key(KeyCode::Enter));
    assert!(matches!(model.desk.overlay, Some(Overlay::Who { .. })));
    insta::assert_snapshot!("who", common::screen_at(&model, 120, 30));
}

/// A role the database does not let write presence still watches, connected: the others do not
/// see it, and it sees them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_console_whose_role_may_not_write_presence_watches_on_unseen() {
    let server = server();
    let owner = with_logins(&server, "unseen", &["dora"], &[]).await;
    owner
        .batch_execute("REVOKE INSERT, UPDATE, DELETE ON gavel_presence FROM gavel_viewer")
        .await
        .unwrap();
    let mut alice = Console::live(target_as(&server, "unseen", "postgres", "a")).await;
    let mut dora = Console::attach_to(
        Sides::one(target_as(&server, "unseen", "dora", "d")),
        "dora",
    );
    dora.until("live, and alice seen by dora", |m| {
        m.live.link == Some(gavel::console::app::Link::Live)
            && m.live.role.as_deref() == Some("dora")
            && m.live.peers.iter().any(|p| p.status.operator == "alice")
    })
    .await;
    // Two heartbeats of dora's, refused: she stays connected, and alice never lists her.
    alice.settle(HEARTBEAT * 2).await;
    assert!(
        alice.model.live.peers.is_empty(),
        "{:?}",
        alice.model.live.peers
    );
    dora.settle(Duration::from_millis(200)).await;
    assert!(
        dora.links
            .iter()
            .all(|l| !matches!(l, gavel::console::app::Link::Down { .. })),
        "{:?}",
        dora.links
    );
    let presence_backends = async || {
        let rows = owner
            .query(
                "SELECT pid FROM pg_stat_activity WHERE application_name = 'd presence' \
                 ORDER BY pid",
                &[],
            )
            .await
            .unwrap();
        rows.iter().map(|r| r.get(0)).collect::<Vec<i32>>()
    };
    let before = presence_backends().await;
    dora.settle(HEARTBEAT + Duration::from_secs(1)).await;
    assert_eq!(before.len(), 2, "dora's two presence connections");
    assert_eq!(
        presence_backends().await,
        before,
        "the same connections a heartbeat later: not failing and reconnecting"
    );
}

/// A console that quits (the console's run sends [`Command::Leave`] on a clean exit) deletes
/// its row: the others drop it at once, long before its time would be up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_console_that_quits_deletes_its_row_and_the_others_drop_it_at_once() {
    let database = common::pg::migrated_database("presence_leaving").await;
    let mut alice = Console::live(database.target.clone()).await;
    let mut bob = Console::attach_to(Sides::one(database.target.clone()), "bob");
    bob.until("bob's feed live", |m| {
        m.live.link == Some(gavel::console::app::Link::Live)
    })
    .await;
    alice
        .until("bob", |m| {
            m.live.peers.iter().any(|p| p.status.operator == "bob")
        })
        .await;
    let rows = "SELECT count(*) FROM gavel_presence";
    assert_eq!(common::pg::table_count(&database.client, rows).await, 2);

    let quit = Instant::now();
    bob.commands.send(Command::Leave).unwrap();
    tokio::time::timeout(Duration::from_secs(5), bob.commands.closed())
        .await
        .expect("bob's backend ends once it took leave");
    assert_eq!(
        common::pg::table_count(&database.client, rows).await,
        1,
        "bob's row deleted before his backend ended"
    );
    alice.until("bob gone", |m| m.live.peers.is_empty()).await;
    assert!(
        quit.elapsed() < LINGER - HEARTBEAT,
        "dropped {:?} after the quit, not when his time was up",
        quit.elapsed()
    );
}

/// The same with the built binary: `q` in `gavel watch` leaves no presence row behind.
#[test]
fn gavel_watch_quit_with_q_leaves_no_presence_row() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let database = runtime.block_on(common::pg::migrated_database("presence_quit"));
    let tmux = common::tmux::Tmux::new();
    tmux.start(&format!(
        "{} watch --db '{}' --operator carol --log-dir {}; echo gavel-exited-$?; sleep 30",
        env!("CARGO_BIN_EXE_gavel"),
        database.url,
        tmux.dir.join("logs").display()
    ));
    tmux.wait_for("live", |s| s.contains("● live"));
    let rows = "SELECT count(*) FROM gavel_presence";
    let deadline = Instant::now() + Duration::from_secs(10);
    while runtime.block_on(common::pg::table_count(&database.client, rows)) == 0 {
        assert!(Instant::now() < deadline, "carol's row never written");
        std::thread::sleep(Duration::from_millis(50));
    }
    tmux.keys("q");
    tmux.wait_for("the exit", |s| s.contains("gavel-exited-0"));
    assert_eq!(
        runtime.block_on(common::pg::table_count(&database.client, rows)),
        0,
        "the row deleted before the process ended"
    );
}
