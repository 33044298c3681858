//! The debates filter: terms that must all match, field prefixes, negation, `is:pending`, the
//! text a database search uses, and the list it gives over the demo's debates.

use crate::common;

use common::demo_model;
use gavel::console::app::filter::{Field, Filter, Subject, Term, with_term};
use proptest::prelude::*;

fn term(field: Field, needle: &str, negated: bool) -> Term {
    Term {
        field,
        needle: needle.into(),
        negated,
    }
}

#[test]
fn terms_fields_and_negation_are_read() {
    let filter = Filter::parse(
        "  Insulin id:FAST !mode:shadow -is:pending IS:waiting persona:skep status:run q:trial x:y ! ",
    );
    assert_eq!(
        filter.terms(),
        [
            term(Field::Any, "insulin", false),
            term(Field::Id, "fast", false),
            term(Field::Mode, "shadow", true),
            term(Field::Pending, "", true),
            term(Field::Waiting, "", false),
            term(Field::Persona, "skep", false),
            term(Field::Status, "run", false),
            term(Field::Question, "trial", false),
            term(Field::Any, "x:y", false),
            term(Field::Any, "!", false),
        ]
    );
    assert_eq!(
        Filter::parse("id:").terms(),
        [term(Field::Any, "id:", false)]
    );
    assert!(Filter::parse("   ").is_empty());
}

fn subject<'a>(personas: &'a [u32]) -> Subject<'a> {
    Subject {
        id: "fasting-insulin-0412",
        question: "Does time-restricted eating improve insulin sensitivity?",
        status: ["running", "running"],
        mode: "gated",
        personas,
        ctx: 1,
        pending: true,
        waiting: false,
    }
}

#[test]
fn on_several_databases_a_term_matches_the_context_name_too() {
    let matches = |text: &str, contexts: &[&str]| {
        let mut filter = Filter::parse(text);
        filter.note_contexts(contexts);
        filter.matches(&subject(&[]))
    };
    // The subject is in context 1.
    let contexts = ["staging", "Prod-EU"];
    assert!(matches("prod", &contexts));
    assert!(matches("ctx:prod-eu", &contexts));
    assert!(!matches("ctx:staging", &contexts));
    assert!(matches("!ctx:staging insulin", &contexts));
    assert!(
        !matches("ctx:insulin", &contexts),
        "ctx: reads the context alone"
    );
    assert!(!matches("prod", &[]), "one database: no context to match");
    assert_eq!(
        Filter::parse("ctx:prod insulin").search_text(),
        Some("insulin"),
        "a database holds no context names to search for"
    );
}

#[test]
fn every_term_must_match() {
    let names = ["theorist", "skeptic"];
    let matches = |text: &str| {
        let mut filter = Filter::parse(text);
        filter.note_names(&names);
        filter.matches(&subject(&[0, 1]))
    };
    assert!(matches(""));
    assert!(matches("insulin gated"));
    assert!(matches("INSULIN skeptic is:pending"));
    assert!(!matches("insulin shadow"));
    assert!(matches(
        "id:fasting q:eating mode:gat status:running persona:theor"
    ));
    assert!(!matches("id:eating"), "the question is not the id");
    assert!(!matches("persona:insulin"));
    assert!(matches("!shadow -id:replication"));
    assert!(!matches("!is:pending"));
    assert!(!matches("is:waiting"), "pending, but advisory");
    assert!(matches("is:pending !is:waiting"));
    assert!(!matches("-skeptic"));
    // Names learnt after the filter was set are matched as they come.
    let mut filter = Filter::parse("persona:ethic");
    filter.note_names(&names);
    assert!(!filter.matches(&subject(&[0, 1, 2])));
    filter.note_names(&["theorist", "skeptic", "ethicist"]);
    assert!(filter.matches(&subject(&[0, 1, 2])));
}

#[test]
fn a_search_uses_the_longest_term_that_must_match() {
    assert_eq!(
        Filter::parse("is:pending id:old-37 !shadow q:card").search_text(),
        Some("old-37")
    );
    assert_eq!(Filter::parse("is:pending -mode:gated").search_text(), None);
    assert_eq!(Filter::parse("").search_text(), None);
}

#[test]
fn a_term_on_a_field_is_replaced_by_another() {
    assert_eq!(
        with_term("insulin mode:shadow", Field::Mode, Some("mode:gated")),
        "insulin mode:gated"
    );
    assert_eq!(
        with_term("insulin !mode:shadow", Field::Mode, None),
        "insulin"
    );
    assert_eq!(
        with_term("", Field::Pending, Some("is:pending")),
        "is:pending"
    );
    assert_eq!(
        with_term("is:pending", Field::Pending, Some("is:pending")),
        "is:pending"
    );
}

proptest! {
    /// Any text parses into one term per word; the text is kept as typed; a negated term
    /// matches exactly where its plain twin does not.
    #[test]
    fn any_filter_parses_and_negation_inverts(words in proptest::collection::vec("[!-]?((id|q|persona|status|mode|is):)?[a-zA-Z:-]{0,6}", 0..6)) {
        let text = words.join(" ");
        let filter = Filter::parse(&text);
        prop_assert_eq!(filter.text(), text.as_str());
        prop_assert_eq!(filter.terms().len(), text.split_whitespace().count());
        let names = ["theorist", "skeptic"];
        for word in text.split_whitespace() {
            let plain = word.trim_start_matches(['!', '-']);
            if plain.is_empty() || plain.len() == word.len() {
                continue;
            }
            let mut negated = Filter::parse(word);
            let mut twin = Filter::parse(plain);
            negated.note_names(&names);
            twin.note_names(&names);
            let subject = subject(&[0, 1]);
            if word.len() - plain.len() == 1 {
                prop_assert_eq!(negated.matches(&subject), !twin.matches(&subject), "{} vs {}", word, plain);
            }
        }
    }
}

#[test]
fn the_demo_list_follows_a_multi_term_filter() {
    let (mut model, _) = demo_model();
    model.set_filter("mode:shadow !replication".into());
    let mut shown: Vec<String> = model
        .debates
        .summaries()
        .filter(|s| model.debates.is_listed(s.seq))
        .map(|s| s.id.to_string())
        .collect();
    shown.sort();
    assert_eq!(shown, ["salt-substitutes-shadow", "wastewater-panel-city"]);
    model.set_filter("persona:biostat".into());
    assert_eq!(
        model.debates.listed(),
        1,
        "only the escalated debate brought one in"
    );
}

/// One debate's row of the list as the screen shows it (160 columns: every column drawn).
#[derive(Debug)]
struct Shown {
    marker: String,
    id: String,
    question: String,
    mode: String,
    status: String,
}

/// The list's rows on the screen, read back by column.
fn shown_rows(model: &gavel::console::app::Model) -> Vec<Shown> {
    let screen = common::screen(model);
    let ids: Vec<String> = model
        .debates
        .summaries()
        .map(|s| s.id.to_string())
        .collect();
    screen
        .lines()
        .filter_map(|line| {
            let inner: Vec<char> = line.split('│').nth(1)?.chars().collect();
            if inner.len() < 120 {
                return None;
            }
            let cell = |from: usize, to: usize| -> String {
                inner[from..to].iter().collect::<String>().trim().to_owned()
            };
            let n = inner.len();
            let id = cell(8, 34);
            ids.contains(&id).then(|| Shown {
                marker: cell(0, 7),
                id,
                question: cell(35, n - 53).trim_end_matches('…').to_owned(),
                mode: cell(n - 52, n - 43),
                status: cell(n - 42, n - 33),
            })
        })
        .collect()
}

/// The ids a filter lists, sorted.
fn listed(model: &mut gavel::console::app::Model, filter: &str) -> Vec<String> {
    model.set_filter(filter.to_owned());
    let mut ids: Vec<String> = model
        .debates
        .summaries()
        .filter(|s| model.debates.is_listed(s.seq))
        .map(|s| s.id.to_string())
        .collect();
    ids.sort();
    model.set_filter(String::new());
    ids
}

/// The ids of the rows shown that satisfy `keep`, sorted.
fn rows_where(rows: &[Shown], keep: impl Fn(&Shown) -> bool) -> Vec<String> {
    let mut ids: Vec<String> = rows
        .iter()
        .filter(|r| keep(r))
        .map(|r| r.id.clone())
        .collect();
    ids.sort();
    ids
}

#[test]
fn a_filter_on_the_status_finds_what_the_badge_shows_and_what_is_stored() {
    let (mut model, _) = demo_model();
    let rows = shown_rows(&model);
    assert_eq!(rows.len(), 9, "{rows:?}");
    for badge in ["running", "done", "aborted"] {
        let showing = rows_where(&rows, |r| r.status == badge);
        assert!(!showing.is_empty(), "a debate shows {badge}");
        assert_eq!(listed(&mut model, &format!("status:{badge}")), showing);
    }
    assert_eq!(
        listed(&mut model, "status:completed"),
        rows_where(&rows, |r| r.status == "done"),
        "the stored word finds the same debates as the badge's"
    );
    assert_eq!(
        listed(&mut model, "done"),
        rows_where(&rows, |r| r.status == "done"),
        "a bare word looks at the status too"
    );
}

#[test]
fn a_filter_on_the_mode_finds_what_the_badge_shows() {
    let (mut model, _) = demo_model();
    let rows = shown_rows(&model);
    for badge in ["gated", "shadow", "enabled"] {
        let showing = rows_where(&rows, |r| r.mode == badge);
        assert!(!showing.is_empty(), "a debate shows {badge}");
        assert_eq!(listed(&mut model, &format!("mode:{badge}")), showing);
    }
}

#[test]
fn a_filter_on_the_id_or_the_question_finds_the_debate_showing_it() {
    let (mut model, _) = demo_model();
    for row in shown_rows(&model) {
        assert!(
            listed(&mut model, &format!("id:{}", row.id)).contains(&row.id),
            "{row:?}"
        );
        let word = row
            .question
            .split_whitespace()
            .max_by_key(|w| w.chars().count())
            .expect("a question shown");
        let found = listed(&mut model, &format!("q:{word}"));
        assert!(found.contains(&row.id), "q:{word} misses {row:?}");
        let questions: Vec<String> = model
            .debates
            .summaries()
            .filter(|s| found.contains(&s.id.to_string()))
            .map(|s| s.question.to_lowercase())
            .collect();
        assert!(questions.iter().all(|q| q.contains(&word.to_lowercase())));
    }
}

#[test]
fn a_filter_on_a_persona_finds_the_debates_whose_transcript_shows_them() {
    let (mut model, _) = demo_model();
    let ids: Vec<String> = model
        .debates
        .summaries()
        .map(|s| s.id.to_string())
        .collect();
    for id in ids {
        let speakers: Vec<String> = model
            .debate(&id)
            .expect("held")
            .turns
            .iter()
            .map(|t| t.agent_persona.clone())
            .collect();
        for persona in speakers {
            let found = listed(&mut model, &format!("persona:{persona}"));
            assert!(found.contains(&id), "persona:{persona} misses {id}");
        }
    }
    assert_eq!(
        listed(&mut model, "persona:biostatistician"),
        ["als-phase3-subgroup"],
        "brought in by an escalation"
    );
}

#[test]
fn is_pending_and_is_waiting_find_the_debates_the_markers_show() {
    let (mut model, _) = demo_model();
    let rows = shown_rows(&model);
    let waiting = rows_where(&rows, |r| r.marker.starts_with('●'));
    assert!(!waiting.is_empty());
    assert_eq!(listed(&mut model, "is:waiting"), waiting);
    assert_eq!(
        listed(&mut model, "is:pending"),
        rows_where(&rows, |r| !r.marker.is_empty())
    );
}
