//! Settings rollouts at the console, driven through `update()` with the reports worker as the
//! run loop owns it: the history as the feed brings it, both arms compared as debates land
//! (their counts, means and intervals, "not enough debates yet" below the minimum), the rollout
//! view at 80x24 and 160x48 (no database, nothing published, a rollout with enough debates in
//! both arms), publishing the calibration cursor's setting (reason, share, confirmation, the
//! values and evidence sent), promote and roll back from the rollout view, their outcomes, and
//! the guards: a canary that raises the override rate puts the rollout on the desk (the header,
//! the announcement) and the view offers the rollback.

use chrono::{TimeZone, Utc};
use crossterm::event::KeyCode;
use gavel::calibrate::rollout::Guard;
use gavel::config::{Config, Notify};
use gavel::console::app::{
    Command, Event, Link, Model, Overlay, Publishing, SettingsChange, Step, update,
};
use gavel::console::reports::ReportsWorker;
use gavel::domain::{
    Access, ActionKind, Arm, Change, ControllerMode, Decision, MeasureKind, Reported,
    SessionStatus, SettingsVersion, VersionKind,
};

use crate::common;
use common::rows::{action, decision, session, settings_values, turn};
use common::{char, demo_model, flash, key, screen_at};

/// Version 1 of `standard` published to every debate, and version 2 rolling out to 30% of
/// them beside it.
pub(crate) fn history() -> Vec<SettingsVersion> {
    let at = |minute| Utc.with_ymd_and_hms(2026, 11, 27, 9, minute, 0).unwrap();
    let v1 = SettingsVersion {
        version: 1,
        debate_type: "standard".into(),
        kind: VersionKind::Publish,
        target: None,
        share_bp: 10_000,
        values: Some(settings_values(0.9)),
        reason: "the shadow week's calibration".into(),
        evidence: None,
        published_by: "alice".into(),
        published_at: at(0),
        stable_version: Some(1),
        canary_version: None,
        canary_share_bp: None,
        previous_stable: None,
    };
    let v2 = SettingsVersion {
        version: 2,
        kind: VersionKind::Publish,
        share_bp: 3_000,
        values: Some(settings_values(0.85)),
        reason: "fewer rounds at the same flips".into(),
        published_by: "bob".into(),
        published_at: at(30),
        stable_version: Some(1),
        canary_version: Some(2),
        canary_share_bp: Some(3_000),
        previous_stable: Some(1),
        ..v1.clone()
    };
    vec![v1, v2]
}

/// A console attached to a database that is live, whose role may act, given `history`; and
/// the reports worker that sees its rows.
fn live(config: &Config, history: Vec<SettingsVersion>) -> (Model, ReportsWorker) {
    let mut model = Model::live("db".into(), "alice".into(), config);
    update(&mut model, Event::Link(Link::Live));
    let access = Access {
        role: "alice".into(),
        actions: None,
        notes: None,
    };
    update(&mut model, Event::Access(access));
    update(&mut model, Event::Settings(Ok(history)));
    (model, ReportsWorker::of(config))
}

/// The rows of a finished `standard` debate stamped `settings`: `rounds` rounds of one turn of
/// `tokens` tokens, stopped converged after the last; `overridden`: an operator overrode the
/// controller's stop after round 1.
pub(crate) fn debate(
    id: &str,
    settings: Option<(i64, Arm)>,
    rounds: u32,
    tokens: u32,
    overridden: bool,
) -> Vec<Change> {
    let mut s = session(id, SessionStatus::Completed);
    s.debate_type = "standard".into();
    s.controller_mode = ControllerMode::Enabled.into();
    s.num_rounds = Some(rounds);
    (s.min_rounds, s.max_rounds, s.token_budget) = (1, 8, 100_000);
    s.settings = settings;
    let mut rows = vec![Change::Session(s)];
    for round in 1..=rounds {
        let mut t = turn(id, u64::from(round), round, "a");
        t.tokens_used = tokens;
        rows.push(Change::Turn(t));
        let stop = round == rounds || (round == 1 && overridden);
        let made = if stop {
            Decision::StopConverged
        } else {
            Decision::ContinueBaseline
        };
        rows.push(Change::Decision(decision(id, round, made.into())));
    }
    if overridden {
        let continued = Reported::Known(Decision::ContinueBaseline);
        rows.push(Change::Action(action(
            id,
            1,
            ActionKind::Override,
            continued,
        )));
    }
    rows
}

/// Lands `rows` and brings the worker's figures in.
fn land(model: &mut Model, reports: &mut ReportsWorker, rows: impl IntoIterator<Item = Change>) {
    for change in rows {
        update(model, Event::Store(Box::new(change)));
    }
    reports.catch_up(model);
}

/// Eight finished debates in the stable arm and six in the canary (two of them overridden),
/// one more running in the canary.
fn rollout_under_way(config: &Config) -> (Model, ReportsWorker) {
    let (mut model, mut reports) = live(config, history());
    let stable = (0..8).flat_map(|n| {
        debate(
            &format!("s{n}"),
            Some((1, Arm::Stable)),
            4 + n % 2,
            1_000,
            false,
        )
    });
    let canary = (0..6).flat_map(|n| {
        debate(
            &format!("c{n}"),
            Some((2, Arm::Canary)),
            3,
            900 + 10 * n,
            n < 2,
        )
    });
    let mut running = session("c-running", SessionStatus::Running);
    running.debate_type = "standard".into();
    running.settings = Some((2, Arm::Canary));
    // Of another version, or untouched by the rollout: not compared.
    let other = debate("old", Some((7, Arm::Canary)), 5, 5_000, true);
    let rows = stable
        .chain(canary)
        .chain(other)
        .chain([Change::Session(running)]);
    land(&mut model, &mut reports, rows);
    (model, reports)
}

#[test]
fn both_arms_are_compared_as_debates_land_with_intervals_once_there_are_enough() {
    let config = Config::default();
    let (mut model, mut reports) = live(&config, history());
    land(
        &mut model,
        &mut reports,
        (0..3).flat_map(|n| debate(&format!("s{n}"), Some((1, Arm::Stable)), 4, 1_000, false)),
    );
    let figures = model.reports.figures();
    let [comparison] = figures.rollout.as_slice() else {
        panic!("one rollout: {:?}", figures.rollout);
    };
    assert_eq!(
        (comparison.stable.finished, comparison.canary.finished),
        (3, 0)
    );
    assert_eq!(comparison.stable.rounds.mean, Some(4.0));
    assert_eq!(comparison.stable.rounds.interval, None, "below the minimum");
    update(&mut model, char('R'));
    let screen = screen_at(&model, 80, 24);
    assert!(screen.contains("not enough debates yet"), "{screen}");

    let (model, _reports) = rollout_under_way(&config);
    let comparison = &model.reports.figures().rollout[0];
    let (stable, canary) = (&comparison.stable, &comparison.canary);
    assert_eq!((stable.finished, stable.running), (8, 0));
    assert_eq!(
        (canary.finished, canary.running),
        (6, 1),
        "the other version left out"
    );
    assert_eq!(stable.rounds.mean, Some(4.5));
    assert_eq!(canary.tokens.mean, Some(3.0 * 925.0));
    assert_eq!((canary.overridden.hits, canary.overridden.n), (2, 6));
    let interval = canary.overridden.interval.expect("six debates are enough");
    assert!(interval.low < 1.0 / 3.0 && 1.0 / 3.0 < interval.high);
    let rounds = stable.rounds.interval.unwrap();
    assert!(rounds.low < 4.5 && 4.5 < rounds.high && rounds.high - rounds.low < 1.0);
    assert_eq!(stable.stops[0].hits, 8, "every one stopped converged");
}

#[test]
fn the_rollout_view_without_a_database_says_where_rollouts_live() {
    let (mut model, _) = demo_model();
    update(&mut model, char('R'));
    insta::assert_snapshot!("rollout_no_database", screen_at(&model, 80, 24));
    // Publishing from the calibration window says so too, and writes nothing.
    update(&mut model, key(KeyCode::Esc));
    update(&mut model, char('c'));
    assert!(written(update(&mut model, char('u'))).is_empty());
    assert!(
        flash(&model).contains("rollouts live in a database"),
        "{}",
        flash(&model)
    );
    assert!(matches!(
        model.desk.overlay,
        Some(Overlay::Calibration { .. })
    ));
}

#[test]
fn the_rollout_view_with_nothing_published_says_how_to_publish() {
    let (mut model, _) = live(&Config::default(), Vec::new());
    update(&mut model, char('R'));
    insta::assert_snapshot!("rollout_nothing_published", screen_at(&model, 80, 24));
}

#[test]
fn the_rollout_view_shows_both_arms_side_by_side() {
    let (mut model, _reports) = rollout_under_way(&Config::default());
    update(&mut model, char('R'));
    assert_eq!(
        model.desk.overlay,
        Some(Overlay::Rollout {
            scroll: 0,
            debate_type: Some("standard".into()),
            ctx: 0,
        })
    );
    insta::assert_snapshot!("rollout_under_way", screen_at(&model, 80, 24));
    insta::assert_snapshot!("rollout_under_way_large", screen_at(&model, 160, 48));
}

/// The versions `commands` ask to write.
fn written(commands: Vec<Command>) -> Vec<Publishing> {
    commands
        .into_iter()
        .filter_map(|c| match c {
            Command::Publish(publishing) => Some(*publishing),
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

#[test]
fn publishing_the_calibration_cursor_s_setting_asks_a_reason_a_share_and_a_confirmation() {
    let (mut model, mut reports) = rollout_under_way(&Config::default());
    // Version 2 still rolls out: promote it first, so that version 2 is in force.
    let mut promoted = history();
    let mut v3 = promoted[1].clone();
    (v3.version, v3.kind, v3.target, v3.share_bp) = (3, VersionKind::Promote, Some(2), 10_000);
    (v3.stable_version, v3.canary_version, v3.canary_share_bp) = (Some(2), None, None);
    promoted.push(v3);
    update(&mut model, Event::Settings(Ok(promoted)));
    update(&mut model, char('c'));
    reports.catch_up(&mut model);

    update(&mut model, char('u'));
    let Some(Overlay::Draft(draft)) = &model.desk.overlay else {
        panic!("the reason is asked: {:?}", model.desk.overlay);
    };
    assert_eq!(draft.step, Step::Reason);
    assert_eq!(
        draft.publishing.debate_type, "standard",
        "the selected debate's type"
    );
    // A reason is required.
    update(&mut model, key(KeyCode::Enter));
    assert!(
        flash(&model).contains("a reason is required"),
        "{}",
        flash(&model)
    );
    type_in(&mut model, "calibrated on this week");
    update(&mut model, key(KeyCode::Enter));
    // The share: a number above 0, up to 100.
    for bad in ["0", "150", "ten"] {
        type_in(&mut model, bad);
        update(&mut model, key(KeyCode::Enter));
        let Some(Overlay::Draft(draft)) = &model.desk.overlay else {
            panic!("still asking the share");
        };
        assert_eq!(draft.step, Step::Share, "{bad}");
        for _ in bad.chars() {
            update(&mut model, key(KeyCode::Backspace));
        }
    }
    type_in(&mut model, "30");
    update(&mut model, key(KeyCode::Enter));
    insta::assert_snapshot!("publish_confirm", screen_at(&model, 80, 24));
    let written = written(update(&mut model, char('y')));
    let [publishing] = written.as_slice() else {
        panic!("one version to write: {written:?}");
    };
    let Publishing {
        debate_type,
        change:
            SettingsChange::Publish {
                values,
                share_bp,
                evidence,
            },
        reason,
    } = publishing
    else {
        panic!("a publish: {publishing:?}");
    };
    assert_eq!(
        (debate_type.as_str(), *share_bp, reason.as_str()),
        ("standard", 3_000, "calibrated on this week")
    );
    let figures = model.reports.figures();
    let cursor = gavel::console::app::at_cursor(&figures.calibration, 0).unwrap();
    assert_eq!(
        values.similarity_threshold,
        cursor.setting.similarity_threshold
    );
    assert_eq!(values.novelty_floor, cursor.setting.novelty_threshold);
    // The version in force (2) gives the mode, the measure and the bounds the row leaves own.
    assert_eq!(
        (values.mode, values.similarity_measure),
        (ControllerMode::Enabled, MeasureKind::Lexical)
    );
    assert_eq!((values.min_rounds, values.max_rounds), (2, 8));
    let json = serde_json::to_string(&*figures.calibration).unwrap();
    let digest = ring::digest::digest(&ring::digest::SHA256, json.as_bytes());
    let hex: String = digest.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(evidence["calibration_sha256"], hex.as_str());
    assert_eq!(evidence["debates"], 15);
    assert_eq!(
        evidence["source"],
        "console calibration over 15 finished debates"
    );
    assert_eq!(
        evidence["grid_point"]["similarity_threshold"],
        cursor.setting.similarity_threshold
    );
    assert!(evidence["window"].is_null(), "these rows carry no times");
    // Sent, the rollout view watches it land.
    assert!(matches!(model.desk.overlay, Some(Overlay::Rollout { .. })));
}

#[test]
fn a_draft_cancelled_writes_nothing_and_goes_back() {
    let (mut model, mut reports) = rollout_under_way(&Config::default());
    update(&mut model, char('c'));
    reports.catch_up(&mut model);
    update(&mut model, char('>'));
    update(&mut model, char('u'));
    update(&mut model, key(KeyCode::Esc));
    assert_eq!(flash(&model), "cancelled: nothing was written");
    assert!(matches!(
        model.desk.overlay,
        Some(Overlay::Calibration { cursor: 1, .. })
    ));
    // From the confirmation, any key but y.
    update(&mut model, key(KeyCode::Esc));
    update(&mut model, char('R'));
    update(&mut model, char('m'));
    type_in(&mut model, "enough debates");
    update(&mut model, key(KeyCode::Enter));
    assert!(written(update(&mut model, char('n'))).is_empty());
    assert!(matches!(model.desk.overlay, Some(Overlay::Rollout { .. })));
}

#[test]
fn promote_and_roll_back_are_keys_of_the_rollout_view_each_with_a_reason() {
    let (mut model, _reports) = rollout_under_way(&Config::default());
    update(&mut model, char('m'));
    assert!(
        flash(&model).contains("in the rollout view (R)"),
        "{}",
        flash(&model)
    );
    for (key_char, change) in [
        ('m', SettingsChange::Promote { version: 2 }),
        ('b', SettingsChange::Rollback { version: 2 }),
    ] {
        update(&mut model, char('R'));
        update(&mut model, char(key_char));
        type_in(&mut model, "the canary looks right");
        update(&mut model, key(KeyCode::Enter));
        let written = written(update(&mut model, char('y')));
        let [publishing] = written.as_slice() else {
            panic!("{written:?}");
        };
        assert_eq!(publishing.change, change);
        assert_eq!(publishing.reason, "the canary looks right");
        update(&mut model, key(KeyCode::Esc));
    }
    // The outcome: the version written, or the database's reason.
    let mut written = history()[1].clone();
    (written.version, written.kind, written.target) = (3, VersionKind::Promote, Some(2));
    update(&mut model, Event::Published(Ok(written)));
    assert_eq!(
        flash(&model),
        "version 3 of standard: promoted version 2 to every debate"
    );
    let refused =
        "version 2 of standard is not rolling out: version 3 is in force for every debate";
    update(&mut model, Event::Published(Err(refused.into())));
    assert_eq!(flash(&model), format!("nothing was written: {refused}"));
}

#[test]
fn a_console_started_read_only_writes_no_version_a_role_that_may_not_act_may_try() {
    let (mut model, _reports) = rollout_under_way(&Config::default());
    model.settings.read_only = true;
    update(&mut model, char('R'));
    update(&mut model, char('b'));
    assert!(flash(&model).contains("read-only"), "{}", flash(&model));
    assert!(matches!(model.desk.overlay, Some(Overlay::Rollout { .. })));
    // A role that may not act on decisions may hold the publishing privilege: the database
    // says whether it does.
    let watcher = Access {
        role: "carol".into(),
        actions: Some("role carol cannot insert into debate_operator_actions".into()),
        notes: None,
    };
    update(&mut model, Event::Access(watcher));
    assert!(model.settings.read_only);
    update(&mut model, char('b'));
    assert!(matches!(model.desk.overlay, Some(Overlay::Draft(_))));
}

#[test]
fn a_tripped_guard_puts_the_rollout_on_the_desk_and_offers_the_rollback() {
    let config = Config {
        ui: gavel::config::UiConfig {
            notify: Notify::Osc9,
            ..Default::default()
        },
        ..Config::default()
    };
    let (mut model, mut reports) = live(&config, history());
    let stable =
        (0..10).flat_map(|n| debate(&format!("s{n}"), Some((1, Arm::Stable)), 4, 1_000, false));
    let canary =
        (0..10).flat_map(|n| debate(&format!("c{n}"), Some((2, Arm::Canary)), 3, 900, n < 8));
    land(&mut model, &mut reports, stable.chain(canary));
    let tripped: Vec<Guard> = model.rollout.tripped_on(0, "standard").collect();
    assert_eq!(tripped, vec![Guard::OverrideRate]);
    let said = model.announcement().expect("announced");
    assert!(
        said.contains("the canary of standard (version 2) raises the override rate"),
        "{said}"
    );
    assert_eq!(model.announcement(), None, "announced once");
    let header = screen_at(&model, 160, 48);
    assert!(
        header
            .lines()
            .next()
            .unwrap()
            .contains("⚠ rollout of standard needs you (R)"),
        "{header}"
    );
    update(&mut model, char('R'));
    let view = screen_at(&model, 80, 24);
    assert!(view.contains("raises the override rate"), "{view}");
    update(&mut model, char('b'));
    let Some(Overlay::Draft(draft)) = &model.desk.overlay else {
        panic!("the rollback is offered");
    };
    assert_eq!(
        draft.publishing.change,
        SettingsChange::Rollback { version: 2 }
    );

    // Rolled back: the rollout is over and nothing trips.
    let mut rolled_back = history();
    let mut v3 = rolled_back[1].clone();
    (v3.version, v3.kind, v3.target) = (3, VersionKind::Rollback, Some(2));
    (v3.canary_version, v3.canary_share_bp) = (None, None);
    rolled_back.push(v3);
    update(&mut model, Event::Settings(Ok(rolled_back)));
    assert!(model.rollout.tripped().is_empty());
    reports.catch_up(&mut model);
    assert!(model.reports.figures().rollout.is_empty());

    // Without guards, nothing trips.
    let quiet = Config {
        rollout: gavel::config::RolloutConfig { guards: Vec::new() },
        ..Config::default()
    };
    let (mut model, mut reports) = live(&quiet, history());
    let stable =
        (0..10).flat_map(|n| debate(&format!("s{n}"), Some((1, Arm::Stable)), 4, 1_000, false));
    let canary =
        (0..10).flat_map(|n| debate(&format!("c{n}"), Some((2, Arm::Canary)), 3, 900, true));
    land(&mut model, &mut reports, stable.chain(canary));
    assert!(model.rollout.tripped().is_empty());
}

#[test]
fn the_guards_are_validated() {
    let parse = |text: &str| Config::parse(text, "c.toml").map(|c| c.rollout.guards);
    assert_eq!(parse("").unwrap(), Guard::ALL.to_vec());
    assert_eq!(
        parse("[rollout]\nguards = [\"verdict_flip_rate\"]").unwrap(),
        vec![Guard::VerdictFlipRate]
    );
    let twice = parse("[rollout]\nguards = [\"override_rate\", \"override_rate\"]").unwrap_err();
    assert_eq!(
        twice.to_string(),
        "c.toml: [rollout] guards: override_rate is named twice"
    );
    let unknown = parse("[rollout]\nguards = [\"latency\"]")
        .unwrap_err()
        .to_string();
    assert!(
        unknown.starts_with("c.toml:2: invalid configuration: unknown variant `latency`"),
        "{unknown}"
    );
}

/// A finished shadow debate of `standard` in the canary: four rounds of 100 tokens; the
/// controller's first stop after round 2 (the fixed loop ran on); the verdict `yes` until then
/// and, when `flips`, `no` at the end.
fn shadow_debate(id: &str, flips: bool) -> Vec<Change> {
    let mut s = session(id, SessionStatus::Completed);
    s.debate_type = "standard".into();
    s.controller_mode = ControllerMode::Shadow.into();
    s.num_rounds = Some(4);
    (s.min_rounds, s.max_rounds, s.token_budget) = (1, 8, 100_000);
    s.settings = Some((2, Arm::Canary));
    let mut rows = vec![Change::Session(s)];
    for round in 1..=4 {
        let mut t = turn(id, u64::from(round), round, "a");
        t.tokens_used = 100;
        let verdict = if flips && round > 2 { "no" } else { "yes" };
        t.content = format!("Round {round} of the case.\n\nVERDICT: {verdict}");
        rows.push(Change::Turn(t));
        let made = match round {
            2 => Decision::StopConverged,
            4 => Decision::StopMaxRounds,
            _ => Decision::ContinueBaseline,
        };
        rows.push(Change::Decision(decision(id, round, made.into())));
    }
    rows
}

#[test]
fn shadow_debates_give_the_tokens_saved_and_the_verdict_flips() {
    let (mut model, mut reports) = live(&Config::default(), history());
    let rows = (0..5).flat_map(|n| shadow_debate(&format!("c{n}"), n < 2));
    land(&mut model, &mut reports, rows);
    let canary = &model.reports.figures().rollout[0].canary;
    assert_eq!(canary.finished, 5);
    assert_eq!(
        (canary.saved.n, canary.saved.mean),
        (5, Some(200.0)),
        "rounds 3 and 4"
    );
    assert_eq!((canary.flips.hits, canary.flips.n), (2, 5));
    assert!(canary.flips.interval.is_some());
    assert_eq!(
        canary.stops[0].hits, 5,
        "the controller's first stop: converged"
    );
    assert_eq!(
        canary.rounds.mean,
        Some(4.0),
        "the rounds the fixed loop ran"
    );
}

/// Another console, of role `role`, calling itself `operator`, writing a version of
/// `editing`'s rollout.
pub(crate) fn editor(operator: &str, role: &str, editing: &str) -> gavel::domain::Peer {
    gavel::domain::Peer {
        console: 7,
        role: role.into(),
        status: gavel::domain::Status {
            operator: operator.into(),
            editing: Some(editing.into()),
            ..Default::default()
        },
        since: None,
        claimed_at: None,
    }
}

#[test]
fn a_version_being_written_is_said_to_the_others_and_theirs_is_shown() {
    let (mut model, _reports) = rollout_under_way(&Config::default());
    update(&mut model, char('R'));
    let said = |commands: Vec<Command>| {
        commands.into_iter().find_map(|c| match c {
            Command::Present(status) => Some(status.editing),
            _ => None,
        })
    };
    assert_eq!(
        said(update(&mut model, char('b'))),
        Some(Some("standard".into()))
    );
    assert_eq!(said(update(&mut model, char('x'))), None, "said once");
    assert_eq!(
        said(update(&mut model, key(KeyCode::Esc))),
        Some(None),
        "and let go"
    );

    update(
        &mut model,
        Event::Presence(vec![editor("bob", "b", "standard")]),
    );
    let view = screen_at(&model, 80, 24);
    assert!(
        view.contains("bob (role b) is editing the rollout of standard"),
        "{view}"
    );
    update(&mut model, char('m'));
    let dialog = screen_at(&model, 80, 24);
    assert!(
        dialog.contains("bob (role b) is editing the rollout of standard too"),
        "{dialog}"
    );
    update(&mut model, key(KeyCode::Esc));
    update(&mut model, key(KeyCode::Esc));
    update(&mut model, char(':'));
    for c in "who".chars() {
        update(&mut model, char(c));
    }
    update(&mut model, key(KeyCode::Enter));
    let who = screen_at(&model, 120, 30);
    assert!(who.contains("editing the rollout of standard"), "{who}");
}

#[test]
fn the_history_held_is_bounded_and_with_nothing_published_nothing_is_promoted() {
    let v1 = history().remove(0);
    let many: Vec<SettingsVersion> = (1..=1_005)
        .map(|version| SettingsVersion {
            version,
            stable_version: Some(version),
            ..v1.clone()
        })
        .collect();
    let (model, _) = live(&Config::default(), many);
    let held = model.rollout.history(0).unwrap().unwrap();
    assert_eq!(held.len(), gavel::store::postgres::MAX_HISTORY as usize);
    assert_eq!(held[0].version, 6, "the newest are kept");
    assert_eq!(
        model.rollout.latest_of(0, "standard").unwrap().version,
        1_005
    );

    let (mut model, _) = live(&Config::default(), Vec::new());
    update(&mut model, char('R'));
    update(&mut model, char('m'));
    assert_eq!(
        flash(&model),
        "nothing published: nothing to promote or roll back"
    );
}

#[test]
fn over_the_defaults_the_stable_arm_is_the_debates_given_version_0() {
    let mut over_defaults = history().remove(1);
    (over_defaults.version, over_defaults.stable_version) = (1, None);
    over_defaults.canary_version = Some(1);
    let (mut model, mut reports) = live(&Config::default(), vec![over_defaults]);
    let defaults = Some((gavel::domain::DEFAULTS_VERSION, Arm::Stable));
    let rows = (0..3)
        .flat_map(|n| debate(&format!("s{n}"), defaults, 4, 1_000, false))
        .chain(debate("unstamped", None, 4, 1_000, false))
        .chain(debate("c0", Some((1, Arm::Canary)), 3, 1_000, false));
    land(&mut model, &mut reports, rows);
    let comparison = &model.reports.figures().rollout[0];
    assert_eq!(
        (comparison.stable.version, comparison.stable.finished),
        (None, 3)
    );
    assert_eq!(comparison.canary.finished, 1);
    update(&mut model, char('R'));
    let view = screen_at(&model, 80, 24);
    assert!(view.contains("stable (defaults)"), "{view}");
}
