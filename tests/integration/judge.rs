//! The judge policy: score bands, flags, and the abort rules.

use gavel::domain::{JudgeDecision, PmidCheck};
use gavel::policy::{JudgeConfig, JudgeFlag, JudgeInput, judge};

fn rule(
    score: f64,
    flags: &[JudgeFlag],
    pmids: &[PmidCheck],
    previous: Option<JudgeDecision>,
) -> JudgeDecision {
    judge(
        &JudgeInput {
            score,
            flags,
            pmids,
        },
        previous,
        &JudgeConfig::default(),
    )
    .decision
}

fn pmid(id: &str, verified: bool) -> PmidCheck {
    PmidCheck {
        pmid: id.into(),
        verified,
    }
}

#[test]
fn score_bands() {
    assert_eq!(rule(1.0, &[], &[], None), JudgeDecision::Continue);
    assert_eq!(rule(0.6, &[], &[], None), JudgeDecision::Continue);
    assert_eq!(rule(0.599, &[], &[], None), JudgeDecision::Warn);
    assert_eq!(rule(0.4, &[], &[], None), JudgeDecision::Warn);
    assert_eq!(rule(0.399, &[], &[], None), JudgeDecision::HaltReplace);
}

#[test]
fn redundancy_warns_even_with_a_high_score() {
    assert_eq!(
        rule(0.95, &[JudgeFlag::Redundant], &[], None),
        JudgeDecision::Warn
    );
}

#[test]
fn off_topic_halts_and_replaces_even_with_a_high_score() {
    let outcome = judge(
        &JudgeInput {
            score: 0.9,
            flags: &[JudgeFlag::OffTopic],
            pmids: &[],
        },
        Some(JudgeDecision::Continue),
        &JudgeConfig::default(),
    );
    assert_eq!(outcome.decision, JudgeDecision::HaltReplace);
    assert!(outcome.reasons[0].contains("off topic"));
}

#[test]
fn two_consecutive_halts_abort() {
    assert_eq!(
        rule(
            0.9,
            &[JudgeFlag::OffTopic],
            &[],
            Some(JudgeDecision::HaltReplace)
        ),
        JudgeDecision::Abort
    );
    assert_eq!(
        rule(0.1, &[], &[], Some(JudgeDecision::HaltReplace)),
        JudgeDecision::Abort
    );
    assert_eq!(
        rule(0.1, &[], &[], Some(JudgeDecision::Warn)),
        JudgeDecision::HaltReplace,
        "a halt after a warning is the first halt"
    );
}

#[test]
fn an_unverified_pmid_aborts_whatever_the_score() {
    let outcome = judge(
        &JudgeInput {
            score: 0.99,
            flags: &[],
            pmids: &[pmid("33303685", true), pmid("99999999", false)],
        },
        None,
        &JudgeConfig::default(),
    );
    assert_eq!(outcome.decision, JudgeDecision::Abort);
    assert!(outcome.reasons[0].contains("99999999"));
    assert!(!outcome.reasons[0].contains("33303685"));
    assert_eq!(
        rule(0.99, &[], &[pmid("33303685", true)], None),
        JudgeDecision::Continue
    );
}

#[test]
fn bands_are_configurable_and_validated() {
    let strict = JudgeConfig {
        continue_min_score: 0.8,
        warn_min_score: 0.5,
    };
    let outcome = judge(
        &JudgeInput {
            score: 0.7,
            flags: &[],
            pmids: &[],
        },
        None,
        &strict,
    );
    assert_eq!(outcome.decision, JudgeDecision::Warn);
    let inverted = JudgeConfig {
        continue_min_score: 0.3,
        warn_min_score: 0.5,
    };
    assert!(inverted.validate().is_err());
}

#[test]
fn long_forms_of_decisions_parse() {
    assert_eq!(
        "warn_persona".parse::<JudgeDecision>(),
        Ok(JudgeDecision::Warn)
    );
    assert_eq!(
        "halt_and_replace_persona".parse::<JudgeDecision>(),
        Ok(JudgeDecision::HaltReplace)
    );
    assert_eq!(
        "abort_debate".parse::<JudgeDecision>(),
        Ok(JudgeDecision::Abort)
    );
    assert!("shrug".parse::<JudgeDecision>().is_err());
}
