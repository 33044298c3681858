//! The settings rollouts of a console on several databases, as `update()` sees it: each
//! database's history kept apart; the rollout view on the context `:ctx NAME` lists, else the
//! selected debate's, named in its title (a whole screen: `integration__contexts_rollout__
//! rollout_in_staging`); a publish (from the calibration window's pick, in force values taken
//! from that database's history), a promote and a roll back addressed to that database alone,
//! refused on a context locked read-only, their outcomes named by context; "editing" said to
//! that database alone, and its others' shown there alone; the arms compared and guarded for
//! the first database's rollouts, named in the header and the announcement, and another's view
//! saying so. Against real servers: `postgres::fleets`.

use crossterm::event::KeyCode;
use gavel::console::app::{Command, Context, Contexts, Ctx, Event, Model, Overlay, update};
use gavel::domain::{Access, Arm, ControllerMode, SettingsVersion, Status, VersionKind};

use crate::common::rows::settings_values;
use crate::common::{char, flash, key, screen_at};
use crate::contexts::{
    colon, from, operator, presence, select_in, two_contexts, two_contexts_reporting,
};
use crate::rollout::{debate, editor, history};

/// A gated debate of the bundled recordings, of type `standard`, in both databases.
const GATED: &str = "fasting-insulin-0412";

/// staging's own history: version 1 of `standard` in force (in shadow mode), version 4
/// rolling out to 10% beside it (its versions 2 and 3 were of other types, long let go).
fn staging_history() -> Vec<SettingsVersion> {
    let [v1, v2] = <[SettingsVersion; 2]>::try_from(history()).unwrap();
    let in_force = SettingsVersion {
        values: Some(gavel::domain::SettingsValues {
            mode: ControllerMode::Shadow,
            ..settings_values(0.7)
        }),
        reason: "staging's own baseline".into(),
        published_by: "carol".into(),
        ..v1
    };
    let canary = SettingsVersion {
        version: 4,
        share_bp: 1_000,
        values: Some(settings_values(0.6)),
        reason: "tried on staging first".into(),
        published_by: "carol".into(),
        canary_version: Some(4),
        canary_share_bp: Some(1_000),
        ..v2
    };
    vec![in_force, canary]
}

/// Each database's history given to `model`: prod's ([`history`]) and staging's.
fn with_histories(model: &mut Model) {
    update(model, from(0, Event::Settings(Ok(history()))));
    update(model, from(1, Event::Settings(Ok(staging_history()))));
}

/// The versions `sent` writes, each with the context it is addressed to (`None`: not
/// addressed).
fn publishes(sent: &[Command]) -> Vec<(Option<Ctx>, gavel::console::app::Publishing)> {
    sent.iter()
        .filter_map(|command| match command {
            Command::Publish(p) => Some((None, (**p).clone())),
            Command::In(ctx, command) => match &**command {
                Command::Publish(p) => Some((Some(*ctx), (**p).clone())),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// Types `text` into the open prompt.
fn type_in(model: &mut Model, text: &str) {
    for c in text.chars() {
        update(model, char(c));
    }
}

/// The context and debate type of the open rollout view.
fn viewed(model: &Model) -> Option<(Ctx, Option<String>)> {
    match &model.desk.overlay {
        Some(Overlay::Rollout {
            ctx, debate_type, ..
        }) => Some((*ctx, debate_type.clone())),
        _ => None,
    }
}

#[test]
fn each_database_keeps_its_history_and_the_view_shows_the_selected_debate_s() {
    let mut model = two_contexts();
    with_histories(&mut model);
    let versions = |ctx| {
        model
            .rollout
            .history(ctx)
            .unwrap()
            .unwrap()
            .iter()
            .map(|v| v.version)
            .collect::<Vec<_>>()
    };
    assert_eq!((versions(0), versions(1)), (vec![1, 2], vec![1, 4]));
    // A database the console does not have is not kept.
    update(&mut model, from(7, Event::Settings(Ok(history()))));
    assert!(model.rollout.history(7).is_none());

    select_in(&mut model, 1, GATED);
    update(&mut model, char('R'));
    assert_eq!(viewed(&model), Some((1, Some("standard".into()))));
    let staging = screen_at(&model, 80, 24);
    assert!(
        staging.contains("rollout · standard · in staging"),
        "{staging}"
    );
    assert!(
        staging.contains("version 4 rolling out to 10%"),
        "{staging}"
    );
    assert!(
        !staging.contains("fewer rounds at the same flips"),
        "prod's: {staging}"
    );
    insta::assert_snapshot!("rollout_in_staging", staging);

    update(&mut model, key(KeyCode::Esc));
    select_in(&mut model, 0, GATED);
    update(&mut model, char('R'));
    assert_eq!(viewed(&model), Some((0, Some("standard".into()))));
    let prod = screen_at(&model, 80, 24);
    assert!(prod.contains("rollout · standard · in prod"), "{prod}");
    assert!(prod.contains("version 2 rolling out to 30%"), "{prod}");

    // The context listed wins over the debate selected: the operator narrowed the console to it.
    update(&mut model, key(KeyCode::Esc));
    select_in(&mut model, 0, GATED);
    colon(&mut model, "ctx staging");
    update(&mut model, char('R'));
    assert_eq!(viewed(&model).map(|(ctx, _)| ctx), Some(1));
}

#[test]
fn a_promote_goes_to_the_viewed_database_and_its_outcome_is_named_by_it() {
    let mut model = two_contexts();
    with_histories(&mut model);
    select_in(&mut model, 1, GATED);
    update(&mut model, char('R'));
    update(&mut model, char('m'));
    type_in(&mut model, "staging looks right");
    update(&mut model, key(KeyCode::Enter));
    let sent = update(&mut model, char('y'));
    let written = publishes(&sent);
    let [(Some(1), publishing)] = written.as_slice() else {
        panic!("one version addressed to staging, not {sent:?}");
    };
    assert_eq!(
        publishing.change,
        gavel::console::app::SettingsChange::Promote { version: 4 },
        "staging's canary, not prod's version 2"
    );
    assert_eq!(
        viewed(&model).map(|(ctx, _)| ctx),
        Some(1),
        "back to staging's view"
    );

    let mut promoted = staging_history()[1].clone();
    (promoted.version, promoted.kind, promoted.target) = (5, VersionKind::Promote, Some(4));
    update(&mut model, from(1, Event::Published(Ok(promoted))));
    assert_eq!(
        flash(&model),
        "version 5 of standard in staging: promoted version 4 to every debate"
    );
    update(
        &mut model,
        from(0, Event::Published(Err("no privilege".into()))),
    );
    assert_eq!(flash(&model), "nothing was written in prod: no privilege");
}

#[test]
fn a_setting_published_from_calibration_goes_to_the_selected_debate_s_database() {
    let (mut model, mut reports) = two_contexts_reporting();
    with_histories(&mut model);
    select_in(&mut model, 1, GATED);
    update(&mut model, char('c'));
    reports.catch_up(&mut model);
    update(&mut model, char('u'));
    type_in(&mut model, "calibrated on both");
    update(&mut model, key(KeyCode::Enter));
    type_in(&mut model, "10");
    update(&mut model, key(KeyCode::Enter));
    let confirm = screen_at(&model, 80, 24);
    assert!(confirm.contains("confirm · in staging"), "{confirm}");
    let sent = update(&mut model, char('y'));
    let written = publishes(&sent);
    let [(Some(1), publishing)] = written.as_slice() else {
        panic!("one version addressed to staging, not {sent:?}");
    };
    let gavel::console::app::SettingsChange::Publish {
        values, share_bp, ..
    } = &publishing.change
    else {
        panic!("{publishing:?}");
    };
    assert_eq!(*share_bp, 1_000);
    // The mode left to the version in force: staging's (shadow), not prod's (enabled).
    assert_eq!(values.mode, ControllerMode::Shadow);
}

#[test]
fn a_context_locked_read_only_writes_no_version_until_unlocked() {
    let mut model = two_contexts();
    model.live.contexts = Contexts::new(vec![
        Context::new("prod".into(), false, None),
        Context::new("staging".into(), true, None),
    ]);
    for ctx in [0, 1] {
        update(&mut model, from(ctx, Event::Access(operator())));
    }
    with_histories(&mut model);
    select_in(&mut model, 1, GATED);
    update(&mut model, char('R'));
    update(&mut model, char('b'));
    assert_eq!(
        flash(&model),
        "nothing was written: staging is read-only — press U on one of its debates to unlock"
    );
    assert_eq!(viewed(&model).map(|(ctx, _)| ctx), Some(1), "no dialog");
    // prod is not locked: its roll back opens.
    update(&mut model, key(KeyCode::Esc));
    select_in(&mut model, 0, GATED);
    update(&mut model, char('R'));
    update(&mut model, char('b'));
    assert!(matches!(model.desk.overlay, Some(Overlay::Draft(_))));
    update(&mut model, key(KeyCode::Esc));
    update(&mut model, key(KeyCode::Esc));

    // A role that may only watch decisions on prod may still hold the publishing privilege
    // there (prod's database says whether it does), as on one database.
    let watch_only = Access {
        role: "viewer".into(),
        actions: Some("role viewer may only watch".into()),
        notes: None,
    };
    update(&mut model, from(0, Event::Access(watch_only)));
    update(&mut model, char('R'));
    update(&mut model, char('b'));
    assert!(matches!(model.desk.overlay, Some(Overlay::Draft(_))));
    update(&mut model, key(KeyCode::Esc));
    update(&mut model, key(KeyCode::Esc));

    // Unlocked on one of its debates, staging writes.
    select_in(&mut model, 1, GATED);
    update(&mut model, char('U'));
    update(&mut model, char('y'));
    update(&mut model, char('R'));
    update(&mut model, char('b'));
    let Some(Overlay::Draft(draft)) = &model.desk.overlay else {
        panic!("staging's roll back opens once unlocked: {}", flash(&model));
    };
    assert_eq!(draft.ctx, 1);
}

#[test]
fn editing_is_said_to_the_rollout_s_own_database_and_shown_from_it_alone() {
    let mut model = two_contexts();
    with_histories(&mut model);
    select_in(&mut model, 1, GATED);
    update(&mut model, char('R'));
    let opened = update(&mut model, char('m'));
    let said = presence(&opened);
    let editing =
        |ctx| -> Option<Status> { said.iter().find(|(c, _)| *c == ctx).map(|(_, s)| s.clone()) };
    assert_eq!(said.len(), 2, "{opened:?}");
    assert_eq!(editing(1).unwrap().editing.as_deref(), Some("standard"));
    assert_eq!(
        editing(0).unwrap().editing,
        None,
        "prod's rollout is not edited"
    );
    update(&mut model, key(KeyCode::Esc));

    // bob edits prod's rollout of standard: prod's view shows him, staging's does not.
    update(
        &mut model,
        from(0, Event::Presence(vec![editor("bob", "b", "standard")])),
    );
    let staging = screen_at(&model, 80, 24);
    assert!(!staging.contains("bob"), "{staging}");
    update(&mut model, key(KeyCode::Esc));
    select_in(&mut model, 0, GATED);
    update(&mut model, char('R'));
    let prod = screen_at(&model, 80, 24);
    assert!(
        prod.contains("bob (role b) is editing the rollout of standard"),
        "{prod}"
    );
}

#[test]
fn the_first_database_s_rollouts_are_guarded_and_named_so() {
    let (mut model, mut reports) = two_contexts_reporting();
    model.settings.notify = gavel::config::Notify::Osc9;
    // The same rollout in both, its debates landing in prod alone: an override rate raised.
    for ctx in [0, 1] {
        update(&mut model, from(ctx, Event::Settings(Ok(history()))));
    }
    let stable =
        (0..10).flat_map(|n| debate(&format!("s{n}"), Some((1, Arm::Stable)), 4, 1_000, false));
    let canary =
        (0..10).flat_map(|n| debate(&format!("c{n}"), Some((2, Arm::Canary)), 3, 900, n < 8));
    for change in stable.chain(canary) {
        update(&mut model, from(0, Event::Store(Box::new(change))));
    }
    reports.catch_up(&mut model);
    let said = model.announcement().expect("announced");
    assert!(
        said.contains("the canary of standard in prod (version 2) raises the override rate"),
        "{said}"
    );
    let header = screen_at(&model, 200, 48);
    let header = header.lines().next().unwrap();
    assert!(
        header.contains("⚠ rollout of standard in prod needs you (R)"),
        "{header}"
    );

    select_in(&mut model, 1, GATED);
    update(&mut model, char('R'));
    let staging = screen_at(&model, 80, 24);
    assert!(!staging.contains("raises the override rate"), "{staging}");
    assert!(
        staging.contains("arms compared, and guards watched, for prod's rollouts only"),
        "{staging}"
    );
    update(&mut model, key(KeyCode::Esc));
    select_in(&mut model, 0, GATED);
    update(&mut model, char('R'));
    let prod = screen_at(&model, 80, 24);
    assert!(prod.contains("raises the override rate"), "{prod}");
    assert!(
        prod.contains("stable (version 1)"),
        "the arms compared: {prod}"
    );
}
