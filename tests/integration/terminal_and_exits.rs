//! The terminal, exits and exports as an operator meets them, with the real binary: in tmux,
//! SIGTERM, SIGHUP, SIGINT and SIGQUIT leave the terminal restored (raw mode off, main screen,
//! cursor shown, mouse capture off) and the status 128 + signal; Ctrl-Z and SIGTSTP suspend
//! with the terminal restored and `fg` redraws; without a terminal, one line and a non-zero
//! status. Exports, traces and reports into a closed pipe end quietly with status 0; CSV cells a
//! spreadsheet would run are neutralised; `gavel simulate` whose database goes away exits
//! non-zero naming the debates it left unfinished, with its log lines inert. Invisible and
//! separator characters never reach the screen.

use crate::common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use common::pg::{fresh_database, sql};
use common::tmux::Tmux;
use gavel::audit::{ExportRow, Format, export};
use gavel::domain::PmidCheck;
use gavel::store::postgres::{LocalServer, Target};
use gavel::text::inert;
use proptest::prelude::*;

const BINARY: &str = env!("CARGO_BIN_EXE_gavel");

// ---------------------------------------------------------------- the terminal, in tmux

/// Starts the demo in tmux (with mouse capture on) under a shell that prints its exit status,
/// waits for the console and returns the demo's pid.
fn demo_in_tmux(tmux: &Tmux) -> String {
    let config = tmux.file(
        "config.toml",
        "[ui]\nmouse = true\n[simulator]\ngated_timeout_secs = 3600\n",
    );
    let pid = tmux.dir.join("pid");
    tmux.start(&format!(
        "sh -c 'echo $$ > {}; exec {BINARY} demo --speed 4 --config {} --log-dir {}'; \
         echo status=$?; sleep 60",
        pid.display(),
        config.display(),
        tmux.dir.join("logs").display()
    ));
    wait_for_console(tmux);
    std::fs::read_to_string(pid).unwrap().trim().to_owned()
}

/// Waits until the console is drawn whole on the alternate screen.
fn wait_for_console(tmux: &Tmux) -> String {
    tmux.wait_for("the console", |s| {
        s.contains("persona(s)")
            && s.contains("fasting-insulin-0412")
            && s.contains("als-phase3-subgroup")
            && tmux.display("#{alternate_on}") == "1"
    })
}

/// The pane's terminal modes as `stty -a` lists them.
fn tty_modes(tmux: &Tmux) -> Vec<String> {
    let tty = tmux.display("#{pane_tty}");
    let output = Command::new("stty")
        .args(["-F", &tty, "-a"])
        .output()
        .unwrap();
    assert!(output.status.success(), "stty -F {tty}");
    String::from_utf8_lossy(&output.stdout)
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

/// What an operator would see wrong with the terminal: each mode the console sets that is
/// still set.
fn left_over(tmux: &Tmux) -> Vec<&'static str> {
    let modes = tty_modes(tmux);
    let mut wrong = Vec::new();
    if tmux.display("#{alternate_on}") != "0" {
        wrong.push("alternate screen");
    }
    if tmux.display("#{cursor_flag}") != "1" {
        wrong.push("hidden cursor");
    }
    if tmux.display("#{mouse_any_flag}") != "0" {
        wrong.push("mouse capture");
    }
    if !modes.iter().any(|m| m == "icanon") || !modes.iter().any(|m| m == "echo") {
        wrong.push("raw mode");
    }
    wrong
}

fn kill(signal: &str, pid: &str) {
    let status = Command::new("kill")
        .args(["-s", signal, pid])
        .status()
        .unwrap();
    assert!(status.success(), "kill -s {signal} {pid}");
}

/// The demo sent `signal` restores the terminal and exits with `status`.
fn signalled(signal: &str, status: u8) {
    let tmux = Tmux::new();
    let pid = demo_in_tmux(&tmux);
    assert_eq!(
        left_over(&tmux),
        [
            "alternate screen",
            "hidden cursor",
            "mouse capture",
            "raw mode"
        ],
        "the console's modes are on while it runs"
    );
    kill(signal, &pid);
    let after = tmux.wait_for("the exit status", |s| s.contains("status="));
    assert!(after.contains(&format!("status={status}")), "{after}");
    assert!(
        !after.contains("persona(s)"),
        "the console is gone:\n{after}"
    );
    assert_eq!(left_over(&tmux), Vec::<&str>::new(), "after SIG{signal}");
}

#[test]
fn sigterm_restores_the_terminal_and_exits_143() {
    signalled("TERM", 143);
}

#[test]
fn sighup_restores_the_terminal_and_exits_129() {
    signalled("HUP", 129);
}

#[test]
fn sigint_sent_as_a_signal_restores_the_terminal_and_exits_130() {
    signalled("INT", 130);
}

#[test]
fn sigquit_restores_the_terminal_and_exits_131() {
    signalled("QUIT", 131);
}

/// The state letter of process `pid` (T: stopped).
fn process_state(pid: &str) -> char {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after_name = &stat[stat.rfind(')').unwrap() + 1..];
    after_name.trim_start().chars().next().unwrap()
}

#[test]
fn ctrl_z_and_sigtstp_suspend_with_the_terminal_restored_and_fg_redraws() {
    let tmux = Tmux::new();
    tmux.start("env PS1='$ ' bash --norc --noprofile");
    tmux.wait_for("the shell's prompt", |s| s.trim_end().ends_with('$'));
    let pid_file = tmux.dir.join("pid");
    let config = tmux.file("config.toml", "[ui]\nmouse = true\n");
    tmux.type_line(&format!(
        "sh -c 'echo $$ > {}; exec {BINARY} demo --speed 4 --config {} --log-dir {}'",
        pid_file.display(),
        config.display(),
        tmux.dir.join("logs").display()
    ));
    wait_for_console(&tmux);
    let pid = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .to_owned();

    // Ctrl-Z arrives as a key in raw mode; then SIGTSTP from outside.
    let suspends: [&dyn Fn(); 2] = [&|| tmux.keys("C-z"), &|| kill("TSTP", &pid)];
    for (n, suspend) in suspends.iter().enumerate() {
        suspend();
        tmux.wait_for("the shell to report the job stopped", |s| {
            s.matches("Stopped").count() == n + 1
        });
        assert_eq!(process_state(&pid), 'T', "the console is stopped");
        for (variable, restored) in [
            ("#{alternate_on}", "0"),
            ("#{cursor_flag}", "1"),
            ("#{mouse_any_flag}", "0"),
        ] {
            assert_eq!(
                tmux.display(variable),
                restored,
                "{variable} while suspended"
            );
        }
        tmux.type_line("fg");
        // The whole screen comes back, not only what changed while it was stopped.
        wait_for_console(&tmux);
        assert_eq!(
            tmux.display("#{mouse_any_flag}"),
            "1",
            "mouse capture is back"
        );
        assert!(
            tty_modes(&tmux).iter().any(|m| m == "-icanon"),
            "raw mode is back"
        );
    }
    tmux.keys("q");
    tmux.wait_for("the prompt after the console", |s| {
        s.trim_end().ends_with('$') && !s.contains("persona(s)")
    });
    tmux.type_line("echo status=$?");
    tmux.wait_for("the status", |s| s.contains("status=0"));
}

#[test]
fn ctrl_z_with_no_shell_to_continue_the_console_leaves_it_running() {
    // Under a shell without job control (as under `ssh -t` or `tmux new 'gavel demo'`) the
    // console's process group is orphaned: a stop would be for good, so the kernel discards it.
    let tmux = Tmux::new();
    let pid = demo_in_tmux(&tmux);
    let suspends: [&dyn Fn(); 2] = [&|| tmux.keys("C-z"), &|| kill("TSTP", &pid)];
    for suspend in suspends {
        suspend();
        std::thread::sleep(Duration::from_secs(1));
        assert_ne!(
            process_state(&pid),
            'T',
            "stopped with no one to continue it"
        );
        // It still answers keys, in its own modes again.
        tmux.keys("?");
        tmux.wait_for("the help", |s| s.contains("╭ keys"));
        tmux.keys("Escape");
        tmux.wait_for("the help to close", |s| !s.contains("╭ keys"));
        wait_for_console(&tmux);
        assert_eq!(
            tmux.display("#{mouse_any_flag}"),
            "1",
            "mouse capture is on"
        );
    }
    tmux.keys("q");
    tmux.wait_for("the exit status", |s| s.contains("status=0"));
}

#[test]
fn a_terminal_that_hangs_up_while_the_console_draws_ends_it_with_129() {
    let tmux = Tmux::new();
    let status = tmux.dir.join("status");
    // The pane's shell leads the session: killing the pane hangs the terminal up, the shell
    // dies of its SIGHUP and the kernel sends the console's process group SIGHUP, by when the
    // console may have drawn into the dead terminal. A wrapper that outlives the hangup (its
    // trap runs once gavel has exited) records the status.
    tmux.start(&format!(
        "sh -c 'trap : HUP; {BINARY} demo --speed 16 --log-dir {}; echo $? > {}'; true",
        tmux.dir.join("logs").display(),
        status.display()
    ));
    wait_for_console(&tmux);
    tmux.run(&["kill-session", "-t", "smoke"]);
    assert_eq!(recorded_status(&status), "129");
}

#[test]
fn a_terminal_that_hangs_up_unannounced_ends_an_idle_console_with_129() {
    let tmux = Tmux::new();
    let status = tmux.dir.join("status");
    // Started from a script, the console is not the session's leader: when the terminal hangs
    // up the kernel sends SIGHUP to the script alone (which traps it, to record the status),
    // and reading the dead terminal returns nothing forever. Paused, the console draws
    // nothing either, so only its key reader can notice; it once spun a core for good instead.
    tmux.start(&format!(
        "trap : HUP; {BINARY} demo --log-dir {}; echo $? > {}",
        tmux.dir.join("logs").display(),
        status.display()
    ));
    wait_for_console(&tmux);
    tmux.keys("Space");
    tmux.wait_for("the pause", |s| s.contains("paused"));
    tmux.run(&["kill-server"]);
    assert_eq!(recorded_status(&status), "129");
}

/// The exit status a wrapper wrote to `status` once the console ended; fails after 20 s (the
/// console still running).
fn recorded_status(status: &std::path::Path) -> String {
    let started = Instant::now();
    while !std::fs::read_to_string(status).is_ok_and(|s| s.ends_with('\n')) {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "no status recorded: the console is still running"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::fs::read_to_string(status).unwrap().trim().to_owned()
}

#[test]
fn a_panic_on_another_thread_runs_the_hook_and_tells_the_console() {
    let left = Arc::new(AtomicBool::new(false));
    let mut panicked = {
        let left = left.clone();
        gavel::console::terminal::on_panic(move || left.store(true, Ordering::SeqCst))
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    runtime.block_on(async {
        let quiet = tokio::time::timeout(Duration::from_millis(100), panicked.wait()).await;
        assert!(quiet.is_err(), "told of a panic before any");
        let task = tokio::task::spawn_blocking(|| panic!("a background task fails"));
        assert!(task.await.is_err());
        tokio::time::timeout(Duration::from_secs(5), panicked.wait())
            .await
            .expect("the console is told of the panic");
        // Told for good: a wait begun later returns at once.
        panicked.wait().await;
    });
    assert!(left.load(Ordering::SeqCst), "the terminal was left first");
}

#[test]
fn a_console_whose_output_is_not_a_terminal_says_so_in_one_line() {
    let tmux = Tmux::new();
    let out = tmux.dir.join("out");
    tmux.start(&format!(
        "{BINARY} demo --log-dir {} > {}; echo status=$?; sleep 60",
        tmux.dir.join("logs").display(),
        out.display()
    ));
    let screen = tmux.wait_for("the exit status", |s| s.contains("status="));
    let lines: Vec<&str> = screen.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(
        lines,
        [
            "gavel: the console needs a terminal and standard output is not one (in scripts use \
             simulate, trace, export or calibrate)",
            "status=1"
        ]
    );
    assert_eq!(std::fs::read_to_string(out).unwrap(), "");
    assert_eq!(tmux.display("#{alternate_on}"), "0");
}

// ---------------------------------------------------------------- no terminal, closed pipes

#[test]
fn without_a_terminal_the_console_says_so_in_one_line() {
    for command in [&["demo"][..], &["demo", "--postgres"], &["watch"]] {
        let output = crate::common::gavel()
            .args(command)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(1), "{command:?}");
        assert_eq!(
            String::from_utf8_lossy(&output.stderr),
            "gavel: the console needs a terminal and standard input is not one (in scripts use \
             simulate, trace, export or calibrate)\n",
            "{command:?}"
        );
        assert!(output.stdout.is_empty());
    }
}

/// Runs gavel with its standard output a pipe whose reader has already gone.
fn into_a_closed_pipe(args: &[&str]) -> Output {
    let mut child = crate::common::gavel()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    child.wait_with_output().unwrap()
}

fn assert_quiet(output: &Output, what: &str) {
    assert_eq!(
        output.status.code(),
        Some(0),
        "{what}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    // What a command embedded is said however its output went.
    let stderr = String::from_utf8_lossy(&output.stderr);
    let said: Vec<&str> = stderr
        .lines()
        .filter(|l| !l.starts_with("gavel: note: similarity vectors: "))
        .collect();
    assert_eq!(said, Vec::<&str>::new(), "{what}");
}

#[test]
fn calibrate_check_and_completions_into_a_closed_pipe_end_quietly() {
    for args in [
        &["calibrate", "--per-debate"][..],
        &["calibrate", "--json"],
        &["check", "fixtures/never_converges.jsonl"],
        &["completions", "bash"],
        &["man"],
    ] {
        assert_quiet(&into_a_closed_pipe(args), &format!("{args:?}"));
    }
}

/// The URL of a database `name` of the test's own on the shared server, migrated by the binary.
fn migrated(name: &str) -> String {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let url = runtime.block_on(fresh_database(name)).url;
    common::migrate_with_the_binary(&url);
    url
}

/// SQL writing debate `id` (an SQL literal) with one turn and a pending gated decision.
fn debate_sql(id: &str) -> String {
    format!(
        "INSERT INTO debate_sessions (id, question, controller_mode, personas, token_budget, tokens_used) \
             VALUES ({id}, 'q', 'gated', '[\"theorist\"]', 1000, 10);
         INSERT INTO debate_rounds (session_id, round_number, agent_persona, content, tokens_used) \
             VALUES ({id}, 1, 'theorist', 'VERDICT: stop', 10);
         INSERT INTO debate_round_decisions (session_id, round_index, decision, signal_json) \
             VALUES ({id}, 1, 'continue_baseline', '{{}}');"
    )
}

fn query_ids(url: &str, sql: &str) -> Vec<String> {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let client = Target::exact(url).unwrap().connect_driven().await.unwrap();
        common::pg::texts(&client, sql).await
    })
}

#[test]
fn exports_and_traces_into_a_closed_pipe_end_quietly_and_csv_is_safe_to_open() {
    let url = migrated("closed_pipe");
    sql(&url, &debate_sql("'=HYPERLINK(\"http://x\")'"));
    sql(
        &url,
        "INSERT INTO debate_operator_actions (session_id, round_index, action, decision, operator, note) \
             SELECT '=HYPERLINK(\"http://x\")', n, 'override', 'stop_safety', '@ops', \
                    '-2+3' || chr(27) || '[2J' || repeat('x', 100) \
             FROM generate_series(1, 3000) AS n;",
    );
    let csv = crate::common::gavel()
        .args(["export", "--format", "csv", "--db", &url])
        .output()
        .unwrap();
    assert!(csv.status.success());
    let csv = String::from_utf8(csv.stdout).unwrap();
    assert!(!csv.contains('\u{1b}'), "no raw ESC in the export");
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let mut rows = 0;
    for record in reader.records() {
        let record = record.unwrap();
        rows += 1;
        assert_eq!(&record[1], "'=HYPERLINK(\"http://x\")");
        for cell in record.iter() {
            assert!(
                !cell.starts_with(['=', '+', '-', '@', '\t', '\r']),
                "a cell a spreadsheet would run: {cell:?}"
            );
        }
        if &record[0] == "debate_operator_actions" {
            assert_eq!(&record[12], "postgres", "the role that wrote the row");
            assert_eq!(&record[13], format!("'-2+3␛[2J{}", "x".repeat(100)));
        }
    }
    assert_eq!(rows, 3001);

    // More than a pipe holds: `| head -1` closes the pipe while gavel still writes.
    for format in ["csv", "jsonl"] {
        let mut child = crate::common::gavel()
            .args(["export", "--format", format, "--db", &url])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        assert!(!first.is_empty());
        assert_quiet(&child.wait_with_output().unwrap(), format);
    }
    let session = "=HYPERLINK(\"http://x\")";
    for args in [
        &["export", "--db", &url][..],
        &["trace", session, "--db", &url],
        &["trace", session, "--json", "--db", &url],
    ] {
        assert_quiet(&into_a_closed_pipe(args), &format!("{args:?}"));
    }
}

#[test]
fn an_export_writes_flagged_rows_as_stored_and_notes_each_flag() {
    let url = migrated("flagged_export");
    sql(
        &url,
        "INSERT INTO debate_sessions (id, question, controller_mode) VALUES ('h', 'q', 'gated');
         INSERT INTO debate_round_decisions (session_id, round_index, decision, signal_json) \
             VALUES ('h', 2147483647, 'stop_converged', '{\"new_claims\": -1, \"verdict\": \"yes\"}');
         INSERT INTO debate_round_judgments (session_id, round_index, agent_persona, decision, score) \
             VALUES ('h', -5, 'theorist', 'warn', 'NaN');
         INSERT INTO debate_operator_actions (session_id, round_index, action, decision, operator) \
             VALUES ('h', 20000, 'accept', 'stop_converged', 'mallory');",
    );
    let jsonl = crate::common::gavel()
        .args(["export", "--db", &url])
        .output()
        .unwrap();
    assert!(jsonl.status.success());
    let rows: Vec<serde_json::Value> = String::from_utf8(jsonl.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let of = |table: &str| rows.iter().find(|r| r["table"] == table).unwrap();
    let decision = of("debate_round_decisions");
    assert_eq!(decision["round_index"], 2147483647_i64);
    assert_eq!(
        decision["signals"],
        serde_json::json!({"new_claims": -1, "verdict": "yes"}),
        "signal_json as stored, the flagged key included"
    );
    assert_eq!(of("debate_round_judgments")["round_index"], -5);
    assert_eq!(of("debate_operator_actions")["round_index"], 20000);
    let decision_flags = [
        "debate_round_decisions (h, 2147483647): signal_json: new_claims: -1 is outside 0..=4294967295",
        "debate_round_decisions (h, 2147483647): round_index: 2147483647 is outside 1..=10000",
    ];
    assert_eq!(decision["issues"], serde_json::json!(decision_flags));
    let notes: Vec<String> = String::from_utf8(jsonl.stderr)
        .unwrap()
        .lines()
        .filter_map(|line| line.strip_prefix("gavel: note: "))
        .map(str::to_owned)
        .collect();
    assert_eq!(
        notes,
        [
            decision_flags[0],
            decision_flags[1],
            "debate_round_judgments (id 1): score: NaN is not a finite number",
            "debate_round_judgments (id 1): round_index: -5 is outside 1..=10000",
            "debate_operator_actions (h, 20000): round_index: 20000 is outside 1..=10000",
        ]
    );

    let csv = crate::common::gavel()
        .args(["export", "--format", "csv", "--db", &url])
        .output()
        .unwrap();
    let csv = String::from_utf8(csv.stdout).unwrap();
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let rounds_and_scores: Vec<(String, String)> = reader
        .records()
        .map(|record| {
            let record = record.unwrap();
            (record[2].to_owned(), record[6].to_owned())
        })
        .collect();
    assert_eq!(
        rounds_and_scores,
        [
            ("2147483647".into(), String::new()),
            ("-5".into(), "'NaN".into()),
            ("20000".into(), String::new()),
        ]
    );
}

// ---------------------------------------------------------------- exports

fn row() -> ExportRow {
    ExportRow {
        context: None,
        table: "debate_round_judgments",
        session_id: "=cmd|' /C calc'!A0".into(),
        round_index: Some(2),
        at: Some("2026-11-23T10:00:00+00:00".into()),
        decision: Some("stop".into()),
        agent_persona: Some("+skeptic".into()),
        score: Some(-0.5),
        judge_model: Some("@judge\u{1b}]0;owned\u{7}".into()),
        pmids: vec![PmidCheck {
            pmid: "-12345".into(),
            verified: true,
        }],
        action: None,
        persona: None,
        operator: Some("\tops".into()),
        operator_role: Some("@role".into()),
        note: Some("\rline one\nline\ttwo\u{2028}\u{200b}\u{9b}31m".into()),
        reasons: vec!["=1+1".into(), "fine".into()],
        signals: None,
        issues: vec!["debate_round_judgments (id 9): score: -0.5 is outside 0..=1".into()],
    }
}

#[test]
fn csv_cells_a_spreadsheet_would_run_get_a_quote_and_controls_are_shown() {
    let mut out = Vec::new();
    assert_eq!(
        export::write(vec![row()], Format::Csv, &mut out).unwrap(),
        1
    );
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "table,session_id,round_index,at,decision,agent_persona,score,judge_model,pmids,action,\
         persona,operator,operator_role,note,reasons,signal_json,issues\n\
         debate_round_judgments,'=cmd|' /C calc'!A0,2,2026-11-23T10:00:00+00:00,stop,'+skeptic,\
         -0.5,'@judge␛]0;owned␇,'-12345:true,,,'\tops,'@role,\"'␍line one\nline\ttwo���31m\",\
         '=1+1 | fine,,debate_round_judgments (id 9): score: -0.5 is outside 0..=1\n"
    );
}

#[test]
fn rows_of_several_databases_carry_their_context_first_and_rows_of_one_do_not() {
    let of = |context: Option<&str>| ExportRow {
        context: context.map(str::to_owned),
        issues: Vec::new(),
        ..row()
    };
    let written = |rows: Vec<ExportRow>, format| {
        let mut out = Vec::new();
        export::write(rows, format, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    };
    let several = written(vec![of(Some("prod")), of(Some("staging"))], Format::Csv);
    assert!(
        several.starts_with("context,table,session_id,"),
        "{several}"
    );
    let mut table = csv::Reader::from_reader(several.as_bytes());
    let cells: Vec<(String, String)> = table
        .records()
        .map(|r| {
            let r = r.unwrap();
            (r[0].to_owned(), r[1].to_owned())
        })
        .collect();
    assert_eq!(
        cells,
        [
            ("prod".into(), "debate_round_judgments".into()),
            ("staging".into(), "debate_round_judgments".into())
        ]
    );
    let one = written(vec![of(None)], Format::Csv);
    assert!(one.starts_with("table,session_id,"), "{one}");
    assert!(!one.contains("context"), "{one}");

    let json = written(vec![of(Some("prod"))], Format::Jsonl);
    let parsed: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(parsed["context"], "prod");
    let json = written(vec![of(None)], Format::Jsonl);
    let parsed: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(parsed.get("context").is_none(), "{json}");
}

#[test]
fn a_formula_behind_whitespace_gets_a_quote_too() {
    for (text, shown) in [
        (" =1+1", "' =1+1"),
        ("\u{a0}+cmd", "'\u{a0}+cmd"),
        ("\n-2", "'\n-2"),
        ("  \u{2003}@SUM(A1)", "'  \u{2003}@SUM(A1)"),
        (" plain", " plain"),
        ("\u{a0}a=b", "\u{a0}a=b"),
    ] {
        assert_eq!(export::cell(text), shown, "{text:?}");
    }
}

#[test]
fn a_score_that_is_not_finite_is_written_as_text() {
    let rows = [f64::NAN, f64::NEG_INFINITY, f64::INFINITY, 0.25]
        .map(|score| ExportRow {
            score: Some(score),
            issues: Vec::new(),
            ..row()
        })
        .to_vec();
    let mut out = Vec::new();
    export::write(rows, Format::Csv, &mut out).unwrap();
    let scores: Vec<String> = String::from_utf8(out)
        .unwrap()
        .lines()
        .filter(|line| line.starts_with("debate_round_judgments,"))
        .map(|line| line.split(',').nth(6).unwrap().to_owned())
        .collect();
    assert_eq!(scores, ["'NaN", "'-inf", "'inf", "0.25"]);
}

#[test]
fn a_safe_cell_is_left_as_it_is() {
    for text in ["", "plain words", "a=b", "x-1", "ünïcødé 🐟", "line\nbreak"] {
        assert_eq!(export::cell(text), text);
    }
}

#[test]
fn jsonl_escapes_what_could_act_on_a_terminal_and_keeps_the_data_exact() {
    let mut out = Vec::new();
    export::write(vec![row()], Format::Jsonl, &mut out).unwrap();
    let line = String::from_utf8(out).unwrap();
    for raw in ['\u{1b}', '\u{7}', '\r', '\u{2028}', '\u{200b}', '\u{9b}'] {
        assert!(!line.contains(raw), "{raw:?} written raw: {line:?}");
    }
    assert!(line.contains(r"\u2028\u200b\u009b31m"), "{line}");
    assert_eq!(line.matches('\n').count(), 1, "one line a row");
    let parsed: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(
        parsed["note"],
        "\rline one\nline\ttwo\u{2028}\u{200b}\u{9b}31m"
    );
    assert_eq!(parsed["judge_model"], "@judge\u{1b}]0;owned\u{7}");
}

// ---------------------------------------------------------------- text that reaches a terminal

/// The characters the issue named, beyond C0, DEL and C1: separators, bidirectional and
/// zero-width characters, the byte order mark, a tag.
const HIDDEN: &[char] = &[
    '\u{2028}',
    '\u{2029}',
    '\u{200b}',
    '\u{200c}',
    '\u{200d}',
    '\u{200e}',
    '\u{200f}',
    '\u{202a}',
    '\u{202e}',
    '\u{2060}',
    '\u{2066}',
    '\u{2069}',
    '\u{feff}',
    '\u{e0041}',
    '\u{ad}',
];

proptest! {
    #[test]
    fn inert_text_keeps_printable_characters_and_replaces_the_rest(
        text in prop::collection::vec(
            prop_oneof![any::<char>(), prop::sample::select(HIDDEN)],
            0..64,
        ).prop_map(|chars| chars.into_iter().collect::<String>())
    ) {
        let shown = inert(&text);
        prop_assert_eq!(shown.chars().count(), text.chars().count(), "one for one");
        for (before, after) in text.chars().zip(shown.chars()) {
            prop_assert!(!after.is_control() && !HIDDEN.contains(&after), "{:?}", after);
            if before.is_alphanumeric() || before.is_ascii_graphic() || before == ' ' {
                prop_assert_eq!(after, before);
            }
        }
    }

    /// The views' borrowing forms show what the definitions do, borrowing only text already
    /// on one line and inert, or already fitting.
    #[test]
    fn text_borrowed_when_already_shown_as_is_equals_text_made_so(
        text in prop::collection::vec(
            prop_oneof![any::<char>(), prop::sample::select(HIDDEN), Just(' '), Just('\n'), Just('a')],
            0..24,
        ).prop_map(|chars| chars.into_iter().collect::<String>()),
        width in 0usize..30,
    ) {
        use std::borrow::Cow;
        use gavel::text::{fitted, on_one_line};
        let made = inert(&text.split_whitespace().collect::<Vec<_>>().join(" "));
        let shown = on_one_line(&text);
        prop_assert_eq!(shown.as_ref(), made.as_str());
        prop_assert_eq!(matches!(shown, Cow::Borrowed(_)), made == text);
        let cut = fitted(&made, width);
        prop_assert_eq!(matches!(cut, Cow::Borrowed(_)), cut.as_ref() == made.as_str());
    }
}

#[test]
fn separators_and_zero_width_characters_never_reach_the_screen() {
    use common::{demo_model, key, select};
    use gavel::console::app::{Event, update};
    use gavel::domain::Change;

    let (mut model, _) = demo_model();
    let hidden: String = HIDDEN.iter().collect();
    let mut session = model.held(0).unwrap().session.clone();
    session.question = format!("Topic{hidden}end");
    let mut turn = model.held(0).unwrap().turns[0].clone();
    turn.content = format!("para\u{2029}graph line\u{2028}sep {hidden}");
    let id = session.id.clone();
    update(&mut model, Event::Store(Box::new(Change::Session(session))));
    update(&mut model, Event::Store(Box::new(Change::Turn(turn))));
    let list = common::screen(&model);
    // On one line (the list) the two separators are white space; the rest show as �.
    let one_line = format!("Topic {}end", "�".repeat(HIDDEN.len() - 2));
    assert!(list.contains(&one_line), "{list}");
    select(&mut model, &id);
    update(&mut model, key(crossterm::event::KeyCode::Enter));
    update(&mut model, key(crossterm::event::KeyCode::Enter));
    let transcript = common::screen(&model);
    assert!(transcript.contains("para�graph line�sep"), "{transcript}");
    for screen in [&list, &transcript] {
        assert!(
            !screen
                .chars()
                .any(|c| HIDDEN.contains(&c) || (c.is_control() && c != '\n')),
            "an invisible character reached the screen:\n{screen}"
        );
    }
}

#[test]
fn ctrl_z_cannot_be_bound_to_an_action() {
    let refused = "ctrl-z".parse::<gavel::console::app::Key>().unwrap_err();
    assert_eq!(refused, "ctrl-z always suspends and cannot be bound");
}

// ---------------------------------------------------------------- simulate, database gone

#[test]
fn simulate_whose_database_goes_away_exits_non_zero_naming_the_debates_left_unfinished() {
    // A server of its own, which the test stops.
    let mut server = LocalServer::start().expect("a throwaway PostgreSQL must start");
    sql(&server.url("postgres"), "CREATE DATABASE gavel");
    let url = server.url("gavel");
    common::migrate_with_the_binary(&url);
    let dir = std::env::temp_dir().join(format!("gavel-hardening-sim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bundled = std::fs::read_to_string("fixtures/gated_converges_round3.jsonl").unwrap();
    let mut fixtures = Vec::new();
    for id in ["first-debate", "second-debate"] {
        let path = dir.join(format!("{id}.jsonl"));
        let text = bundled.replace(
            "\"id\": \"fasting-insulin-0412\"",
            &format!("\"id\": \"{id}\""),
        );
        std::fs::write(&path, text).unwrap();
        fixtures.push(path);
    }
    let config = dir.join("config.toml");
    std::fs::write(
        &config,
        "[simulator]\nround_interval_secs = 0.1\nturn_interval_secs = 0.0\ngated_timeout_secs = 3600\n",
    )
    .unwrap();
    let logs = dir.join("logs");
    let mut child = crate::common::gavel()
        .args(["simulate", "--db", &url, "--config"])
        .arg(&config)
        .arg("--log-dir")
        .arg(&logs)
        .args(&fixtures)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();

    // Both gated debates wait on their first decision; then the server goes.
    let deadline = Instant::now() + Duration::from_secs(30);
    while query_ids(&url, "SELECT session_id FROM debate_round_decisions").len() < 2 {
        if Instant::now() > deadline || child.try_wait().unwrap().is_some() {
            let _ = child.kill();
            let output = child.wait_with_output().unwrap();
            panic!(
                "the debates never reached a decision: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    server.stop().unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(
            "gavel: the simulation stopped; debates left unfinished: first-debate, second-debate: "
        ),
        "{stderr}"
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(stdout.contains("first-debate round 1: "), "{stdout}");

    server.resume().unwrap();
    let running = query_ids(
        &url,
        "SELECT id FROM debate_sessions WHERE status = 'running' ORDER BY id",
    );
    assert_eq!(running, ["first-debate", "second-debate"]);
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------- the log

#[test]
fn a_session_id_with_escape_sequences_reaches_the_log_inert() {
    let url = migrated("escaped_log");
    sql(&url, &debate_sql("E'evil\\x1b[31m\\u009b2J'"));
    let tmux = Tmux::new();
    let logs = tmux.dir.join("logs");
    tmux.start(&format!(
        "{BINARY} watch --db '{url}' --operator carol --log-dir {}; echo status=$?; sleep 60",
        logs.display()
    ));
    tmux.wait_for("the debate", |s| s.contains("evil␛[31m�2J"));
    tmux.keys("a");
    tmux.wait_for("the confirmation", |s| s.contains("[y] confirm"));
    tmux.keys("y");
    tmux.wait_for("the recorded action", |s| s.contains("recorded: carol"));
    tmux.keys("q");
    tmux.wait_for("gavel to exit", |s| s.contains("status=0"));
    let log = std::fs::read_to_string(logs.join("gavel.log")).unwrap();
    assert!(log.contains("session=evil␛[31m�2J"), "{log}");
    assert!(
        !log.chars().any(|c| c.is_control() && c != '\n'),
        "a control character in the log: {log:?}"
    );
}
