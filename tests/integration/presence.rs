//! Presence and soft claims: consoles on one database see each other within a heartbeat or
//! two, each under the database role that really sent its messages (a payload's claim is not
//! trusted), and one whose heartbeats stop (a killed console's) is gone within two heartbeats.
//! A confirmation opened on a waiting decision shows on the other consoles within a second;
//! acting on it asks first; the database still takes one action; a viewer claims nothing.
//!
//! Against a real PostgreSQL started by the test (login roles are the cluster's).

use std::time::{Duration, Instant};

use crossterm::event::KeyCode;
use gavel::console::app::{Event, Overlay, update};
use gavel::domain::{Claim, Peer, Status};
use gavel::store::postgres::{CHANNEL, HEARTBEAT, LINGER};

use crate::common;
use common::pg::{Console, SESSION, action_count, decide, server, target_as, with_logins};
use common::{char, demo_model, key, select};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consoles_see_each_other_under_their_real_roles_and_a_silent_one_goes() {
    let server = server();
    let _owner = with_logins(&server, "presence", &["bob", "mallory"], &[]).await;

    // alice's console runs as postgres; bob's as bob.
    let mut alice = Console::live(target_as(&server, "presence", "postgres", "a")).await;
    let mut bob = Console::live(target_as(&server, "presence", "bob", "b")).await;
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

    // mallory claims to be alice: she is shown as alice under her own role, mallory.
    let forger = target_as(&server, "presence", "mallory", "m")
        .connect_driven()
        .await
        .unwrap();
    let forged = r#"{"operator": "alice", "looking": "s\u001b[2J"}"#;
    forger
        .execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &forged])
        .await
        .unwrap();
    bob.until("the forged message", |m| {
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

    // mallory sends nothing more (as a killed console would): gone within two heartbeats.
    let silent = Instant::now();
    bob.until("mallory gone", |m| {
        m.live.peers.iter().all(|p| p.role != "mallory")
    })
    .await;
    assert!(
        silent.elapsed() <= LINGER + HEARTBEAT,
        "gone after {:?}",
        silent.elapsed()
    );
    assert!(silent.elapsed() >= LINGER - Duration::from_secs(1));
    // alice, who keeps beating, stays.
    assert!(bob.model.live.peers.iter().any(|p| p.role == "postgres"));
}

/// A console hears the others on its feed's connection and speaks on one of its own: with both
/// backends terminated, it comes back on both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_console_whose_backends_are_terminated_is_heard_again_and_hears_again() {
    let server = server();
    let owner = with_logins(&server, "presence_back", &["bob"], &[]).await;
    let mut alice = Console::live(target_as(&server, "presence_back", "postgres", "a")).await;
    let mut bob = Console::live(target_as(&server, "presence_back", "bob", "b")).await;
    let alice_among = |m: &gavel::console::app::Model| {
        m.live
            .peers
            .iter()
            .find(|p| p.status.operator == "alice")
            .map(|p| p.console)
    };
    bob.until("alice", |m| alice_among(m).is_some()).await;
    let before = alice_among(&bob.model);

    let terminated = owner
        .query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE application_name IN ('a', 'a presence')",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(terminated.len(), 2, "alice's feed and presence backends");

    // Heard again: from a new presence backend.
    bob.until("alice from a new backend", |m| {
        alice_among(m).is_some_and(|pid| Some(pid) != before)
    })
    .await;
    // Hears again: a newcomer beating as consoles do is heard on alice's new feed connection.
    let carol = target_as(&server, "presence_back", "bob", "c")
        .connect_driven()
        .await
        .unwrap();
    let beating = tokio::spawn(async move {
        loop {
            carol
                .execute(
                    "SELECT pg_notify($1, $2)",
                    &[&CHANNEL, &r#"{"operator": "carol"}"#],
                )
                .await
                .unwrap();
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
    alice
        .until("alice's answer", |m| {
            m.desk
                .flash
                .as_ref()
                .is_some_and(|f| !f.text.starts_with("sending"))
        })
        .await;
    bob.until("bob's answer", |m| {
        m.desk
            .flash
            .as_ref()
            .is_some_and(|f| !f.text.starts_with("sending"))
    })
    .await;
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
