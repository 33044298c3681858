//! Untrusted numbers are bounded: a round number or index outside `1..=max_round`, or a count
//! that is negative or absurd, is flagged on its row (table, key, value) by every reader (the
//! database's, the memory store's, the fixture parser's), placed in no round, and never sizes
//! an allocation or a loop; the console shows the flag and stays fast. The last test writes such
//! rows to a real PostgreSQL by plain SQL.

use crate::common;

use std::time::{Duration, Instant};

use common::char;
use common::hostile::{HUGE, decision_row, fed, hostile_session, turn_row};
use common::pg::{Database, migrated_database};
use common::screen_at as screen;
use gavel::audit::Trace;
use gavel::calibrate::RecordedDebate;
use gavel::config::Config;
use gavel::console::app::{DetailView, Event, Link, Model, update};
use gavel::domain::{Change, Debate, Limits};
use gavel::simulate::Fixture;
use gavel::store::MemoryStore;
use gavel::store::postgres::rows::{judgment_from, turn_from};

/// Every kind of hostile row for debate `s`, plus one sane round so there is something to show.
fn hostile_rows() -> Vec<Change> {
    let huge_text = "all work and no play \u{1b}]0;pwned\u{7} ".repeat(20_000);
    vec![
        hostile_session(),
        turn_row("1", Some("1"), "100", "a sane opening"),
        turn_row("2", Some(HUGE), "10", "beyond every round"),
        turn_row("3", Some("0"), "10", "round zero"),
        turn_row("4", Some("-7"), "-10", "negative"),
        turn_row("5", None, "10", "no round at all"),
        turn_row("6", Some("1"), "20", &huge_text),
        decision_row("1", "{}"),
        decision_row(
            HUGE,
            r#"{"similarity": "NaN", "similarity_threshold": "inf", "new_claims": -4,
                "open_disputes": 1e15, "tokens_used": -1, "token_budget": 2.5}"#,
        ),
        Change::Judgment(judgment_from(
            &[
                Some("9"),
                Some("s"),
                Some("1000000"),
                Some("skeptic"),
                Some("warn"),
                Some("-Infinity"),
                None,
                None,
                None,
                None,
            ],
            &Limits::default(),
        )),
    ]
}

fn hostile_model() -> Model {
    let model = Model::new("untrusted".into(), "alice".into(), &Config::default());
    fed(model, hostile_rows())
}

fn debate(model: &Model) -> &Debate {
    model.debate("s").expect("debate s")
}

fn has_issue(debate: &Debate, needle: &str) -> bool {
    debate.issues().any(|i| i.contains(needle))
}

/// Each flag is among the debate's issues.
fn assert_flagged(debate: &Debate, flags: &[&str]) {
    for flag in flags {
        assert!(has_issue(debate, flag), "{flag} missing from {:#?}", {
            debate.issues().collect::<Vec<_>>()
        });
    }
}

#[test]
fn out_of_range_rounds_are_flagged_with_table_key_and_value_and_placed_in_no_round() {
    let model = hostile_model();
    let debate = debate(&model);
    assert_flagged(
        debate,
        &[
            "debate_rounds (id 2): round_number: 2147483647 is outside 1..=10000",
            "debate_rounds (id 3): round_number: 0 is outside 1..=10000",
            "debate_rounds (id 4): round_number: -7 is outside 1..=10000",
            "debate_rounds (id 5): round_number: missing (NULL)",
            "debate_round_decisions (s, 2147483647): round_index: 2147483647 is outside 1..=10000",
            "debate_round_judgments (id 9): round_index: 1000000 is outside 1..=10000",
        ],
    );
    // Only the sane round is laid out; the flagged rows are kept for their issues.
    assert_eq!(debate.latest_round(), 1);
    assert_eq!(debate.rounds().len(), 1);
    assert_eq!(debate.turns.len(), 2);
    assert_eq!(debate.unplaced.len(), 6);
    assert_eq!(debate.latest_decision().unwrap().round_index, 1);
}

#[test]
fn absurd_counts_are_flagged_and_never_used() {
    let model = hostile_model();
    let debate = debate(&model);
    let session = &debate.session;
    assert_flagged(
        debate,
        &[
            "debate_sessions (s): num_rounds: -1 is outside 0..=10000",
            "debate_sessions (s): min_rounds: -5 is outside 0..=10000",
            "debate_sessions (s): max_rounds: 2147483647 is outside 0..=10000",
            "debate_sessions (s): token_budget: -100 is outside 0..=1000000000000",
            "debate_sessions (s): tokens_used: 99999999999999999 is outside 0..=1000000000000",
            "debate_sessions (s): metadata: agent_count: -3 is outside 0..=1000",
            "debate_sessions (s): metadata: cost_usd: -2 is outside 0..=1000000000",
            "debate_sessions (s): metadata: budget_usd: 1e300 is outside 0..=1000000000",
            "debate_sessions (s): created_at: NaN seconds is not a time",
            "debate_rounds (id 4): tokens_used: -10 is outside 0..=4294967295",
            "signal_json: similarity: NaN is not a finite number",
            "signal_json: new_claims: -4 is outside 0..=4294967295",
            "signal_json: open_disputes: 1000000000000000 is outside 0..=4294967295",
            "signal_json: tokens_used: -1 is outside 0..=1000000000000",
            "signal_json: token_budget: 2.5 is not a whole number",
            "debate_round_judgments (id 9): score: -inf is not a finite number",
        ],
    );
    // Flagged counts fall back to the contract's defaults or are left out.
    assert_eq!(session.num_rounds, None);
    assert_eq!((session.min_rounds, session.max_rounds), (2, 8));
    assert_eq!((session.token_budget, session.tokens_used), (0, 0));
    assert_eq!(session.metadata.agent_count, None);
    assert_eq!(session.metadata.complexity, Some(0.5));
    assert_eq!(
        (session.metadata.cost_usd, session.metadata.budget_usd),
        (None, None)
    );
    assert_eq!(session.metadata.usd_per_1k_tokens, Some(0.01));
}

#[test]
fn reports_over_hostile_rows_stay_small() {
    let model = hostile_model();
    let debate = debate(&model);
    let started = Instant::now();
    let trace = Trace::of(debate);
    // The lexical measure: what the embedding of a huge round costs is bounded by its cap and
    // tested in tests/integration/semantic.rs (a_huge_round_costs_no_more_than_its_first_32_kib).
    let record = RecordedDebate::from_debate(
        debate,
        &gavel::calibrate::Measuring::recorded(gavel::signals::Measure::Lexical),
    );
    assert_eq!(trace.rounds.len(), 1);
    assert_eq!(record.rounds.len(), 1);
    assert!(trace.issues.iter().any(|i| i.contains(HUGE)));
    assert!(record.issues.iter().any(|i| i.contains(HUGE)));
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[test]
fn the_console_shows_the_flags_and_stays_fast_at_both_sizes() {
    let mut model = hostile_model();
    model.select(model.debates.seq("s").unwrap());
    for (width, height) in [(80, 24), (160, 48)] {
        update(&mut model, Event::Resize(width, height));
        let started = Instant::now();
        let text = screen(&model, width, height);
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{width}x{height} took {:?}",
            started.elapsed()
        );
        // The list marks the debate; the decision panel leads with the first row placed in no
        // round.
        assert!(text.contains("s ⚠"), "{text}");
        assert!(text.contains("⚠ debate_rounds (id 2)"), "{text}");
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{7}'),
            "{text}"
        );
    }
    let text = screen(&model, 160, 48);
    assert!(
        text.contains(
            "⚠ debate_rounds (id 2): round_number: 2147483647 is outside 1..=10000 (+23 more)"
        ),
        "{text}"
    );
    // Every key over the hostile debate is cheap: nothing iterates up to a hostile round.
    for key in ['l', 'v', 'j', 'k', 'v', 'v', 'V', 'h', 'c', 'w', '?', '?'] {
        let started = Instant::now();
        update(&mut model, char(key));
        screen(&model, 160, 48);
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{key:?} took {:?}",
            started.elapsed()
        );
    }
}

#[test]
fn the_memory_store_applies_the_same_bounds() {
    let store = MemoryStore::with_limits(Limits { max_round: 5 });
    let mut rows = store.subscribe();
    let mut turn = match turn_row("1", Some("3"), "10", "fine") {
        Change::Turn(turn) => turn,
        _ => unreachable!(),
    };
    store.write(Change::Turn(turn.clone()));
    turn.id = 2;
    turn.round_number = 6;
    store.write(Change::Turn(turn.clone()));
    turn.id = 3;
    turn.round_number = 0;
    store.write(Change::Turn(turn));
    let mut debate = Debate::new("s");
    while let Ok(row) = rows.try_recv() {
        debate.apply(row);
    }
    assert_eq!(debate.latest_round(), 3);
    assert!(has_issue(
        &debate,
        "debate_rounds (id 2): round_number: 6 is outside 1..=5"
    ));
    assert!(has_issue(
        &debate,
        "debate_rounds (id 3): round_number: 0 is outside 1..=5"
    ));
}

#[test]
fn the_fixture_parser_applies_the_same_bounds() {
    let text = [
        r#"{"session": {"id": "f", "question": "q", "controller_mode": "shadow", "personas": ["a"], "max_rounds": 20000, "token_budget": 100, "metadata": {"agent_count": 5000, "complexity": 1.5, "cost_usd": -1}}}"#,
        r#"{"turn": {"round": 1, "persona": "a", "tokens": 1, "content": "x"}}"#,
        r#"{"turn": {"round": 2, "persona": "a", "tokens": 1, "content": "y"}}"#,
    ]
    .join("\n");
    let errors = Fixture::parse_within("f.jsonl", &text, &Limits { max_round: 1 })
        .unwrap_err()
        .to_string();
    assert_eq!(
        errors,
        "f.jsonl:1: max_rounds: 20000 is outside 0..=1\n\
         f.jsonl:1: metadata.agent_count: 5000 is outside 0..=1000\n\
         f.jsonl:1: metadata.complexity: 1.5 is outside 0..=1\n\
         f.jsonl:1: metadata.cost_usd: -1 is outside 0..=1000000000\n\
         f.jsonl:3: round: 2 is outside 1..=1"
    );
}

#[test]
fn max_round_is_configurable_within_its_ceiling() {
    let config = Config::parse("[limits]\nmax_round = 50\n", "c.toml").unwrap();
    assert_eq!(config.limits.max_round, 50);
    let limits = config.limits;
    let turn = turn_row("1", Some("51"), "1", "x");
    assert!(turn.issues().is_empty(), "read within the default limits");
    let turn = turn_from(&[Some("1"), Some("s"), Some("51")], &limits);
    assert_eq!(turn.round_number, 0);
    assert_eq!(
        turn.issues,
        ["debate_rounds (id 1): round_number: 51 is outside 1..=50"]
    );
    for (text, error) in [
        (
            "[limits]\nmax_round = 0\n",
            "[limits] max_round 0 must be between 1 and 100000",
        ),
        (
            "[limits]\nmax_round = 1000000\n",
            "[limits] max_round 1000000 must be between 1 and 100000",
        ),
        (
            "[limits]\nmax_round = 5\n",
            "[controller] max_rounds 8 is above [limits] max_round 5",
        ),
    ] {
        let e = Config::parse(text, "c.toml").unwrap_err().to_string();
        assert_eq!(e, format!("c.toml: {error}"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_rows_written_by_sql_are_flagged_on_the_console_and_stay_cheap() {
    let Database { target, client, .. } = migrated_database("hostile").await;
    client
        .batch_execute(
            "INSERT INTO debate_sessions (id, question, controller_mode, num_rounds, min_rounds, \
                 max_rounds, token_budget, tokens_used, personas) \
                 VALUES ('h', 'hostile', 'gated', -1, -2, 2147483647, -9, 9223372036854775807, \
                 '[\"theorist\"]');
             INSERT INTO debate_rounds (session_id, round_number, agent_persona, content, tokens_used) \
                 VALUES ('h', 1, 'theorist', 'sane', 10), ('h', 2147483647, 'theorist', 'far', 10), \
                        ('h', 0, 'theorist', 'zero', -5), ('h', 1000000, 'theorist', 'million', 1);
             INSERT INTO debate_round_decisions (session_id, round_index, decision, signal_json) \
                 VALUES ('h', 1, 'continue_baseline', '{\"new_claims\": -1}'), \
                        ('h', 2147483647, 'stop_converged', '{}');
             INSERT INTO debate_round_judgments (session_id, round_index, agent_persona, decision, score) \
                 VALUES ('h', -2147483648, 'theorist', 'warn', 7);
             INSERT INTO debate_operator_actions (session_id, round_index, action, decision, operator) \
                 VALUES ('h', 2147483647, 'accept', 'stop_converged', 'mallory');",
        )
        .await
        .unwrap();

    let (sender, mut events) = tokio::sync::mpsc::unbounded_channel();
    let _commands = gavel::console::backend::live::start(
        gavel::store::postgres::Sides::one(target),
        sender,
        None,
        Limits::default(),
    );
    let mut model = Model::live("untrusted".into(), "alice".into(), &Config::default());
    let deadline = Instant::now() + Duration::from_secs(20);
    while model.live.link != Some(Link::Live)
        || model.debate("h").is_none_or(|d| d.turns.is_empty())
    {
        let event = tokio::time::timeout_at(deadline.into(), events.recv())
            .await
            .expect("the hostile rows within 20 s")
            .expect("the feed");
        update(&mut model, event);
    }
    model.prepare_frame();
    let debate = model.debate("h").unwrap();
    assert_flagged(
        debate,
        &[
            "debate_sessions (h): num_rounds: -1 is outside 0..=10000",
            "debate_sessions (h): max_rounds: 2147483647 is outside 0..=10000",
            "debate_sessions (h): tokens_used: 9223372036854775807 is outside 0..=1000000000000",
            "round_number: 2147483647 is outside 1..=10000",
            "round_number: 0 is outside 1..=10000",
            "round_number: 1000000 is outside 1..=10000",
            "debate_rounds (id 3): tokens_used: -5 is outside 0..=4294967295",
            "debate_round_decisions (h, 2147483647): round_index: 2147483647 is outside 1..=10000",
            "debate_round_decisions (h, 1): signal_json: new_claims: -1 is outside 0..=4294967295",
            "round_index: -2147483648 is outside 1..=10000",
            "score: 7 is outside 0..=1",
            "debate_operator_actions (h, 2147483647): round_index: 2147483647 is outside 1..=10000",
        ],
    );
    assert_eq!(debate.latest_round(), 1);
    // The flagged action resolved nothing: round 1's decision is still pending.
    assert_eq!(debate.pending().map(|d| d.round_index), Some(1));

    model.select(model.debates.seq("h").unwrap());
    update(&mut model, Event::Resize(160, 48));
    for key in ['l', 'v', 'k', 'j', 'h'] {
        let started = Instant::now();
        update(&mut model, char(key));
        let text = screen(&model, 160, 48);
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{key:?} took {:?}",
            started.elapsed()
        );
        assert!(
            text.contains(
                "⚠ debate_round_decisions (h, 1): signal_json: new_claims: -1 is outside"
            ),
            "{text}"
        );
    }
}

#[test]
fn recorded_token_counts_that_go_down_do_not_break_a_replay() {
    let config = Config::default();
    let mut debate = Debate::new("s");
    let mut session = match hostile_session() {
        Change::Session(session) => session,
        _ => unreachable!(),
    };
    session.status = gavel::domain::SessionStatus::Completed.into();
    session.token_budget = 100;
    debate.apply(Change::Session(session));
    // No turns: the spend comes from the recorded signals, and this writer's goes down.
    debate.apply(decision_row(
        "1",
        r#"{"tokens_used": 95, "new_claims": 3, "verdict_split": false}"#,
    ));
    debate.apply(decision_row(
        "2",
        r#"{"tokens_used": 5, "new_claims": 3, "verdict_split": false}"#,
    ));
    let record = RecordedDebate::from_debate(
        &debate,
        &gavel::calibrate::Measuring::recorded(gavel::config::Config::default().signals.measure()),
    );
    assert_eq!(record.tokens_after(1), 95);
    assert_eq!(record.tokens_after(2), 95, "spent tokens never go down");
    let current = gavel::calibrate::Setting::current(&config.controller);
    let outcome = gavel::calibrate::replay(&record, &current, &config.controller);
    assert_eq!(outcome.rounds_used, 1, "the budget stops it after round 1");
    assert_eq!(outcome.tokens_saved, 0);
}

#[test]
fn a_debate_at_the_highest_round_allowed_stays_cheap() {
    let top = Limits::default().max_round;
    let model = Model::new("untrusted".into(), "alice".into(), &Config::default());
    let mut model = fed(
        model,
        [
            hostile_session(),
            turn_row("1", Some("1"), "1", "first"),
            turn_row("2", Some(&top.to_string()), "1", "last"),
            turn_row("3", Some(HUGE), "1", "beyond"),
            decision_row(&top.to_string(), "{}"),
        ],
    );
    model.select(model.debates.seq("s").unwrap());
    update(&mut model, Event::Resize(160, 48));
    // The guarantee, structurally: the most a view lays out is one row a round, and the rounds
    // end at the highest round allowed, whatever a row beyond it claims.
    assert_eq!(debate(&model).latest_round(), top);
    assert_eq!(debate(&model).rounds().len(), top as usize);
    // And no view does more than lay them out: a bound that catches an accidental quadratic
    // (seconds a key at this size) without timing a debug build on busy cores.
    for key in ['l', 'k', 'k', 'v', 'j', 'v', 'v', 'v', 'v', 'h'] {
        let started = Instant::now();
        update(&mut model, char(key));
        screen(&model, 160, 48);
        let took = started.elapsed();
        assert!(took < Duration::from_secs(5), "{key:?} took {took:?}");
    }
}

#[test]
fn a_flagged_row_written_again_replaces_its_older_version() {
    let mut debate = Debate::new("s");
    for signals in [r#"{"new_claims": 1}"#, r#"{"new_claims": 2}"#] {
        debate.apply(decision_row(HUGE, signals));
        debate.apply(decision_row("-1", signals));
        debate.apply(turn_row("2", Some(HUGE), "1", signals));
    }
    assert_eq!(debate.unplaced.len(), 3);
    let Change::Decision(kept) = &debate.unplaced[0] else {
        panic!("{:?}", debate.unplaced[0]);
    };
    assert_eq!(kept.signals.new_claims, Some(2));
    // Written again within bounds, the turn is placed and leaves the unplaced rows.
    debate.apply(turn_row("2", Some("3"), "1", "back in bounds"));
    assert_eq!(debate.unplaced.len(), 2);
    assert_eq!(debate.latest_round(), 3);
}

#[test]
fn a_round_crowded_with_turns_stays_cheap_in_every_view() {
    let mut model = Model::new("untrusted".into(), "alice".into(), &Config::default());
    update(&mut model, Event::Store(Box::new(hostile_session())));
    for id in 1..=3_000 {
        let row = turn_row(&id.to_string(), Some("1"), "1", "VERDICT: yes");
        update(&mut model, Event::Store(Box::new(row)));
    }
    model.prepare_frame();
    model.select(model.debates.seq("s").unwrap());
    update(&mut model, Event::Resize(160, 48));
    for key in ['l', 'v', 'v', 'v', 'v', 'j', 'v'] {
        let started = Instant::now();
        update(&mut model, char(key));
        let text = screen(&model, 160, 48);
        let took = started.elapsed();
        assert!(took < Duration::from_millis(1500), "{key:?} took {took:?}");
        if model.nav.view == DetailView::Format {
            // As many takes' cards as fit, the last saying how many more there are.
            assert!(text.contains("┌ +2991 more · r1"), "{text}");
        }
    }
}
