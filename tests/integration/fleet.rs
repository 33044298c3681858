//! The debates the console holds at a cost that follows the screen: the list's summaries,
//! order, filter, window and counts kept row by row must say what recomputing them from every
//! debate's full rows says (property tests against that oracle); finished debates beyond the
//! retention are let go, and come back from the database when jumped to; rows for debates off
//! screen draw nothing.

use crate::common;

use std::collections::BTreeMap;

use chrono::Utc;
use common::key;
use crossterm::event::KeyCode;
use gavel::config::Config;
use gavel::console::app::{Command, Event, Fleet, Model, Seq, SortOrder, WaitClock, update};
use gavel::domain::{
    ActionKind, Change, ControllerDecision, ControllerMode, Debate, Decision, JudgeDecision,
    Judgment, OperatorAction, Reported, Session, SessionStatus, Signals, TIMEOUT_OPERATOR,
};
use proptest::prelude::*;

/// A row for debate `d{n}`.
#[derive(Debug, Clone)]
enum Row {
    Session {
        debate: u8,
        running: bool,
        mode: ControllerMode,
    },
    Decision {
        debate: u8,
        round: u32,
        stop: bool,
    },
    Action {
        debate: u8,
        round: u32,
        kind: ActionKind,
        by_timeout: bool,
    },
    Judgment {
        debate: u8,
        id: u64,
        abort: bool,
    },
}

fn id(debate: u8) -> String {
    format!("d{debate}")
}

impl Row {
    fn change(&self) -> Change {
        match *self {
            Row::Session {
                debate,
                running,
                mode,
            } => {
                let mut session = Session::placeholder(&id(debate));
                session.question = format!("question {debate}");
                session.status = Reported::Known(if running {
                    SessionStatus::Running
                } else {
                    SessionStatus::Completed
                });
                session.controller_mode = Reported::Known(mode);
                Change::Session(session)
            }
            Row::Decision {
                debate,
                round,
                stop,
            } => Change::Decision(ControllerDecision {
                session_id: id(debate),
                round_index: round,
                decision: Reported::Known(if stop {
                    Decision::StopConverged
                } else {
                    Decision::ContinueBaseline
                }),
                signals: Signals::default(),
                decided_at: None,
                issues: Vec::new(),
            }),
            Row::Action {
                debate,
                round,
                kind,
                by_timeout,
            } => Change::Action(OperatorAction {
                session_id: id(debate),
                round_index: round,
                action: Reported::Known(kind),
                decision: Reported::Known(Decision::ContinueBaseline),
                persona: None,
                operator: if by_timeout {
                    TIMEOUT_OPERATOR
                } else {
                    "alice"
                }
                .into(),
                role: None,
                note: None,
                created_at: Some(Utc::now()),
                issues: Vec::new(),
            }),
            Row::Judgment {
                debate,
                id: row,
                abort,
            } => Change::Judgment(Judgment {
                id: row,
                session_id: id(debate),
                round_index: 1,
                agent_persona: "skeptic".into(),
                decision: Reported::Known(if abort {
                    JudgeDecision::Abort
                } else {
                    JudgeDecision::Continue
                }),
                score: Some(0.5),
                reasons: Vec::new(),
                judge_model: None,
                pmids: Vec::new(),
                created_at: None,
                issues: Vec::new(),
            }),
        }
    }
}

fn row() -> impl Strategy<Value = Row> {
    prop_oneof![
        (
            0..8u8,
            any::<bool>(),
            prop::sample::select(ControllerMode::ALL.to_vec())
        )
            .prop_map(|(debate, running, mode)| Row::Session {
                debate,
                running,
                mode,
            }),
        (0..8u8, 1..5u32, any::<bool>()).prop_map(|(debate, round, stop)| Row::Decision {
            debate,
            round,
            stop
        }),
        (
            0..8u8,
            1..5u32,
            prop::sample::select(ActionKind::ALL.to_vec()),
            any::<bool>()
        )
            .prop_map(|(debate, round, kind, by_timeout)| Row::Action {
                debate,
                round,
                kind,
                by_timeout
            }),
        (0..8u8, 0..4u64, any::<bool>()).prop_map(|(debate, id, abort)| Row::Judgment {
            debate,
            id,
            abort
        }),
    ]
}

#[derive(Debug, Clone)]
enum Step {
    File(Row),
    Arrange(SortOrder, &'static str),
}

fn step() -> impl Strategy<Value = Step> {
    let sort = prop_oneof![
        Just(SortOrder::Arrival),
        Just(SortOrder::PendingFirst),
        Just(SortOrder::Id)
    ];
    let filter = prop_oneof![Just(""), Just("shadow"), Just("D3"), Just("running")];
    prop_oneof![
        4 => row().prop_map(Step::File),
        1 => (sort, filter).prop_map(|(sort, filter)| Step::Arrange(sort, filter)),
    ]
}

/// What the list should show, recomputed from every debate's full rows.
fn oracle(debates: &[Debate], sort: SortOrder, filter: &str) -> Vec<Seq> {
    let needle = filter.to_lowercase();
    let mut shown: Vec<Seq> = (0..debates.len() as Seq)
        .filter(|&seq| {
            let s = &debates[seq as usize].session;
            [
                s.id.clone(),
                s.question.clone(),
                s.status.to_string(),
                s.controller_mode.to_string(),
            ]
            .iter()
            .any(|text| text.to_lowercase().contains(&needle))
        })
        .collect();
    match sort {
        SortOrder::Arrival => {}
        SortOrder::PendingFirst => shown.sort_by_key(|&seq| {
            let d = &debates[seq as usize];
            (!d.waiting(), d.pending().is_none(), !d.session.is_running())
        }),
        SortOrder::Id => shown.sort_by_key(|&seq| debates[seq as usize].session.id.clone()),
    }
    shown
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn the_list_kept_row_by_row_is_the_list_recomputed(
        steps in prop::collection::vec(step(), 1..80),
        shown in 1..6usize,
    ) {
        let mut fleet = Fleet::new(usize::MAX);
        let mut debates: Vec<Debate> = Vec::new();
        // When each debate's latest decision was filed: a second a step.
        let mut decided: BTreeMap<Seq, u32> = BTreeMap::new();
        let (mut sort, mut filter) = (SortOrder::Arrival, "");
        let mut clock = WaitClock::default();
        let start = Utc::now();
        for (at, step) in steps.into_iter().enumerate() {
            clock.set_rate(1.0);
            clock.tick(start + chrono::Duration::seconds(at as i64));
            match step {
                Step::File(row) => {
                    let change = row.change();
                    let filed = fleet.apply(&change, &clock);
                    if filed.seq as usize == debates.len() {
                        debates.push(Debate::new(change.session_id()));
                    }
                    let debate = &mut debates[filed.seq as usize];
                    let was_waiting = debate.waiting();
                    if let Change::Decision(d) = &change
                        && d.round_index >= debate.latest_decision().map_or(0, |l| l.round_index)
                    {
                        decided.insert(filed.seq, at as u32);
                    }
                    debate.apply(change);
                    prop_assert_eq!(filed.waits, debate.waiting() && !was_waiting
                        || debate.waiting() && decided.get(&filed.seq) == Some(&(at as u32)));
                }
                Step::Arrange(s, f) => {
                    (sort, filter) = (s, f);
                    fleet.arrange(sort, filter, &[]);
                }
            }
            let expected = oracle(&debates, sort, filter);
            let all = fleet.window(None, usize::MAX).rows;
            prop_assert_eq!(&all, &expected);
            prop_assert_eq!(fleet.listed(), expected.len());
            let waiting = debates.iter().filter(|d| d.waiting()).count();
            let advisory = debates.iter().filter(|d| d.pending().is_some() && !d.waiting()).count();
            prop_assert_eq!((fleet.waiting(), fleet.advisory()), (waiting, advisory));
            // Waiting decisions, oldest first: the jump goes round them in that order.
            let mut oldest_first: Vec<(u32, Seq)> = (0..debates.len() as Seq)
                .filter(|&seq| debates[seq as usize].waiting())
                .map(|seq| (decided[&seq], seq))
                .collect();
            oldest_first.sort();
            let mut jumped = Vec::new();
            let mut at = None;
            for _ in 0..oldest_first.len() {
                at = fleet.next_waiting(at);
                jumped.extend(at);
            }
            let order: Vec<Seq> = oldest_first.iter().map(|(_, seq)| *seq).collect();
            prop_assert_eq!(&jumped, &order);
            prop_assert_eq!(fleet.next_waiting(at), order.first().copied());
            for (seq, debate) in debates.iter().enumerate() {
                let summary = fleet.get(seq as Seq).unwrap();
                prop_assert_eq!(summary.pending(), debate.pending().map(|d| d.round_index));
                prop_assert_eq!(summary.waiting(), debate.waiting());
                prop_assert_eq!(summary.ending(), debate.ending());
                prop_assert_eq!(summary.latest_round, debate.latest_round());
                prop_assert_eq!(
                    summary.last_decision.as_ref(),
                    debate.latest_decision().map(|d| &d.decision)
                );
            }
            // The window a list of `shown` rows draws around each selection, as ratatui
            // scrolls a table just far enough to show it; and moving by steps.
            for (rank, &seq) in expected.iter().enumerate() {
                let window = fleet.window(Some(seq), shown);
                let offset = (rank + 1).saturating_sub(shown);
                let end = (offset + shown).min(expected.len());
                prop_assert_eq!(&window.rows, &expected[offset..end].to_vec());
                prop_assert_eq!(window.selected, Some(rank - offset));
                for by in [-7i64, -1, 0, 1, 3, 20] {
                    let to = (rank as i64 + by).clamp(0, expected.len() as i64 - 1) as usize;
                    prop_assert_eq!(fleet.step(Some(seq), by), Some(expected[to]));
                }
            }
        }
    }
}

fn session(id: &str, running: bool) -> Change {
    let mut session = Session::placeholder(id);
    if !running {
        session.status = Reported::Known(SessionStatus::Completed);
    }
    Change::Session(session)
}

#[test]
fn finished_debates_beyond_the_retention_are_let_go_oldest_first() {
    let config = Config::parse("[ui]\nkeep_finished = 3", "test").unwrap();
    let mut model = Model::live("live".into(), "alice".into(), &config);
    update(&mut model, Event::Resize(160, 48));
    update(&mut model, Event::Store(Box::new(session("running", true))));
    for n in 0..6 {
        let id = format!("done-{n}");
        update(&mut model, Event::Store(Box::new(session(&id, true))));
        update(&mut model, Event::Store(Box::new(session(&id, false))));
    }
    model.prepare_frame();
    let held: BTreeMap<&str, bool> = model
        .debates
        .summaries()
        .map(|s| (&*s.id, s.is_running()))
        .collect();
    assert_eq!(
        held.keys().copied().collect::<Vec<_>>(),
        ["done-3", "done-4", "done-5", "running"],
        "the running debate and the three most recently finished"
    );
    // Jumping to one let go asks the database for it, and selects it when it lands.
    update(&mut model, Event::Key(KeyCode::Char(':').into()));
    for c in "done-0".chars() {
        update(&mut model, Event::Key(KeyCode::Char(c).into()));
    }
    let commands = update(&mut model, key(KeyCode::Enter));
    assert_eq!(commands, [Command::LoadHistory("done-0".into())]);
    update(&mut model, Event::Store(Box::new(session("done-0", false))));
    assert_eq!(
        model.selected_debate().map(|d| d.session.id.as_str()),
        Some("done-0")
    );
}

#[test]
fn the_selected_debate_is_kept_however_long_ago_it_finished() {
    let config = Config::parse("[ui]\nkeep_finished = 1", "test").unwrap();
    let mut model = Model::new("demo".into(), "alice".into(), &config);
    update(&mut model, Event::Store(Box::new(session("first", false))));
    for n in 0..5 {
        update(
            &mut model,
            Event::Store(Box::new(session(&format!("later-{n}"), false))),
        );
        model.prepare_frame();
    }
    assert_eq!(model.debates.len(), 2, "the selection and the latest");
    assert_eq!(model.selected_debate().unwrap().session.id, "first");
}

#[test]
fn rows_for_debates_off_screen_draw_nothing() {
    let mut model = Model::new("demo".into(), "alice".into(), &Config::default());
    update(&mut model, Event::Resize(160, 48));
    common::record_frame(&mut model);
    for n in 0..40 {
        update(
            &mut model,
            Event::Store(Box::new(session(&format!("d{n:02}"), true))),
        );
    }
    model.prepare_frame();
    assert!(model.take_dirty(), "new debates change the list");
    let decision = |id: &str, round: u32| {
        Event::Store(Box::new(
            Row::Decision {
                debate: 0,
                round,
                stop: false,
            }
            .change_for(id),
        ))
    };
    // A first decision changes the pending count; a second one leaves the counts alone. d39
    // is far below the rows the list draws.
    for id in ["d00", "d01", "d39"] {
        update(&mut model, decision(id, 1));
    }
    model.prepare_frame();
    assert!(model.take_dirty());
    update(&mut model, decision("d39", 2));
    assert!(
        !model.take_dirty(),
        "an off-screen debate's row draws nothing"
    );
    update(&mut model, decision("d01", 2));
    assert!(model.take_dirty(), "a row of a debate on screen is drawn");
    update(&mut model, decision("d00", 2));
    assert!(model.take_dirty(), "a row of the selected debate is drawn");
}

impl Row {
    /// This row for debate `id` instead.
    fn change_for(&self, id: &str) -> Change {
        match self.change() {
            Change::Decision(mut d) => {
                d.session_id = id.to_owned();
                Change::Decision(d)
            }
            other => other,
        }
    }
}

#[test]
fn a_filter_finds_personas_first_seen_after_it_was_set() {
    let mut fleet = Fleet::new(usize::MAX);
    fleet.apply(&session("before", true), &WaitClock::default());
    fleet.arrange(SortOrder::Arrival, "Skeptic", &[]);
    assert_eq!(fleet.listed(), 0);
    let mut roster = Session::placeholder("after");
    roster.personas = vec!["theorist".into(), "skeptic".into()];
    fleet.apply(&Change::Session(roster), &WaitClock::default());
    let mut long = Session::placeholder("long-name");
    long.personas = vec![format!("{}skeptic", "x".repeat(100))];
    fleet.apply(&Change::Session(long), &WaitClock::default());
    let shown = fleet.window(None, 10).rows;
    assert_eq!(
        shown,
        [fleet.seq("after").unwrap()],
        "a persona's first 64 characters"
    );
    assert_eq!(fleet.filter(), "Skeptic", "as typed");
}

#[test]
fn a_debate_knows_the_round_each_persona_first_spoke_in_whatever_order_turns_land() {
    // What the rounds table marks who joined late by, without going over earlier turns.
    let mut debate = Debate::new("s");
    debate.apply(Change::Turn(common::rows::turn("s", 2, 3, "skeptic")));
    debate.apply(Change::Turn(common::rows::turn("s", 1, 1, "theorist")));
    debate.apply(Change::Turn(common::rows::turn("s", 3, 2, "skeptic")));
    // A turn no round can hold says nothing of when its persona joined.
    debate.apply(Change::Turn(common::rows::turn("s", 4, 0, "expert")));
    assert_eq!(debate.first_spoke("theorist"), Some(1));
    assert_eq!(debate.first_spoke("skeptic"), Some(2));
    assert_eq!(debate.first_spoke("expert"), None);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// The rounds a view shows come from the rows kept by round (nothing goes over a long
    /// debate's every row): they must be what gathering every row says, whatever order rows
    /// land in, and when a row written again moves to another round or to none.
    #[test]
    fn the_rounds_kept_by_round_are_the_rounds_gathered_from_every_row(
        rows in prop::collection::vec((any::<bool>(), 1..12u64, 0..7u32), 1..60),
        first in 0..8u32,
        span in 0..8u32,
    ) {
        let mut debate = Debate::new("s");
        for (turn, id, round) in rows {
            debate.apply(if turn {
                Change::Turn(common::rows::turn("s", id, round, "theorist"))
            } else {
                let ruling = common::rows::ruling("s", id, round, "theorist", JudgeDecision::Abort, 0.5);
                Change::Judgment(ruling)
            });
        }
        let latest = debate.turns.iter().map(|t| t.round_number).max().unwrap_or(0);
        prop_assert_eq!(debate.latest_round(), latest);
        let last = first.saturating_add(span);
        let shown = debate.rounds_in(first..=last);
        let expected: Vec<u32> = (first.max(1)..=last.min(latest)).collect();
        prop_assert_eq!(shown.iter().map(|r| r.number).collect::<Vec<_>>(), expected);
        for round in shown {
            let turns: Vec<u64> = debate
                .turns
                .iter()
                .filter(|t| t.round_number == round.number)
                .map(|t| t.id)
                .collect();
            let judgments: Vec<u64> = debate
                .judgments
                .iter()
                .filter(|j| j.round_index == round.number)
                .map(|j| j.id)
                .collect();
            prop_assert_eq!(round.turns.iter().map(|t| t.id).collect::<Vec<_>>(), turns);
            prop_assert_eq!(round.judgments.iter().map(|j| j.id).collect::<Vec<_>>(), judgments);
            let one = debate.round(round.number);
            prop_assert_eq!(one.turns.len(), round.turns.len());
            prop_assert_eq!(one.judgments.len(), round.judgments.len());
        }
    }
}

/// A row of debate `s` of each kind in turn (`kind` 0 to 5: session, turn, ruling, decision,
/// action, note), numbered `id`, in `round` (0 places it in no round), read with `problems`
/// problems, the first saying which round a reader flagged when `flagged`.
fn row_with_problems(kind: u8, id: u64, round: u32, problems: usize, flagged: bool) -> Change {
    let mut issues: Vec<String> = (0..problems)
        .map(|n| format!("row {id} of kind {kind}: problem {n}"))
        .collect();
    if flagged && let Some(first) = issues.first_mut() {
        *first = format!("row of kind {kind}: round_index: {round} flagged");
    }
    let s = "s";
    match kind {
        0 => Change::Session(Session {
            issues,
            ..Session::placeholder(s)
        }),
        1 => Change::Turn(gavel::domain::Turn {
            issues,
            ..common::rows::turn(s, id, round, "theorist")
        }),
        2 => Change::Judgment(Judgment {
            issues,
            ..common::rows::ruling(s, id, round, "theorist", JudgeDecision::Continue, 0.5)
        }),
        3 => Change::Decision(ControllerDecision {
            issues,
            ..common::rows::decision(s, round, Decision::ContinueBaseline.into())
        }),
        4 => Change::Action(OperatorAction {
            issues,
            ..common::rows::action(
                s,
                round,
                ActionKind::Accept,
                Decision::ContinueBaseline.into(),
            )
        }),
        _ => Change::Note(gavel::domain::DebateNote {
            id,
            session_id: s.into(),
            operator: "alice".into(),
            role: None,
            text: "a note".into(),
            created_at: None,
            issues,
        }),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// The decision panel shows how many problems a debate's rows were read with from a count
    /// kept as rows are filed: it is what going over every row finds, whatever rows land,
    /// replace each other, move into a round or out of every round.
    #[test]
    fn the_problems_counted_as_rows_land_are_the_problems_of_every_row(
        rows in prop::collection::vec(
            (0..6u8, 1..5u64, 0..4u32, 0..3usize, any::<bool>()),
            1..60,
        ),
    ) {
        let mut debate = Debate::new("s");
        for (kind, id, round, problems, flagged) in rows {
            debate.apply(row_with_problems(kind, id, round, problems, flagged));
            prop_assert_eq!(debate.issue_count(), debate.issues().count());
        }
    }
}
