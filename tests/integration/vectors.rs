//! The file of round vectors kept between runs: what is put is read back by a later opening,
//! a torn append or a vector that is not a unit vector costs only that vector, and a file that
//! is not one of gavel's (or holds another model's length) is refused by name.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use gavel::embed::vectors::VectorFile;

struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("gavel-vectors-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        Scratch(dir)
    }

    fn file(&self) -> PathBuf {
        self.0.join("model.vectors")
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A unit vector of `dimensions` pointing along `axis`.
fn unit(dimensions: usize, axis: usize) -> Vec<f32> {
    (0..dimensions)
        .map(|i| f32::from(u8::from(i == axis)))
        .collect()
}

fn key(n: u8) -> [u8; 32] {
    [n; 32]
}

#[test]
fn what_is_put_is_read_back_by_a_later_opening() {
    let scratch = Scratch::new("reopen");
    let mut file = VectorFile::open(&scratch.file(), 4).unwrap();
    assert!(file.is_empty());
    file.put(key(1), &unit(4, 0)).unwrap();
    file.put(key(2), &unit(4, 3)).unwrap();
    file.put(key(1), &unit(4, 0)).unwrap();
    assert_eq!(file.get(&key(2)), Some(unit(4, 3)));
    drop(file);

    let file = VectorFile::open(&scratch.file(), 4).unwrap();
    assert_eq!(file.len(), 2);
    assert_eq!(file.get(&key(1)), Some(unit(4, 0)));
    assert_eq!(file.get(&key(2)), Some(unit(4, 3)));
    assert_eq!(file.get(&key(3)), None);
    // Header, then two records of a key and four floats: the repeated put wrote nothing.
    assert_eq!(
        std::fs::metadata(scratch.file()).unwrap().len(),
        16 + 2 * (32 + 16)
    );
}

#[test]
fn two_openings_append_to_one_file_without_losing_either() {
    let scratch = Scratch::new("two");
    let mut first = VectorFile::open(&scratch.file(), 4).unwrap();
    let mut second = VectorFile::open(&scratch.file(), 4).unwrap();
    first.put(key(1), &unit(4, 1)).unwrap();
    second.put(key(2), &unit(4, 2)).unwrap();
    first.put(key(3), &unit(4, 3)).unwrap();
    assert_eq!(first.get(&key(3)), Some(unit(4, 3)));
    assert_eq!(second.get(&key(2)), Some(unit(4, 2)));

    let file = VectorFile::open(&scratch.file(), 4).unwrap();
    assert_eq!(file.len(), 3);
    for n in 1..=3 {
        assert_eq!(file.get(&key(n)), Some(unit(4, usize::from(n))));
    }
}

#[test]
fn a_torn_last_record_is_cut_off_and_the_file_goes_on() {
    let scratch = Scratch::new("torn");
    let mut file = VectorFile::open(&scratch.file(), 4).unwrap();
    file.put(key(1), &unit(4, 0)).unwrap();
    drop(file);
    let mut raw = OpenOptions::new()
        .append(true)
        .open(scratch.file())
        .unwrap();
    raw.write_all(&[7u8; 40]).unwrap();
    drop(raw);

    let mut file = VectorFile::open(&scratch.file(), 4).unwrap();
    assert_eq!(file.len(), 1);
    assert_eq!(std::fs::metadata(scratch.file()).unwrap().len(), 16 + 48);
    file.put(key(2), &unit(4, 1)).unwrap();
    drop(file);
    let file = VectorFile::open(&scratch.file(), 4).unwrap();
    assert_eq!(file.get(&key(1)), Some(unit(4, 0)));
    assert_eq!(file.get(&key(2)), Some(unit(4, 1)));
}

#[test]
fn a_vector_that_is_not_a_unit_vector_is_not_trusted_and_is_put_anew() {
    let scratch = Scratch::new("unit");
    let mut file = VectorFile::open(&scratch.file(), 4).unwrap();
    drop(file);
    // A record whose vector is all zeros, as a corrupted file might hold.
    let mut raw = OpenOptions::new()
        .append(true)
        .open(scratch.file())
        .unwrap();
    raw.write_all(&key(5)).unwrap();
    raw.write_all(&[0u8; 16]).unwrap();
    drop(raw);

    file = VectorFile::open(&scratch.file(), 4).unwrap();
    assert_eq!(file.len(), 1);
    assert_eq!(file.get(&key(5)), None);
    file.put(key(5), &unit(4, 2)).unwrap();
    assert_eq!(file.get(&key(5)), Some(unit(4, 2)));
    drop(file);
    let file = VectorFile::open(&scratch.file(), 4).unwrap();
    assert_eq!(file.get(&key(5)), Some(unit(4, 2)));
}

#[test]
fn a_file_that_is_not_a_vector_file_is_refused_by_name() {
    let scratch = Scratch::new("foreign");
    std::fs::create_dir_all(&scratch.0).unwrap();
    // Another file, and one shorter than a header.
    for content in ["these are not vectors at all", "gavel"] {
        std::fs::write(scratch.file(), content).unwrap();
        let error = VectorFile::open(&scratch.file(), 4)
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            format!(
                "{}: not a gavel vector file of version 1 (remove it to start anew)",
                scratch.file().display()
            )
        );
    }
}

#[test]
fn another_models_length_is_refused_on_opening_and_on_put() {
    let scratch = Scratch::new("length");
    VectorFile::open(&scratch.file(), 4).unwrap();
    let error = VectorFile::open(&scratch.file(), 384)
        .unwrap_err()
        .to_string();
    assert_eq!(
        error,
        format!(
            "{}: holds vectors of 4 dimensions, the model's have 384",
            scratch.file().display()
        )
    );
    let mut file = VectorFile::open(&scratch.file(), 4).unwrap();
    let error = file.put(key(1), &unit(3, 0)).unwrap_err().to_string();
    assert_eq!(
        error,
        format!(
            "{}: holds vectors of 4 dimensions, not 3",
            scratch.file().display()
        )
    );
    assert!(file.is_empty());
}

/// The note every command that embeds prints: rounds embedded, rounds read back, the file.
fn vectors_note(stderr: &str) -> (u64, u64, String) {
    let line = stderr
        .lines()
        .find_map(|l| l.strip_prefix("gavel: note: similarity vectors: "))
        .unwrap_or_else(|| panic!("no vectors note in {stderr:?}"));
    let (embedded, rest) = line.split_once(" rounds embedded, ").unwrap();
    let (read_back, rest) = rest.split_once(" read back from ").unwrap();
    let (path, _model) = rest.rsplit_once(" (").unwrap();
    (
        embedded.parse().unwrap(),
        read_back.parse().unwrap(),
        path.to_owned(),
    )
}

#[test]
fn a_second_calibration_reads_back_every_vector_the_first_embedded() {
    let scratch = Scratch::new("calibrate");
    let kept = scratch.0.join("kept");
    std::fs::create_dir_all(scratch.0.join("gavel")).unwrap();
    std::fs::write(
        scratch.0.join("gavel/config.toml"),
        format!(
            "[signals]\nmodel = \"builtin\"\nvectors = \"{}\"\n",
            kept.display()
        ),
    )
    .unwrap();
    let calibrate = || {
        let output = crate::common::gavel()
            .args(["calibrate", "fixtures", "--similarity", "semantic"])
            .env("XDG_CONFIG_HOME", &scratch.0)
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        (
            String::from_utf8(output.stdout).unwrap(),
            String::from_utf8(output.stderr).unwrap(),
        )
    };
    let file = kept.join("paraphrase-minilm-l3-v2-q4.vectors");

    let (first_report, first) = calibrate();
    let (embedded, read_back, path) = vectors_note(&first);
    assert!(embedded > 0, "{first}");
    assert_eq!((read_back, path.as_str()), (0, file.to_str().unwrap()));
    assert_eq!(VectorFile::open(&file, 384).unwrap().len() as u64, embedded);

    let (second_report, second) = calibrate();
    assert_eq!(vectors_note(&second), (0, embedded, path));
    assert_eq!(second_report, first_report);
}

/// Calibration measures only what is asked, as a new user meets it (no config, no kept
/// vectors): under `lexical` the recordings are played with TF-IDF, so no model loads, no round
/// is embedded and no vector file appears; under `recorded`, rounds that carry their own
/// similarity embed nothing either; the same recordings under `semantic` do embed, so the note
/// is not silent for want of a model.
#[test]
fn calibrating_recordings_embeds_only_what_the_measure_asked_for() {
    let scratch = Scratch::new("asked");
    let calibrate = |recording: &str, similarity: &str| {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_gavel"))
            .args(["calibrate", recording, "--similarity", similarity])
            .env("XDG_CONFIG_HOME", scratch.0.join("config"))
            .env("XDG_DATA_HOME", scratch.0.join("data"))
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        String::from_utf8(output.stderr).unwrap()
    };
    let vectors = scratch.0.join("data/gavel/vectors");
    let paraphrased = "tests/data/calibration/paraphrased.jsonl";

    let lexical = calibrate(paraphrased, "lexical");
    assert!(!lexical.contains("similarity vectors"), "{lexical}");
    // Every round of this recording after the first carries the orchestrator's similarity.
    let recorded = calibrate("fixtures/budget_safety.jsonl", "recorded");
    assert!(!recorded.contains("similarity vectors"), "{recorded}");
    assert!(!vectors.exists(), "{}", vectors.display());

    let semantic = calibrate(paraphrased, "semantic");
    let (embedded, read_back, path) = vectors_note(&semantic);
    assert_eq!((embedded, read_back), (5, 0), "{semantic}");
    assert!(Path::new(&path).starts_with(&vectors), "{path}");
    assert!(
        semantic.contains("paraphrase-minilm-l3-v2-q4: "),
        "{semantic}"
    );
}
