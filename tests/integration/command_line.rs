//! The `:` command line: its parser (with property tests), completion of command names,
//! arguments and debate ids, the history of commands run, and what each command does to the
//! console.

use crate::common;

use common::{char, demo_model, flash, key};
use crossterm::event::KeyCode;
use gavel::console::app::command_line::{
    Colon, History, ID_CANDIDATES, common_prefix, complete, parse, usages,
};
use gavel::console::app::{Model, Overlay, SortOrder, update};
use gavel::domain::ControllerMode;
use proptest::prelude::*;

#[test]
fn every_command_parses() {
    assert_eq!(parse("  "), Ok(None));
    assert_eq!(parse("pending"), Ok(Some(Colon::Pending)));
    assert_eq!(
        parse("mode gated"),
        Ok(Some(Colon::Mode(Some(ControllerMode::Gated))))
    );
    assert_eq!(
        parse("mode  SHADOW "),
        Ok(Some(Colon::Mode(Some(ControllerMode::Shadow))))
    );
    assert_eq!(parse("mode"), Ok(Some(Colon::Mode(None))));
    assert_eq!(parse("sort id"), Ok(Some(Colon::Sort(SortOrder::Id))));
    assert_eq!(
        parse("sort pending"),
        Ok(Some(Colon::Sort(SortOrder::PendingFirst)))
    );
    assert_eq!(
        parse("sort arrival"),
        Ok(Some(Colon::Sort(SortOrder::Arrival)))
    );
    assert_eq!(parse("theme light"), Ok(Some(Colon::Theme("light".into()))));
    assert_eq!(parse("q"), Ok(Some(Colon::Quit)));
    assert_eq!(parse("quit"), Ok(Some(Colon::Quit)));
    assert_eq!(parse("help"), Ok(Some(Colon::Help)));
    assert_eq!(
        parse("fasting-insulin-0412"),
        Ok(Some(Colon::Jump("fasting-insulin-0412".into())))
    );
}

#[test]
fn bad_commands_say_what_was_wrong() {
    assert_eq!(
        parse("frobnicate now").unwrap_err(),
        "no command :frobnicate — :help lists the commands"
    );
    assert_eq!(
        parse("mode purple").unwrap_err(),
        "no mode purple: the modes are off, shadow, enabled, gated"
    );
    assert_eq!(
        parse("sort").unwrap_err(),
        "sort takes one of arrival, pending, id"
    );
    assert_eq!(
        parse("sort by id").unwrap_err(),
        "sort takes one of arrival, pending, id"
    );
    assert!(
        parse("theme neon")
            .unwrap_err()
            .starts_with("no bundled theme neon")
    );
    assert_eq!(parse("q now").unwrap_err(), "q takes no argument");
    let usages: Vec<String> = usages().into_iter().map(|(usage, _)| usage).collect();
    assert_eq!(
        usages,
        [
            ":pending",
            ":waiting",
            ":mode <off|shadow|enabled|gated>",
            ":sort <arrival|pending|id>",
            ":theme <dark|light|high-contrast>",
            ":help",
            ":who",
            ":quit :q",
            ":<debate id>",
        ]
    );
}

proptest! {
    /// Any line parses to a command or a one-line error, never a panic; a single word that is
    /// not a command is a jump to it; surrounding spaces change nothing.
    #[test]
    fn any_line_parses_or_says_why(line in "\\PC{0,40}") {
        let parsed = parse(&line);
        if let Err(why) = &parsed {
            prop_assert!(!why.is_empty() && !why.contains('\n'));
        }
        prop_assert_eq!(parse(&format!("  {line}  ")), parsed.clone());
        let words: Vec<&str> = line.split_whitespace().collect();
        if let [word] = words[..]
            && !["pending", "mode", "sort", "theme", "help", "q", "quit"].contains(&word)
        {
            prop_assert_eq!(parsed, Ok(Some(Colon::Jump(word.to_owned()))));
        }
    }

    /// Every mode and sort order round-trips through its name in any case.
    #[test]
    fn arguments_are_read_in_any_case(mode in 0usize..4, upper in any::<bool>()) {
        let mode = ControllerMode::ALL[mode];
        let name = if upper { mode.as_str().to_uppercase() } else { mode.as_str().to_owned() };
        prop_assert_eq!(parse(&format!("mode {name}")), Ok(Some(Colon::Mode(Some(mode)))));
    }

    /// Completions always extend the word typed.
    #[test]
    fn completions_extend_the_word(line in "(mode |sort |theme )?[a-z]{0,3}") {
        let completion = complete(&line, &[], |_, _| Vec::new());
        let word = &line[completion.head.len()..];
        for candidate in &completion.candidates {
            prop_assert!(candidate.starts_with(&word.to_lowercase()), "{} from {}", candidate, line);
        }
        prop_assert!(common_prefix(&completion.candidates).len() >= word.len() || completion.candidates.is_empty());
    }
}

#[test]
fn completion_offers_names_then_arguments_then_ids() {
    let none = |_: &str, _: usize| Vec::new();
    assert_eq!(
        complete("", &[], none).candidates,
        [
            "pending", "waiting", "mode", "sort", "theme", "help", "who", "quit"
        ]
    );
    assert_eq!(complete("mo", &[], none).candidates, ["mode"]);
    let modes = complete("mode ", &[], none);
    assert_eq!(modes.head, "mode ");
    assert_eq!(modes.candidates, ["off", "shadow", "enabled", "gated"]);
    assert_eq!(complete("mode g", &[], none).candidates, ["gated"]);
    assert_eq!(
        complete("sort ", &[], none).candidates,
        ["arrival", "pending", "id"]
    );
    assert_eq!(
        complete("theme ", &[], none).candidates,
        ["dark", "light", "high-contrast"]
    );
    assert!(complete("sort id more", &[], none).candidates.is_empty());
    let ids = complete("fa", &[], |prefix, limit| {
        assert_eq!((prefix, limit), ("fa", ID_CANDIDATES + 1));
        vec!["fasting-b", "fasting-a"]
    });
    assert_eq!(ids.candidates, ["fasting-a", "fasting-b"]);
    assert!(!ids.more);
    let many: Vec<String> = (0..80).map(|n| format!("id-{n:02}")).collect();
    let lots = complete("id", &[], |_, limit| {
        many.iter().take(limit).map(String::as_str).collect()
    });
    assert_eq!(lots.candidates.len(), ID_CANDIDATES);
    assert!(lots.more);
    assert_eq!(common_prefix(&["gated".into(), "gamma".into()]), "ga");
    assert_eq!(common_prefix(&["é1".into(), "é2".into()]), "é");
}

#[test]
fn on_several_databases_ctx_is_offered_and_completes_to_their_names() {
    let none = |_: &str, _: usize| Vec::new();
    let contexts = ["staging", "prod-eu", "prod-us"];
    assert!(
        !complete("c", &[], none)
            .candidates
            .contains(&"ctx".to_owned())
    );
    assert_eq!(complete("c", &contexts, none).candidates, ["ctx"]);
    assert_eq!(
        complete("ctx ", &contexts, none).candidates,
        ["all", "prod-eu", "prod-us", "staging"]
    );
    let prod = complete("ctx pr", &contexts, none);
    assert_eq!(
        (prod.head.as_str(), common_prefix(&prod.candidates)),
        ("ctx ", "prod-")
    );
    assert_eq!(complete("ctx s", &contexts, none).line(0), "ctx staging");
    assert!(complete("ctx ", &[], none).candidates.is_empty());
}

#[test]
fn history_goes_back_and_forth_and_keeps_the_draft() {
    let mut history = History::default();
    assert_eq!(history.older("x"), None);
    history.push("mode gated");
    history.push("mode gated");
    history.push("pending");
    assert_eq!(history.entries(), ["mode gated", "pending"]);
    assert_eq!(history.older("so"), Some("pending"));
    assert_eq!(history.older("ignored"), Some("mode gated"));
    assert_eq!(history.older("ignored"), Some("mode gated"));
    assert_eq!(history.newer(), Some("pending"));
    assert_eq!(history.newer(), Some("so"));
    assert_eq!(history.newer(), None);
}

fn run(model: &mut Model, line: &str) {
    update(model, char(':'));
    for c in line.chars() {
        update(model, char(c));
    }
    update(model, key(KeyCode::Enter));
}

#[test]
fn pending_and_mode_set_the_filter_the_operator_can_edit() {
    let (mut model, _) = demo_model();
    run(&mut model, "pending");
    assert_eq!(model.filter(), "is:pending");
    let pending = model.debates.waiting() + model.debates.advisory();
    assert!(pending > 0);
    assert_eq!(model.debates.listed(), pending);
    run(&mut model, "mode gated");
    assert_eq!(model.filter(), "is:pending mode:gated");
    run(&mut model, "mode shadow");
    assert_eq!(
        model.filter(),
        "is:pending mode:shadow",
        "a mode replaces the mode"
    );
    run(&mut model, "mode");
    assert_eq!(model.filter(), "is:pending");
    assert!(flash(&model).contains("filter /is:pending lists"));
    // `/` opens the filter as :pending left it.
    update(&mut model, char('/'));
    update(&mut model, key(KeyCode::Esc));
    assert_eq!(model.filter(), "");
    run(&mut model, "mode gated");
    let gated = model
        .debates
        .summaries()
        .filter(|s| s.mode.to_string() == "gated")
        .count();
    assert_eq!(model.debates.listed(), gated);
}

#[test]
fn sort_theme_help_quit_and_unknown_commands() {
    let (mut model, _) = demo_model();
    run(&mut model, "sort id");
    assert_eq!(model.sort(), SortOrder::Id);
    run(&mut model, "theme light");
    assert_eq!(model.settings.theme.name, "light");
    assert_eq!(flash(&model), "theme light applied");
    run(&mut model, "theme neon");
    assert_eq!(model.settings.theme.name, "light");
    assert!(model.desk.flash.as_ref().unwrap().error);
    run(&mut model, "help");
    assert!(matches!(model.desk.overlay, Some(Overlay::Help { .. })));
    update(&mut model, key(KeyCode::Esc));
    run(&mut model, "no-such-debate");
    assert_eq!(
        flash(&model),
        "no debate no-such-debate and no command :no-such-debate — :help lists the commands"
    );
    run(&mut model, "vitd-fracture");
    assert_eq!(
        model.selected_summary().unwrap().id.as_ref(),
        "vitd-fracture-followup"
    );
    assert!(!model.quit);
    run(&mut model, "q");
    assert!(model.quit);
}

#[test]
fn an_unknown_command_says_so_in_a_line_that_fits_and_help_lists_every_command() {
    let (mut model, _) = demo_model();
    for (line, said) in [
        ("frob now", "no command :frob — :help lists the commands"),
        (
            "frob",
            "no debate frob and no command :frob — :help lists the commands",
        ),
    ] {
        run(&mut model, line);
        assert_eq!(flash(&model), said);
        for width in [80, 160] {
            let screen = common::screen_at(&model, width, 24);
            let footer = screen.lines().last().unwrap();
            assert!(footer.contains(said), "{width} columns: {footer}");
        }
    }
    run(&mut model, "help");
    let mut help = String::new();
    for _ in 0..60 {
        help.push_str(&common::screen_at(&model, 120, 40));
        update(&mut model, char('j'));
    }
    for (usage, what) in usages() {
        assert!(
            help.contains(&format!(" {usage} ")) && help.contains(what),
            "the help lists {usage}: {what}"
        );
    }
}

#[test]
fn tab_completes_and_cycles_and_arrows_recall() {
    let (mut model, _) = demo_model();
    update(&mut model, char(':'));
    for c in "mo".chars() {
        update(&mut model, char(c));
    }
    update(&mut model, key(KeyCode::Tab));
    assert_eq!(
        model.desk.prompt.value(),
        "mode ",
        "a command that takes an argument gets a space"
    );
    update(&mut model, key(KeyCode::Tab));
    assert_eq!(
        model.desk.completion.as_ref().unwrap().candidates,
        ["off", "shadow", "enabled", "gated"]
    );
    assert_eq!(model.desk.prompt.value(), "mode ");
    update(&mut model, key(KeyCode::Tab));
    assert_eq!(model.desk.prompt.value(), "mode off");
    update(&mut model, key(KeyCode::Tab));
    assert_eq!(model.desk.prompt.value(), "mode shadow");
    update(&mut model, key(KeyCode::BackTab));
    update(&mut model, key(KeyCode::BackTab));
    assert_eq!(
        model.desk.prompt.value(),
        "mode gated",
        "Shift-Tab goes back round"
    );
    update(&mut model, key(KeyCode::Enter));
    assert_eq!(model.filter(), "mode:gated");
    assert_eq!(model.desk.completion, None);

    // Debate ids complete from the fleet.
    update(&mut model, char(':'));
    for c in "rep".chars() {
        update(&mut model, char(c));
    }
    update(&mut model, key(KeyCode::Tab));
    assert_eq!(model.desk.prompt.value(), "replication-crisis-causes");
    update(&mut model, key(KeyCode::Esc));
    assert_eq!(model.desk.overlay, None);

    // ↑ recalls what ran, ↓ comes back to what was typed.
    update(&mut model, char(':'));
    update(&mut model, char('x'));
    update(&mut model, key(KeyCode::Up));
    assert_eq!(model.desk.prompt.value(), "mode gated");
    update(&mut model, key(KeyCode::Down));
    assert_eq!(model.desk.prompt.value(), "x");
}
