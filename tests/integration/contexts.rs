//! One console over several databases, as `update()` sees it: the same recordings in two
//! contexts are two debates each, listed with their context; the counts and `p` run across
//! them; an action goes to its debate's own database, under that database's rights; `:ctx`
//! shows one context or all; a context down is marked in the header and on its debates while
//! the others' rows flow on. Against real servers: `postgres::fleets`.

use std::time::Duration;

use crate::common;

use common::{char, key, play, screen_at};
use crossterm::event::KeyCode;
use gavel::config::Config;
use gavel::console::app::{Command, Context, Contexts, Ctx, Event, Link, Model, update};
use gavel::console::reports::ReportsWorker;
use gavel::domain::{Access, Change, Claim, OperatorAction, Peer, Status};
use gavel::simulate::{DebateRun, Fixture, Ids};
use gavel::store::ResolveError;

/// The first rows of every bundled recording, as one orchestrator writes them: the same rows
/// go to each database.
fn recorded_rows() -> Vec<Change> {
    let ids = Ids::default();
    let mut rows = Vec::new();
    for fixture in Fixture::bundled().unwrap() {
        let mut run = DebateRun::new(fixture, std::sync::Arc::new(Config::default()), ids.clone());
        rows.extend(play(&mut run, 20));
    }
    rows
}

/// What context `ctx`'s database says.
pub(crate) fn from(ctx: Ctx, event: Event) -> Event {
    Event::In(ctx, Box::new(event))
}

/// A console on the databases `prod` and `staging`, both live (an operator's rights on each),
/// each holding the same recordings.
pub(crate) fn two_contexts() -> Model {
    two_contexts_reporting().0
}

/// [`two_contexts`], with the reports worker that saw its rows.
pub(crate) fn two_contexts_reporting() -> (Model, ReportsWorker) {
    let reports = ReportsWorker::of(&Config::default());
    let mut model = Model::live(
        "watch: prod, staging".into(),
        "alice".into(),
        &Config::default(),
    );
    model.live.contexts = Contexts::new(vec![
        Context::new("prod".into(), false, None),
        Context::new("staging".into(), false, None),
    ]);
    for ctx in [0, 1] {
        update(&mut model, from(ctx, Event::Link(Link::Live)));
        update(&mut model, from(ctx, Event::Access(operator())));
    }
    let rows = recorded_rows();
    for ctx in [0, 1] {
        for row in &rows {
            update(&mut model, from(ctx, Event::Store(Box::new(row.clone()))));
            reports.relieve(&mut model);
        }
    }
    model.prepare_frame();
    (model, reports)
}

/// What a database lets an operator's role do: everything.
pub(crate) fn operator() -> Access {
    Access {
        role: "alice".into(),
        actions: None,
        notes: None,
    }
}

/// The actions sent by `a` then `y` (accept, confirmed) on the selected debate, each with the
/// context it is addressed to.
fn accept(model: &mut Model) -> Vec<(Option<Ctx>, OperatorAction)> {
    update(model, char('a'));
    resolves(&update(model, char('y')))
}

/// The debate `id` of context `ctx`, selected.
pub(crate) fn select_in(model: &mut Model, ctx: Ctx, id: &str) {
    let seq = model.debates.seq_in(ctx, id).expect("debate held");
    model.select(seq);
}

#[test]
fn the_same_debate_in_two_databases_is_two_debates_each_with_its_context() {
    let model = two_contexts();
    let bundled = Fixture::bundled().unwrap();
    assert_eq!(model.debates.len(), 2 * bundled.len());
    for fixture in &bundled {
        let id = &fixture.session.id;
        let (prod, staging) = (
            model.debates.seq_in(0, id).unwrap(),
            model.debates.seq_in(1, id).unwrap(),
        );
        assert_ne!(prod, staging, "{id}");
        assert_eq!(model.debates.get(prod).unwrap().ctx, 0);
        assert_eq!(model.debates.get(staging).unwrap().ctx, 1);
    }
    // The demo's two gated debates wait in each database: the counts run across both.
    assert_eq!(model.debates.waiting(), 4);
    assert!(model.columned());
}

#[test]
fn the_reports_tell_the_same_id_in_two_databases_apart() {
    let (mut model, mut reports) = two_contexts_reporting();
    update(&mut model, char('c'));
    reports.catch_up(&mut model);
    // Seven demo debates finish without an operator in each database.
    assert_eq!(model.reports.figures().calibration.debates, 14);
}

#[test]
fn the_list_has_a_context_column_when_several_are_shown() {
    let model = two_contexts();
    insta::assert_snapshot!("contexts_list", screen_at(&model, 160, 48));
    insta::assert_snapshot!("contexts_list_small", screen_at(&model, 80, 24));
}

#[test]
fn a_context_down_is_marked_in_the_header_and_on_its_debates_while_the_others_flow() {
    let mut model = two_contexts();
    let down = Link::Down {
        error: "connection refused".into(),
        retry_in: Duration::from_millis(1500),
    };
    update(&mut model, from(1, Event::Link(down)));
    assert!(common::flash(&model).contains("staging is down"));
    assert!(matches!(model.live.link, Some(Link::Down { .. })));
    model.desk.flash = None;
    model.prepare_frame();
    insta::assert_snapshot!("contexts_one_down", screen_at(&model, 160, 48));

    // prod's rows still land, and staging's when it is back (its feed catches up).
    let before = model.debates.len();
    let mut fresh = recorded_rows()
        .into_iter()
        .find(|row| matches!(row, Change::Session(_)))
        .unwrap();
    *fresh.session_id_mut() = "prod-only".into();
    update(&mut model, from(0, Event::Store(Box::new(fresh.clone()))));
    assert_eq!(model.debates.len(), before + 1);
    assert!(model.debates.seq_in(0, "prod-only").is_some());
    update(&mut model, from(1, Event::Link(Link::Live)));
    update(&mut model, from(1, Event::Store(Box::new(fresh))));
    assert!(model.debates.seq_in(1, "prod-only").is_some());
    assert_eq!(model.live.link, Some(Link::Live));
}

/// The actions `sent` records, each with the context it is addressed to (`None`: not
/// addressed).
fn resolves(sent: &[Command]) -> Vec<(Option<Ctx>, OperatorAction)> {
    sent.iter()
        .filter_map(|command| match command {
            Command::Resolve(action) => Some((None, action.clone())),
            Command::In(ctx, command) => match &**command {
                Command::Resolve(action) => Some((Some(*ctx), action.clone())),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// What the console says to the other consoles of each database, after `sent`.
pub(crate) fn presence(sent: &[Command]) -> Vec<(Ctx, Status)> {
    sent.iter()
        .filter_map(|command| match command {
            Command::In(ctx, command) => match &**command {
                Command::Present(status) => Some((*ctx, status.clone())),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

#[test]
fn an_accept_goes_to_its_debates_own_database() {
    let mut model = two_contexts();
    select_in(&mut model, 1, "fasting-insulin-0412");
    let opened = update(&mut model, char('a'));
    // The claim is said to staging alone; prod hears only who is here.
    let said = presence(&opened);
    assert_eq!(said.len(), 2, "{opened:?}");
    for (ctx, status) in &said {
        assert_eq!(status.claim.is_some(), *ctx == 1, "{status:?}");
        assert_eq!(status.looking.is_some(), *ctx == 1, "{status:?}");
    }
    let sent = update(&mut model, char('y'));
    let resolved = resolves(&sent);
    let [(Some(1), action)] = resolved.as_slice() else {
        panic!("one accept addressed to staging, not {sent:?}");
    };
    assert_eq!(action.session_id, "fasting-insulin-0412");
    let action = action.clone();

    // Its answer comes back from staging: recorded there, prod's debate still waits.
    update(
        &mut model,
        from(1, Event::Store(Box::new(Change::Action(action)))),
    );
    let staging = model.debates.seq_in(1, "fasting-insulin-0412").unwrap();
    let prod = model.debates.seq_in(0, "fasting-insulin-0412").unwrap();
    assert!(!model.debates.get(staging).unwrap().waiting());
    assert!(model.debates.get(prod).unwrap().waiting());
    assert_eq!(model.debates.waiting(), 3);
}

#[test]
fn a_failed_action_is_retried_on_its_own_database_whatever_is_selected() {
    let mut model = two_contexts();
    select_in(&mut model, 1, "fasting-insulin-0412");
    let resolved = accept(&mut model);
    let [(Some(1), action)] = resolved.as_slice() else {
        panic!("an accept addressed to staging, not {resolved:?}");
    };
    let failed = ResolveError::Failed {
        action: Box::new(action.clone()),
        error: "connection refused".into(),
    };
    update(&mut model, from(1, Event::Resolved(Err(failed))));
    assert!(common::flash(&model).ends_with("press r to retry"));

    // The same id selected in prod: `r` still retries on staging.
    select_in(&mut model, 0, "fasting-insulin-0412");
    let sent = update(&mut model, char('r'));
    assert!(
        matches!(resolves(&sent).as_slice(), [(Some(1), _)]),
        "{sent:?}"
    );
}

#[test]
fn each_database_has_its_own_rights() {
    let mut model = two_contexts();
    let watch_only = Access {
        role: "viewer".into(),
        actions: Some("role viewer may only watch".into()),
        notes: Some("role viewer may not pin notes".into()),
    };
    update(&mut model, from(0, Event::Access(watch_only)));
    select_in(&mut model, 0, "fasting-insulin-0412");
    assert!(resolves(&update(&mut model, char('a'))).is_empty());
    assert!(model.desk.overlay.is_none(), "prod refuses: no dialog");
    assert!(common::flash(&model).contains("may only watch"));

    select_in(&mut model, 1, "fasting-insulin-0412");
    let resolved = accept(&mut model);
    assert!(
        matches!(resolved.as_slice(), [(Some(1), _)]),
        "{resolved:?}"
    );
}

#[test]
fn a_context_locked_read_only_refuses_until_unlocked() {
    let mut model = two_contexts();
    model.live.contexts = Contexts::new(vec![
        Context::new("prod".into(), true, None),
        Context::new("staging".into(), false, None),
    ]);
    for ctx in [0, 1] {
        update(&mut model, from(ctx, Event::Access(operator())));
    }
    select_in(&mut model, 0, "fasting-insulin-0412");
    update(&mut model, char('a'));
    assert!(model.desk.overlay.is_none());
    assert!(common::flash(&model).starts_with("read-only"));
    update(&mut model, char('U'));
    update(&mut model, char('y'));
    let resolved = accept(&mut model);
    assert!(
        matches!(resolved.as_slice(), [(Some(0), _)]),
        "{resolved:?}"
    );
}

#[test]
fn p_goes_to_the_waiting_decisions_of_every_context() {
    let mut model = two_contexts();
    let mut seen = Vec::new();
    for _ in 0..4 {
        update(&mut model, char('p'));
        let seq = model.nav.selected.unwrap();
        seen.push(model.ctx_of(seq));
    }
    seen.sort_unstable();
    assert_eq!(seen, [0, 0, 1, 1]);
}

/// A decision another console claims on one database is skipped by `p` there only: the same
/// debate's decision on the other database still waits for this operator.
#[test]
fn p_skips_a_decision_claimed_on_its_own_database_only() {
    let mut model = two_contexts();
    let mut waiting = Vec::new();
    for _ in 0..4 {
        update(&mut model, char('p'));
        let seq = model.nav.selected.unwrap();
        let summary = model.debates.get(seq).unwrap();
        waiting.push((
            summary.ctx,
            summary.id.to_string(),
            summary.pending().unwrap(),
        ));
    }
    let (_, id, round) = waiting.iter().find(|(ctx, ..)| *ctx == 0).unwrap().clone();
    let mut model = two_contexts();
    let peer = Peer {
        console: 7,
        role: "bob".into(),
        status: Status {
            operator: "bob".into(),
            looking: Some(id.clone()),
            claim: Some(Claim {
                session_id: id.clone(),
                round,
            }),
            editing: None,
        },
        since: None,
        claimed_at: None,
    };
    update(&mut model, from(0, Event::Presence(vec![peer])));
    let mut offered = Vec::new();
    for _ in 0..3 {
        update(&mut model, char('p'));
        let seq = model.nav.selected.unwrap();
        let summary = model.debates.get(seq).unwrap();
        offered.push((summary.ctx, summary.id.to_string()));
    }
    assert!(!offered.contains(&(0, id.clone())), "{offered:?}");
    assert!(offered.contains(&(1, id.clone())), "{offered:?}");
}

#[test]
fn ctx_shows_one_context_and_all_shows_every_one() {
    let mut model = two_contexts();
    let every = model.debates.listed();
    run(&mut model, "ctx staging");
    assert_eq!(model.debates.listed(), every / 2);
    assert!(common::flash(&model).starts_with("staging listed"));
    assert!(!model.columned(), "no context column for one");
    let listed = model.debates.window(None, 100).rows;
    assert!(listed.iter().all(|&seq| model.ctx_of(seq) == 1));
    model.prepare_frame();
    insta::assert_snapshot!("contexts_one_shown", screen_at(&model, 160, 48));

    run(&mut model, "ctx nowhere");
    assert_eq!(
        common::flash(&model),
        "no context nowhere: the contexts are prod, staging, or all"
    );
    run(&mut model, "ctx all");
    assert_eq!(model.debates.listed(), every);
    assert!(model.columned());
}

#[test]
fn a_history_looked_up_by_id_is_missing_only_when_every_database_says_so() {
    let mut model = two_contexts();
    let sent = run(&mut model, "nowhere-0001");
    assert_eq!(sent, [Command::LoadHistory("nowhere-0001".into())]);
    let answer = || Event::History {
        id: "nowhere-0001".into(),
        found: false,
    };
    update(&mut model, from(0, answer()));
    assert!(model.nav.jump_to.is_some(), "staging has not answered");
    update(&mut model, from(1, answer()));
    assert!(model.nav.jump_to.is_none());
    assert!(common::flash(&model).starts_with("no debate nowhere-0001"));
}

#[test]
fn a_console_on_one_database_addresses_nothing() {
    let (mut model, _) = common::demo_model();
    assert!(!model.live.contexts.several());
    common::select(&mut model, "fasting-insulin-0412");
    let resolved = accept(&mut model);
    assert!(matches!(resolved.as_slice(), [(None, _)]), "{resolved:?}");
    run(&mut model, "ctx prod");
    assert_eq!(
        common::flash(&model),
        "one database: there are no contexts to pick"
    );
}

/// Types `:line` and Enter; the commands it gave.
fn run(model: &mut Model, line: &str) -> Vec<Command> {
    update(model, char(':'));
    for c in line.chars() {
        update(model, char(c));
    }
    update(model, key(KeyCode::Enter))
}

/// Types `line` on the `:` line and runs it.
pub(crate) fn colon(model: &mut Model, line: &str) {
    update(model, char(':'));
    for c in line.chars() {
        update(model, char(c));
    }
    update(model, key(KeyCode::Enter));
}

#[test]
fn an_id_in_both_databases_is_taken_from_the_one_listed_and_again_from_the_next() {
    let mut model = two_contexts();
    let id = Fixture::bundled().unwrap()[0].session.id.clone();
    let (prod, staging) = (
        model.debates.seq_in(0, &id).unwrap(),
        model.debates.seq_in(1, &id).unwrap(),
    );
    let other = Fixture::bundled().unwrap()[1].session.id.clone();
    select_in(&mut model, 1, &other);
    colon(&mut model, &id);
    assert_eq!(model.nav.selected, Some(prod));
    let said = common::flash(&model);
    assert!(said.contains("is in prod, staging: at prod's"), "{said}");
    colon(&mut model, &id);
    assert_eq!(
        model.nav.selected,
        Some(staging),
        "again: the next database's"
    );
    colon(&mut model, &id);
    assert_eq!(model.nav.selected, Some(prod), "and round again");
    // A unique part of the id is the id.
    colon(&mut model, &id[1..]);
    assert_eq!(model.nav.selected, Some(staging));
    // With one context listed, its own.
    colon(&mut model, "ctx staging");
    colon(&mut model, &id);
    assert_eq!(model.nav.selected, Some(staging));
    colon(&mut model, &id);
    assert_eq!(
        model.nav.selected,
        Some(staging),
        "the listed context's, always"
    );
}

#[test]
fn the_filter_matches_a_context_by_name_and_tab_completes_ctx() {
    let mut model = two_contexts();
    let each = model.debates.listed() / 2;
    model.set_filter("ctx:stag".into());
    assert_eq!(model.debates.listed(), each);
    let listed = model.debates.window(None, usize::MAX).rows;
    assert!(
        listed
            .iter()
            .all(|&seq| model.debates.get(seq).unwrap().ctx == 1)
    );
    model.set_filter("prod".into());
    assert_eq!(
        model.debates.listed(),
        each,
        "a bare word matches the name too"
    );
    model.set_filter(String::new());
    update(&mut model, char(':'));
    for c in "ctx s".chars() {
        update(&mut model, char(c));
    }
    update(&mut model, key(KeyCode::Tab));
    assert_eq!(model.desk.prompt.value(), "ctx staging");
}
