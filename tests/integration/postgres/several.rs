//! `gavel export`, `trace` and `calibrate` over two databases holding the same debate ids: the
//! output names each row's and each debate's context, the same id in both stays two, and a
//! database that cannot be reached fails the command, naming its context. One database's output
//! is as it was before contexts.

use super::*;
use crate::common::{Ran, gavel, run_to_end, scratch_home};

/// A connection string no server answers: connection refused at once.
const DOWN: &str = "down=host=127.0.0.1 port=1 dbname=gone user=postgres connect_timeout=5";

/// Two migrated databases with the same recorded debate (salt-substitutes-shadow), and one
/// more debate in the second (fmt-melanoma-pd1): their connection strings and names.
async fn two() -> ((String, String), (String, String)) {
    use gavel::simulate::Fixture;
    let bundled = Fixture::bundled().unwrap();
    let pick = |ids: &[&str]| -> Vec<Fixture> {
        bundled
            .iter()
            .filter(|f| ids.contains(&f.session.id.as_str()))
            .cloned()
            .collect()
    };
    let a = migrated_database("ctx_a").await;
    let b = migrated_database("ctx_b").await;
    play_into(&a.target, pick(&["salt-substitutes-shadow"])).await;
    play_into(
        &b.target,
        pick(&["salt-substitutes-shadow", "fmt-melanoma-pd1"]),
    )
    .await;
    ((a.url, a.name), (b.url, b.name))
}

/// Runs gavel with `args`; what it did.
fn ran(args: &[&str]) -> Ran {
    run_to_end(gavel().args(args))
}

/// [`ran`], which must succeed.
fn ok(args: &[&str]) -> Ran {
    let ran = ran(args);
    assert!(ran.ok, "gavel {args:?}: {}", ran.stderr);
    ran
}

/// Each line of JSON Lines, a value.
fn lines(text: &str) -> Vec<serde_json::Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_export_of_two_databases_names_each_rows_context() {
    let ((url_a, name_a), (url_b, _)) = two().await;
    let (db_a, db_b) = (format!("a={url_a}"), format!("b={url_b}"));
    let only_a = lines(&ok(&["export", "--db", &url_a]).stdout);
    let only_b = lines(&ok(&["export", "--db", &url_b]).stdout);
    assert!(only_a.iter().all(|l| l.get("context").is_none()));

    let both = ok(&["export", "--db", &db_a, "--db", &db_b]);
    let both_lines = lines(&both.stdout);
    assert_eq!(both_lines.len(), only_a.len() + only_b.len());
    let of = |context: &str| -> Vec<serde_json::Value> {
        both_lines
            .iter()
            .filter(|l| l["context"] == context)
            .map(|l| {
                let mut l = l.clone();
                l.as_object_mut().unwrap().remove("context");
                l
            })
            .collect()
    };
    assert_eq!(of("a"), only_a, "a's rows, as a alone exports them");
    assert_eq!(of("b"), only_b, "b's rows, as b alone exports them");
    let salt = |context: &str| {
        both_lines
            .iter()
            .filter(|l| l["context"] == context && l["session_id"] == "salt-substitutes-shadow")
            .count()
    };
    assert!(
        salt("a") > 0 && salt("a") == salt("b"),
        "the same id in both"
    );
    assert!(
        both.stderr.contains(&format!(
            "exported {} rows: {} from context a (",
            both_lines.len(),
            only_a.len()
        )),
        "{}",
        both.stderr
    );

    // CSV: the context is the first column; unnamed, a context is named after its database.
    let csv = ok(&["export", "--db", &url_a, "--db", &db_b, "--format", "csv"]).stdout;
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    assert_eq!(&reader.headers().unwrap()[0], "context");
    assert_eq!(&reader.headers().unwrap()[1], "table");
    let contexts: std::collections::BTreeSet<String> =
        reader.records().map(|r| r.unwrap()[0].to_owned()).collect();
    assert_eq!(
        contexts.into_iter().collect::<Vec<_>>(),
        [String::from("b"), name_a]
    );
    let one = ok(&["export", "--db", &url_a, "--format", "csv"]).stdout;
    assert!(one.starts_with("table,session_id,"), "{one}");

    // A database that cannot be reached fails the export, naming it; nothing is written.
    let failed = ran(&["export", "--db", &db_a, "--db", DOWN]);
    assert!(!failed.ok);
    assert!(failed.stdout.is_empty(), "{}", failed.stdout);
    assert!(
        failed
            .stderr
            .starts_with("gavel: context down (127.0.0.1:1/gone): "),
        "{}",
        failed.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_config_s_contexts_are_exported_together_and_one_by_name_alone() {
    let ((url_a, _), (url_b, _)) = two().await;
    let dir = scratch_home().join("several-config");
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("config.toml");
    let quoted = |url: &str| url.replace('\\', "\\\\").replace('"', "\\\"");
    std::fs::write(
        &config,
        format!(
            "[[contexts]]\nname = \"left\"\ndb = \"{}\"\n\n[[contexts]]\nname = \"right\"\ndb = \"{}\"\n",
            quoted(&url_a),
            quoted(&url_b)
        ),
    )
    .unwrap();
    let config = config.to_str().unwrap();
    let all = lines(&ok(&["--config", config, "export"]).stdout);
    let named: std::collections::BTreeSet<&str> =
        all.iter().map(|l| l["context"].as_str().unwrap()).collect();
    assert_eq!(named.into_iter().collect::<Vec<_>>(), ["left", "right"]);
    let right = lines(&ok(&["--config", config, "export", "--db", "right"]).stdout);
    assert_eq!(right, lines(&ok(&["export", "--db", &url_b]).stdout));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trace_shows_the_debate_in_each_database_that_holds_it() {
    let ((url_a, _), (url_b, _)) = two().await;
    let (db_a, db_b) = (format!("a={url_a}"), format!("b={url_b}"));
    let id = "salt-substitutes-shadow";
    let alone: serde_json::Value =
        serde_json::from_str(&ok(&["trace", id, "--json", "--db", &url_a]).stdout).unwrap();
    assert!(alone.get("context").is_none(), "one database: as ever");

    let both: serde_json::Value =
        serde_json::from_str(&ok(&["trace", id, "--json", "--db", &db_a, "--db", &db_b]).stdout)
            .unwrap();
    let both = both.as_array().unwrap();
    assert_eq!(both.len(), 2);
    assert_eq!(both[0]["context"], "a");
    assert_eq!(both[1]["context"], "b");
    let mut first = both[0].clone();
    first.as_object_mut().unwrap().remove("context");
    assert_eq!(first, alone);

    let text = ok(&["trace", id, "--db", &db_a, "--db", &db_b]).stdout;
    let a_at = text.find("context a (").expect(&text);
    let b_at = text.find("context b (").expect(&text);
    assert!(a_at == 0 && b_at > a_at, "{text}");
    assert_eq!(text.matches(&format!("{id} · ")).count(), 2, "{text}");

    // In b alone: one trace, still under its context.
    let in_b: serde_json::Value = serde_json::from_str(
        &ok(&[
            "trace",
            "fmt-melanoma-pd1",
            "--json",
            "--db",
            &db_a,
            "--db",
            &db_b,
        ])
        .stdout,
    )
    .unwrap();
    let in_b = in_b.as_array().unwrap();
    assert_eq!(in_b.len(), 1);
    assert_eq!(in_b[0]["context"], "b");
    assert_eq!(in_b[0]["session_id"], "fmt-melanoma-pd1");

    let missing = ran(&["trace", "nowhere", "--db", &db_a, "--db", &db_b]);
    assert!(!missing.ok);
    assert!(
        missing
            .stderr
            .contains("no debate \"nowhere\" in debate_sessions of context a (")
            && missing.stderr.contains(", context b ("),
        "{}",
        missing.stderr
    );
    let down = ran(&["trace", id, "--db", &db_a, "--db", DOWN]);
    assert!(!down.ok);
    assert!(
        down.stderr
            .starts_with("gavel: context down (127.0.0.1:1/gone): "),
        "{}",
        down.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recordings_of_two_databases_go_to_a_folder_each() {
    let ((url_a, _), (url_b, _)) = two().await;
    let (db_a, db_b) = (format!("a={url_a}"), format!("b={url_b}"));
    let dir = scratch_home().join("several-recordings");
    let out = dir.to_str().unwrap();
    let args = |more: &[&str]| -> Vec<String> {
        let mut args: Vec<String> = [
            "export",
            "--format",
            "recording",
            "--db",
            &db_a,
            "--db",
            &db_b,
        ]
        .map(String::from)
        .to_vec();
        args.extend(more.iter().map(|s| s.to_string()));
        args
    };
    let refused = run_to_end(gavel().args(args(&["--debate", "salt-substitutes-shadow"])));
    assert!(!refused.ok);
    assert!(
        refused.stderr.contains("is in 2 of the databases")
            && refused.stderr.contains("--output DIR"),
        "{}",
        refused.stderr
    );
    let written = run_to_end(gavel().args(args(&[
        "--debate",
        "salt-substitutes-shadow",
        "--debate",
        "fmt-melanoma-pd1",
        "-o",
        out,
    ])));
    assert!(written.ok, "{}", written.stderr);
    for path in [
        "a/salt-substitutes-shadow.jsonl",
        "b/salt-substitutes-shadow.jsonl",
        "b/fmt-melanoma-pd1.jsonl",
    ] {
        assert!(dir.join(path).is_file(), "{path}: {}", written.stderr);
    }
    assert!(!dir.join("a/fmt-melanoma-pd1.jsonl").exists());
    assert_eq!(
        std::fs::read(dir.join("a/salt-substitutes-shadow.jsonl")).unwrap(),
        std::fs::read(dir.join("b/salt-substitutes-shadow.jsonl")).unwrap(),
        "the same debate played into both"
    );
    ok(&["check", &dir.join("b").display().to_string()]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_calibration_of_two_databases_counts_each_and_its_evidence_says_so() {
    let ((url_a, _), (url_b, _)) = two().await;
    let (db_a, db_b) = (format!("a={url_a}"), format!("b={url_b}"));
    let grid = ["--grid", "similarity=0.8,0.9"];
    let calibrate = |dbs: &[&str], more: &[&str]| {
        let mut args = vec!["calibrate"];
        for db in dbs {
            args.extend(["--db", db]);
        }
        args.extend(grid);
        args.extend(more);
        ok(&args)
    };
    let json = |ran: Ran| -> serde_json::Value { serde_json::from_str(&ran.stdout).unwrap() };
    let alone = json(calibrate(&[&url_a], &["--json"]));
    assert!(alone.get("contexts").is_none(), "one database: as ever");
    assert_eq!(alone["debates"], 1);

    let both_run = calibrate(&[&db_a, &db_b], &["--json", "--per-debate"]);
    let text = both_run.stdout.clone();
    let both = json(both_run);
    assert_eq!(both["debates"], 3);
    let contexts = both["contexts"].as_array().unwrap();
    assert_eq!(contexts.len(), 2);
    assert_eq!(
        (&contexts[0]["name"], contexts[0]["debates"].as_u64()),
        (&serde_json::Value::from("a"), Some(1))
    );
    assert_eq!(
        (&contexts[1]["name"], contexts[1]["debates"].as_u64()),
        (&serde_json::Value::from("b"), Some(2))
    );
    assert!(
        both["source"]
            .as_str()
            .unwrap()
            .starts_with("the finished debates of 2 databases: context a ("),
        "{}",
        both["source"]
    );
    let ids: std::collections::BTreeSet<&str> = both["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|row| row["outcomes"].as_array())
        .expect("--per-debate: outcomes")
        .iter()
        .map(|o| o["session_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids.into_iter().collect::<Vec<_>>(),
        [
            "a:salt-substitutes-shadow",
            "b:fmt-melanoma-pd1",
            "b:salt-substitutes-shadow"
        ],
        "the same id in both stays two debates"
    );

    // The evidence of a version published from it names each context and its count; from one
    // database, the evidence is as before.
    let dir = scratch_home().join("several-calibration");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("both.json");
    std::fs::write(&file, &text).unwrap();
    let publish = |file: &std::path::Path| -> serde_json::Value {
        let ran = ok(&[
            "settings",
            "publish",
            "--debate-type",
            "standard",
            "--from-calibration",
            file.to_str().unwrap(),
            "--pick",
            "1",
            "--reason",
            "both databases",
            "--json",
            "--db",
            &url_a,
        ]);
        serde_json::from_str(&ran.stdout).unwrap()
    };
    let evidence = publish(&file)["evidence"].clone();
    assert_eq!(evidence["contexts"], both["contexts"]);
    assert_eq!(evidence["debates"], 3);
    let one = dir.join("one.json");
    std::fs::write(&one, serde_json::to_string(&alone).unwrap()).unwrap();
    let evidence = publish(&one)["evidence"].clone();
    assert!(evidence.get("contexts").is_none(), "{evidence}");
    assert_eq!(evidence["debates"], 1);
    let shown = ok(&["settings", "show", "1", "--db", &url_a]).stdout;
    assert!(shown.contains("from contexts a 1, b 2"), "{shown}");

    // The HTML report says which contexts, and each one's published settings.
    let html = dir.join("report.html");
    calibrate(&[&db_a, &db_b], &["--html", html.to_str().unwrap()]);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("the finished debates of 2 databases: context a ("),
        "{page}"
    );
    assert!(page.contains("Published controller settings in context a"));
    assert!(page.contains("Published controller settings in context b"));

    let down = ran(&["calibrate", "--db", &db_a, "--db", DOWN, "--json"]);
    assert!(!down.ok);
    assert!(down.stdout.is_empty(), "{}", down.stdout);
    assert!(
        down.stderr
            .starts_with("gavel: context down (127.0.0.1:1/gone): "),
        "{}",
        down.stderr
    );
}
