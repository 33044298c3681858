//! The controller settings' history (`gavel_controller_settings`) and `gavel settings`, against a
//! real PostgreSQL: a rollout splits debates by the documented hash (the database's, gavel's
//! and an independent SHA-256 agree); the simulator plays and stamps each debate under what
//! `gavel_settings_for` gives it, and a rollback spares running debates; the history is
//! append-only for every role and only publishers write it; two publishers at once each get a
//! whole version numbered once, in the order they were written; bad input writes nothing and
//! says why in one line; a calibration's row becomes a version with its evidence, which the
//! HTML report shows. The command line's text parsers are property-tested.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gavel::domain::{Arm, DEFAULTS_VERSION, MeasureKind, SettingsValues, arm_of};
use gavel::store::postgres::{Publication, publish, settings_for, settings_history};
use proptest::prelude::*;
use sha2::Digest;

use super::*;
use crate::common::{Ran, gavel, run_to_end};
use common::pg::{url_as, with_logins};

/// `gavel settings <args> --db <url>`.
fn settings(url: &str, args: &[&str]) -> Ran {
    run_to_end(gavel().arg("settings").args(args).args(["--db", url]))
}

/// [`settings`], which must succeed.
fn settings_ok(url: &str, args: &[&str]) -> Ran {
    let ran = settings(url, args);
    assert!(ran.ok, "gavel settings {args:?}: {}", ran.stderr);
    ran
}

/// [`settings`] with `--json`, which must succeed: the version it printed.
fn version_json(url: &str, args: &[&str]) -> serde_json::Value {
    let ran = settings_ok(url, &[args, &["--json"]].concat());
    serde_json::from_str(&ran.stdout).unwrap()
}

/// Publishes `values` (options) for `debate_type` to `share` percent: the new version's number.
fn published(url: &str, debate_type: &str, share: &str, values: &[&str]) -> i64 {
    let args = [
        &["publish", "--debate-type", debate_type, "--share", share][..],
        values,
        &["--reason", "a test"],
    ]
    .concat();
    version_json(url, &args)["version"].as_i64().unwrap()
}

/// How many versions the history holds.
async fn versions(client: &Client) -> i64 {
    table_count(client, "SELECT count(*) FROM gavel_controller_settings").await
}

/// The bucket of `id` by the documented definition, with another SHA-256 than gavel's.
fn independent_bucket(id: &str) -> u32 {
    let digest = sha2::Sha256::digest(id.as_bytes());
    u32::from_be_bytes([digest[0], digest[1], digest[2], digest[3]]) % 10_000
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_30_percent_rollout_splits_debates_by_the_documented_hash() {
    let server = server();
    let owner = with_logins(&server, "split", &[], &[]).await;
    owner.batch_execute("CREATE ROLE dana LOGIN").await.unwrap();
    let granted =
        run_to_end(gavel().args(["grant", "--db", &server.url("split"), "--publisher", "dana"]));
    assert!(granted.ok, "{}", granted.stderr);
    assert_eq!(granted.stdout.lines().next(), Some("dana: gavel_publisher"));

    let dana = url_as(&server, "split", "dana");
    let written = version_json(
        &dana,
        &[
            "publish",
            "--debate-type",
            "standard",
            "--share",
            "30",
            "--mode",
            "enabled",
            "--similarity",
            "0.85",
            "--reason",
            "week 47",
        ],
    );
    let canary = written["version"].as_i64().unwrap();
    assert_eq!(written["published_by"], "dana", "stamped by the database");
    assert_eq!(written["share_bp"], 3000);
    assert_eq!(written["canary_version"], canary);
    assert_eq!(written["stable_version"], serde_json::Value::Null);
    assert_eq!(
        written["what"],
        "published to 30% of debates (the rest on the controller's defaults)"
    );

    let rows = owner
        .query(
            "SELECT s.id, f.version, f.arm, gavel_settings_bucket(s.id) \
             FROM (SELECT 'debate-' || g AS id FROM generate_series(1, 2000) AS g) AS s, \
                  LATERAL gavel_settings_for(s.id, 'standard') AS f",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(rows.len(), 2000);
    let mut canaries = 0;
    for row in &rows {
        let id: String = row.get(0);
        let version: i64 = row.get(1);
        let arm: String = row.get(2);
        let bucket: i32 = row.get(3);
        assert_eq!(bucket as u32, gavel::domain::bucket(&id), "{id}");
        assert_eq!(bucket as u32, independent_bucket(&id), "{id}");
        assert_eq!(arm, arm_of(&id, 3000).as_str(), "{id}");
        let expected = match independent_bucket(&id) < 3000 {
            true => canary,
            false => DEFAULTS_VERSION,
        };
        assert_eq!(version, expected, "{id}");
        canaries += usize::from(arm == "canary");
    }
    // Binomial(2000, 0.3): 600 expected, sigma 20.5; 4 sigma either side.
    assert!((518..=682).contains(&canaries), "{canaries} canaries");
}

/// `n` copies of each bundled recording, each debate's id suffixed `-<copy>`, written to
/// `dir`.
fn copies(dir: &Path, n: usize) -> Vec<PathBuf> {
    std::fs::create_dir_all(dir).unwrap();
    let mut files = Vec::new();
    for fixture in gavel::simulate::Fixture::bundled().unwrap() {
        let text = std::fs::read_to_string(&fixture.source).unwrap();
        let id = format!("\"id\": \"{}\"", fixture.session.id);
        for copy in 0..n {
            let path = dir.join(format!("{}-{copy}.jsonl", fixture.session.id));
            let renamed = format!("\"id\": \"{}-{copy}\"", fixture.session.id);
            std::fs::write(&path, text.replacen(&id, &renamed, 1)).unwrap();
            files.push(path);
        }
    }
    files
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_simulator_plays_each_debate_under_its_arm_and_a_rollback_spares_running_ones() {
    let Database { client, url, .. } = migrated_database("rollout").await;
    // No debate has run yet: the configuration names the types (as an orchestrator's would).
    let dir = crate::common::scratch_home().join("rollout");
    let fixtures = copies(&dir.join("recordings"), 4);
    let config = dir.join("config.toml");
    std::fs::write(
        &config,
        "[simulator]\nround_interval_secs = 0\nturn_interval_secs = 0\ngated_timeout_secs = 0\n\
         [controller.max_rounds_by_type]\nfollow_up = 8\npanel = 8\nreview = 8\n",
    )
    .unwrap();
    let config_arg = config.display().to_string();
    // Every bundled type on a stable version with a canary at 30%, but review: a canary alone.
    let mut stable = BTreeMap::new();
    let mut canary = BTreeMap::new();
    for debate_type in ["follow_up", "panel", "review", "standard"] {
        let config = ["--config", config_arg.as_str()];
        if debate_type != "review" {
            let values = [&config[..], &["--mode", "shadow", "--measure", "lexical"]].concat();
            stable.insert(debate_type, published(&url, debate_type, "100", &values));
        }
        let canary_values = [
            "--mode",
            "enabled",
            "--max-rounds",
            "6",
            "--measure",
            "lexical",
        ];
        let values = [&config[..], &canary_values].concat();
        canary.insert(debate_type, published(&url, debate_type, "30", &values));
    }

    let simulated = run_to_end(
        gavel()
            .args(["simulate", "--db", &url, "--speed", "16", "--config"])
            .arg(&config)
            .arg("--log-dir")
            .arg(dir.join("logs"))
            .args(&fixtures),
    );
    assert!(simulated.ok, "{}", simulated.stderr);

    let sessions = client
        .query(
            "SELECT id, debate_type, settings_version, settings_arm, controller_mode, max_rounds \
             FROM debate_sessions ORDER BY id",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(sessions.len(), fixtures.len());
    let mut arms = BTreeMap::new();
    for row in &sessions {
        let id: String = row.get(0);
        let debate_type: String = row.get(1);
        let stamp: (Option<i64>, Option<String>) = (row.get(2), row.get(3));
        let arm = arm_of(&id, 3000);
        *arms.entry(arm).or_insert(0) += 1;
        let version = match arm {
            Arm::Canary => canary.get(debate_type.as_str()).copied(),
            Arm::Stable => stable.get(debate_type.as_str()).copied(),
        };
        // Every debate stamped: where nothing is in force, with version 0 (the defaults).
        let expected = (
            Some(version.unwrap_or(DEFAULTS_VERSION)),
            Some(arm.as_str().to_owned()),
        );
        assert_eq!(stamp, expected, "{id}");
        let answer = settings_for(&client, &id, &debate_type).await.unwrap();
        assert_eq!(
            (answer.version, Some(answer.arm.as_str().to_owned())),
            stamp,
            "{id}: the function's answer is the stamp"
        );
        // Played under the version's mode and bounds.
        let (mode, max_rounds): (String, i32) = (row.get(4), row.get(5));
        match (arm, version) {
            (Arm::Canary, _) => assert_eq!((mode.as_str(), max_rounds), ("enabled", 6), "{id}"),
            (Arm::Stable, Some(_)) => assert_eq!(mode, "shadow", "{id}"),
            (Arm::Stable, None) => {}
        }
    }
    assert!(
        arms.get(&Arm::Canary).is_some_and(|n| *n > 0)
            && arms.get(&Arm::Stable).is_some_and(|n| *n > 0),
        "both arms played: {arms:?}"
    );

    // A debate that started in the canary, still running; and an id the canary would take.
    let running = (0..)
        .map(|n| format!("running-{n}"))
        .find(|id| arm_of(id, 3000) == Arm::Canary)
        .unwrap();
    let new = (0..)
        .map(|n| format!("new-{n}"))
        .find(|id| arm_of(id, 3000) == Arm::Canary)
        .unwrap();
    client
        .execute(
            "INSERT INTO debate_sessions (id, question, debate_type, controller_mode, \
             token_budget, personas, settings_version, settings_arm) \
             VALUES ($1, 'q', 'standard', 'enabled', 1000, '[\"a\"]', $2, 'canary')",
            &[&running, &canary["standard"]],
        )
        .await
        .unwrap();

    let rolled = settings_ok(
        &url,
        &[
            "rollback",
            &canary["standard"].to_string(),
            "--reason",
            "overrides doubled",
        ],
    );
    assert_eq!(
        rolled.stdout,
        format!(
            "version {} of standard: rolled back version {}: version {} in force\n  values  \
             shadow · similarity 0.90 lexical · novelty 1 · rounds 2-8 · budget 0.80\n  debates \
             already running keep the version they started with\n",
            canary["standard"] + 1,
            canary["standard"],
            stable["standard"]
        )
    );
    let after = settings_for(&client, &new, "standard").await.unwrap();
    assert_eq!(
        (after.version, after.arm),
        (Some(stable["standard"]), Arm::Stable)
    );
    let kept = settings_for(&client, &running, "standard").await.unwrap();
    assert_eq!(
        (kept.version, kept.arm),
        (Some(canary["standard"]), Arm::Canary),
        "a running debate keeps its own"
    );
    assert_eq!(kept.values.unwrap().max_rounds, 6);

    // Review had no stable version: rolled back, new debates get the controller's defaults.
    settings_ok(
        &url,
        &["rollback", &canary["review"].to_string(), "--reason", "no"],
    );
    let defaults = settings_for(&client, &new, "review").await.unwrap();
    assert_eq!(
        (defaults.version, defaults.arm, defaults.values),
        (Some(DEFAULTS_VERSION), Arm::Stable, None)
    );
    let zero = settings_ok(&url, &["show", "0"]).stdout;
    assert!(
        zero.starts_with("version 0: the controller's own defaults"),
        "{zero}"
    );

    let listed = settings_ok(&url, &["list"]).stdout;
    assert!(
        listed.contains(&format!(
            "review\n  stable  the controller's own defaults\n  latest  version {} (rollback): \
             rolled back version {}: the controller's defaults in force; by postgres, ",
            canary["standard"] + 2,
            canary["review"]
        )),
        "{listed}"
    );
    assert!(
        listed.contains(&format!(
            "panel\n  stable  version {}: shadow · similarity 0.90 lexical · novelty 1 · rounds \
             2-8 · budget 0.80\n  canary  version {} to 30% of new debates: enabled · similarity \
             0.90 lexical · novelty 1 · rounds 2-6 · budget 0.80\n",
            stable["panel"], canary["panel"]
        )),
        "{listed}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&settings_ok(&url, &["list", "--json"]).stdout).unwrap();
    let panel = json
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["debate_type"] == "panel")
        .unwrap();
    assert_eq!(panel["canary"]["version"], canary["panel"]);
    assert_eq!(panel["canary_share_bp"], 3000);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The statements that would rewrite the history.
const REWRITES: [&str; 3] = [
    "UPDATE gavel_controller_settings SET reason = 'rewritten'",
    "DELETE FROM gavel_controller_settings",
    "TRUNCATE gavel_controller_settings",
];

/// A minimal publish as a plain INSERT.
const INSERT: &str = "INSERT INTO gavel_controller_settings (debate_type, kind, share_bp, mode, \
    similarity_threshold, similarity_measure, novelty_floor, min_rounds, max_rounds, \
    budget_fraction, reason) VALUES ('standard', 'publish', 10000, 'enabled', 0.9, 'lexical', 1, \
    2, 8, 0.8, 'by hand')";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_history_is_append_only_for_every_role_and_only_publishers_write_it() {
    let server = server();
    let owner = with_logins(&server, "history", &["carol"], &["bob"]).await;
    owner
        .batch_execute(
            "CREATE ROLE dana LOGIN; CREATE ROLE dave LOGIN; GRANT gavel_viewer TO dave; \
             GRANT UPDATE, DELETE, TRUNCATE ON gavel_controller_settings TO dave;",
        )
        .await
        .unwrap();
    gavel::store::postgres::grant_publishers(&owner, &["dana".into()])
        .await
        .unwrap();
    let connect = |user: &'static str| {
        let target = common::pg::target_as(&server, "history", user, "settings");
        async move { target.connect_driven().await.unwrap() }
    };
    let dana = connect("dana").await;
    dana.batch_execute(INSERT).await.unwrap();
    let row = "SELECT row(c.*)::text FROM gavel_controller_settings c";
    let before = texts(&owner, row).await;

    for (who, client, guarded) in [
        ("the owner, a superuser", &owner, true),
        ("dave, granted it", &connect("dave").await, true),
        ("dana, a publisher", &dana, false),
        ("bob, an operator", &connect("bob").await, false),
        ("carol, a viewer", &connect("carol").await, false),
    ] {
        for sql in REWRITES {
            let error = client.batch_execute(sql).await.expect_err(sql);
            let db = error.as_db_error().unwrap();
            assert_eq!(db.code().code(), "42501", "{who}: {sql}");
            let why = if guarded {
                "append-only"
            } else {
                "permission denied"
            };
            assert!(db.message().contains(why), "{who}: {}", db.message());
        }
    }
    let replica = owner
        .batch_execute(
            "SET session_replication_role = replica; DELETE FROM gavel_controller_settings",
        )
        .await
        .unwrap_err();
    assert_eq!(replica.as_db_error().unwrap().code().code(), "42501");
    owner
        .batch_execute("RESET session_replication_role")
        .await
        .unwrap();
    assert_eq!(texts(&owner, row).await, before, "the row is as written");

    // An operator and a viewer may not publish: the database refuses the command line and a
    // plain INSERT alike.
    for user in ["bob", "carol"] {
        let ran = settings(
            &url_as(&server, "history", user),
            &["publish", "--debate-type", "standard", "--reason", "mine"],
        );
        assert!(!ran.ok);
        assert!(
            ran.stderr.starts_with("gavel: cannot publish standard's settings: the database refused it: permission denied for table gavel_controller_settings (SQLSTATE 42501); publishing settings is a privilege of its own: `gavel grant --publisher ROLE` gives it")
                && ran.stderr.lines().count() == 1,
            "{user}: {}",
            ran.stderr
        );
        let error = connect(user).await.batch_execute(INSERT).await.unwrap_err();
        assert_eq!(
            error.as_db_error().unwrap().code().code(),
            "42501",
            "{user}"
        );
    }
    let promoted = settings(
        &url_as(&server, "history", "bob"),
        &["rollback", "1", "--reason", "mine"],
    );
    assert!(
        promoted.stderr.contains("gavel grant --publisher ROLE"),
        "{}",
        promoted.stderr
    );
    assert_eq!(versions(&owner).await, 1, "nothing written");
    assert_eq!(
        texts(&owner, "SELECT published_by FROM gavel_controller_settings").await,
        ["dana"]
    );
}

/// Values that tell one publisher's version from another's.
fn values(similarity: f64, novelty: u32) -> SettingsValues {
    SettingsValues {
        mode: gavel::domain::ControllerMode::Enabled,
        similarity_threshold: similarity,
        similarity_measure: MeasureKind::Lexical,
        similarity_model: None,
        novelty_floor: novelty,
        min_rounds: 2,
        max_rounds: 8,
        budget_fraction: 0.8,
    }
}

/// Publishes `values` for standard debates to `share_bp` through `client`: the version, or why
/// the database refused it.
async fn publish_to(
    client: &Client,
    share_bp: u32,
    values: SettingsValues,
) -> Result<gavel::domain::SettingsVersion, String> {
    let change = Publication::Publish {
        values: &values,
        share_bp,
        evidence: None,
    };
    publish(client, "standard", &change, "at once")
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_publishers_at_once_each_get_a_whole_version_in_the_order_written() {
    let Database {
        client: first,
        target,
        url,
        ..
    } = migrated_database("publishers").await;
    let second = target.connect_driven().await.unwrap();
    let mut sent = Vec::new();
    for i in 0..20 {
        let (a, b) = (values(0.5 + f64::from(i) / 100.0, 1), values(0.5, 100 + i));
        let (x, y) = tokio::join!(
            publish_to(&first, 10_000, a.clone()),
            publish_to(&second, 10_000, b.clone())
        );
        sent.push((x.unwrap(), a));
        sent.push((y.unwrap(), b));
    }
    let history = settings_history(&first, Some("standard")).await.unwrap();
    assert_eq!(history.len(), sent.len());
    let mut numbers: Vec<i64> = history.iter().map(|v| v.version).collect();
    numbers.dedup();
    assert_eq!(numbers.len(), sent.len(), "each numbered once");
    for (written, values) in &sent {
        let stored = history
            .iter()
            .find(|v| v.version == written.version)
            .unwrap();
        assert_eq!(stored, written);
        assert_eq!(stored.values.as_ref(), Some(values), "whole");
    }
    // In version order, each version's state follows from the one before it.
    for pair in history.windows(2) {
        assert_eq!(pair[1].previous_stable, pair[0].stable_version, "{pair:?}");
        assert_eq!(pair[1].stable_version, Some(pair[1].version));
    }

    // With a canary in progress the second publisher is refused, with the reason.
    for _ in 0..5 {
        let (x, y) = tokio::join!(
            publish_to(&first, 3_000, values(0.8, 1)),
            publish_to(&second, 3_000, values(0.7, 1))
        );
        let (won, refused) = match (x, y) {
            (Ok(won), Err(why)) | (Err(why), Ok(won)) => (won, why),
            other => panic!("one of two publishes must win: {other:?}"),
        };
        assert_eq!(
            refused,
            format!(
                "version {} of standard is rolling out to 30% of debates: promote it or roll it back first",
                won.version
            )
        );
        settings_ok(
            &url,
            &["rollback", &won.version.to_string(), "--reason", "again"],
        );
    }

    // A promote and a rollback of one canary at once: one is refused, saying why.
    let canary = publish_to(&first, 3_000, values(0.75, 1)).await.unwrap();
    let (promote, rollback) = (
        Publication::Promote {
            version: canary.version,
        },
        Publication::Rollback {
            version: canary.version,
        },
    );
    let (x, y) = tokio::join!(
        publish(&first, "standard", &promote, "at once"),
        publish(&second, "standard", &rollback, "at once")
    );
    // The rollback first: the promote is refused (the canary is gone). The promote first: the
    // rollback withdraws the version the promote put in force, the stable one before it back.
    match (x.unwrap(), y.unwrap()) {
        (Err(_), Ok(rolled_back)) => assert_eq!(rolled_back.canary_version, None),
        (Ok(promoted), Ok(rolled_back)) => {
            assert!(
                promoted.version < rolled_back.version,
                "{promoted:?} {rolled_back:?}"
            );
            assert_eq!(rolled_back.stable_version, promoted.previous_stable);
        }
        other => panic!("one of them must stand, the rollback last: {other:?}"),
    }

    // The command line says why a version no longer in force cannot be promoted or rolled back.
    let count = versions(&first).await;
    let stale = settings(
        &url,
        &["promote", &canary.version.to_string(), "--reason", "late"],
    );
    assert!(!stale.ok);
    assert!(
        stale.stderr.starts_with(&format!(
            "gavel: cannot promote version {0}: version {0} of standard is not rolling out: ",
            canary.version
        )),
        "{}",
        stale.stderr
    );
    let old = history[0].version.to_string();
    let stale = settings(&url, &["rollback", &old, "--reason", "late"]);
    assert!(
        stale.stderr.starts_with(&format!(
            "gavel: cannot roll back version {old}: version {old} of standard cannot be rolled back: "
        )),
        "{}",
        stale.stderr
    );
    assert_eq!(versions(&first).await, count, "nothing written");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_written_after_another_is_numbered_after_it() {
    let Database {
        client: slow,
        target,
        ..
    } = migrated_database("numbered").await;
    let fast = target.connect_driven().await.unwrap();
    // A trigger of the DBA's that runs before gavel's (triggers fire in name order) and takes
    // its time: the slow insert draws its number first, the fast one is written first.
    slow.batch_execute(
        "CREATE FUNCTION pause() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \
             IF NEW.reason = 'slow' THEN PERFORM pg_sleep(1); END IF; RETURN NEW; END $$; \
         CREATE TRIGGER a_pause BEFORE INSERT ON gavel_controller_settings \
             FOR EACH ROW EXECUTE FUNCTION pause();",
    )
    .await
    .unwrap();
    let first = values(0.8, 1);
    let change = Publication::Publish {
        values: &first,
        share_bp: 10_000,
        evidence: None,
    };
    let late = publish(&slow, "standard", &change, "slow");
    let early = async {
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        publish_to(&fast, 10_000, values(0.7, 1)).await
    };
    let (late, early) = tokio::join!(late, early);
    let (late, early) = (late.unwrap().unwrap(), early.unwrap());
    assert_eq!(
        late.previous_stable,
        Some(early.version),
        "written after it"
    );
    assert!(
        late.version > early.version,
        "{} then {}",
        early.version,
        late.version
    );
    let history = settings_history(&slow, Some("standard")).await.unwrap();
    assert_eq!(
        history.last(),
        Some(&late),
        "the state in force is the last written"
    );
}

/// `gavel calibrate --json` of the bundled recordings, lexical, over two similarities.
fn calibration(dir: &Path) -> PathBuf {
    let ran = run_to_end(gavel().args([
        "calibrate",
        "--similarity",
        "lexical",
        "--grid",
        "similarity=0.8,0.9",
        "--json",
    ]));
    assert!(ran.ok, "{}", ran.stderr);
    let file = dir.join("calibration.json");
    std::fs::write(&file, ran.stdout).unwrap();
    file
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_says_why_in_one_line_and_writes_nothing() {
    let Database {
        client,
        target,
        url,
        ..
    } = migrated_database("refused").await;
    play_into(&target, gavel::simulate::Fixture::bundled().unwrap()).await;
    let dir = crate::common::scratch_home().join("refused");
    std::fs::create_dir_all(&dir).unwrap();
    let good = calibration(&dir);
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&good).unwrap()).unwrap();
    let write = |name: &str, text: String| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    };
    let not_json = write("notes.txt", "week 47 looked fine".into());
    let mut old = report.clone();
    old.as_object_mut().unwrap().remove("source");
    old.as_object_mut().unwrap().remove("measure");
    let old = write("old.json", old.to_string());
    let mut semantic = report.clone();
    semantic["similarity"] = "semantic".into();
    semantic["measure"] = "semantic (paraphrase-minilm-l3-v2-q4)".into();
    let both = write(
        "both.json",
        serde_json::json!({"lexical": report, "semantic": semantic}).to_string(),
    );
    let good = good.display().to_string();
    let long = "x".repeat(1001);
    let none = dir.join("none.json").display().to_string();

    let publish = ["publish", "--debate-type", "standard"];
    let cases: Vec<(Vec<&str>, String)> = vec![
        (vec![], "a reason is required: say why (--reason)".into()),
        (vec!["--reason", "  "], "a reason is required: say why (--reason)".into()),
        (vec!["--reason", &long], "the reason is 1001 characters, more than 1000".into()),
        (vec!["--reason", "r", "--share", "0"], "share 0% is outside 0..100 (a share above 0, up to 100)".into()),
        (vec!["--reason", "r", "--share", "150"], "share 150% is outside 0..100 (a share above 0, up to 100)".into()),
        (vec!["--reason", "r", "--share=-5"], "share -5% is outside 0..100 (a share above 0, up to 100)".into()),
        (vec!["--reason", "r", "--share", "half"], "--share \"half\" is not a number (a percent above 0, up to 100)".into()),
        (vec!["--reason", "r", "--similarity", "1.5"], "similarity threshold 1.5 is outside 0..1".into()),
        (vec!["--reason", "r", "--similarity", "high"], "--similarity \"high\" is not a number".into()),
        (vec!["--reason", "r", "--budget", "0"], "budget fraction 0 is outside (0..1".into()),
        (vec!["--reason", "r", "--min-rounds", "9", "--max-rounds", "3"], "min rounds 9 is above max rounds 3".into()),
        (vec!["--reason", "r", "--novelty=-1"], "--novelty \"-1\" is not a whole number (0 or more)".into()),
        (vec!["--reason", "r", "--mode", "sometimes"], "--mode \"sometimes\": expected off, shadow, gated or enabled".into()),
        (vec!["--reason", "r", "--measure", "lexical", "--similarity-model", "m"], "--similarity-model names the semantic measure's model: it goes with --measure semantic".into()),
        (vec!["--reason", "r", "--from-calibration", &not_json, "--pick", "1"], format!("{not_json}: not a calibration (`gavel calibrate --json` output): not JSON (expected value at line 1 column 1)")),
        (vec!["--reason", "r", "--from-calibration", &old, "--pick", "1"], format!("{old}: not a calibration (`gavel calibrate --json` output): it has no \"source\", \"measure\"")),
        (vec!["--reason", "r", "--from-calibration", &good, "--pick", "99"], format!("{good}: --pick 99: the calibration has 2 rows (pick 1 to 2)")),
        (vec!["--reason", "r", "--from-calibration", &good, "--pick", "0"], "--pick \"0\": expected a row number from 1 (N), or SOURCE:N".into()),
        (vec!["--reason", "r", "--from-calibration", &good, "--pick", "semantic:1"], format!("{good}: no calibration of the semantic similarity in it (it holds lexical)")),
        (vec!["--reason", "r", "--from-calibration", &both, "--pick", "1"], format!("{both}: holds one calibration per similarity source (lexical, semantic): say which with --pick SOURCE:N, e.g. --pick lexical:1")),
        (vec!["--reason", "r", "--from-calibration", &none, "--pick", "1"], format!("cannot read the calibration {none}: No such file or directory (os error 2)")),
    ];
    let unknown = settings(
        &url,
        &["publish", "--debate-type", "standrad", "--reason", "r"],
    );
    assert_eq!(
        unknown.stderr,
        "gavel: unknown debate type \"standrad\": the known ones are follow_up, panel, review, \
         standard (those of debates that ran or of the settings history, \
         [controller.max_rounds_by_type]'s, and standard)\n"
    );
    for (args, why) in cases {
        let ran = settings(&url, &[&publish[..], &args].concat());
        assert!(!ran.ok, "{args:?}");
        assert_eq!(ran.stderr, format!("gavel: {why}\n"), "{args:?}");
    }
    for change in ["promote", "rollback"] {
        let ran = settings(&url, &[change, "999", "--reason", "r"]);
        assert!(
            ran.stderr
                .starts_with("gavel: no settings version 999 in gavel_controller_settings of "),
            "{}",
            ran.stderr
        );
        let ran = settings(&url, &[change, "999"]);
        assert_eq!(
            ran.stderr,
            "gavel: a reason is required: say why (--reason)\n"
        );
    }
    assert_eq!(versions(&client).await, 0, "nothing written");

    // The calibration's row 2, from the file with a report per source.
    let written = version_json(
        &url,
        &[
            "publish",
            "--debate-type",
            "panel",
            "--from-calibration",
            &both,
            "--pick",
            "lexical:2",
            "--mode",
            "enabled",
            "--reason",
            "the knee",
        ],
    );
    let row = &report["rows"][1];
    let evidence = &written["evidence"];
    let digest = sha2::Sha256::digest(std::fs::read(&both).unwrap());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(evidence["calibration_sha256"], hex.as_str());
    assert_eq!(evidence["pick"], 2);
    assert_eq!(evidence["similarity"], "lexical");
    assert_eq!(evidence["grid_point"], row["setting"]);
    assert_eq!(evidence["measure"], "lexical (tfidf)");
    assert_eq!(evidence["debates"], 9);
    assert_eq!(
        evidence["window"],
        serde_json::Value::Null,
        "recordings carry no times"
    );
    assert!(
        evidence["source"]
            .as_str()
            .unwrap()
            .starts_with("9 recordings played in shadow mode: ")
    );
    let values = &written["values"];
    assert_eq!(
        values["similarity_threshold"],
        row["setting"]["similarity_threshold"]
    );
    assert_eq!(values["novelty_floor"], row["setting"]["novelty_threshold"]);
    assert_eq!(values["budget_fraction"], row["setting"]["budget_fraction"]);
    assert_eq!(
        (values["min_rounds"].as_u64(), values["max_rounds"].as_u64()),
        (Some(2), Some(8)),
        "own: the configured bounds"
    );
    assert_eq!(
        (
            &values["mode"],
            &values["similarity_measure"],
            &values["similarity_model"]
        ),
        (
            &"enabled".into(),
            &"lexical".into(),
            &serde_json::Value::Null
        )
    );

    // Shown whole, and in the report of the database's calibration.
    let version = written["version"].to_string();
    let shown = settings_ok(&url, &["show", &version]).stdout;
    assert!(shown.contains(&format!("  evidence  calibration sha256 {hex}, row 2 of the lexical similarity's, measure lexical (tfidf), 9 debates: 9 recordings played in shadow mode: ")), "{shown}");
    assert!(
        shown.starts_with(&format!(
            "version {version} of panel: published to every debate\n  kind      publish\n"
        )),
        "{shown}"
    );
    let calibrate = |output: &[&str]| {
        let args = [
            "calibrate",
            "--db",
            &url,
            "--similarity",
            "lexical",
            "--grid",
        ];
        run_to_end(gavel().args(args).arg("similarity=0.9").args(output))
    };
    let from_db: serde_json::Value = serde_json::from_str(&calibrate(&["--json"]).stdout).unwrap();
    assert_eq!(from_db["similarity"], "lexical");
    assert!(
        from_db["source"]
            .as_str()
            .unwrap()
            .starts_with("the finished debates of the database ")
    );
    let (first, last) = (
        from_db["window"]["first"].as_str().unwrap(),
        from_db["window"]["last"].as_str().unwrap(),
    );
    assert!(first <= last, "{first} {last}");
    let html = dir.join("report.html");
    let made = calibrate(&["--html", html.to_str().unwrap()]);
    assert!(made.ok, "{}", made.stderr);
    let html = std::fs::read_to_string(&html).unwrap();
    assert!(
        html.contains("<h2>Published controller settings</h2>"),
        "{html}"
    );
    assert!(html.contains(&format!(
        "calibration sha256 {hex}, row 2 of the lexical similarity&#39;s"
    )));
    assert!(html.contains("<td>the knee</td><td>postgres</td>"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_from_the_history_are_shown_inert() {
    let Database { client, url, .. } = migrated_database("inert").await;
    client
        .batch_execute(&INSERT.replace("'by hand'", "E'by \\x1b[2Jhand'"))
        .await
        .unwrap();
    let shown = settings_ok(&url, &["show"]).stdout;
    assert!(!shown.contains('\x1b'), "{shown:?}");
    assert!(shown.contains("by ␛[2Jhand"), "{shown}");
    let listed = settings_ok(&url, &["list"]).stdout;
    assert!(listed.contains("by ␛[2Jhand"), "{listed}");
}

/// A share in percent text, as `percent` writes it or as a number.
fn share_text() -> impl Strategy<Value = (u32, String)> {
    (1..=10_000u32, 0..3usize).prop_map(|(bp, form)| {
        let text = match form {
            0 => gavel::domain::percent(bp),
            1 => format!("{}", f64::from(bp) / 100.0),
            _ => format!(" {}% ", f64::from(bp) / 100.0),
        };
        (bp, text)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// `--share` takes every share `percent` writes, and any text gives a share in range or an
    /// error naming the option, never a panic.
    #[test]
    fn shares_parse_back_and_stay_in_range((bp, text) in share_text(), noise in ".{0,12}") {
        prop_assert_eq!(gavel::cli::parse_share(&text), Ok(bp));
        match gavel::cli::parse_share(&noise) {
            Ok(bp) => prop_assert!((1..=10_000).contains(&bp)),
            Err(why) => prop_assert!(why.contains("share"), "{}", why),
        }
    }

    /// `--pick` reads back what it writes, and refuses a row 0 or text that is not one.
    #[test]
    fn picks_parse_back(row in 1..100_000usize, source in prop::option::of(0..3usize), noise in ".{0,12}") {
        let source = source.map(|i| gavel::calibrate::SimilaritySource::ALL[i]);
        let pick = gavel::calibrate::Pick { source, row };
        prop_assert_eq!(pick.to_string().parse::<gavel::calibrate::Pick>(), Ok(pick));
        if let Ok(pick) = noise.parse::<gavel::calibrate::Pick>() {
            prop_assert!(pick.row >= 1);
        }
    }

    /// The values typed on the command line are the values published; text that is not one
    /// is refused naming its option.
    #[test]
    fn values_parse_back(
        similarity in 0.0..=1.0f64,
        novelty in 0..1000u32,
        rounds in (1..1000u32, 1..1000u32),
        budget in 0.01..=1.0f64,
        mode in 0..4usize,
        noise in ".{0,12}",
    ) {
        let base = values(0.9, 1);
        let mode = gavel::domain::ControllerMode::ALL[mode];
        let given = gavel::cli::Values {
            mode: Some(mode.to_string()),
            similarity: Some(similarity.to_string()),
            measure: Some("semantic".into()),
            similarity_model: Some("m".into()),
            novelty: Some(novelty.to_string()),
            min_rounds: Some(rounds.0.min(rounds.1).to_string()),
            max_rounds: Some(rounds.0.max(rounds.1).to_string()),
            budget: Some(budget.to_string()),
        };
        let parsed = given.over(&base, || unreachable!("the model is given")).unwrap();
        prop_assert_eq!(parsed.validate(), Ok(()));
        prop_assert_eq!(&parsed, &SettingsValues {
            mode,
            similarity_threshold: similarity,
            similarity_measure: MeasureKind::Semantic,
            similarity_model: Some("m".into()),
            novelty_floor: novelty,
            min_rounds: rounds.0.min(rounds.1),
            max_rounds: rounds.0.max(rounds.1),
            budget_fraction: budget,
        });
        let odd = gavel::cli::Values { novelty: Some(noise.clone()), ..Default::default() };
        match odd.over(&base, || "m".into()) {
            Ok(v) => prop_assert_eq!(Some(v.novelty_floor), noise.trim().parse().ok()),
            Err(why) => prop_assert!(why.starts_with("--novelty "), "{}", why),
        }
    }
}
