//! Signal extraction from text: verdicts, similarity, claim novelty, disputes; and the
//! incremental state against the straightforward definitions, on random debates and on every
//! fixture.

use std::path::Path;

use gavel::signals::{
    DebateSignals, MeasuredRound, RoundSignals, RoundText, Similarity, reference, verdict,
};
use gavel::simulate::Fixture;
use proptest::prelude::*;

/// The signals of every round of a debate, pushed one at a time.
fn measured(rounds: &[RoundText<'_>]) -> Vec<RoundSignals> {
    let mut state = DebateSignals::default();
    rounds.iter().map(|round| state.push(round)).collect()
}

/// One-turn rounds without precomputed similarity.
fn rounds<'a>(texts: &[&'a str]) -> Vec<RoundText<'a>> {
    texts
        .iter()
        .map(|text| RoundText {
            turns: vec![text],
            precomputed_similarity: None,
        })
        .collect()
}

fn last_similarity(texts: &[&str]) -> Option<f64> {
    measured(&rounds(texts)).last().and_then(|s| s.similarity)
}

fn last_new_claims(texts: &[&str]) -> u32 {
    measured(&rounds(texts)).last().map_or(0, |s| s.new_claims)
}

#[test]
fn verdict_lines_in_any_case_and_emphasis_last_one_wins() {
    assert_eq!(
        verdict("Body.\nVERDICT: Proceed to Phase III."),
        Some("proceed to phase iii".into())
    );
    assert_eq!(
        verdict("**Verdict:** no   benefit"),
        Some("no benefit".into())
    );
    assert_eq!(verdict("verdict: a\nlater\n- VERDICT: b"), Some("b".into()));
    assert_eq!(verdict("The verdict is unclear."), None);
    assert_eq!(verdict("VERDICT:   "), None);
}

#[test]
fn verdict_from_a_json_field_bare_or_fenced() {
    assert_eq!(
        verdict(r#"{"verdict": "Accept", "score": 3}"#),
        Some("accept".into())
    );
    assert_eq!(
        verdict("Here:\n```json\n{\"verdict\": \"reject\"}\n```\n"),
        Some("reject".into())
    );
    assert_eq!(verdict(r#"{"verdict": 3}"#), None);
    assert_eq!(verdict("{not json"), None);
}

#[test]
fn tfidf_similarity_bounds() {
    let a = "Calorie matched trials show insulin sensitivity tracks weight loss.";
    let b = "Microglial activation drives early motor neuron death in ALS.";
    // Exactly 1, every time: a threshold of 1.0 must hold for a repeated round.
    let long = "Pooled randomized trials agree: a two gram cut in daily sodium lowers systolic \
                pressure by about five points in hypertensive adults, less in others.";
    let mut texts = vec![a, long];
    for _ in 0..8 {
        texts.push(long);
        assert_eq!(last_similarity(&texts), Some(1.0), "{} rounds", texts.len());
    }
    assert_eq!(last_similarity(&[a, b]), Some(0.0));
    let c = "Calorie matched trials show insulin sensitivity tracks weight loss, not meal timing.";
    let partial = last_similarity(&[a, c]).unwrap();
    assert!(partial > 0.5 && partial < 1.0, "{partial}");
    assert_eq!(
        last_similarity(&[a]),
        None,
        "round 1 has nothing to compare"
    );
    assert_eq!(last_similarity(&["", ""]), Some(0.0));
}

#[test]
fn a_precomputed_similarity_wins_over_the_lexical_one() {
    let mut texts = rounds(&["alpha beta gamma", "alpha beta gamma"]);
    assert_eq!(measured(&texts)[1].similarity, Some(1.0));
    texts[1].precomputed_similarity = Some(0.42);
    assert_eq!(measured(&texts)[1].similarity, Some(0.42));
    texts[0].precomputed_similarity = Some(0.42);
    assert_eq!(
        measured(&texts)[0].similarity,
        None,
        "round 1 has nothing to compare"
    );
}

#[test]
fn a_custom_similarity_plugs_in_and_sees_each_round_once() {
    #[derive(Debug, Default)]
    struct Counting(Vec<usize>);
    impl Similarity for Counting {
        fn push(&mut self, round: MeasuredRound<'_>) {
            self.0.push(round.turns.len());
        }
        fn latest(&mut self) -> f64 {
            self.0.len() as f64 / 10.0
        }
        fn model(&self) -> &str {
            "counting"
        }
    }
    let texts = [
        RoundText {
            turns: vec!["x"],
            ..Default::default()
        },
        RoundText {
            turns: vec!["y", "z"],
            ..Default::default()
        },
        RoundText {
            turns: vec!["w"],
            ..Default::default()
        },
    ];
    let mut state = DebateSignals::new(Box::<Counting>::default());
    let figures: Vec<Option<f64>> = texts.iter().map(|r| state.push(r).similarity).collect();
    assert_eq!(figures, [None, Some(0.2), Some(0.3)]);
    assert!(format!("{state:?}").contains("Counting([1, 2, 1])"));
}

#[test]
fn new_claims_count_sentences_not_said_before() {
    let earlier =
        "Calorie matched trials show no insulin benefit. Weight loss explains the effect.";
    assert_eq!(
        last_new_claims(&[
            earlier,
            "Calorie matched trials show no insulin benefit. Agreed."
        ]),
        0
    );
    assert_eq!(
        last_new_claims(&[
            earlier,
            "Calorie matched trials show no insulin benefit. Circadian timing shifts glucose peaks measurably."
        ]),
        1
    );
    assert_eq!(
        last_new_claims(&[
            earlier,
            "Circadian timing shifts glucose peaks measurably; circadian timing shifts glucose peaks measurably."
        ]),
        1,
        "a claim restated within the round counts once"
    );
    assert_eq!(
        last_new_claims(&["Short.", "Also short. VERDICT: accept"]),
        0,
        "fewer than three content words is no claim"
    );
}

#[test]
fn a_repeated_claim_is_known_to_later_rounds_but_not_within_its_own() {
    // Round 2's first claim repeats round 1 (not new, so it is filed only when round 2 ends);
    // its second claim shares half its words with the first but not with round 1: new.
    let first = "alpha beta gamma delta.";
    let second = "alpha beta gamma epsilon. beta gamma epsilon zeta eta.";
    assert_eq!(last_new_claims(&[first, second]), 1);
    assert_eq!(reference::new_claims(&[first, second]), 1);
    // Round 3's claim is close only to round 2's repeated claim, filed when round 2 ended.
    let third = "alpha gamma epsilon omega.";
    assert_eq!(last_new_claims(&[first, second, third]), 0);
    assert_eq!(reference::new_claims(&[first, second, third]), 0);
    assert_eq!(last_new_claims(&[first, third]), 1);
}

#[test]
fn half_the_words_shared_is_the_same_claim() {
    // 2 shared of 4 distinct: Jaccard exactly 1/2, and the shared words are the oldest.
    assert_eq!(
        last_new_claims(&["alpha beta gamma.", "alpha beta delta."]),
        0
    );
    assert_eq!(
        last_new_claims(&["alpha beta gamma.", "alpha delta epsilon."]),
        1,
        "1 of 5: a new claim"
    );
}

#[test]
fn round_signals_report_split_verdicts_and_disputes() {
    let round = [RoundText {
        turns: vec![
            "Proceed.\n## DISPUTE\n- the subgroup was post hoc\nVERDICT: proceed",
            "Stop.\n## DISPUTE\nnone\n## MISSED\n- no multiplicity correction\nVERDICT: do not proceed",
            "VERDICT: proceed",
        ],
        precomputed_similarity: None,
    }];
    let signals = &measured(&round)[0];
    assert!(signals.verdict_split);
    assert_eq!(signals.verdict.as_deref(), Some("do not proceed | proceed"));
    assert_eq!(signals.open_disputes, Some(2));
}

/// Asserts that the incremental state gives, round by round, what the straightforward
/// definitions give for the debate up to that round.
fn assert_same_as_reference(rounds: &[RoundText<'_>], what: &str) {
    let incremental = measured(rounds);
    for (index, signals) in incremental.iter().enumerate() {
        let expected = reference::extract(&rounds[..=index]);
        let at = format!("{what}, round index {index}");
        match (signals.similarity, expected.similarity) {
            (Some(got), Some(want)) => assert!((got - want).abs() <= 1e-9, "{at}: {got} vs {want}"),
            (got, want) => assert_eq!(got, want, "{at}: similarity"),
        }
        assert_eq!(signals.new_claims, expected.new_claims, "{at}: new claims");
        assert_eq!(signals.verdict, expected.verdict, "{at}: verdict");
        assert_eq!(
            signals.verdict_split, expected.verdict_split,
            "{at}: verdict split"
        );
        assert_eq!(
            signals.open_disputes, expected.open_disputes,
            "{at}: open disputes"
        );
    }
}

#[test]
fn every_fixture_measures_the_same_incrementally() {
    let mut files: Vec<_> = std::fs::read_dir("fixtures")
        .unwrap()
        .chain(std::fs::read_dir("tests/data/calibration").unwrap())
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    assert!(files.len() >= 9, "{files:?}");
    for path in files {
        let fixture = Fixture::load(Path::new(&path)).unwrap();
        let prior = fixture.session.metadata.prior.as_deref();
        let rounds: Vec<RoundText<'_>> = prior
            .map(|text| RoundText {
                turns: vec![text],
                precomputed_similarity: None,
            })
            .into_iter()
            .chain((1..=fixture.last_round()).map(|round| RoundText {
                turns: fixture.round(round).map(|t| t.content.as_str()).collect(),
                precomputed_similarity: fixture.similarity.get(&round).copied(),
            }))
            .collect();
        assert_same_as_reference(&rounds, &path.display().to_string());
    }
}

/// Words that make claims meet and miss the Jaccard threshold often, with case, stopwords,
/// one-letter words, digits and non-ASCII letters whose lower case differs.
const WORDS: &[&str] = &[
    "insulin",
    "Insulin",
    "trial",
    "trials",
    "weight",
    "loss",
    "fasting",
    "GLUCOSE",
    "peak",
    "timing",
    "the",
    "of",
    "a",
    "x",
    "42",
    "Σίσυφος",
    "İstanbul",
    "ÉTUDE",
    "naïve",
    "and",
];

/// Separators: sentence breaks and non-breaks, lines, headings, bullets and verdict lines.
const SEPARATORS: &[&str] = &[
    " ",
    " ",
    " ",
    ". ",
    "; ",
    "? ",
    "!",
    ".x",
    ",",
    "\n",
    "\r\n",
    "\n## DISPUTE\n- ",
    "\n## MISSED\n",
    "\n- ",
    "\n* ",
    "\n> ",
    "\nVERDICT: ",
    "\n**Verdict:** ",
    "\n# ",
    "\u{2028}",
];

fn turn_text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            3 => prop::sample::select(WORDS),
            2 => prop::sample::select(SEPARATORS),
        ],
        0..80,
    )
    .prop_map(|parts| parts.concat())
}

fn debate() -> impl Strategy<Value = Generated> {
    prop::collection::vec(
        (
            prop::collection::vec(turn_text(), 0..4),
            prop::option::weighted(0.2, 0.0..=1.0f64),
        ),
        1..10,
    )
}

/// Debates of short claims over a few words, so that claims meet the threshold exactly often,
/// and long enough (often past 64 and 128 claims) that the claim index reorders its words.
fn claim_debate() -> impl Strategy<Value = Generated> {
    let sentence = prop::collection::vec(prop::sample::select(&WORDS[..10]), 1..8)
        .prop_map(|words| words.join(" "));
    let turn = prop::collection::vec(sentence, 0..8).prop_map(|s| s.join(". "));
    prop::collection::vec((prop::collection::vec(turn, 0..4), Just(None)), 1..24)
}

/// A generated debate's rounds: each its turns and a precomputed similarity, or none.
type Generated = Vec<(Vec<String>, Option<f64>)>;

fn generated(debate: &Generated) -> Vec<RoundText<'_>> {
    debate
        .iter()
        .map(|(turns, precomputed)| RoundText {
            turns: turns.iter().map(String::as_str).collect(),
            precomputed_similarity: *precomputed,
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn random_claims_count_the_same_incrementally(debate in claim_debate()) {
        assert_same_as_reference(&generated(&debate), "random claims");
    }

    #[test]
    fn random_debates_measure_the_same_incrementally(debate in debate()) {
        assert_same_as_reference(&generated(&debate), "random debate");
    }
}
