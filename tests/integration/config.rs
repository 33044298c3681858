//! Configuration and theme files, valid and invalid.

use std::path::Path;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use gavel::config::Config;
use gavel::config::theme::Theme;
use gavel::console::app::{Action, Keymap};

fn load(name: &str) -> gavel::config::Result<Config> {
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
fn a_misspelt_key_is_named_at_its_line_with_the_keys_there_are() {
    assert_eq!(
        error("unknown_key"),
        "tests/data/config/unknown_key.toml:2: invalid configuration: unknown field \
         `similarity_treshold`, expected one of `similarity_threshold`, `novelty_threshold`, \
         `min_rounds`, `max_rounds`, `max_rounds_by_type`, `budget_fraction`"
    );
}

#[test]
fn a_threshold_out_of_range_is_named_with_its_range() {
    assert_eq!(
        error("out_of_range"),
        "tests/data/config/out_of_range.toml: [controller] budget_fraction 1.5 is outside 0..1"
    );
}

#[test]
fn inverted_judge_bands_are_refused() {
    assert_eq!(
        error("inverted_judge"),
        "tests/data/config/inverted_judge.toml: [judge] judge bands must satisfy 0 <= \
         warn_min_score (0.9) <= continue_min_score (0.6) <= 1"
    );
}

#[test]
fn a_grid_axis_that_is_no_range_says_how_to_write_one() {
    assert_eq!(
        error("bad_grid"),
        "tests/data/config/bad_grid.toml:2: invalid configuration: \"novelty=1:3\": values are \
         start:end:step, a,b,c or one value"
    );
}

#[test]
fn a_key_bound_twice_is_named_at_its_line() {
    assert_eq!(
        error("key_conflict"),
        "tests/data/config/key_conflict.toml:3: [keys] key a is bound to both accept and override"
    );
}

#[test]
fn an_unknown_action_is_named_with_the_actions_there_are() {
    assert_eq!(
        error("unknown_action"),
        "tests/data/config/unknown_action.toml:2: [keys] unknown action \"acept\" (known: up, \
         down, page_up, page_down, top, bottom, drill_in, back, switch_focus, next_view, \
         previous_view, view_rounds, view_transcript, view_judge, view_trace, view_format, \
         accept, override, escalate, step_back, step_forward, first_decision, \
         latest_decision, next_waiting, retry, note, unlock, filter, command, sort, pause, \
         faster, slower, calibration, shadow_week, previous_setting, next_setting, rollout, \
         publish, promote, rollback, copy, pager, help, quit)"
    );
}

#[test]
fn a_key_that_is_no_key_says_how_keys_are_written() {
    assert_eq!(
        error("bad_key"),
        "tests/data/config/bad_key.toml:2: [keys] accept: \"hyper-a\" is not a key (a character, \
         ctrl-/alt- plus a key, or one of: enter, esc, tab, backtab, backspace, delete, insert, \
         space, up, down, left, right, pageup, pagedown, home, end, f1-f12)"
    );
}

#[test]
fn a_negative_pace_is_refused_with_its_range() {
    assert_eq!(
        error("negative_pace"),
        "tests/data/config/negative_pace.toml: [simulator] turn_interval_secs -1 must be between \
         0 and 86400 seconds"
    );
}

#[test]
fn an_absent_file_named_on_purpose_is_an_error() {
    assert_eq!(
        error("absent"),
        "cannot read config tests/data/config/absent.toml: No such file or directory (os error 2)"
    );
}

#[test]
fn the_bundled_theme_parses_and_a_broken_one_is_refused() {
    assert_eq!(Theme::dark().name, "dark");
    let broken = std::fs::read_to_string("themes/dark.toml")
        .unwrap()
        .replace("#bf616a", "blood");
    assert_eq!(
        format!("{:#}", Theme::parse(&broken, "mine.toml").unwrap_err()),
        "mine.toml:14: invalid theme: \"blood\" is not a colour (a name, #rrggbb or 0-255)"
    );
    let missing = std::fs::read_to_string("themes/dark.toml")
        .unwrap()
        .replace("series = \"#81a1c1\"", "");
    assert_eq!(
        format!("{:#}", Theme::parse(&missing, "mine.toml").unwrap_err()),
        "mine.toml:5: invalid theme: missing field `series`"
    );
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
    assert_eq!(
        theme_error("solarized"),
        "no theme \"solarized\": the bundled themes are dark, light, high-contrast, or give a \
         theme file's path"
    );
}

/// What loading theme `name` (a bundled name or a path) is refused with.
fn theme_error(name: &str) -> String {
    format!("{:#}", Theme::load(name).expect_err("the theme is refused"))
}

#[test]
fn a_theme_with_an_unknown_role_names_it_at_its_line() {
    assert_eq!(
        theme_error("tests/data/themes/unknown_role.toml"),
        "tests/data/themes/unknown_role.toml:16: invalid theme: unknown field `sparkle`, expected \
         one of `text`, `muted`, `accent`, `border`, `border_focus`, `selection`, `ok`, `warn`, \
         `danger`, `pending`, `threshold`, `series`, `in_force`, `closest`"
    );
}

#[test]
fn every_bundled_theme_tells_the_calibration_charts_marks_apart_and_an_older_file_still_loads() {
    for name in gavel::config::theme::bundled_names() {
        let theme = Theme::bundled(name).unwrap();
        let roles = &theme.roles;
        let marks = [
            ("muted", Some(roles.muted)),
            ("series", Some(roles.series)),
            ("in_force", roles.in_force),
            ("closest", roles.closest),
            ("text", Some(roles.text)),
        ];
        for (i, (a, colour)) in marks.iter().enumerate() {
            assert!(colour.is_some(), "{name} has no {a}");
            for (b, other) in &marks[i + 1..] {
                assert_ne!(colour, other, "{name}: {a} and {b} share a colour");
            }
        }
    }
    // A theme file written before the chart roles: they fall back to pending and ok.
    let older = std::fs::read_to_string("themes/dark.toml").unwrap();
    let older: String = older
        .lines()
        .filter(|l| !l.starts_with("in_force") && !l.starts_with("closest"))
        .map(|l| format!("{l}\n"))
        .collect();
    let theme = Theme::parse(&older, "older.toml").unwrap();
    assert_eq!(theme.in_force().fg, Some(theme.roles.pending.0));
    assert_eq!(theme.closest().fg, Some(theme.roles.ok.0));
}

#[test]
fn a_theme_that_is_not_toml_names_its_line() {
    assert_eq!(
        theme_error("tests/data/themes/not_toml.toml"),
        "tests/data/themes/not_toml.toml:2: invalid theme: unclosed table, expected `]`"
    );
}

#[test]
fn an_absent_theme_file_is_an_error() {
    assert_eq!(
        theme_error("tests/data/themes/absent.toml"),
        "cannot read theme tests/data/themes/absent.toml: No such file or directory (os error 2)"
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

#[test]
fn contexts_are_read_with_their_connection_rights_and_theme() {
    let text = r#"
[[contexts]]
name = "prod"
service = "prod"
read_only = true
theme = "high-contrast"

[[contexts]]
name = "staging"
db = "postgresql://gavel@staging.example/debates"
"#;
    let config = Config::parse(text, "c.toml").unwrap();
    let [prod, staging] = config.contexts.as_slice() else {
        panic!("two contexts: {:?}", config.contexts);
    };
    assert_eq!(prod.name.get_ref(), "prod");
    assert_eq!(prod.connection(), "service='prod'");
    assert!(prod.read_only);
    assert_eq!(prod.theme.as_deref(), Some("high-contrast"));
    assert_eq!(
        staging.connection(),
        "postgresql://gavel@staging.example/debates"
    );
    assert!(!staging.read_only);
}

#[test]
fn a_context_wrong_is_named_at_its_line() {
    let error = |text: &str| format!("{:#}", Config::parse(text, "c.toml").unwrap_err());
    let two = "[[contexts]]\nname = \"a\"\ndb = \"x\"\n\n[[contexts]]\nname = \"a\"\ndb = \"y\"\n";
    assert_eq!(
        error(two),
        "c.toml:6: invalid configuration: [[contexts]] context name \"a\" is given twice"
    );
    assert_eq!(
        error("[[contexts]]\nname = \"a\"\n"),
        "c.toml:2: invalid configuration: [[contexts]] context a: give db (a connection string) or service"
    );
    assert_eq!(
        error("[[contexts]]\nname = \"a\"\ndb = \"x\"\nservice = \"s\"\n"),
        "c.toml:2: invalid configuration: [[contexts]] context a: db and service both given; give one"
    );
    assert!(
        error("[[contexts]]\nname = \"all\"\ndb = \"x\"\n")
            .starts_with("c.toml:2: invalid configuration: [[contexts]] context name \"all\"")
    );
    assert!(
        error("[[contexts]]\nname = \"a b\"\ndb = \"x\"\n")
            .starts_with("c.toml:2: invalid configuration: [[contexts]] context name \"a b\"")
    );
    assert!(error("[[contexts]]\nname = \"a\"\nhost = \"x\"\n").contains("unknown field `host`"));
}
