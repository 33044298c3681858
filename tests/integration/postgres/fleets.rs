//! One console over two databases, each on a server of its own, holding the same debates: each
//! debate listed once with its context, an accept on a debate of B landing in B only, and so a
//! promote of B's rollout (the same rollout in both); B's server stopped, or its feed's backend
//! frozen, while A's rows flow on, B marked down, and all of B caught up once it is back.

use super::*;
use gavel::console::app::{Ctx, Model};
use gavel::store::postgres::{LocalServer, Target};

use common::pg::{Frozen, action_count, decide, resumed, stopped};
use common::rows::settings_values;

use super::rollout::{confirm, draft, published};

/// Database `fleet` on `server`, migrated, with the gated debates d1 and d2, each with a
/// decision waiting on round 1: the same rows wherever it is made.
async fn seeded(server: &LocalServer) -> (Target, Client) {
    let (target, mut client) = database(server, "fleet").await;
    migrate(&mut client).await.unwrap();
    for id in ["d1", "d2"] {
        client.execute(SESSION, &[&id]).await.unwrap();
        decide(&client, id, 1, Some("continue_baseline")).await;
    }
    (target, client)
}

/// Whether the debate `id` of context `ctx` is held.
fn held(model: &Model, ctx: Ctx, id: &str) -> bool {
    model.debates.seq_in(ctx, id).is_some()
}

/// The link of context `ctx`.
fn link(model: &Model, ctx: Ctx) -> Link {
    model.live.contexts.get(ctx).unwrap().link.clone()
}

/// A console on `a` and `b`, once both are live with their rights known and every debate of
/// both is in.
async fn both(a: Target, b: Target) -> Console {
    let mut console = Console::attach_all(vec![("a", a), ("b", b)]);
    console
        .until(
            "both live, their rights known, their four debates in",
            |m| {
                m.live.link == Some(Link::Live)
                    && m.live.contexts.iter().all(|(_, c)| c.role.is_some())
                    && m.debates.len() == 4
            },
        )
        .await;
    console
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_debates_in_two_databases_are_listed_apart_and_an_accept_lands_in_its_own() {
    let (a, b) = (server(), server());
    let ((target_a, client_a), (target_b, client_b)) = (seeded(&a).await, seeded(&b).await);
    let mut console = both(target_a, target_b).await;
    for ctx in [0, 1] {
        for id in ["d1", "d2"] {
            assert!(held(&console.model, ctx, id), "{id} of context {ctx}");
        }
    }
    assert_eq!(
        console.model.debates.waiting(),
        4,
        "the counts run across both"
    );

    let seq = console.model.debates.seq_in(1, "d1").unwrap();
    console.model.select(seq);
    console
        .until("d1 of b whole, its decision pending", |m| {
            m.held(seq).is_some_and(|d| d.pending().is_some())
        })
        .await;
    console.press("ay");
    let said = console.answer().await;
    assert!(said.starts_with("recorded"), "{said}");
    assert_eq!(action_count(&client_b).await, 1, "recorded in b");
    assert_eq!(action_count(&client_a).await, 0, "nothing in a");
    console
        .until("b's action back on b's d1", |m| {
            m.debates.get(seq).is_some_and(|s| s.pending().is_none())
        })
        .await;
    let a_d1 = console.model.debates.seq_in(0, "d1").unwrap();
    assert!(
        console.model.debates.get(a_d1).unwrap().waiting(),
        "a's d1 still waits"
    );
    assert_eq!(console.model.debates.waiting(), 3);
}

/// The settings versions `client`'s database holds.
async fn versions(client: &Client) -> i64 {
    client
        .query_one("SELECT count(*) FROM gavel_controller_settings", &[])
        .await
        .unwrap()
        .get(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_promote_of_b_s_rollout_lands_in_b_only_and_is_heard_from_b() {
    let (a, b) = (server(), server());
    let ((target_a, client_a), (target_b, client_b)) = (seeded(&a).await, seeded(&b).await);
    // The same rollout in both: a promote sent to the wrong database would land there too.
    let mut canary = 0;
    for client in [&client_a, &client_b] {
        published(client, &settings_values(0.9), 10_000).await;
        canary = published(client, &settings_values(0.85), 3_000).await;
    }
    let mut console = both(target_a, target_b).await;
    let seq = console.model.debates.seq_in(1, "d1").unwrap();
    console.model.select(seq);
    console
        .until("both histories read", |m| {
            [0, 1].iter().all(|&ctx| {
                m.rollout
                    .latest_of(ctx, "standard")
                    .is_some_and(|v| v.canary_version == Some(canary))
            })
        })
        .await;
    console.press("R");
    draft(&mut console, 'm', "b's canary holds up");
    let said = confirm(&mut console).await;
    assert_eq!(
        said,
        format!(
            "version {} of standard in b: promoted version {canary} to every debate",
            canary + 1
        )
    );
    assert_eq!(versions(&client_b).await, 3, "the promote written in b");
    assert_eq!(versions(&client_a).await, 2, "nothing in a");
    console
        .until("b's promote heard from b", |m| {
            m.rollout
                .latest_of(1, "standard")
                .is_some_and(|v| v.kind == gavel::domain::VersionKind::Promote)
        })
        .await;
    let a_latest = console.model.rollout.latest_of(0, "standard").unwrap();
    assert_eq!(a_latest.canary_version, Some(canary), "a's rollout goes on");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_down_holds_up_none_of_the_others_and_catches_up_when_back() {
    let (a, b) = (server(), server());
    let ((target_a, client_a), (target_b, _)) = (seeded(&a).await, seeded(&b).await);
    let mut console = both(target_a, target_b.clone()).await;

    let b = stopped(b).await;
    console
        .until("b marked down", |m| matches!(link(m, 1), Link::Down { .. }))
        .await;
    assert_eq!(link(&console.model, 0), Link::Live, "a is still live");
    client_a.execute(SESSION, &[&"a-later"]).await.unwrap();
    console
        .until("a's new debate, b down", |m| held(m, 0, "a-later"))
        .await;
    assert!(matches!(link(&console.model, 1), Link::Down { .. }));

    // Written as soon as b is back, before its feed reconnects: read when it catches up.
    let _b = resumed(b).await;
    let client_b = target_b.connect_driven().await.unwrap();
    client_b.execute(SESSION, &[&"b-later"]).await.unwrap();
    decide(&client_b, "d2", 2, Some("continue_baseline")).await;
    console
        .until("b live again and caught up", |m| {
            link(m, 1) == Link::Live
                && held(m, 1, "b-later")
                && m.debates
                    .seq_in(1, "d2")
                    .and_then(|seq| m.debates.get(seq))
                    .is_some_and(|s| s.pending() == Some(2))
        })
        .await;
    assert_eq!(console.model.live.link, Some(Link::Live));
    assert!(!held(&console.model, 1, "a-later") && !held(&console.model, 0, "b-later"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_frozen_holds_up_none_of_the_others() {
    let (a, b) = (server(), server());
    let ((target_a, client_a), (target_b, client_b)) = (seeded(&a).await, seeded(&b).await);
    let mut console = both(target_a, target_b).await;

    // The console's backends on b (its feed's among them) stop answering, as on a frozen host;
    // the server goes on. Every one: which of them is the feed's, pg_stat_activity cannot say.
    let mut frozen = freeze_consoles(&client_b, Vec::new()).await;
    assert!(!frozen.is_empty(), "the console is connected to b");
    client_a.execute(SESSION, &[&"a-later"]).await.unwrap();
    console
        .until("a's new debate, b frozen", |m| held(m, 0, "a-later"))
        .await;
    client_b.execute(SESSION, &[&"b-later"]).await.unwrap();
    // Until its keepalive marks b down; a connection the console opened on b meanwhile (one
    // found missing in pg_stat_activity at first, or opened again) is frozen as it shows.
    let deadline = Instant::now() + Duration::from_secs(30);
    while !matches!(link(&console.model, 1), Link::Down { .. }) {
        assert!(
            Instant::now() < deadline,
            "b never marked down by its keepalive; its link {:?}",
            link(&console.model, 1)
        );
        console.settle(Duration::from_millis(500)).await;
        frozen = freeze_consoles(&client_b, frozen).await;
    }
    assert_eq!(link(&console.model, 0), Link::Live, "a is still live");
    assert!(!held(&console.model, 1, "b-later"));

    drop(frozen);
    console
        .until("b live again and caught up", |m| {
            link(m, 1) == Link::Live && held(m, 1, "b-later")
        })
        .await;
}

/// `frozen`, and every other backend of a console (`gavel…`) on `client`'s database, frozen.
async fn freeze_consoles(client: &Client, mut frozen: Vec<(u32, Frozen)>) -> Vec<(u32, Frozen)> {
    let backends = client
        .query(
            "SELECT pid FROM pg_stat_activity WHERE application_name LIKE 'gavel%' \
             AND datname = current_database() AND pid <> pg_backend_pid()",
            &[],
        )
        .await
        .unwrap();
    for pid in backends.iter().map(|row| row.get::<_, i32>(0) as u32) {
        if !frozen.iter().any(|(held, _)| *held == pid) {
            frozen.push((pid, Frozen::backend(pid)));
        }
    }
    frozen
}
