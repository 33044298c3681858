//! The operator actions as an audit trail, and actions only on what is actionable.
//!
//! Against a real PostgreSQL started by the tests (no mock): UPDATE, DELETE and TRUNCATE of
//! debate_operator_actions are refused to every role, the owner and a superuser included; the
//! documented way out works and closes behind itself; the recorded role is stamped by the
//! database and cannot be forged; a viewer's console starts read-only and says why; a refused
//! write offers no retry; a stale retry, a stale confirmation and an accept of an empty decision
//! write nothing. Without a database: the same rules in `update()` and the memory store.

use gavel::audit::{ExportRow, Trace};
use gavel::config::Config;
use gavel::console::app::{Command, Event, Link, Model, Overlay, update};
use gavel::domain::{
    Access, ActionKind, Change, Debates, Decision, Limits, OperatorAction, Reported, SessionStatus,
    Stored,
};
use gavel::store::postgres::{
    LocalServer, Target, ensure_roles, grant, history, migrate, observe, revoke, write_if_unchanged,
};
use gavel::store::{MemoryStore, ResolveError};
use tokio_postgres::Client;

use crate::common;
use common::pg::{
    Console, SESSION, action_count, database, decide, redecide, server, table_count, target_as,
    texts,
};
use common::rows::{action, decision, session};
use common::screen;
use common::{char, flash, key};

fn store(model: &mut Model, change: Change) {
    update(model, Event::Store(Box::new(change)));
}

/// A console with debate `s` running, the controller's `decision` of `round` pending.
fn console_at(round: u32, decision_made: Reported<Decision>) -> Model {
    let model = Model::new("test".into(), "alice".into(), &Config::default());
    pending_on(model, round, decision_made)
}

/// `model` with debate `s` running, the controller's `decision` of `round` pending.
fn pending_on(mut model: Model, round: u32, decision_made: Reported<Decision>) -> Model {
    store(
        &mut model,
        Change::Session(session("s", SessionStatus::Running)),
    );
    store(
        &mut model,
        Change::Decision(decision("s", round, decision_made)),
    );
    model
}

fn console_at_round_5() -> Model {
    console_at(5, Decision::StopConverged.into())
}

/// Presses `key`, which must send nothing and leave a footer that `says` that.
fn refused_key(model: &mut Model, key: char, says: &str) {
    assert!(update(model, char(key)).is_empty(), "{key} sent nothing");
    let shown = flash(model);
    assert!(shown.contains(says), "{key}: {shown}");
}

/// Why a store refused an action; fails on anything but a refusal.
fn refused(answer: Result<OperatorAction, ResolveError>) -> String {
    match answer {
        Err(ResolveError::Refused { reason, .. }) => reason,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

fn sent(commands: &[Command]) -> OperatorAction {
    match commands {
        [Command::Resolve(action)] => action.clone(),
        other => panic!("expected one Resolve, got {other:?}"),
    }
}

/// What the database says of `role` when it may record actions and pin notes.
fn may_write(role: &str) -> Access {
    Access {
        role: role.into(),
        actions: None,
        notes: None,
    }
}

/// A console whose accept of round 5 was confirmed and could not be written: `r` retries it.
fn failed_accept() -> Model {
    let mut model = console_at_round_5();
    update(&mut model, char('a'));
    let accept = sent(&update(&mut model, char('y')));
    assert_eq!(accept.round_index, 5);
    let failed = ResolveError::Failed {
        action: Box::new(accept),
        error: "connection refused".into(),
    };
    update(&mut model, Event::Resolved(Err(failed)));
    assert!(model.desk.retry.is_some());
    model
}

#[test]
fn r_on_an_action_that_landed_unanswered_says_it_was_recorded_if_this_role_wrote_it() {
    let mut model = failed_accept();
    update(&mut model, Event::Access(may_write("bob")));
    let mine = OperatorAction {
        role: Some("bob".into()),
        ..model.desk.retry.clone().unwrap()
    };
    // Another role wrote the same action under the same display name: not this console's.
    let mut theirs = model.clone();
    let forged = OperatorAction {
        role: Some("mallory".into()),
        ..mine.clone()
    };
    store(&mut theirs, Change::Action(forged));
    refused_key(
        &mut theirs,
        'r',
        "not retried, nothing was recorded: round 5 of s was already resolved by alice (role mallory)",
    );

    store(&mut model, Change::Action(mine));
    assert!(update(&mut model, char('r')).is_empty(), "nothing sent");
    assert_eq!(
        flash(&model),
        "recorded after all: alice accept stop_converged on s round 5"
    );
    assert!(model.desk.retry.is_none());
}

#[test]
fn a_live_console_holds_actions_until_the_database_says_what_its_role_may_do() {
    let live = Model::live("test".into(), "alice".into(), &Config::default());
    let mut model = pending_on(live, 5, Decision::StopConverged.into());
    let down = Link::Down {
        error: "connection refused".into(),
        retry_in: std::time::Duration::from_secs(1),
    };
    update(&mut model, Event::Link(down));
    refused_key(
        &mut model,
        'a',
        "cannot accept: checking this role's rights…",
    );
    update(&mut model, char('o'));
    update(&mut model, key(crossterm::event::KeyCode::Enter));
    assert!(
        update(&mut model, char('y')).is_empty(),
        "an override is held too"
    );
    let shown = screen(&model);
    assert!(
        shown.contains("read-only: checking this role's rights…"),
        "{shown}"
    );

    update(&mut model, Event::Access(may_write("alice")));
    assert!(!flash(&model).contains("unlock"), "{}", flash(&model));
    update(&mut model, char('a'));
    assert!(matches!(model.desk.overlay, Some(Overlay::Confirm(_))));
    assert_eq!(sent(&update(&mut model, char('y'))).round_index, 5);
}

#[test]
fn r_retries_a_failed_accept_though_a_newer_decision_is_pending_and_not_once_it_changed() {
    // Any decision without an action is pending (the contract), not only the latest.
    let mut model = failed_accept();
    store(
        &mut model,
        Change::Decision(decision("s", 6, Decision::ContinueBaseline.into())),
    );
    let retried = sent(&update(&mut model, char('r')));
    assert_eq!(
        (retried.round_index, retried.decision),
        (5, Decision::StopConverged.into())
    );

    // Decided again under the accept: the retry would accept what nobody confirmed.
    let mut model = failed_accept();
    store(
        &mut model,
        Change::Decision(decision("s", 5, Decision::StopSafety.into())),
    );
    refused_key(
        &mut model,
        'r',
        "not retried, nothing was recorded: the controller's decision for round 5 is now \"stop_safety\", not what was confirmed",
    );
    assert!(model.desk.retry.is_none(), "and nothing is left to retry");
}

#[test]
fn r_refuses_a_retry_once_the_debate_has_finished_or_someone_resolved_it() {
    let mut model = failed_accept();
    let bobs = OperatorAction {
        operator: "bob".into(),
        role: Some("bob_role".into()),
        ..action("s", 5, ActionKind::Override, Decision::StopSafety.into())
    };
    store(&mut model, Change::Action(bobs));
    refused_key(
        &mut model,
        'r',
        "already resolved by bob (role bob_role): override -> stop_safety",
    );

    let mut model = failed_accept();
    store(
        &mut model,
        Change::Session(session("s", SessionStatus::Completed)),
    );
    refused_key(
        &mut model,
        'r',
        "the debate's status is \"completed\", not running",
    );
}

#[test]
fn a_confirmation_that_went_stale_closes_itself_and_y_sends_nothing() {
    let mut model = console_at_round_5();
    update(&mut model, char('o'));
    update(
        &mut model,
        Event::Key(crossterm::event::KeyCode::Enter.into()),
    );
    assert!(matches!(model.desk.overlay, Some(Overlay::Confirm(_))));
    // A newer decision leaves round 5 pending: the confirmation stays, and so does the same
    // decision read again.
    store(
        &mut model,
        Change::Decision(decision("s", 6, Decision::ContinueBaseline.into())),
    );
    store(
        &mut model,
        Change::Decision(decision("s", 5, Decision::StopConverged.into())),
    );
    assert!(matches!(model.desk.overlay, Some(Overlay::Confirm(_))));
    // Round 5 decided again otherwise: stale.
    store(
        &mut model,
        Change::Decision(decision("s", 5, Decision::StopSafety.into())),
    );
    assert_eq!(model.desk.overlay, None);
    assert_eq!(
        flash(&model),
        "closed s round 5: decided again: now stop_safety"
    );
    let sent = update(&mut model, char('y'));
    assert!(
        !sent.iter().any(|c| matches!(c, Command::Resolve(_))),
        "y recorded nothing: {sent:?}"
    );
}

#[test]
fn accepting_a_decision_that_is_null_writes_nothing() {
    // NULL in debate_round_decisions.decision reads as the empty string.
    let mut model = console_at(2, Reported::Unknown(Box::default()));
    refused_key(
        &mut model,
        'a',
        "cannot accept: the controller's decision for round 2 is empty: nothing to accept",
    );
    assert!(model.desk.overlay.is_none(), "no confirmation to say y to");
    // An override still lets the operator decide.
    update(&mut model, char('o'));
    assert!(matches!(model.desk.overlay, Some(Overlay::Choose(_))));
}

#[test]
fn a_refused_write_offers_no_retry() {
    let mut model = console_at_round_5();
    update(&mut model, char('a'));
    let accept = sent(&update(&mut model, char('y')));
    let denied = ResolveError::refused(
        &accept,
        "permission denied for table debate_operator_actions",
    );
    update(&mut model, Event::Resolved(Err(denied)));
    assert!(model.desk.retry.is_none());
    let shown = flash(&model);
    assert!(
        shown.starts_with("not recorded: accept stop_converged on s round 5: permission denied")
    );
    assert!(!shown.contains("retry"), "{shown}");
    refused_key(&mut model, 'r', "nothing to retry");
}

#[test]
fn a_watch_only_role_makes_the_console_read_only_and_unlocking_cannot_help() {
    let mut model = console_at_round_5();
    let why = "role carol cannot insert into debate_operator_actions";
    let watch_only = Access {
        actions: Some(why.into()),
        ..may_write("carol")
    };
    update(&mut model, Event::Access(watch_only));
    assert!(model.settings.read_only);
    assert_eq!(flash(&model), format!("read-only: {why}"));
    let shown = screen(&model);
    assert!(shown.contains(&format!("read-only: {why}")), "{shown}");
    for key in ['a', 'o', 'e', 'r'] {
        refused_key(&mut model, key, why);
        assert!(model.desk.overlay.is_none());
    }
    update(&mut model, char('U'));
    assert!(model.desk.overlay.is_none(), "no unlock to confirm");
    assert_eq!(flash(&model), format!("still read-only: {why}"));

    // Granted meanwhile: the next connect says so, and unlocking works again.
    update(&mut model, Event::Access(may_write("carol")));
    assert!(model.live.denied.is_none() && model.settings.read_only);
    update(&mut model, char('U'));
    update(&mut model, char('y'));
    update(&mut model, char('a'));
    assert!(matches!(model.desk.overlay, Some(Overlay::Confirm(_))));
}

#[test]
fn a_note_is_refused_for_the_notes_own_reason_whatever_the_database_says_of_actions() {
    let actions = "role carol cannot insert into debate_operator_actions";
    let notes = "role carol cannot insert into gavel_debate_notes";
    // A viewer may do neither: `N` says what the notes' table lacks, `a` the actions'.
    let mut viewer = console_at_round_5();
    let neither = Access {
        actions: Some(actions.into()),
        notes: Some(notes.into()),
        ..may_write("carol")
    };
    update(&mut viewer, Event::Access(neither));
    refused_key(&mut viewer, 'N', &format!("cannot pin a note: {notes}"));
    assert!(!flash(&viewer).contains("debate_operator_actions"));
    refused_key(&mut viewer, 'a', actions);

    // Granted notes alone: read-only for actions, and the note line opens.
    let only_notes = Access {
        actions: Some(actions.into()),
        ..may_write("carol")
    };
    update(&mut viewer, Event::Access(only_notes));
    update(&mut viewer, char('N'));
    assert!(matches!(viewer.desk.overlay, Some(Overlay::Pin(ref id)) if id == "s"));

    // An operator granted before the notes' table existed acts, and cannot pin a note.
    let mut operator = console_at_round_5();
    let only_actions = Access {
        notes: Some(notes.into()),
        ..may_write("carol")
    };
    update(&mut operator, Event::Access(only_actions));
    refused_key(&mut operator, 'N', &format!("cannot pin a note: {notes}"));
    update(&mut operator, char('a'));
    assert!(matches!(operator.desk.overlay, Some(Overlay::Confirm(_))));
}

#[test]
fn the_memory_store_records_only_actions_on_open_decisions() {
    let store = MemoryStore::new();
    store.write(Change::Session(session("s", SessionStatus::Running)));
    store.write(Change::Decision(decision(
        "s",
        1,
        Decision::ContinueBaseline.into(),
    )));
    store.write(Change::Decision(decision(
        "s",
        2,
        Reported::Unknown(Box::default()),
    )));
    // Round 1 stays pending beside round 2: accepted as it stands, not as it stood.
    let changed = action("s", 1, ActionKind::Accept, Decision::StopSafety.into());
    assert_eq!(
        refused(store.resolve_open(changed)),
        "the controller's decision for round 1 is now \"continue_baseline\", not what was confirmed"
    );
    let older = action(
        "s",
        1,
        ActionKind::Accept,
        Decision::ContinueBaseline.into(),
    );
    assert_eq!(store.resolve_open(older.clone()).unwrap().round_index, 1);
    assert!(matches!(
        store.resolve_open(older),
        Err(ResolveError::AlreadyResolved(_))
    ));
    let empty = action(
        "s",
        2,
        ActionKind::Accept,
        Reported::Unknown(Box::default()),
    );
    assert_eq!(
        refused(store.resolve_open(empty)),
        "the controller's decision for round 2 is empty: nothing to accept"
    );
    let unknown = action("t", 1, ActionKind::Accept, Decision::StopConverged.into());
    assert_eq!(
        refused(store.resolve_open(unknown)),
        "the debate has no row in debate_sessions"
    );
    let stop = action("s", 2, ActionKind::Override, Decision::StopSafety.into());
    let recorded = store.resolve_open(stop.clone()).unwrap();
    assert_eq!(recorded.decision, stop.decision);
    assert!(matches!(
        store.resolve_open(stop),
        Err(ResolveError::AlreadyResolved(_))
    ));
    store.write(Change::Decision(decision(
        "s",
        3,
        Decision::StopConverged.into(),
    )));
    store.write(Change::Session(session("s", SessionStatus::Aborted)));
    let late = action("s", 3, ActionKind::Accept, Decision::StopConverged.into());
    assert_eq!(
        refused(store.resolve_open(late)),
        "the debate's status is \"aborted\", not running"
    );
}

// ---- against PostgreSQL ----

/// The console's write, within the default limits.
async fn resolve(
    client: &Client,
    action: &OperatorAction,
) -> gavel::store::postgres::Result<Result<OperatorAction, ResolveError>> {
    gavel::store::postgres::resolve(client, action, &Limits::default()).await
}

/// A migrated database `name` with gavel's roles, the login roles `bob` (operator), `carol`
/// (viewer) and `dave` (granted UPDATE, DELETE and TRUNCATE on the actions outright), and the
/// gated debate `s` with its decision of round 1 pending.
async fn audited(server: &LocalServer, name: &str) -> (Target, Client) {
    let (target, mut client) = database(server, name).await;
    migrate(&mut client).await.unwrap();
    ensure_roles(&client).await.unwrap();
    client
        .batch_execute(
            "DO $$ BEGIN
                 CREATE ROLE bob LOGIN; CREATE ROLE carol LOGIN; CREATE ROLE dave LOGIN;
             EXCEPTION WHEN duplicate_object THEN NULL; END $$;",
        )
        .await
        .unwrap();
    grant(&client, &["carol".into()], &["bob".into()])
        .await
        .unwrap();
    client
        .batch_execute(
            "GRANT gavel_viewer TO dave;
             GRANT UPDATE, DELETE, TRUNCATE ON debate_operator_actions TO dave;",
        )
        .await
        .unwrap();
    client.execute(SESSION, &[&"s"]).await.unwrap();
    decide(&client, "s", 1, Some("continue_baseline")).await;
    (target, client)
}

/// [`audited`], then `sql` run by the owner: the owner's connection.
async fn audited_then(server: &LocalServer, name: &str, sql: &str) -> Client {
    let (_, owner) = audited(server, name).await;
    owner.batch_execute(sql).await.unwrap();
    owner
}

async fn connect_as(server: &LocalServer, name: &str, user: &str) -> Client {
    target_as(server, name, user, "audit")
        .connect_driven()
        .await
        .unwrap()
}

/// [`audited`], then bob's console accepts round 1 as "alice": connections as the owner and as
/// bob, and the row recorded.
async fn accepted_by_bob(server: &LocalServer, name: &str) -> (Client, Client, OperatorAction) {
    let (_, owner) = audited(server, name).await;
    let bob = connect_as(server, name, "bob").await;
    let accept = action(
        "s",
        1,
        ActionKind::Accept,
        Decision::ContinueBaseline.into(),
    );
    let recorded = resolve(&bob, &accept).await.unwrap().unwrap();
    (owner, bob, recorded)
}

/// The one action row, every column as text.
async fn action_row(client: &Client) -> String {
    client
        .query_one(
            "SELECT row(a.*)::text FROM debate_operator_actions a WHERE session_id = 's'",
            &[],
        )
        .await
        .unwrap()
        .get(0)
}

/// The action on round 1 of `s`, inserted as an orchestrator does, by `operator`.
async fn insert_as_orchestrator(client: &Client, operator: &str) {
    client
        .execute(
            "INSERT INTO debate_operator_actions (session_id, round_index, action, decision, operator) \
             VALUES ('s', 1, 'accept', 'continue_baseline', $1)",
            &[&operator],
        )
        .await
        .unwrap();
}

/// The SQLSTATE and message of a statement that must fail.
async fn refusal(client: &Client, sql: &str) -> (String, String) {
    let error = client.batch_execute(sql).await.expect_err(sql);
    let db = error.as_db_error().expect("the server's refusal");
    (db.code().code().to_owned(), db.message().to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_role_can_rewrite_the_audit_trail_not_even_its_owner() {
    let server = server();
    let (owner, bob, _) = accepted_by_bob(&server, "rewrite").await;
    let before = action_row(&owner).await;

    let dave = connect_as(&server, "rewrite", "dave").await;
    let rewrites = [
        "UPDATE debate_operator_actions SET operator = 'mallory'",
        "DELETE FROM debate_operator_actions",
        "TRUNCATE debate_operator_actions",
    ];
    for (who, client) in [
        ("the owner, a superuser", &owner),
        ("dave, granted it", &dave),
    ] {
        for sql in rewrites {
            let (code, message) = refusal(client, sql).await;
            assert_eq!(code, "42501", "{who}: {sql}");
            assert!(
                message.contains("append-only audit trail"),
                "{who}: {message}"
            );
        }
    }
    // Replica mode skips ordinary triggers; these fire always.
    let (code, _) = refusal(
        &owner,
        "SET session_replication_role = replica; DELETE FROM debate_operator_actions",
    )
    .await;
    assert_eq!(code, "42501");
    owner
        .batch_execute("RESET session_replication_role")
        .await
        .unwrap();
    for sql in rewrites {
        let (code, message) = refusal(&bob, sql).await;
        assert_eq!(code, "42501", "bob: {sql}");
        assert!(message.contains("permission denied"), "bob: {message}");
    }
    assert_eq!(action_row(&owner).await, before, "the row is as written");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_way_out_is_deliberate_and_closes_behind_itself() {
    let server = server();
    let (_, owner) = audited(&server, "wayout").await;
    insert_as_orchestrator(&owner, "test entry").await;
    let error = owner
        .batch_execute("DELETE FROM debate_operator_actions")
        .await
        .unwrap_err();
    let db = error.as_db_error().unwrap();
    assert!(db.message().contains("append-only"), "{}", db.message());
    let hint = db.hint().unwrap_or_default();
    assert!(
        hint.contains("DISABLE TRIGGER gavel_append_only;"),
        "the refusal names the way out: {hint}"
    );
    owner
        .batch_execute(
            "BEGIN;
             ALTER TABLE debate_operator_actions DISABLE TRIGGER gavel_append_only;
             DELETE FROM debate_operator_actions WHERE operator = 'test entry';
             ALTER TABLE debate_operator_actions ENABLE ALWAYS TRIGGER gavel_append_only;
             COMMIT;",
        )
        .await
        .unwrap();
    assert_eq!(action_count(&owner).await, 0);
    insert_as_orchestrator(&owner, "kept").await;
    let (code, _) = refusal(&owner, "DELETE FROM debate_operator_actions").await;
    assert_eq!(code, "42501", "closed again");
    // An operator cannot take the way out.
    let bob = connect_as(&server, "wayout", "bob").await;
    let (_, message) = refusal(
        &bob,
        "ALTER TABLE debate_operator_actions DISABLE TRIGGER gavel_append_only",
    )
    .await;
    assert!(message.contains("must be owner"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_recorded_role_is_the_writers_and_cannot_be_forged() {
    let server = server();
    // bob calls himself alice: the display name is his to choose, the role is not.
    let (owner, bob, recorded) = accepted_by_bob(&server, "stamped").await;
    assert_eq!(recorded.operator, "alice");
    assert_eq!(recorded.role.as_deref(), Some("bob"));
    assert_eq!(recorded.who(), "alice (role bob)");

    // Neither the role column nor the time is the operator's to write.
    for (column, value) in [("operator_role", "'alice'"), ("created_at", "'2000-01-01'")] {
        let sql = format!(
            "INSERT INTO debate_operator_actions \
             (session_id, round_index, action, decision, operator, {column}) \
             VALUES ('s', 2, 'accept', 'stop_converged', 'x', {value})"
        );
        let (code, message) = refusal(&bob, &sql).await;
        assert_eq!(code, "42501", "{column}: {message}");
    }
    // Even the owner's explicit value is replaced; an orchestrator that knows nothing of the
    // column gets it stamped.
    owner
        .batch_execute(
            "INSERT INTO debate_operator_actions (session_id, round_index, action, decision, operator, operator_role) \
                 VALUES ('s', 2, 'accept', 'stop_converged', 'orchestrator', 'alice');
             INSERT INTO debate_operator_actions (session_id, round_index, action, decision, operator) \
                 VALUES ('s', 3, 'accept', 'stop_converged', 'timeout');",
        )
        .await
        .unwrap();
    // Replication mode, which skips ordinary triggers, does not skip the stamp (a superuser
    // here; PostgreSQL 15 lets one grant others the right to set it).
    owner
        .batch_execute(
            "SET session_replication_role = replica;
             INSERT INTO debate_operator_actions (session_id, round_index, action, decision, operator, operator_role) \
                 VALUES ('s', 4, 'accept', 'stop_converged', 'replica', 'alice');
             RESET session_replication_role;",
        )
        .await
        .unwrap();
    let roles = texts(
        &owner,
        "SELECT operator_role FROM debate_operator_actions ORDER BY round_index",
    )
    .await;
    assert_eq!(roles, ["bob", "postgres", "postgres", "postgres"]);

    // The trace and the export show both names.
    let debates: Debates = history(&owner, "s", &Default::default())
        .await
        .unwrap()
        .into_iter()
        .collect();
    let trace = Trace::of(debates.get_by_id("s").unwrap());
    assert!(
        trace.text().contains("by alice (role bob)"),
        "{}",
        trace.text()
    );
    let json = serde_json::to_value(&trace).unwrap();
    assert_eq!(json["rounds"][0]["action"]["operator"], "alice");
    assert_eq!(json["rounds"][0]["action"]["operator_role"], "bob");
    let round_index = Some(i64::from(recorded.round_index));
    let exported = ExportRow::of(Stored {
        change: Change::Action(recorded),
        round_index,
        signal_json: None,
    })
    .unwrap();
    assert_eq!(
        (
            exported.operator.as_deref(),
            exported.operator_role.as_deref()
        ),
        (Some("alice"), Some("bob"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_is_answered_recorded_only_when_the_row_is_this_roles_own() {
    let server = server();
    let (owner, bob, recorded) = accepted_by_bob(&server, "own").await;
    let retry = action(
        "s",
        1,
        ActionKind::Accept,
        Decision::ContinueBaseline.into(),
    );
    assert_eq!(resolve(&bob, &retry).await.unwrap().unwrap(), recorded);
    // Another operator role under the same display name did not write it.
    owner
        .batch_execute("CREATE ROLE erin LOGIN; GRANT gavel_operator TO erin;")
        .await
        .unwrap();
    let erin = connect_as(&server, "own", "erin").await;
    match resolve(&erin, &retry).await.unwrap() {
        Err(ResolveError::AlreadyResolved(winner)) => assert_eq!(*winner, recorded),
        other => panic!("expected already resolved, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decision_landing_between_the_check_and_the_write_writes_nothing() {
    let server = server();
    let (_, owner) = audited(&server, "between").await;
    let bob = connect_as(&server, "between", "bob").await;
    let accept = action(
        "s",
        1,
        ActionKind::Accept,
        Decision::ContinueBaseline.into(),
    );
    let observed = observe(&bob, &accept).await.unwrap();
    assert_eq!(accept.check_open(&observed.state), Ok(()));
    assert_eq!(observed.role, "bob");
    // The orchestrator's next decision lands after the check: round 1 stays pending.
    decide(&owner, "s", 2, Some("stop_converged")).await;
    assert_eq!(observe(&bob, &accept).await.unwrap(), observed);
    // Round 1 decided again after the check, before the write.
    redecide(&owner, "s", 1, "stop_safety").await;
    assert_eq!(
        write_if_unchanged(&bob, &accept, &observed).await.unwrap(),
        None
    );
    assert_eq!(
        refused(resolve(&bob, &accept).await.unwrap()),
        "the controller's decision for round 1 is now \"stop_safety\", not what was confirmed"
    );
    // The same for the debate finishing.
    let accept = action("s", 2, ActionKind::Accept, Decision::StopConverged.into());
    let observed = observe(&bob, &accept).await.unwrap();
    assert_eq!(accept.check_open(&observed.state), Ok(()));
    owner
        .batch_execute("UPDATE debate_sessions SET status = 'completed' WHERE id = 's'")
        .await
        .unwrap();
    let written = write_if_unchanged(&bob, &accept, &observed).await;
    assert_eq!(written.unwrap(), None);
    assert_eq!(action_count(&owner).await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn racing_decisions_leave_each_older_round_pending_and_resolved_once() {
    let server = server();
    let (_, owner) = audited(&server, "race").await;
    let bob = connect_as(&server, "race", "bob").await;
    // Each round, the orchestrator's next decision and the operator's accept of the current one
    // race: the newer decision leaves the current one pending, so every accept is recorded on
    // its own round.
    for round in 1..=30 {
        let accept = action(
            "s",
            round,
            ActionKind::Accept,
            Decision::ContinueBaseline.into(),
        );
        let (answer, ()) = tokio::join!(
            resolve(&bob, &accept),
            decide(&owner, "s", round as i32 + 1, Some("continue_baseline"))
        );
        assert_eq!(answer.unwrap().unwrap().round_index, round);
    }
    assert_eq!(action_count(&owner).await, 30, "one action a round");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_round_far_past_the_limits_does_not_block_actions() {
    let server = server();
    let (_, owner) = audited(&server, "hostile").await;
    decide(&owner, "s", i32::MAX, Some("stop_converged")).await;
    let bob = connect_as(&server, "hostile", "bob").await;
    let accept = action(
        "s",
        1,
        ActionKind::Accept,
        Decision::ContinueBaseline.into(),
    );
    let recorded = resolve(&bob, &accept).await.unwrap().unwrap();
    assert_eq!(recorded.role.as_deref(), Some("bob"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_transaction_is_a_failure_to_retry_not_a_refusal() {
    let server = server();
    let (_, owner) = audited(&server, "standby").await;
    let bob = connect_as(&server, "standby", "bob").await;
    // As on a standby after a failover: SQLSTATE 25006.
    bob.batch_execute("SET default_transaction_read_only = on")
        .await
        .unwrap();
    let accept = action(
        "s",
        1,
        ActionKind::Accept,
        Decision::ContinueBaseline.into(),
    );
    let error = resolve(&bob, &accept).await.unwrap_err();
    assert_eq!(
        error.database().and_then(tokio_postgres::Error::code),
        Some(&tokio_postgres::error::SqlState::READ_ONLY_SQL_TRANSACTION),
        "{error}"
    );
    bob.batch_execute("SET default_transaction_read_only = off")
        .await
        .unwrap();
    assert!(resolve(&bob, &accept).await.unwrap().is_ok());
    drop(owner);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_role_that_may_insert_but_not_read_back_may_only_watch() {
    let server = server();
    audited_then(
        &server,
        "insertonly",
        "CREATE ROLE frank LOGIN;
         GRANT INSERT (session_id, round_index, action, decision, persona, operator, note)
             ON debate_operator_actions TO frank;
         GRANT USAGE ON SEQUENCE debate_operator_actions_id_seq TO frank;",
    )
    .await;
    let frank = connect_as(&server, "insertonly", "frank").await;
    assert_eq!(
        gavel::store::postgres::access(&frank).await.unwrap(),
        Access {
            actions: Some("role frank cannot select from debate_operator_actions".into()),
            notes: Some(
                "role frank cannot insert into gavel_debate_notes, nor select from \
                 gavel_debate_notes, nor use the sequence public.gavel_debate_notes_id_seq"
                    .into()
            ),
            ..may_write("frank")
        }
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn roles_are_set_up_by_a_table_owner_who_does_not_own_the_database() {
    let server = server();
    audited_then(
        &server,
        "managed",
        "CREATE ROLE tables LOGIN CREATEROLE;
         ALTER TABLE debate_sessions OWNER TO tables;
         ALTER TABLE debate_rounds OWNER TO tables;
         ALTER TABLE debate_round_decisions OWNER TO tables;
         ALTER TABLE debate_round_judgments OWNER TO tables;
         ALTER TABLE debate_operator_actions OWNER TO tables;
         ALTER TABLE gavel_controller_settings OWNER TO tables;
         GRANT gavel_viewer, gavel_operator TO tables WITH ADMIN OPTION;
         REVOKE CONNECT ON DATABASE managed FROM gavel_viewer, PUBLIC;
         GRANT CONNECT ON DATABASE managed TO tables, bob;",
    )
    .await;
    let tables = connect_as(&server, "managed", "tables").await;
    let warnings = ensure_roles(&tables).await.unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].starts_with("gavel_viewer has no CONNECT on this database"),
        "{warnings:?}"
    );
    // The rest was granted all the same: bob, who may connect, may act.
    let bob = connect_as(&server, "managed", "bob").await;
    assert_eq!(
        gavel::store::postgres::access(&bob).await.unwrap(),
        may_write("bob")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_viewers_console_watches_read_only_and_says_why() {
    let server = server();
    let (_, owner) = audited(&server, "viewer").await;
    let mut carol = Console::attach(target_as(&server, "viewer", "carol", "gavel"));
    carol
        .until("the live link and the pending decision", |m| {
            m.live.link == Some(Link::Live) && m.debate("s").is_some_and(|d| d.pending().is_some())
        })
        .await;
    let why = "role carol cannot insert into debate_operator_actions, nor use the sequence \
               public.debate_operator_actions_id_seq";
    assert_eq!(carol.model.live.denied.as_deref(), Some(why));
    assert!(carol.model.settings.read_only);
    assert!(screen(&carol.model).contains(&format!("read-only: {why}")));
    carol.select("s");
    carol.press("a");
    assert!(carol.model.desk.overlay.is_none());
    assert!(carol.flash().ends_with(why));
    // LISTEN needs no privilege: the viewer follows new rows.
    owner
        .batch_execute(
            "INSERT INTO debate_rounds (session_id, round_number, agent_persona, content) \
             VALUES ('s', 2, 'skeptic', 'later')",
        )
        .await
        .unwrap();
    carol
        .until("the new turn", |m| {
            m.debate("s").is_some_and(|d| d.turns.len() == 1)
        })
        .await;

    // Had the console missed the check, the database's refusal is final: no retry offered.
    carol.model.live.denied = None;
    carol.model.settings.read_only = false;
    carol.press("ay");
    carol
        .until("the refusal", |m| {
            m.desk
                .flash
                .as_ref()
                .is_some_and(|f| f.text.starts_with("not recorded"))
        })
        .await;
    assert!(
        carol.flash().contains("permission denied"),
        "{}",
        carol.flash()
    );
    assert!(!carol.flash().contains("press r"), "{}", carol.flash());
    assert!(carol.model.desk.retry.is_none());
    assert_eq!(action_count(&owner).await, 0);

    // An operator's console may act from the start.
    let bob = Console::live(target_as(&server, "viewer", "bob", "gavel")).await;
    assert!(bob.model.live.denied.is_none() && !bob.model.settings.read_only);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn roles_and_migrations_are_idempotent_and_revocable() {
    let server = server();
    let (_, mut owner) = audited(&server, "idempotent").await;
    assert!(migrate(&mut owner).await.unwrap().is_empty());
    ensure_roles(&owner).await.unwrap();
    grant(&owner, &["carol".into()], &["bob".into()])
        .await
        .unwrap();
    let triggers = table_count(
        &owner,
        "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'debate_operator_actions'::regclass \
         AND tgname IN ('gavel_append_only', 'gavel_append_only_truncate', 'gavel_operator_role')",
    )
    .await;
    assert_eq!(triggers, 3);
    revoke(&owner, &["bob".into()]).await.unwrap();
    let bob = connect_as(&server, "idempotent", "bob").await;
    let (code, _) = refusal(&bob, "SELECT count(*) FROM debate_sessions").await;
    assert_eq!(code, "42501", "revoked: not even a viewer");
    let error = grant(&owner, &["nobody".into()], &[]).await.unwrap_err();
    assert!(
        matches!(
            &error,
            gavel::store::postgres::Error::Database { doing, cause }
                if doing == "granting gavel_viewer to role \"nobody\""
                    && cause.code() == Some(&tokio_postgres::error::SqlState::UNDEFINED_OBJECT)
        ),
        "{error}"
    );

    assert_eq!(
        gavel::store::postgres::access(&bob).await.unwrap(),
        Access {
            actions: Some(
                "role bob cannot insert into debate_operator_actions, nor select from \
                 debate_operator_actions, nor use the sequence \
                 public.debate_operator_actions_id_seq"
                    .into()
            ),
            notes: Some(
                "role bob cannot insert into gavel_debate_notes, nor select from \
                 gavel_debate_notes, nor use the sequence public.gavel_debate_notes_id_seq"
                    .into()
            ),
            ..may_write("bob")
        }
    );

    // The command line: `gavel grant`, then bob may act again.
    let output = crate::common::gavel()
        .args([
            "grant",
            "--db",
            &server.url("idempotent"),
            "--operator",
            "bob",
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).lines().next(),
        Some("bob: gavel_operator")
    );
    assert_eq!(
        gavel::store::postgres::access(&bob).await.unwrap(),
        may_write("bob")
    );

    // Into a pipe whose reader has gone, both end quietly.
    for command in ["grant", "migrate"] {
        let mut child = crate::common::gavel()
            .args([command, "--db", &server.url("idempotent")])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let output = child.wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{command}: {output:?}");
        assert!(output.stderr.is_empty(), "{command}: {output:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_retry_an_empty_accept_and_a_finished_debate_write_nothing() {
    let server = server();
    let (target, owner) = audited(&server, "stale").await;
    let mut console = Console::at_pending(target, "s").await;
    drop(owner);

    // Round 1's accept fails while the server is down ...
    let server = console.act_while_down(server, "ay").await;
    // ... round 2's decision lands (round 1 stays pending beside it) ...
    let owner = connect_as(&server, "stale", "postgres").await;
    decide(&owner, "s", 2, None).await;
    console
        .until("round 2's decision", |m| {
            m.debate("s").is_some_and(|d| d.decisions.contains_key(&2))
        })
        .await;
    // ... and round 1's decision is decided again before the operator retries.
    redecide(&owner, "s", 1, "stop_safety").await;
    console
        .until("round 1 decided again", |m| {
            m.debate("s")
                .and_then(|d| d.decisions.get(&1))
                .is_some_and(|d| d.decision == Decision::StopSafety.into())
        })
        .await;
    console.press("r");
    assert_eq!(
        console.flash(),
        "not retried, nothing was recorded: the controller's decision for round 1 is now \"stop_safety\", not what was confirmed"
    );
    console.press("a");
    assert!(
        console.flash().starts_with("cannot accept"),
        "{}",
        console.flash()
    );

    // The store checks again, whatever a console believed.
    let stale = action(
        "s",
        1,
        ActionKind::Accept,
        Decision::ContinueBaseline.into(),
    );
    assert_eq!(
        refused(resolve(&owner, &stale).await.unwrap()),
        "the controller's decision for round 1 is now \"stop_safety\", not what was confirmed"
    );
    let empty = action(
        "s",
        2,
        ActionKind::Accept,
        Reported::Unknown(Box::default()),
    );
    assert_eq!(
        refused(resolve(&owner, &empty).await.unwrap()),
        "the controller's decision for round 2 is empty: nothing to accept"
    );
    let guessed = action("s", 2, ActionKind::Accept, Decision::StopConverged.into());
    assert!(refused(resolve(&owner, &guessed).await.unwrap()).contains("is empty"));
    owner
        .batch_execute("UPDATE debate_sessions SET status = 'completed' WHERE id = 's'")
        .await
        .unwrap();
    let stop = action("s", 2, ActionKind::Override, Decision::StopSafety.into());
    assert_eq!(
        refused(resolve(&owner, &stop).await.unwrap()),
        "the debate's status is \"completed\", not running"
    );
    assert_eq!(action_count(&owner).await, 0, "nothing was written");
    drop(server);
}
