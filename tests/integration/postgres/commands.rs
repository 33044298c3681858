//! The commands that read a database: `gavel calibrate --db`, `gavel trace` and `gavel export`
//! agree with the rows they read.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calibration_from_the_database_matches_the_recordings_it_was_played_from() {
    use gavel::calibrate::{self, RecordedDebate};
    use gavel::simulate::Fixture;

    let Database {
        target, mut client, ..
    } = migrated_database("calibrated").await;
    let fixtures: Vec<Fixture> = ["converges_round3", "verdict_changes_round5"]
        .iter()
        .map(|n| {
            Fixture::load(std::path::Path::new(&format!(
                "tests/data/calibration/{n}.jsonl"
            )))
            .unwrap()
        })
        .collect();
    play_into(&target, fixtures.clone()).await;
    // A running debate is not calibrated; an `off` debate written by plain SQL has no
    // decisions, so its signals are measured from its turns; a debate whose decisions hold
    // their signals needs no turns.
    client
        .batch_execute(
            "INSERT INTO debate_sessions (id, question, status, controller_mode, token_budget, personas) \
             VALUES ('still-going', 'q', 'running', 'shadow', 1000, '[\"a\"]'), \
                    ('fixed-loop', 'q', 'completed', 'off', 1000, '[\"a\"]'), \
                    ('decisions-only', 'q', 'completed', 'shadow', 1000, '[\"a\"]'); \
             INSERT INTO debate_round_decisions (session_id, round_index, decision, signal_json) VALUES \
             ('decisions-only', 1, 'continue_baseline', '{\"new_claims\": 4, \"verdict_split\": false, \"tokens_used\": 50}'); \
             INSERT INTO debate_rounds (session_id, round_number, agent_persona, content, tokens_used) VALUES \
             ('still-going', 1, 'a', 'Not yet.', 5), \
             ('fixed-loop', 1, 'a', 'Cats sleep a lot.\n\nVERDICT: yes', 10), \
             ('fixed-loop', 2, 'a', 'Dogs bark at night.\n\nVERDICT: yes', 20), \
             ('fixed-loop', 3, 'a', 'Dogs bark at night.\n\nVERDICT: yes', 30);",
        )
        .await
        .unwrap();

    let mut from_db = calibrate::from_database(
        &mut client,
        &Default::default(),
        &gavel::calibrate::Measuring::recorded(gavel::config::Config::default().signals.measure()),
        &gavel::progress::Progress::none(),
    )
    .await
    .unwrap();
    let in_session_order = texts(
        &client,
        "SELECT id FROM debate_sessions WHERE status <> 'running'",
    )
    .await;
    let ids: Vec<&str> = from_db.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(
        ids, in_session_order,
        "records come in the session rows' order"
    );
    from_db.sort_by(|a, b| a.id.cmp(&b.id));
    let ids: Vec<&str> = from_db.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "decisions-only",
            "fixed-loop",
            "salt-converges-r3",
            "salt-verdict-r5"
        ]
    );
    let from_files = calibrate::from_recordings(
        &fixtures,
        |f| {
            let config = std::sync::Arc::new(gavel::config::Config::default());
            gavel::simulate::play_in_shadow(f, config)
        },
        &gavel::calibrate::Measuring::recorded(gavel::config::Config::default().signals.measure()),
        &gavel::progress::Progress::none(),
    );
    assert_eq!(from_db[2..], from_files[..]);
    assert_eq!(from_db[2].labels.len(), 2, "the recorded labels came back");
    assert_eq!(from_db[0].rounds[0].signals.new_claims, 4);
    assert_eq!(from_db[0].tokens_after(1), 50);

    let fixed: &RecordedDebate = &from_db[1];
    assert_eq!(fixed.rounds.len(), 3);
    assert_eq!(fixed.rounds[2].signals.similarity, Some(1.0));
    assert_eq!(fixed.tokens_after(3), 60);
    let base = ControllerConfig::default();
    let current = calibrate::Setting::current(&base);
    let (settings, skipped) = calibrate::settings(&[], &current).unwrap();
    let report = calibrate::Report::run(&from_db, settings, skipped, &current, &base, true);
    let outcomes = report.rows[0].outcomes.as_ref().unwrap();
    let fixed_loop = outcomes
        .iter()
        .find(|o| o.session_id == "fixed-loop")
        .unwrap();
    assert_eq!((fixed_loop.rounds_used, fixed_loop.tokens_saved), (3, 0));
    assert_eq!(report.rows[0].tokens_saved, 6000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gavel_trace_agrees_with_the_database() {
    use gavel::simulate::Fixture;

    let Database {
        target,
        client,
        url,
        ..
    } = migrated_database("traced").await;
    let fixture = Fixture::bundled()
        .unwrap()
        .into_iter()
        .find(|f| f.session.id == "salt-substitutes-shadow")
        .unwrap();
    play_into(&target, vec![fixture]).await;

    let output = gavel_ok(&["trace", "salt-substitutes-shadow", "--json", "--db", &url]);
    let trace: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();

    let rows = client
        .query(
            "SELECT d.round_index, d.decision, (d.signal_json->>'similarity')::float8, \
                    a.operator, a.action \
             FROM debate_round_decisions d LEFT JOIN debate_operator_actions a \
               USING (session_id, round_index) \
             WHERE session_id = 'salt-substitutes-shadow' ORDER BY round_index",
            &[],
        )
        .await
        .unwrap();
    let rounds = trace["rounds"].as_array().unwrap();
    assert_eq!(rounds.len(), rows.len());
    for (round, row) in rounds.iter().zip(&rows) {
        assert_eq!(round["round"], row.get::<_, i32>(0));
        assert_eq!(round["decision"], row.get::<_, String>(1));
        assert_eq!(round["similarity"].as_f64(), row.get::<_, Option<f64>>(2));
        assert_eq!(
            round["action"]["operator"].as_str(),
            row.get::<_, Option<String>>(3).as_deref()
        );
        assert_eq!(
            round["action"]["action"].as_str(),
            row.get::<_, Option<String>>(4).as_deref()
        );
    }
    assert_eq!(rounds[2]["action"]["operator"], "ben");
    assert!(
        trace["ending"]
            .as_str()
            .unwrap()
            .starts_with("stopped at round 6: the orchestrator ended the fixed loop"),
        "{}",
        trace["ending"]
    );

    let missing = crate::common::gavel()
        .args(["trace", "no-such-debate", "--db", &url])
        .output()
        .unwrap();
    assert!(!missing.status.success());
    assert!(
        String::from_utf8_lossy(&missing.stderr).contains("no debate \"no-such-debate\""),
        "{}",
        String::from_utf8_lossy(&missing.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gavel_export_writes_a_time_range_as_csv_and_jsonl() {
    use gavel::simulate::Fixture;

    let Database {
        target,
        client,
        url,
        ..
    } = migrated_database("exported").await;
    let fixtures: Vec<Fixture> = Fixture::bundled()
        .unwrap()
        .into_iter()
        .filter(|f| {
            ["salt-substitutes-shadow", "fmt-melanoma-pd1"].contains(&f.session.id.as_str())
        })
        .collect();
    play_into(&target, fixtures).await;
    // Last year's rows, outside the range exported below.
    client
        .batch_execute(
            "INSERT INTO debate_round_decisions (session_id, round_index, decision, signal_json, decided_at) \
             VALUES ('old', 1, 'continue_baseline', '{}', now() - interval '1 year'); \
             INSERT INTO debate_operator_actions (session_id, round_index, action, decision, operator, note, created_at) \
             VALUES ('old', 1, 'accept', 'continue_baseline', 'zed', E'a\\x1b[2Jb', now() - interval '1 year');",
        )
        .await
        .unwrap();
    let count = |sql: &'static str| table_count(&client, sql);
    let recent = count(
        "SELECT (SELECT count(*) FROM debate_round_decisions WHERE decided_at > now() - interval '1 day') \
              + (SELECT count(*) FROM debate_round_judgments) \
              + (SELECT count(*) FROM debate_operator_actions WHERE created_at > now() - interval '1 day')",
    )
    .await;
    let all = count(
        "SELECT (SELECT count(*) FROM debate_round_decisions) + (SELECT count(*) FROM debate_round_judgments) \
              + (SELECT count(*) FROM debate_operator_actions)",
    )
    .await;
    assert_eq!(all, recent + 2);

    let since = (chrono::Utc::now() - chrono::Duration::days(1)).to_rfc3339();
    let dir = std::env::temp_dir().join(format!("gavel-export-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv_path = dir.join("audit.csv");
    gavel_ok(&[
        "export",
        "--db",
        &url,
        "--format",
        "csv",
        "--since",
        &since,
        "-o",
        csv_path.to_str().unwrap(),
    ]);
    let mut reader = csv::Reader::from_path(&csv_path).unwrap();
    let header: Vec<String> = reader
        .headers()
        .unwrap()
        .iter()
        .map(str::to_owned)
        .collect();
    assert_eq!(
        &header[..5],
        ["table", "session_id", "round_index", "at", "decision"]
    );
    let records: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(records.len() as i64, recent);
    assert!(records.iter().all(|r| &r[1] != "old"));
    let ben = records
        .iter()
        .find(|r| &r[0] == "debate_operator_actions" && &r[2] == "3")
        .expect("ben's override of round 3");
    assert_eq!(&ben[11], "ben");
    assert_eq!(&ben[4], "continue_baseline");
    let abort = records
        .iter()
        .find(|r| &r[0] == "debate_round_judgments" && &r[4] == "abort")
        .expect("the judge's abort");
    assert!(
        abort[8].contains(":false"),
        "an unverified PMID: {:?}",
        &abort[8]
    );

    // Everything, as JSON Lines on stdout: control characters escaped by JSON.
    let lines = exported_lines(&url);
    assert_eq!(lines.len() as i64, all);
    let old = lines.iter().find(|l| l["operator"] == "zed").unwrap();
    assert_eq!(old["note"], "a\u{1b}[2Jb");
    assert!(
        lines
            .iter()
            .any(|l| l["signals"]["similarity_threshold"] == 0.9)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A debate of twelve rounds is exported round by round, 1 to 12 (numbers, not the text read:
/// in text, round 10 comes before round 9), whatever order its rows were written in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gavel_export_lists_a_debates_rulings_in_round_order() {
    let Database { client, url, .. } = migrated_database("export_order").await;
    client
        .batch_execute(
            "INSERT INTO debate_sessions (id, question) VALUES ('long', 'Twelve rounds?'); \
             INSERT INTO debate_round_decisions (session_id, round_index, decision, signal_json, decided_at) \
             SELECT 'long', r, 'continue_baseline', '{}', '2026-11-01T00:00:00Z' \
             FROM generate_series(12, 1, -1) AS r; \
             INSERT INTO debate_round_judgments (session_id, round_index, agent_persona, decision, score, created_at) \
             SELECT 'long', r, 'skeptic', 'continue', 0.9, '2026-11-01T00:00:00Z' \
             FROM generate_series(12, 1, -1) AS r;",
        )
        .await
        .unwrap();
    let lines = exported_lines(&url);
    let rounds = |table: &str| -> Vec<i64> {
        lines
            .iter()
            .filter(|l| l["table"] == table && l["session_id"] == "long")
            .map(|l| l["round_index"].as_i64().unwrap())
            .collect()
    };
    let in_order: Vec<i64> = (1..=12).collect();
    assert_eq!(rounds("debate_round_decisions"), in_order);
    assert_eq!(rounds("debate_round_judgments"), in_order);
}

/// Plays `fixture` to its end in its own mode, the way the orchestrator stand-in does with no
/// pauses: a gated decision the recording does not resolve times out.
fn played(fixture: gavel::simulate::Fixture) -> gavel::domain::Debate {
    use gavel::simulate::{DebateRun, Ids};
    let config = std::sync::Arc::new(gavel::config::Config::default());
    let mut debate = gavel::domain::Debate::new(&fixture.session.id);
    let mut run = DebateRun::new(fixture, config, Ids::default());
    run.start().into_iter().for_each(|c| debate.apply(c));
    while !run.is_finished() {
        let changes = match run.timeout_action() {
            Some(timeout) => {
                let mut changes = vec![gavel::domain::Change::Action(timeout.clone())];
                changes.extend(run.resolve(&timeout));
                changes
            }
            None => run.play_round(),
        };
        changes.into_iter().for_each(|c| debate.apply(c));
    }
    debate
}

/// What a debate decided, round by round: the controller's decision with its signals, and the
/// action on it (kind, decision standing, operator, note); and how it ended.
fn decided(debate: &gavel::domain::Debate) -> (Vec<String>, String) {
    let rounds = debate
        .rounds()
        .iter()
        .map(|row| {
            let decision = row
                .decision
                .map(|d| format!("{} {:?}", d.decision, d.signals));
            let action = row
                .action
                .map(|a| format!("{} {} {} {:?}", a.action, a.decision, a.operator, a.note));
            let rulings: Vec<String> = row.judgments.iter().map(|j| j.decision.to_wire()).collect();
            format!("round {}: {decision:?} {action:?} {rulings:?}", row.number)
        })
        .collect();
    let session = &debate.session;
    (
        rounds,
        format!(
            "{} after {:?} rounds, {} tokens",
            session.status, session.num_rounds, session.tokens_used
        ),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_bundled_fixture_exported_as_a_recording_plays_to_the_same_decisions() {
    use gavel::simulate::Fixture;

    let Database {
        target,
        client,
        url,
        ..
    } = migrated_database("recorded").await;
    let fixtures = Fixture::bundled().unwrap();
    play_into(&target, fixtures.clone()).await;
    let dir = std::env::temp_dir().join(format!("gavel-recordings-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let gavel = |args: &[&str]| String::from_utf8(gavel_ok(args).stdout).unwrap();
    let mut args = vec!["export", "--db", &url, "--format", "recording"];
    for fixture in &fixtures {
        args.extend(["--debate", &fixture.session.id]);
    }
    let out = dir.to_str().unwrap();
    args.extend(["-o", out]);
    gavel(&args);

    let checked = gavel(&["check", out]);
    assert_eq!(checked.lines().count(), fixtures.len(), "{checked}");
    assert!(checked.lines().all(|l| l.contains(": ok (")), "{checked}");

    for fixture in &fixtures {
        let id = &fixture.session.id;
        let exported = Fixture::load(&dir.join(format!("{id}.jsonl"))).unwrap();
        let rows = gavel::store::postgres::history(&client, id, &Default::default())
            .await
            .unwrap();
        let stored: gavel::domain::Debates = rows.into_iter().collect();
        let stored = stored.get_by_id(id).unwrap();
        assert!(
            !stored.decisions.is_empty()
                || fixture.session.controller_mode == gavel::domain::ControllerMode::Off
        );
        assert_eq!(decided(&played(exported)), decided(stored), "{id}");
    }

    let from_files = gavel(&["calibrate", out, "--json", "--per-debate"]);
    let from_db = gavel(&["calibrate", "--db", &url, "--json", "--per-debate"]);
    // Where the debates came from (and their window: recordings carry no times) differs.
    let sorted = |json: &str| {
        let mut report: serde_json::Value = serde_json::from_str(json).unwrap();
        let provenance = report.as_object_mut().unwrap();
        assert!(provenance.remove("source").is_some() && provenance.remove("window").is_some());
        for row in report["rows"].as_array_mut().unwrap() {
            if let Some(outcomes) = row["outcomes"].as_array_mut() {
                outcomes.sort_by_key(|o| o["session_id"].as_str().unwrap().to_owned());
            }
        }
        report
    };
    assert_eq!(sorted(&from_files), sorted(&from_db));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A statement the server refuses is reported in the server's own words, not the driver's bare
/// "db error": `gavel export` of a database without the contract's tables says which relation
/// is missing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_statement_is_reported_in_the_servers_words() {
    let Database { url, .. } = fresh_database("uncontracted").await;
    let output = crate::common::gavel()
        .args(["export", "--db", &url])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(
        stderr.contains("does not exist") && stderr.contains("debate_"),
        "the server's message names the missing table: {stderr}"
    );
    assert!(!stderr.contains("db error"), "{stderr}");
}

/// Runs gavel with `args`, which must succeed (else its stderr is the failure); its output.
fn gavel_ok(args: &[&str]) -> std::process::Output {
    let output = crate::common::gavel().args(args).output().unwrap();
    assert!(
        output.status.success(),
        "gavel {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// `gavel export` of everything in the database at `url`, as JSON Lines, a value each.
fn exported_lines(url: &str) -> Vec<serde_json::Value> {
    String::from_utf8(gavel_ok(&["export", "--db", url]).stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}
