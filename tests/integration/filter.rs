//! The debates filter: terms that must all match, field prefixes, negation, `is:pending`, the
//! text a database search uses, and the list it gives over the demo's debates.

use crate::common;

use common::demo_model;
use gavel::app::filter::{Field, Filter, Subject, Term, with_term};
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
        status: "running",
        mode: "gated",
        personas,
        pending: true,
        waiting: false,
    }
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
