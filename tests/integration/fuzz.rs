//! Property tests over everything an untrusted writer controls: fixture files, notification
//! payloads, `signal_json`, vocabulary strings, the lenient reading of row columns, and the
//! console's `update()` and `view()` fed arbitrary events over hostile rows. None may panic;
//! each rejection names what was wrong and where, and every number that survives lies within
//! its bounds.

use crate::common;

use std::time::Duration;

use common::hostile::{HUGE, decision_row, fed, hostile_session, turn_row};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use gavel::config::Config;
use gavel::console::app::{Event, Link, Model, update};
use gavel::domain::limits::{MAX_AGENTS, MAX_TOKENS, MAX_USD};
use gavel::domain::{
    ActionKind, Change, ControllerMode, Decision, JudgeDecision, Limits, Reported, SessionStatus,
};
use gavel::simulate::Fixture;
use gavel::store::ResolveError;
use gavel::store::postgres::Notice;
use gavel::store::postgres::rows::{
    action_from, decision_from, judgment_from, session_from, signal_json, turn_from,
};
use proptest::prelude::*;
use serde_json::{Value, json};

const LIMITS: Limits = Limits { max_round: 50 };

/// The contract's older names, read as the current ones (`src/domain/`).
const ALIASES: &[&str] = &[
    "warn_persona",
    "halt_and_replace_persona",
    "abort_debate",
    "definitional",
];

/// Integers a hostile writer would try: around the bounds, and anywhere.
fn integer() -> impl Strategy<Value = i64> {
    prop_oneof![
        -3i64..60,
        Just(i64::from(i32::MAX)),
        Just(i64::from(i32::MIN)),
        Just(i64::MAX),
        Just(i64::MIN),
        any::<i64>(),
    ]
}

/// A JSON value of any shape, small.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        integer().prop_map(Value::from),
        any::<f64>()
            .prop_filter("JSON numbers are finite", |f| f.is_finite())
            .prop_map(Value::from),
        prop::sample::select(vec!["NaN", "inf", "-1", "12", "2.5", "", "\u{1b}[2J"])
            .prop_map(Value::from),
        ".{0,12}".prop_map(Value::from),
    ];
    leaf.prop_recursive(2, 12, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{1,12}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// One column's text as a foreign writer may have left it.
fn column() -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        Just(None),
        integer().prop_map(|n| Some(n.to_string())),
        any::<f64>().prop_map(|f| Some(f.to_string())),
        prop::sample::select(vec![
            "NaN",
            "Infinity",
            "-inf",
            "1e400",
            "9223372036854775808",
            "true",
            "",
            "null",
            r#"{"agent_count": -1, "complexity": 2}"#,
            r#"{"agent_count": 1e12}"#,
            r#"{"cost_usd": -1, "budget_usd": 1e300, "usd_per_1k_tokens": 2}"#,
            r#"["a", 1, null]"#,
            r#"[{"pmid": "1", "verified": true}]"#,
            r#"{"similarity": "NaN", "new_claims": -1, "tokens_used": 1e30}"#,
        ])
        .prop_map(|s| Some(s.to_owned())),
        json_value().prop_map(|v| Some(v.to_string())),
        long_array().prop_map(|v| Some(v.to_string())),
        any::<String>().prop_map(Some),
    ]
}

/// An array of names around and beyond [`MAX_AGENTS`]: a roster to cut.
fn long_array() -> impl Strategy<Value = Value> {
    let max = MAX_AGENTS as usize;
    prop_oneof![max - 2..=max + 2, 0..3 * max]
        .prop_map(|n| Value::from((0..n).map(|i| format!("p{i}")).collect::<Vec<_>>()))
}

fn columns() -> impl Strategy<Value = Vec<Option<String>>> {
    prop::collection::vec(column(), 0..16)
}

fn as_columns(texts: &[Option<String>]) -> Vec<Option<&str>> {
    texts.iter().map(Option::as_deref).collect()
}

/// Every issue names its table and the row's key: `table (key): column: problem`.
fn assert_issues_named(table: &str, issues: &[String]) {
    for issue in issues {
        assert!(
            issue.starts_with(&format!("{table} (")) && issue.contains("): "),
            "{issue}"
        );
    }
}

/// A round is placed (within the limits) or 0 with an issue naming the column.
fn assert_round(round: u32, column: &str, issues: &[String]) {
    assert!(round <= LIMITS.max_round, "{round}");
    if round == 0 {
        assert!(
            issues.iter().any(|i| i.contains(&format!(": {column}: "))),
            "round 0 unflagged: {issues:?}"
        );
    }
}

/// Every row reader over every table's columns, as changes.
fn rows(texts: &[Option<String>]) -> Vec<Change> {
    let c = as_columns(texts);
    vec![
        Change::Session(session_from(&c, &LIMITS)),
        Change::Turn(turn_from(&c, &LIMITS)),
        Change::Decision(decision_from(&c, &LIMITS)),
        Change::Judgment(judgment_from(&c, &LIMITS)),
        Change::Action(action_from(&c, &LIMITS)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn lenient_rows_never_fail_and_keep_every_number_in_bounds(texts in columns()) {
        let c = as_columns(&texts);
        let session = session_from(&c, &LIMITS);
        assert_issues_named("debate_sessions", &session.issues);
        for count in [session.min_rounds, session.max_rounds, session.num_rounds.unwrap_or(0)] {
            prop_assert!(count <= LIMITS.max_round);
        }
        prop_assert!(session.token_budget <= MAX_TOKENS && session.tokens_used <= MAX_TOKENS);
        prop_assert!(session.metadata.agent_count.is_none_or(|n| n <= MAX_AGENTS));
        let meta = &session.metadata;
        prop_assert!(meta.complexity.is_none_or(|c| (0.0..=1.0).contains(&c)));
        for usd in [meta.cost_usd, meta.budget_usd, meta.usd_per_1k_tokens] {
            prop_assert!(usd.is_none_or(|usd| (0.0..=MAX_USD).contains(&usd)));
        }
        prop_assert!(session.personas.len() <= MAX_AGENTS as usize);

        let turn = turn_from(&c, &LIMITS);
        assert_issues_named("debate_rounds", &turn.issues);
        assert_round(turn.round_number, "round_number", &turn.issues);

        let decision = decision_from(&c, &LIMITS);
        assert_issues_named("debate_round_decisions", &decision.issues);
        assert_round(decision.round_index, "round_index", &decision.issues);
        let s = &decision.signals;
        prop_assert!(s.tokens_used.is_none_or(|t| t <= MAX_TOKENS));
        prop_assert!(s.token_budget.is_none_or(|t| t <= MAX_TOKENS));

        let judgment = judgment_from(&c, &LIMITS);
        assert_issues_named("debate_round_judgments", &judgment.issues);
        assert_round(judgment.round_index, "round_index", &judgment.issues);
        if let Some(score) = judgment.score.filter(|s| !(0.0..=1.0).contains(s)) {
            prop_assert!(judgment.issues.iter().any(|i| i.contains(": score: ")), "{score}");
        }

        let action = action_from(&c, &LIMITS);
        assert_issues_named("debate_operator_actions", &action.issues);
        assert_round(action.round_index, "round_index", &action.issues);
    }

    #[test]
    fn a_roster_beyond_max_agents_is_cut_there_and_flagged(roster in long_array()) {
        let length = roster.as_array().map_or(0, Vec::len);
        let text = roster.to_string();
        let mut texts = vec![None; 10];
        texts[0] = Some("s");
        texts.push(Some(text.as_str()));
        let session = session_from(&texts, &LIMITS);
        let kept = length.min(MAX_AGENTS as usize);
        prop_assert_eq!(session.personas.len(), kept);
        prop_assert_eq!(session.personas.last().cloned(), kept.checked_sub(1).map(|i| format!("p{i}")));
        let flag = format!(
            "debate_sessions (s): personas: {length} personas, more than {MAX_AGENTS}: the rest are left out"
        );
        prop_assert_eq!(session.issues.contains(&flag), length > MAX_AGENTS as usize, "{:?}", session.issues);
    }

    #[test]
    fn an_integer_round_out_of_bounds_is_flagged_with_its_value(round in integer()) {
        let text = round.to_string();
        let turn = turn_from(&[Some("7"), Some("s"), Some(&text)], &LIMITS);
        if (1..=50).contains(&round) {
            prop_assert_eq!(i64::from(turn.round_number), round);
            prop_assert!(turn.issues.is_empty());
        } else {
            prop_assert_eq!(turn.round_number, 0);
            prop_assert_eq!(
                &turn.issues,
                &[format!("debate_rounds (id 7): round_number: {round} is outside 1..=50")]
            );
        }
    }

    #[test]
    fn signal_json_reads_key_by_key(
        map in prop::collection::btree_map(
            prop::sample::select(vec![
                "similarity", "similarity_threshold", "verdict", "previous_verdict",
                "verdict_stable", "verdict_split", "new_claims", "novelty_threshold",
                "open_disputes", "tokens_used", "token_budget", "escalate_persona", "reasons",
                "other",
            ]),
            json_value(),
            0..8,
        )
    ) {
        let raw = Value::Object(map.iter().map(|(k, v)| (k.to_string(), v.clone())).collect());
        let (signals, problems) = signal_json(&raw.to_string());
        for problem in &problems {
            prop_assert!(
                map.keys().any(|k| problem.starts_with(&format!("{k}: "))),
                "a problem names its key: {problem}"
            );
        }
        prop_assert!(signals.tokens_used.is_none_or(|t| t <= MAX_TOKENS));
        prop_assert!(signals.token_budget.is_none_or(|t| t <= MAX_TOKENS));
        for key in ["new_claims", "open_disputes", "tokens_used"] {
            if let Some(n) = map.get(key).and_then(Value::as_i64).filter(|n| *n < 0) {
                prop_assert!(
                    problems.contains(&format!("{key}: {n} is outside 0..={}", if key == "tokens_used" { MAX_TOKENS } else { u64::from(u32::MAX) })),
                    "{problems:?}"
                );
            }
        }
    }

    #[test]
    fn signal_json_that_is_not_an_object_is_one_problem(raw in any::<String>()) {
        let (signals, problems) = signal_json(&raw);
        if !matches!(serde_json::from_str::<Value>(&raw), Ok(Value::Object(_))) {
            prop_assert_eq!(signals, Default::default());
            prop_assert_eq!(problems.len(), 1);
            prop_assert!(
                problems[0].starts_with("not JSON (") || problems[0].starts_with("expected an object"),
                "{}", problems[0]
            );
        }
    }

    #[test]
    fn vocabulary_strings_are_known_or_kept_verbatim(
        raw in prop_oneof![
            any::<String>(),
            prop::sample::select(vec![
                "stop_converged", "continue_baseline", "warn_persona", "abort_debate",
                "running", "gated", "accept", "Stop_Converged", " running", "",
            ]).prop_map(str::to_owned),
        ]
    ) {
        fn check<T: std::str::FromStr + std::fmt::Display + Copy + PartialEq + std::fmt::Debug>(
            raw: &str,
        ) -> Result<(), TestCaseError> {
            let reported = Reported::<T>::parse(raw);
            match &reported {
                Reported::Known(value) => {
                    // Written back as it came, or (an alias) as the name it stands for.
                    let wire = reported.to_wire();
                    if wire != raw {
                        prop_assert!(ALIASES.contains(&raw), "{raw:?} written back as {wire:?}");
                    }
                    prop_assert_eq!(Reported::<T>::parse(&wire), Reported::Known(*value));
                    prop_assert_eq!(reported.to_string(), wire);
                }
                Reported::Unknown(kept) => {
                    prop_assert!(raw.parse::<T>().is_err());
                    prop_assert_eq!(&**kept, raw);
                    prop_assert_eq!(reported.to_wire(), raw);
                    prop_assert_eq!(reported.to_string(), format!("unknown({raw})"));
                }
            }
            Ok(())
        }
        check::<Decision>(&raw)?;
        check::<JudgeDecision>(&raw)?;
        check::<SessionStatus>(&raw)?;
        check::<ControllerMode>(&raw)?;
        check::<ActionKind>(&raw)?;
    }

    #[test]
    fn notification_payloads_parse_or_say_why(
        payload in prop_oneof![
            any::<String>(),
            json_value().prop_map(|v| v.to_string()),
            (".{0,20}", prop::option::of(".{0,12}"), prop::option::of(integer()), prop::option::of(integer()))
                .prop_map(|(table, session, id, round)| json!({
                    "table": table, "session_id": session, "id": id, "round_index": round,
                }).to_string()),
        ]
    ) {
        match Notice::parse(&payload) {
            Ok(notice) => {
                let value: Value = serde_json::from_str(&payload).unwrap();
                prop_assert_eq!(value["table"].as_str(), Some(notice.table.as_str()));
                prop_assert_eq!(value["round_index"].as_i64(), notice.round_index.map(i64::from));
            }
            Err(e) => {
                let e = e.to_string();
                prop_assert!(e.starts_with("not a gavel_events payload: "), "{e}");
                prop_assert!(e.len() > "not a gavel_events payload: ".len());
            }
        }
    }

    #[test]
    fn a_row_a_payload_carries_is_read_or_refused_naming_table_and_key(
        table in prop_oneof![
            Just("debate_sessions".to_owned()), Just("debate_rounds".to_owned()),
            Just("debate_round_decisions".to_owned()), Just("debate_round_judgments".to_owned()),
            Just("debate_operator_actions".to_owned()), Just("gavel_debate_notes".to_owned()),
            ".{0,12}",
        ],
        session in prop::option::of(".{0,12}"),
        id in prop::option::of(integer()),
        round in prop::option::of(integer()),
        row in prop_oneof![
            json_value(),
            prop::collection::vec(prop::option::of(".{0,12}"), 0..16)
                .prop_map(|texts| json!(texts)),
        ],
    ) {
        let payload = json!({
            "table": table, "session_id": session, "id": id, "round_index": round, "row": row,
        })
        .to_string();
        let Ok((notice, Some(row))) = Notice::with_row(&payload) else {
            return Ok(());
        };
        match notice.carried(&row, &Default::default()) {
            Ok(change) => prop_assert_eq!(Some(change.session_id()), notice.session_id.as_deref()),
            Err(e) => {
                let e = e.to_string();
                let named = format!("not a gavel_events payload: {} (", gavel::domain::limits::clip(&table));
                prop_assert!(e.starts_with(&named), "{e}");
                prop_assert!(e.contains("): row: "), "{e}");
            }
        }
    }

    #[test]
    fn the_fixture_parser_never_panics_and_names_file_and_line(
        lines in prop::collection::vec(fixture_line(), 0..12)
    ) {
        let text = lines.join("\n");
        match Fixture::parse_within("f.jsonl", &text, &LIMITS) {
            Ok(fixture) => {
                prop_assert!(fixture.turns.iter().all(|t| (1..=LIMITS.max_round).contains(&t.round)));
                prop_assert!(fixture.session.max_rounds.is_none_or(|m| m <= LIMITS.max_round));
            }
            Err(errors) => {
                prop_assert!(!errors.0.is_empty());
                for error in &errors.0 {
                    let shown = error.to_string();
                    let line = error.line.unwrap_or_default();
                    prop_assert!(shown.starts_with(&format!("f.jsonl:{line}: ")), "{shown}");
                    prop_assert!((1..=lines.len().max(1)).contains(&line), "{shown}");
                    prop_assert!(!error.message.trim().is_empty());
                }
            }
        }
    }
}

proptest! {
    #[test]
    fn a_fixture_round_out_of_bounds_is_reported_at_its_line(round in integer()) {
        let text = [
            json!({"session": {"id": "f", "question": "q", "controller_mode": "shadow",
                "personas": ["a", "b"], "token_budget": 10}}),
            json!({"turn": {"round": 1, "persona": "a", "tokens": 1, "content": "x"}}),
            json!({"turn": {"round": round, "persona": "b", "tokens": 1, "content": "y"}}),
        ]
        .map(|line| line.to_string())
        .join("\n");
        let errors = match Fixture::parse_within("f.jsonl", &text, &LIMITS) {
            Ok(_) => Vec::new(),
            Err(errors) => errors.0.iter().map(ToString::to_string).collect(),
        };
        match round {
            1 | 2 => prop_assert!(errors.is_empty(), "{errors:?}"),
            0 => prop_assert_eq!(errors, ["f.jsonl:3: round numbers start at 1"]),
            51..=4_294_967_295 => prop_assert_eq!(
                errors,
                [format!("f.jsonl:3: round: {round} is outside 1..=50")]
            ),
            3..=50 => prop_assert_eq!(errors, [format!("f.jsonl:3: round {round} skips round 2")]),
            _ => {
                prop_assert_eq!(errors.len(), 1);
                prop_assert!(errors[0].starts_with("f.jsonl:3: column "), "{}", errors[0]);
            }
        }
    }
}

/// A fixture line: a record with hostile numbers, or anything.
fn fixture_line() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        json_value().prop_map(|v| v.to_string()),
        (integer(), integer(), integer(), integer()).prop_map(|(min, max, budget, agents)| {
            json!({"session": {
                "id": "f", "question": "q", "controller_mode": "shadow", "personas": ["a", "b"],
                "min_rounds": min, "max_rounds": max, "token_budget": budget,
                "metadata": {"agent_count": agents},
            }})
            .to_string()
        }),
        (integer(), "[ab]", integer(), ".{0,8}").prop_map(|(round, persona, tokens, content)| {
            json!({"turn": {"round": round, "persona": persona, "tokens": tokens, "content": content}})
                .to_string()
        }),
        (integer(), "[ab]", ".{0,4}", "empirical|values|moral|.{0,4}", "[abz]").prop_map(
            |(round, persona, claim, kind, side)| {
                json!({"turn": {"round": round, "persona": persona, "tokens": 1, "content": "c",
                    "aspect": kind, "cruxes": [{"claim": claim, "type": kind, "between": [side]}]}})
                .to_string()
            }
        ),
        (integer(), any::<f64>()).prop_map(|(round, similarity)| {
            json!({"round": {"round": round, "similarity": similarity}}).to_string()
        }),
        (integer(), "accept|override|escalate|pounce").prop_map(|(round, action)| {
            json!({"action": {"round": round, "action": action, "operator": "o"}}).to_string()
        }),
    ]
}

/// Anything the console may be handed.
fn event() -> impl Strategy<Value = Event> {
    let code = prop_oneof![
        prop::sample::select(vec![
            KeyCode::Up,
            KeyCode::Down,
            KeyCode::Left,
            KeyCode::Right,
            KeyCode::Enter,
            KeyCode::Esc,
            KeyCode::Tab,
            KeyCode::BackTab,
            KeyCode::PageUp,
            KeyCode::PageDown,
            KeyCode::Home,
            KeyCode::End,
            KeyCode::Backspace,
            KeyCode::F(1),
        ]),
        prop::sample::select(
            "jklhvVaoeyrUsc?/: 0123456789qwx"
                .chars()
                .collect::<Vec<_>>()
        )
        .prop_map(KeyCode::Char),
        any::<char>().prop_map(KeyCode::Char),
    ];
    let modifiers = prop::sample::select(vec![
        KeyModifiers::NONE,
        KeyModifiers::SHIFT,
        KeyModifiers::ALT,
    ]);
    let mouse = (
        prop::sample::select(vec![
            MouseEventKind::ScrollUp,
            MouseEventKind::ScrollDown,
            MouseEventKind::Down(MouseButton::Left),
        ]),
        any::<u16>(),
        any::<u16>(),
    )
        .prop_map(|(kind, column, row)| {
            Event::Mouse(MouseEvent {
                kind,
                column,
                row,
                modifiers: KeyModifiers::NONE,
            })
        });
    prop_oneof![
        6 => (code, modifiers).prop_map(|(c, m)| Event::Key(KeyEvent::new(c, m))),
        1 => (0u16..400, 0u16..120).prop_map(|(w, h)| Event::Resize(w, h)),
        1 => mouse,
        2 => columns().prop_flat_map(|texts| prop::sample::select(rows(&texts)))
            .prop_map(|row| Event::Store(Box::new(row))),
        1 => columns().prop_map(|texts| {
            let action = action_from(&as_columns(&texts), &LIMITS);
            Event::Resolved(Err(ResolveError::Failed { action: Box::new(action), error: "gone".into() }))
        }),
        1 => prop::sample::select(vec![
            Link::Connecting,
            Link::Live,
            Link::Down { error: "\u{1b}[2Jdown".into(), retry_in: Duration::from_secs(1) },
        ]).prop_map(Event::Link),
    ]
}

/// A console holding hostile rows of debate `s`, with the mouse on.
fn hostile_model() -> Model {
    let mut model = Model::live("fuzz".into(), "alice".into(), &Config::default());
    model.settings.mouse = true;
    let rows = [
        hostile_session(),
        turn_row("1", Some("1"), "-3", "x"),
        turn_row("2", Some(HUGE), "-3", "x"),
        turn_row("3", Some("0"), "-3", "x"),
        decision_row("1", r#"{"similarity": "NaN"}"#),
    ];
    fed(model, rows)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn update_and_view_survive_any_events_over_hostile_rows(
        events in prop::collection::vec(event(), 0..40)
    ) {
        let mut model = hostile_model();
        for event in events {
            update(&mut model, event);
            model.prepare_frame();
        }
        let (width, height) = (model.screen.size.0.clamp(1, 300), model.screen.size.1.clamp(1, 100));
        for (w, h) in [(width, height), (80, 24)] {
            common::draw(&model, w, h);
        }
        for summary in model.debates.summaries() {
            prop_assert!(summary.latest_round <= LIMITS.max_round);
            if let Some(debate) = model.held(summary.seq) {
                prop_assert!(debate.latest_round() <= LIMITS.max_round);
            }
        }
    }
}
