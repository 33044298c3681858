//! Configuration and theme files, valid and invalid.

use std::path::Path;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use gavel::app::{Action, Keymap};
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
    assert_eq!(config.ui.theme, "light");
    assert!(config.ui.mouse);
    let press = |c: char, modifiers: KeyModifiers| KeyEvent::new(KeyCode::Char(c), modifiers);
    assert_eq!(
        config.keys.action(&press('A', KeyModifiers::SHIFT)),
        Some(Action::Accept)
    );
    assert_eq!(
        config.keys.action(&press('a', KeyModifiers::NONE)),
        None,
        "a rebound action loses its default key"
    );
    assert_eq!(
        config.keys.action(&press('q', KeyModifiers::CONTROL)),
        Some(Action::Quit)
    );
    assert_eq!(
        config.keys.action(&press('o', KeyModifiers::NONE)),
        Some(Action::Override),
        "actions not named keep their defaults"
    );
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
    let conflict = error("key_conflict");
    assert!(
        conflict.contains("key_conflict.toml")
            && conflict.contains("key a is bound to both accept and override"),
        "{conflict}"
    );
    let action = error("unknown_action");
    assert!(
        action.contains("unknown action \"acept\"") && action.contains("accept, override"),
        "{action}"
    );
    let key = error("bad_key");
    assert!(key.contains("\"hyper-a\" is not a key"), "{key}");
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
        error.contains("mine.toml:14: invalid theme: \"blood\" is not a colour"),
        "{error}"
    );
    let missing = std::fs::read_to_string("themes/dark.toml")
        .unwrap()
        .replace("series = \"#81a1c1\"", "");
    let error = format!("{:#}", Theme::parse(&missing, "mine.toml").unwrap_err());
    assert!(error.contains("missing field `series`"), "{error}");
}

#[test]
fn every_bundled_theme_loads_by_name_and_a_file_by_path() {
    for name in ["dark", "light", "high-contrast"] {
        let (theme, file) = Theme::load(name).unwrap();
        assert_eq!(theme.name, name);
        assert_eq!(
            file,
            Some(Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("themes/{name}.toml"))),
            "the checkout's file is the one watched"
        );
        assert_eq!(
            theme,
            Theme::bundled(name).unwrap(),
            "the embedded copy matches"
        );
    }
    let (theme, file) = Theme::load("tests/data/themes/valid.toml").unwrap();
    assert_eq!(theme.name, "valid");
    assert_eq!(
        file.as_deref(),
        Some(Path::new("tests/data/themes/valid.toml"))
    );
    let unknown = format!("{:#}", Theme::load("solarized").unwrap_err());
    assert!(
        unknown.contains("no theme \"solarized\"")
            && unknown.contains("dark, light, high-contrast"),
        "{unknown}"
    );
}

#[test]
fn invalid_theme_files_say_which_file_and_what() {
    let role = format!(
        "{:#}",
        Theme::load("tests/data/themes/unknown_role.toml").unwrap_err()
    );
    assert!(
        role.contains("unknown_role.toml") && role.contains("unknown field `sparkle`"),
        "{role}"
    );
    let syntax = format!(
        "{:#}",
        Theme::load("tests/data/themes/not_toml.toml").unwrap_err()
    );
    assert!(
        syntax.contains("not_toml.toml:2: invalid theme"),
        "{syntax}"
    );
    let absent = format!(
        "{:#}",
        Theme::load("tests/data/themes/absent.toml").unwrap_err()
    );
    assert!(
        absent.contains("cannot read theme tests/data/themes/absent.toml"),
        "{absent}"
    );
}

#[test]
fn the_help_lists_every_action_with_its_default_keys() {
    let keymap = Keymap::default();
    assert_eq!(keymap.keys(Action::Up), "up k");
    assert_eq!(keymap.keys(Action::Pause), "space");
    assert_eq!(keymap.keys(Action::Unlock), "U");
    for action in Action::ALL {
        assert_eq!(action.name().parse::<Action>().unwrap(), *action);
        assert!(!keymap.keys(*action).is_empty());
    }
}
