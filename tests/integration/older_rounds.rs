//! Actions on any pending decision, not only the latest: while a debate runs, every decision
//! without an operator action is pending (the contract), so an operator acts on the round
//! picked in the rounds table (else on the latest pending decision), still exactly once, and
//! refused when the decision was decided again under the action or the debate ended. In the
//! console's `update()`, in the memory store (the demo's), and on PostgreSQL: two consoles, one
//! reading a subscriber and one on the primary, racing on an older round; and the store's
//! check and write racing the orchestrator.

use std::sync::Arc;

use crossterm::event::KeyCode;
use gavel::config::Config;
use gavel::console::app::{Command, Model, Overlay, update};
use gavel::domain::{ActionKind, Change, Decision, Limits, OperatorAction, SessionStatus};
use gavel::store::postgres::{Sides, Target, resolve};
use gavel::store::{MemoryStore, ResolveError};

use crate::common;
use crate::postgres::pair::{Pair, Side, migrated_pair};
use common::pg::{Console, SESSION, action_count, decide, redecide};
use common::rows::{action, decision, session};
use common::{char, flash, key};

/// A console with debate `s` running and rounds 1 to 3 decided, none resolved: all three are
/// pending.
fn three_pending() -> Model {
    let mut model = Model::new("test".into(), "alice".into(), &Config::default());
    let mut store = |change| {
        update(
            &mut model,
            gavel::console::app::Event::Store(Box::new(change)),
        );
    };
    store(Change::Session(session("s", SessionStatus::Running)));
    store(Change::Decision(decision(
        "s",
        1,
        Decision::ContinueBaseline.into(),
    )));
    store(Change::Decision(decision(
        "s",
        2,
        Decision::StopConverged.into(),
    )));
    store(Change::Decision(decision(
        "s",
        3,
        Decision::ContinueBaseline.into(),
    )));
    model
}

/// The one action `commands` send.
fn resolving(commands: &[Command]) -> OperatorAction {
    let sent: Vec<_> = commands
        .iter()
        .filter_map(|c| match c {
            Command::Resolve(action) => Some(action.clone()),
            _ => None,
        })
        .collect();
    match sent.as_slice() {
        [action] => action.clone(),
        _ => panic!("expected one Resolve, got {commands:?}"),
    }
}

/// The action `keys` open, confirmed with `y`.
fn confirmed(model: &mut Model, keys: &str) -> OperatorAction {
    for k in keys.chars() {
        let sent = update(model, char(k));
        assert!(
            !sent.iter().any(|c| matches!(c, Command::Resolve(_))),
            "{k} sends no action yet"
        );
    }
    assert!(
        matches!(model.desk.overlay, Some(Overlay::Confirm(_))),
        "{:?}",
        model.desk.overlay
    );
    resolving(&update(model, char('y')))
}

#[test]
fn an_action_goes_to_the_round_picked_in_the_rounds_table_else_to_the_latest_pending() {
    let mut model = three_pending();
    // Nothing picked: the latest pending decision.
    assert_eq!(confirmed(&mut model, "a").round_index, 3);

    // Round 1 picked in the rounds table: its decision, as it stands.
    let mut model = three_pending();
    update(&mut model, key(KeyCode::Enter));
    update(&mut model, key(KeyCode::Home));
    assert_eq!(model.selected_round(), Some(1));
    let accept = confirmed(&mut model, "a");
    assert_eq!(
        (accept.round_index, accept.decision),
        (1, Decision::ContinueBaseline.into())
    );
    // An override of round 2, one row down.
    update(&mut model, char('j'));
    assert_eq!(model.selected_round(), Some(2));
    update(&mut model, char('o'));
    update(&mut model, key(KeyCode::Enter));
    let overridden = resolving(&update(&mut model, char('y')));
    assert_eq!(
        (overridden.round_index, overridden.action),
        (2, ActionKind::Override.into())
    );

    // A round picked whose decision was resolved: the latest pending one instead.
    let resolved = action("s", 2, ActionKind::Accept, Decision::StopConverged.into());
    update(
        &mut model,
        gavel::console::app::Event::Store(Box::new(Change::Action(resolved))),
    );
    assert_eq!(confirmed(&mut model, "a").round_index, 3);
}

#[test]
fn a_confirmation_on_an_older_round_closes_when_that_round_is_decided_again_or_the_debate_ends() {
    let mut model = three_pending();
    update(&mut model, key(KeyCode::Enter));
    update(&mut model, key(KeyCode::Home));
    update(&mut model, char('a'));
    let store = |model: &mut Model, change| {
        update(model, gavel::console::app::Event::Store(Box::new(change)));
    };
    store(
        &mut model,
        Change::Decision(decision("s", 4, Decision::ContinueBaseline.into())),
    );
    assert!(
        matches!(model.desk.overlay, Some(Overlay::Confirm(_))),
        "a newer decision leaves round 1 pending"
    );
    store(
        &mut model,
        Change::Decision(decision("s", 1, Decision::StopSafety.into())),
    );
    assert_eq!(model.desk.overlay, None);
    assert_eq!(
        flash(&model),
        "closed s round 1: decided again: now stop_safety"
    );

    let mut model = three_pending();
    update(&mut model, key(KeyCode::Enter));
    update(&mut model, key(KeyCode::Home));
    update(&mut model, char('a'));
    store(
        &mut model,
        Change::Session(session("s", SessionStatus::Completed)),
    );
    assert_eq!(model.desk.overlay, None);
    assert!(
        flash(&model).contains("the debate is completed"),
        "{}",
        flash(&model)
    );
}

#[test]
fn the_memory_store_resolves_an_older_round_once_and_refuses_it_decided_again() {
    let store = MemoryStore::new();
    store.write(Change::Session(session("s", SessionStatus::Running)));
    for round in 1..=3 {
        store.write(Change::Decision(decision(
            "s",
            round,
            Decision::ContinueBaseline.into(),
        )));
    }
    // Two consoles race on round 1, each on a thread of its own: one wins, the other is told.
    let store = Arc::new(store);
    let racers: Vec<_> = ["alice", "bob"]
        .into_iter()
        .map(|operator| {
            let store = store.clone();
            std::thread::spawn(move || {
                let accept = OperatorAction {
                    operator: operator.into(),
                    ..action(
                        "s",
                        1,
                        ActionKind::Accept,
                        Decision::ContinueBaseline.into(),
                    )
                };
                store.resolve_open(accept)
            })
        })
        .collect();
    let answers: Vec<_> = racers.into_iter().map(|r| r.join().unwrap()).collect();
    let won: Vec<_> = answers.iter().filter_map(|a| a.as_ref().ok()).collect();
    assert_eq!(won.len(), 1, "{answers:?}");
    let lost = answers.iter().find_map(|a| a.as_ref().err()).unwrap();
    match lost {
        ResolveError::AlreadyResolved(winner) => assert_eq!(&**winner, won[0]),
        other => panic!("expected already resolved, got {other:?}"),
    }

    // Round 2 decided again under an accept of what it was: refused, nothing written.
    store.write(Change::Decision(decision(
        "s",
        2,
        Decision::StopSafety.into(),
    )));
    let stale = action(
        "s",
        2,
        ActionKind::Accept,
        Decision::ContinueBaseline.into(),
    );
    match store.resolve_open(stale) {
        Err(ResolveError::Refused { reason, .. }) => assert_eq!(
            reason,
            "the controller's decision for round 2 is now \"stop_safety\", not what was confirmed"
        ),
        other => panic!("expected a refusal, got {other:?}"),
    }
    // And once the debate ended, no round is pending.
    store.write(Change::Session(session("s", SessionStatus::Completed)));
    let late = action("s", 3, ActionKind::Override, Decision::StopSafety.into());
    assert!(matches!(
        store.resolve_open(late),
        Err(ResolveError::Refused { .. })
    ));
}

/// The target of `side`'s database for a console.
fn console_target(side: &Side) -> Target {
    Target::exact(&format!("{} application_name=console", side.url)).unwrap()
}

/// Selects debate `gated` on `console` and picks round 1 in its rounds table.
async fn at_round_1(console: &mut Console) {
    console
        .until("rounds 1 and 2 pending, and the role's rights", |m| {
            m.debate("gated")
                .is_some_and(|d| d.pending_at(1).is_some() && d.pending_at(2).is_some())
                && m.live.role.is_some()
        })
        .await;
    console.select("gated");
    console.handle(key(KeyCode::Enter));
    console.handle(key(KeyCode::Home));
    assert_eq!(console.model.selected_round(), Some(1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_consoles_racing_on_an_older_round_land_one_action_on_the_primary() {
    let pair: Pair = migrated_pair("older_race").await;
    let primary = &pair.primary.client;
    primary.execute(SESSION, &[&"gated"]).await.unwrap();
    decide(primary, "gated", 1, Some("stop_converged")).await;
    decide(primary, "gated", 2, Some("continue_baseline")).await;
    // alice reads the subscriber, bob the primary.
    let mut alice = Console::reading(
        &console_target(&pair.primary),
        &console_target(&pair.subscriber),
        "alice",
    )
    .await;
    let mut bob = Console::attach_to(Sides::one(console_target(&pair.primary)), "bob");
    at_round_1(&mut alice).await;
    at_round_1(&mut bob).await;

    alice.press("ay");
    bob.press("ay");
    let answers = [alice.answer().await, bob.answer().await];
    assert_eq!(action_count(primary).await, 1, "{answers:?}");
    let recorded = answers
        .iter()
        .filter(|a| a.starts_with("recorded:") && a.ends_with("round 1"))
        .count();
    let lost = answers
        .iter()
        .filter(|a| a.contains("round 1 of gated was already resolved by"))
        .count();
    assert_eq!((recorded, lost), (1, 1), "{answers:?}");
    // Round 2 is still pending, and round 1 resolved, on both screens.
    for console in [&mut alice, &mut bob] {
        console
            .until("round 1 resolved, round 2 pending", |m| {
                m.debate("gated").is_some_and(|d| {
                    d.actions.contains_key(&1) && d.pending().map(|p| p.round_index) == Some(2)
                })
            })
            .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_store_resolves_each_older_round_once_while_the_orchestrator_decides_on() {
    let database = common::pg::migrated_database("older_store").await;
    let owner = &database.client;
    owner.execute(SESSION, &[&"s"]).await.unwrap();
    for round in 1..=10 {
        decide(owner, "s", round, Some("continue_baseline")).await;
    }
    let (one, two) = (
        database.target.connect_driven().await.unwrap(),
        database.target.connect_driven().await.unwrap(),
    );
    let limits = Limits::default();
    // Each older round: two operators race on it while the orchestrator decides a newer round.
    for round in 1..=10u32 {
        let accept = |operator: &str| OperatorAction {
            operator: operator.into(),
            ..action(
                "s",
                round,
                ActionKind::Accept,
                Decision::ContinueBaseline.into(),
            )
        };
        let (alice, bob) = (accept("alice"), accept("bob"));
        let (a, b, ()) = tokio::join!(
            resolve(&one, &alice, &limits),
            resolve(&two, &bob, &limits),
            decide(owner, "s", 10 + round as i32, Some("continue_baseline"))
        );
        let answers = [a.unwrap(), b.unwrap()];
        let won: Vec<_> = answers.iter().filter_map(|a| a.as_ref().ok()).collect();
        assert_eq!(won.len(), 1, "round {round}: {answers:?}");
        assert_eq!(won[0].round_index, round);
        assert!(
            answers
                .iter()
                .any(|a| matches!(a, Err(ResolveError::AlreadyResolved(_)))),
            "round {round}: {answers:?}"
        );
    }
    assert_eq!(action_count(owner).await, 10, "one action an older round");

    // Round 11 decided again under an accept of what it was: refused, nothing written.
    redecide(owner, "s", 11, "stop_safety").await;
    let stale = action(
        "s",
        11,
        ActionKind::Accept,
        Decision::ContinueBaseline.into(),
    );
    match resolve(&one, &stale, &limits).await.unwrap() {
        Err(ResolveError::Refused { reason, .. }) => assert_eq!(
            reason,
            "the controller's decision for round 11 is now \"stop_safety\", not what was confirmed"
        ),
        other => panic!("expected a refusal, got {other:?}"),
    }
    // Once the debate ended, no round is pending.
    owner
        .batch_execute("UPDATE debate_sessions SET status = 'completed' WHERE id = 's'")
        .await
        .unwrap();
    let late = action("s", 12, ActionKind::Override, Decision::StopSafety.into());
    assert!(matches!(
        resolve(&one, &late, &limits).await.unwrap(),
        Err(ResolveError::Refused { .. })
    ));
    assert_eq!(action_count(owner).await, 10);
}
