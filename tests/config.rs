//! Configuration and theme files, valid and invalid.

use std::path::Path;

use gavel::config::Config;
use gavel::theme::Theme;

fn load(name: &str) -> anyhow::Result<Config> {
    Config::load(Some(Path::new(&format!("tests/data/config/{name}.toml"))))
}

fn error(name: &str) -> String {
    format!("{:#}", load(name).expect_err("the file is invalid"))
}

#[test]
fn a_valid_file_overrides_the_defaults_it_names() {
    let config = load("valid").unwrap();
    assert_eq!(config.operator_name(), "alice");
    assert_eq!(config.controller.similarity_threshold, 0.85);
    assert_eq!(config.controller.novelty_threshold, 2);
    assert_eq!(
        config.controller.min_rounds, 2,
        "unnamed keys keep their defaults"
    );
    assert_eq!(config.controller.max_rounds_for("panel"), 6);
    assert_eq!(config.controller.max_rounds_for("standard"), 10);
    assert_eq!(config.judge.continue_min_score, 0.7);
    assert_eq!(config.judge.warn_min_score, 0.4);
    assert_eq!(config.simulator.gated_timeout_secs, 30.0);
    let axes: Vec<Vec<f64>> = config
        .calibration
        .grid
        .iter()
        .map(|a| a.values.clone())
        .collect();
    assert_eq!(axes, vec![vec![0.85, 0.9, 0.95], vec![0.6, 0.75]]);
}

#[test]
fn the_defaults_are_the_documented_thresholds() {
    let config = Config::default();
    assert_eq!(config.controller.similarity_threshold, 0.9);
    assert_eq!(config.controller.novelty_threshold, 1);
    assert_eq!(
        (config.controller.min_rounds, config.controller.max_rounds),
        (2, 8)
    );
    assert_eq!(config.controller.budget_fraction, 0.8);
    assert_eq!(
        (config.judge.warn_min_score, config.judge.continue_min_score),
        (0.4, 0.6)
    );
}

#[test]
fn invalid_files_say_where_and_what() {
    let unknown = error("unknown_key");
    assert!(
        unknown.contains("tests/data/config/unknown_key.toml")
            && unknown.contains("similarity_treshold"),
        "{unknown}"
    );
    let range = error("out_of_range");
    assert!(
        range.contains("[controller] budget_fraction 1.5 is outside 0..1"),
        "{range}"
    );
    let judge = error("inverted_judge");
    assert!(
        judge.contains("[judge]") && judge.contains("warn_min_score (0.9)"),
        "{judge}"
    );
    let grid = error("bad_grid");
    assert!(
        grid.contains("bad_grid.toml")
            && grid.contains("\"novelty=1:3\": values are start:end:step"),
        "{grid}"
    );
    let pace = error("negative_pace");
    assert!(pace.contains("[simulator] turn_interval_secs -1"), "{pace}");
    let missing = format!(
        "{:#}",
        Config::load(Some(Path::new("tests/data/config/absent.toml"))).unwrap_err()
    );
    assert!(
        missing.contains("cannot read config tests/data/config/absent.toml"),
        "{missing}"
    );
}

#[test]
fn the_bundled_theme_parses_and_a_broken_one_is_refused() {
    assert_eq!(Theme::dark().name, "dark");
    let broken = std::fs::read_to_string("themes/dark.toml")
        .unwrap()
        .replace("#bf616a", "blood");
    let error = format!("{:#}", Theme::parse(&broken, "mine.toml").unwrap_err());
    assert!(
        error.contains("mine.toml") && error.contains("\"blood\" is not a colour"),
        "{error}"
    );
    let missing = std::fs::read_to_string("themes/dark.toml")
        .unwrap()
        .replace("series = \"#81a1c1\"", "");
    let error = format!("{:#}", Theme::parse(&missing, "mine.toml").unwrap_err());
    assert!(error.contains("missing field `series`"), "{error}");
}
