//! End to end: the real binary driven headless in tmux at 160x48. The demo: rounds appear with
//! their signal columns, a pending decision is accepted with `a` then `y` and the debate moves
//! on, `?` shows the keys, and `q` leaves the terminal as it found it. `gavel watch` on a
//! throwaway PostgreSQL: rows written by plain SQL appear, an action taken on screen lands in
//! the database, a racing operator's action shows, and the feed survives a server restart. A
//! theme file edited while the demo runs recolours it; a broken edit keeps the colours. A
//! resized terminal is drawn at its new size at once.

use crate::common;

use common::pg::sql;
use common::tmux::Tmux;

/// The first debate's row in the debates list.
fn fasting_row(screen: &str) -> String {
    screen
        .lines()
        .find(|l| l.contains("fasting-insulin-0412  "))
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn demo_in_tmux_accept_help_and_quit() {
    let binary = env!("CARGO_BIN_EXE_gavel");
    let tmux = Tmux::new();
    let config = tmux.file(
        "config.toml",
        "operator = \"smoke\"\n[simulator]\ngated_timeout_secs = 3600\n",
    );
    let logs = tmux.dir.join("logs");
    tmux.start(&format!(
        "{binary} demo --speed 4 --config {} --log-dir {}; echo gavel-exited-$?; sleep 30",
        config.display(),
        logs.display()
    ));

    let screen = tmux.wait_for("the first gated decision", |s| {
        s.contains("decision waiting for you") && fasting_row(s).contains("continue_baseline")
    });
    for column in [
        "persona(s)",
        "sim",
        "verdict",
        "new",
        "judge",
        "controller",
        "operator",
    ] {
        assert!(
            screen.contains(column),
            "column {column} missing:\n{screen}"
        );
    }
    // Four personas do not fit the column: counted, not cut.
    assert!(screen.contains("  1 4 personas "), "{screen}");
    assert!(fasting_row(&screen).contains("1/8"));

    tmux.keys("a");
    tmux.wait_for("the confirmation", |s| {
        s.contains("accept → continue_baseline") && s.contains("[y] confirm")
    });
    tmux.keys("y");
    tmux.wait_for("the recorded action", |s| {
        s.contains("recorded: smoke accept continue_baseline on fasting-insulin-0412 round 1")
    });
    let moved = tmux.wait_for("round 2", |s| fasting_row(s).contains("2/8"));
    assert!(
        moved.contains("accept smoke"),
        "the operator column shows the action:\n{moved}"
    );

    tmux.keys("?");
    let keys = [
        "accept the pending decision",
        "force escalation",
        "pause / resume",
        "playback speed",
        "quit",
    ];
    // Waits for the whole overlay: a capture can catch a frame half drawn.
    tmux.wait_for("every key in the help overlay", |s| {
        s.contains("╭ keys") && keys.iter().all(|k| s.contains(k))
    });
    tmux.keys("Escape");
    tmux.wait_for("the help to close", |s| !s.contains("╭ keys"));

    tmux.keys("q");
    let after = tmux.wait_for("gavel to exit", |s| s.contains("gavel-exited-0"));
    assert!(
        !after.contains("gavel │"),
        "the console is gone from the screen:\n{after}"
    );
    assert_eq!(
        tmux.run(&["display-message", "-p", "-t", "smoke", "#{alternate_on}"])
            .trim(),
        "0"
    );
    assert_eq!(
        tmux.run(&["display-message", "-p", "-t", "smoke", "#{cursor_flag}"])
            .trim(),
        "1"
    );
    assert!(logs.join("gavel.log").exists(), "logs went to the log file");
}

#[test]
fn watch_in_tmux_against_a_live_database() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut server =
        gavel::store::postgres::LocalServer::start().expect("a throwaway PostgreSQL must start");
    sql(&server.url("postgres"), "CREATE DATABASE watched");
    let url = server.url("watched");
    let binary = env!("CARGO_BIN_EXE_gavel");
    assert!(common::migrate_with_the_binary(&url).contains("applied V1__contract"));
    sql(
        &url,
        "INSERT INTO debate_sessions (id, question, controller_mode, personas, token_budget, tokens_used) \
             VALUES ('live-1', 'Should the trial stop early?', 'gated', '[\"theorist\", \"skeptic\", \"ethicist\"]', 20000, 3000);
         INSERT INTO debate_rounds (session_id, round_number, agent_persona, content, tokens_used) \
             VALUES ('live-1', 1, 'theorist', 'Stop. VERDICT: stop', 1500), ('live-1', 1, 'skeptic', 'Go on. VERDICT: continue', 1500);
         INSERT INTO debate_round_decisions (session_id, round_index, decision, signal_json) \
             VALUES ('live-1', 1, 'continue_baseline', '{\"similarity\": null, \"new_claims\": 4, \"reasons\": [\"round 1 < min_rounds 2\"]}');",
    );

    let tmux = Tmux::new();
    tmux.start(&format!(
        "{binary} watch --db '{url}' --operator carol --log-dir {}; echo gavel-exited-$?; sleep 30",
        tmux.dir.join("logs").display()
    ));
    tmux.wait_for("the live debate", |s| {
        s.contains("● live") && s.contains("live-1") && s.contains("theorist skeptic")
    });

    tmux.keys("a");
    tmux.wait_for("the confirmation", |s| s.contains("[y] confirm"));
    tmux.keys("y");
    tmux.wait_for("the recorded action", |s| {
        s.contains("recorded: carol accept continue_baseline on live-1 round 1")
    });
    let recorded = runtime.block_on(async {
        let client = gavel::store::postgres::Target::exact(&url).unwrap().connect_driven().await.unwrap();
        client
            .query_one("SELECT operator || ' ' || action FROM debate_operator_actions WHERE session_id = 'live-1'", &[])
            .await
            .unwrap()
            .get::<_, String>(0)
    });
    assert_eq!(recorded, "carol accept");

    // A second operator resolves round 2 first, outside this console.
    sql(
        &url,
        "INSERT INTO debate_rounds (session_id, round_number, agent_persona, content, tokens_used) \
             VALUES ('live-1', 2, 'theorist', 'Still stop. VERDICT: stop', 1200);
         INSERT INTO debate_round_decisions (session_id, round_index, decision, signal_json) \
             VALUES ('live-1', 2, 'continue_baseline', '{}');
         INSERT INTO debate_operator_actions (session_id, round_index, action, decision, operator) \
             VALUES ('live-1', 2, 'override', 'stop_safety', 'dave');",
    );
    tmux.wait_for("the other operator's action", |s| {
        s.contains("override dave")
    });
    tmux.keys("a");
    let refused = tmux.wait_for("no pending decision", |s| {
        s.contains("no pending decision on live-1")
    });
    assert!(!refused.contains("recorded: carol"), "{refused}");

    server.stop().unwrap();
    tmux.wait_for("the link to go down", |s| {
        s.contains("✗ down") || s.contains("◌ connecting")
    });
    server.resume().unwrap();
    tmux.wait_for("the link to come back", |s| s.contains("● live"));
    sql(
        &url,
        "INSERT INTO debate_rounds (session_id, round_number, agent_persona, content, tokens_used) \
             VALUES ('live-1', 3, 'ethicist', 'After the restart. VERDICT: stop', 900);",
    );
    tmux.wait_for("the round written after the restart", |s| {
        s.contains("theorist ethicist") || s.contains("+ethicist")
    });

    tmux.keys("q");
    tmux.wait_for("gavel to exit", |s| s.contains("gavel-exited-0"));
}

#[test]
fn a_theme_edit_shows_without_a_restart() {
    let binary = env!("CARGO_BIN_EXE_gavel");
    let tmux = Tmux::new();
    let theme = tmux.dir.join("mine.toml");
    let dark = std::fs::read_to_string("themes/dark.toml").unwrap();
    std::fs::write(&theme, &dark).unwrap();
    tmux.start(&format!(
        "{binary} demo --speed 16 --theme {} --log-dir {}; echo gavel-exited-$?; sleep 30",
        theme.display(),
        tmux.dir.join("logs").display()
    ));
    // Ordinary text is #d8dee9 in the dark theme: 24-bit colour 216;222;233.
    let dark_text = "38;2;216;222;233";
    tmux.wait_for("the console in the dark theme's colours", |_| {
        tmux.coloured_screen().contains(dark_text)
    });

    std::fs::write(
        &theme,
        dark.replace("name = \"dark\"", "name = \"edited\"")
            .replace("text = \"#d8dee9\"", "text = \"#ff8000\""),
    )
    .unwrap();
    tmux.wait_for("the edit to apply", |s| s.contains("theme edited applied"));
    let coloured = tmux.coloured_screen();
    assert!(
        coloured.contains("38;2;255;128;0"),
        "the new text colour is drawn"
    );
    assert!(!coloured.contains(dark_text), "the old one is gone");

    std::fs::write(&theme, dark.replace("#bf616a", "blood")).unwrap();
    let refused = tmux.wait_for("the broken edit to be refused", |s| {
        s.contains("theme not applied, keeping edited")
    });
    assert!(refused.contains("is not a colour"), "{refused}");
    assert!(
        tmux.coloured_screen().contains("38;2;255;128;0"),
        "colours kept"
    );

    tmux.keys("q");
    tmux.wait_for("gavel to exit", |s| s.contains("gavel-exited-0"));
}

/// Whether `screen` is the console drawn whole at `width` x `height`: the debates panel's top
/// edge across the width, the key hints on the last row.
fn drawn_at(screen: &str, width: usize, height: usize) -> bool {
    let rows: Vec<&str> = screen.lines().collect();
    rows.len() == height
        && rows[1].starts_with('╭')
        && rows[1].ends_with('╮')
        && rows[1].chars().count() == width
        && rows[height - 1].contains("q quit")
}

#[test]
fn a_resized_terminal_is_drawn_at_its_new_size_without_a_key() {
    let binary = env!("CARGO_BIN_EXE_gavel");
    let tmux = Tmux::new();
    tmux.start(&format!(
        "{binary} demo --log-dir {}; echo gavel-exited-$?; sleep 30",
        tmux.dir.join("logs").display()
    ));
    tmux.wait_for("the console at 160x48", |s| drawn_at(s, 160, 48));
    tmux.resize(100, 30);
    tmux.wait_for("the console at 100x30", |s| drawn_at(s, 100, 30));
    tmux.resize(150, 40);
    tmux.wait_for("the console at 150x40", |s| drawn_at(s, 150, 40));
    tmux.keys("q");
    tmux.wait_for("gavel to exit", |s| s.contains("gavel-exited-0"));
}
