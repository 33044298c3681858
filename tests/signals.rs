//! Signal extraction from text: verdicts, similarity, claim novelty, disputes.

use gavel::signals::{RoundText, Similarity, TfIdfCosine, extract, new_claims, verdict};

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
    let mut rounds = vec![a, long];
    for _ in 0..8 {
        rounds.push(long);
        assert_eq!(
            TfIdfCosine.similarity(&rounds),
            1.0,
            "{} rounds",
            rounds.len()
        );
    }
    assert_eq!(TfIdfCosine.similarity(&[a, b]), 0.0);
    let c = "Calorie matched trials show insulin sensitivity tracks weight loss, not meal timing.";
    let partial = TfIdfCosine.similarity(&[a, c]);
    assert!(partial > 0.5 && partial < 1.0, "{partial}");
    assert_eq!(TfIdfCosine.similarity(&[a]), 0.0);
    assert_eq!(TfIdfCosine.similarity(&["", ""]), 0.0);
}

#[test]
fn a_precomputed_similarity_wins_over_the_lexical_one() {
    let rounds = [
        RoundText {
            turns: vec!["alpha beta gamma"],
            precomputed_similarity: None,
        },
        RoundText {
            turns: vec!["alpha beta gamma"],
            precomputed_similarity: Some(0.42),
        },
    ];
    assert_eq!(extract(&rounds, &TfIdfCosine).similarity, Some(0.42));
    let lexical = [
        rounds[0].clone(),
        RoundText {
            precomputed_similarity: None,
            ..rounds[1].clone()
        },
    ];
    assert_eq!(extract(&lexical, &TfIdfCosine).similarity, Some(1.0));
    assert_eq!(
        extract(&rounds[..1], &TfIdfCosine).similarity,
        None,
        "round 1 has nothing to compare"
    );
}

#[test]
fn a_custom_similarity_plugs_in() {
    struct Always(f64);
    impl Similarity for Always {
        fn similarity(&self, _rounds: &[&str]) -> f64 {
            self.0
        }
    }
    let rounds = [
        RoundText {
            turns: vec!["x"],
            ..Default::default()
        },
        RoundText {
            turns: vec!["y"],
            ..Default::default()
        },
    ];
    assert_eq!(extract(&rounds, &Always(0.77)).similarity, Some(0.77));
}

#[test]
fn new_claims_count_sentences_not_said_before() {
    let earlier =
        "Calorie matched trials show no insulin benefit. Weight loss explains the effect.";
    assert_eq!(
        new_claims(&[
            earlier,
            "Calorie matched trials show no insulin benefit. Agreed."
        ]),
        0
    );
    assert_eq!(
        new_claims(&[
            earlier,
            "Calorie matched trials show no insulin benefit. Circadian timing shifts glucose peaks measurably."
        ]),
        1
    );
    assert_eq!(
        new_claims(&[
            earlier,
            "Circadian timing shifts glucose peaks measurably; circadian timing shifts glucose peaks measurably."
        ]),
        1,
        "a claim restated within the round counts once"
    );
    assert_eq!(
        new_claims(&["Short.", "Also short. VERDICT: accept"]),
        0,
        "fewer than three content words is no claim"
    );
}

#[test]
fn round_signals_report_split_verdicts_and_disputes() {
    let rounds = [RoundText {
        turns: vec![
            "Proceed.\n## DISPUTE\n- the subgroup was post hoc\nVERDICT: proceed",
            "Stop.\n## DISPUTE\nnone\n## MISSED\n- no multiplicity correction\nVERDICT: do not proceed",
            "VERDICT: proceed",
        ],
        precomputed_similarity: None,
    }];
    let signals = extract(&rounds, &TfIdfCosine);
    assert!(signals.verdict_split);
    assert_eq!(signals.verdict.as_deref(), Some("do not proceed | proceed"));
    assert_eq!(signals.open_disputes, Some(2));
}
