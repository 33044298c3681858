//! How the feed's reads are planned: a plan kept from when the tables were small and analyzed
//! would read a table whole once it has grown (a sequential scan, or a walk over an index whose
//! leading column is not the key), which once stalled the feed for 40 s. A read keeps the plan
//! PostgreSQL makes for it only where that plan looks rows up by key, and while its table is
//! small, only for a while (prepared anew at each keepalive and every 64 rows heard); else it
//! is planned for its keys (see the feed's `plans`): either way it looks the rows up by key.

use gavel::domain::KEPT_NOTES;
use gavel::store::postgres::LocalServer;

use super::*;

/// The tables the feed reads.
const TABLES: [&str; 6] = [
    "debate_sessions",
    "debate_rounds",
    "debate_round_decisions",
    "debate_round_judgments",
    "debate_operator_actions",
    "gavel_debate_notes",
];

/// Round `round` of debate `id` in every table: the session's row updated, a turn, a decision, a
/// judgment, an operator's action and a note.
fn round(id: &str, round: i32) -> String {
    format!(
        "UPDATE debate_sessions SET tokens_used = tokens_used + 10 WHERE id = '{id}';
         INSERT INTO debate_rounds (session_id, round_number, agent_persona, content, tokens_used) \
             VALUES ('{id}', {round}, 'theorist', 'Round {round}.', 10);
         INSERT INTO debate_round_decisions (session_id, round_index, decision) \
             VALUES ('{id}', {round}, 'continue');
         INSERT INTO debate_round_judgments (session_id, round_index, agent_persona, decision, score) \
             VALUES ('{id}', {round}, 'theorist', 'continue', 0.9);
         INSERT INTO debate_operator_actions (session_id, round_index, action, decision, operator) \
             VALUES ('{id}', {round}, 'accept', 'continue', 'bob');
         INSERT INTO gavel_debate_notes (session_id, operator, note) \
             VALUES ('{id}', 'bob', 'Note {round}.');"
    )
}

/// `rows` debates of one round each in every table, written without notifications (the
/// notification triggers disabled in the writing transaction).
fn grown(rows: i32) -> String {
    let each = format!("FROM generate_series(1, {rows}) AS g");
    let triggers = |enable: &str| -> String {
        TABLES
            .iter()
            .map(|t| format!("ALTER TABLE {t} {enable} TRIGGER gavel_notify;"))
            .collect()
    };
    format!(
        "BEGIN; {}
         INSERT INTO debate_sessions (id) SELECT 'old-' || g {each};
         INSERT INTO debate_rounds (session_id, round_number, content) SELECT 'old-' || g, 1, 'Old.' {each};
         INSERT INTO debate_round_decisions (session_id, round_index, decision) \
             SELECT 'old-' || g, 1, 'continue' {each};
         INSERT INTO debate_round_judgments (session_id, round_index, decision) \
             SELECT 'old-' || g, 1, 'continue' {each};
         INSERT INTO debate_operator_actions (session_id, round_index, action, operator) \
             SELECT 'old-' || g, 1, 'accept', 'bob' {each};
         INSERT INTO gavel_debate_notes (session_id, operator, note) SELECT 'old-' || g, 'bob', 'Old.' {each};
         {} COMMIT;",
        triggers("DISABLE"),
        triggers("ENABLE ALWAYS")
    )
}

/// The feed's two reads of a table, told apart by how they take their keys: a lone key as
/// itself (its cast to its type may be left out of the text kept: the read is prepared with
/// its parameters' types, and is then the same statement as one without the cast), a batch's
/// keys as arrays.
const FORMS: [(&str, &str); 2] = [
    (
        "a lone key",
        "query LIKE '%WHERE id = $1%' \
         OR query LIKE '%WHERE session_id = $1% AND round_index = $2%'",
    ),
    (
        "a batch",
        "query LIKE '%ANY($1::%' OR query LIKE '%unnest($1::text[], $2::int[])%'",
    ),
];

/// A read's cost so far: the read (table and form), its executions, the blocks they touched and
/// the times it was planned.
type Cost = (String, i64, i64, i64);

/// What the feed's reads have cost so far, from pg_stat_statements (updated as each statement
/// ends): for each table and form, the statement's executions, the blocks they touched, and
/// the times it was planned (counted with `pg_stat_statements.track_planning`).
async fn reads(client: &Client) -> Vec<Cost> {
    let mut reads = Vec::new();
    for table in TABLES {
        for (form, keys) in FORMS {
            let row = client
                .query_one(
                    &format!(
                        "SELECT coalesce(sum(calls), 0)::bigint, \
                                coalesce(sum(shared_blks_hit + shared_blks_read), 0)::bigint, \
                                coalesce(sum(plans), 0)::bigint \
                         FROM pg_stat_statements \
                         WHERE query LIKE '%FROM ' || $1 || ' WHERE %' AND ({keys})"
                    ),
                    &[&table],
                )
                .await
                .unwrap();
            reads.push((
                format!("{table}, {form}"),
                row.get(0),
                row.get(1),
                row.get(2),
            ));
        }
    }
    reads
}

/// The debates the test writes rounds to.
const DEBATES: [&str; 2] = ["live", "other"];

/// Round `round` of the first debate alone when odd, of both debates in one transaction when
/// even.
fn rounds(round: i32) -> String {
    let debates = if round % 2 == 1 { 1 } else { 2 };
    DEBATES[..debates]
        .iter()
        .map(|id| self::round(id, round))
        .collect()
}

/// Whether every debate holds what [`rounds`] wrote up to round `round`, in every table (the
/// latest notes, as many as a debate keeps).
fn holds(model: &gavel::console::app::Model, round: u32) -> bool {
    DEBATES.iter().enumerate().all(|(n, id)| {
        // The first debate has every round; the other, the even ones.
        let (count, latest) = if n == 0 {
            (round, round)
        } else {
            (round / 2, round - round % 2)
        };
        let count_of = count as usize;
        model.debate(id).is_some_and(|d| {
            d.session.tokens_used == u64::from(count) * 10
                && d.turns.len() == count_of
                && d.judgments.len() == count_of
                && d.notes.len() == count_of.min(KEPT_NOTES)
                && d.notes
                    .last()
                    .is_none_or(|n| n.text == format!("Note {latest}."))
                && (latest == 0
                    || d.decisions.contains_key(&latest) && d.actions.contains_key(&latest))
        })
    })
}

/// A database `name` on `server` with pg_stat_statements, the two debates and their first
/// round (analyzed when `analyzed`), watched by a console that holds that round.
async fn watched(server: &LocalServer, name: &str, analyzed: bool) -> (Client, Console) {
    let (target, mut client) = database(server, name).await;
    migrate(&mut client).await.unwrap();
    client
        .batch_execute("CREATE EXTENSION pg_stat_statements")
        .await
        .unwrap();
    for id in DEBATES {
        client.execute(SESSION, &[&id]).await.unwrap();
    }
    client
        .batch_execute("UPDATE debate_sessions SET tokens_used = 0")
        .await
        .unwrap();
    client.batch_execute(&rounds(1)).await.unwrap();
    if analyzed {
        client.batch_execute("ANALYZE").await.unwrap();
    }
    let mut console = Console::live(target).await;
    console.until("round 1", |m| holds(m, 1)).await;
    (client, console)
}

/// The feed's reads' costs once every table has been read both ways `more` times since
/// `before` (a statement is counted when the server ends it, which may be just after its rows
/// arrive).
async fn read_again(client: &Client, before: &[Cost], more: i64) -> Vec<Cost> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let after = reads(client).await;
        if after
            .iter()
            .zip(before)
            .all(|(now, then)| now.1 >= then.1 + more)
        {
            return after;
        }
        assert!(
            Instant::now() < deadline,
            "the feed did not read every table both ways {more} times: {before:?} then {after:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Asserts that each of the feed's reads since `before` (costs then; `after` now) looked rows up
/// by key (a row looked up by its key touches a few blocks of the index and one of the table;
/// 20,000 rows fill well over a hundred), and, given `planned`, that a lone key's read was
/// planned for its keys at most that many times (a batch's kept plan is costed for any number
/// of keys, more than the two a batch holds here: PostgreSQL may go on planning those for their
/// keys, its choice: either plan looks rows up by key).
fn assert_by_key(after: &[Cost], before: &[Cost], planned: Option<i64>) {
    for ((read, calls, blocks, plans), (_, calls_before, blocks_before, plans_before)) in
        after.iter().zip(before)
    {
        let (calls, plans) = (calls - calls_before, plans - plans_before);
        if let Some(planned) = planned {
            assert!(
                !read.ends_with("a lone key") || plans <= planned,
                "{read}: planned {plans} times for {calls} reads, as if never kept"
            );
        }
        let per_read = (blocks - blocks_before) / calls;
        assert!(
            per_read < 20,
            "{read}: the reads touched {per_read} blocks each, as if they read the table whole"
        );
    }
}

/// Rounds `from` to `to` written one after the other, each held by `console` before the next.
async fn written(client: &Client, console: &mut Console, from: i32, to: i32) {
    for next in from..=to {
        client.batch_execute(&rounds(next)).await.unwrap();
        console
            .until(&format!("round {next}"), |m| holds(m, next as u32))
            .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_planned_while_the_tables_were_small_look_rows_up_by_key_once_they_have_grown() {
    // No autovacuum: the statistics stay those of the small tables (an ANALYZE would replan).
    let server = server_with(&[
        ("shared_preload_libraries", "pg_stat_statements"),
        ("autovacuum", "off"),
    ]);
    let (client, mut console) = watched(&server, "plans", true).await;
    // Sixteen rounds while the tables are small, each table's rows read as a lone key (one
    // debate's round) and as a batch (both debates' rounds in one transaction, their
    // notifications read together): by default the server may keep a plan made once from a
    // statement's sixth execution on.
    written(&client, &mut console, 2, 17).await;

    // Each form of each table's read has run often enough for the server to keep a plan.
    let small = reads(&client).await;
    for (read, calls, ..) in &small {
        assert!(
            *calls >= 6,
            "{read}: {calls} reads while the tables were small"
        );
    }

    client.batch_execute(&grown(20_000)).await.unwrap();
    let before = reads(&client).await;
    written(&client, &mut console, 18, 20).await;
    let after = read_again(&client, &before, 1).await;
    assert_by_key(&after, &before, None);
}

/// Once the tables have grown, the feed's reads keep their plans (looked at on the keepalive):
/// round after round the server plans a lone key's read no more (a kept plan is made once,
/// after five planned for their keys), and every read still looks the rows up by key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_of_grown_tables_keep_their_plans_and_still_look_rows_up_by_key() {
    let server = server_with(&[
        ("shared_preload_libraries", "pg_stat_statements"),
        ("pg_stat_statements.track_planning", "on"),
    ]);
    let (client, mut console) = watched(&server, "kept_plans", true).await;
    client.batch_execute(&grown(20_000)).await.unwrap();
    // The feed looks at the tables' sizes at each keepalive.
    tokio::time::sleep(KEEPALIVE + Duration::from_secs(1)).await;

    let before = reads(&client).await;
    const LAST: i32 = 31;
    written(&client, &mut console, 2, LAST).await;
    // Fifteen reads each way and table (odd rounds one debate's, even rounds both debates').
    let after = read_again(&client, &before, 15).await;
    // A lone key's read: five plans for their keys, then the plan kept (a statement of the same
    // text read elsewhere, a debate's history, may add one).
    assert_by_key(&after, &before, Some(7));
}

/// While the tables are small and never analyzed, the plan PostgreSQL keeps for each read looks
/// rows up by key: the reads keep it a while, planned for their keys five times a statement (a
/// statement is made anew at each keepalive), not each time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_of_small_tables_keep_their_plans_a_while() {
    let server = server_with(&[
        ("shared_preload_libraries", "pg_stat_statements"),
        ("pg_stat_statements.track_planning", "on"),
        ("autovacuum", "off"),
    ]);
    let (client, mut console) = watched(&server, "small_plans", false).await;
    let before = reads(&client).await;
    let start = Instant::now();
    // Forty reads each way and table (odd rounds one debate's, even rounds both debates').
    written(&client, &mut console, 2, 81).await;
    let after = read_again(&client, &before, 40).await;
    // Kept, a statement is planned for its keys five times, and made anew at each keepalive (a
    // debate's history, read by a statement of the same text, may add one or two).
    let looks = (start.elapsed().as_secs_f64() / KEEPALIVE.as_secs_f64()).ceil() as i64;
    let kept = 5 * (1 + looks) + 2;
    assert!(
        kept < 40,
        "too slow to tell kept plans from planned reads: {looks} keepalives"
    );
    assert_by_key(&after, &before, Some(kept));
}

/// A plan kept while the tables were small and never analyzed is made again by the server once
/// they are analyzed, whichever way it then reads them (here it still looks rows up by key: the
/// test also passes with statements never prepared anew at a keepalive); the tables then grow
/// without a notification the feed would count: after a keepalive the reads look rows up by key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_kept_while_the_tables_were_small_look_rows_up_by_key_after_a_keepalive() {
    let server = server_with(&[
        ("shared_preload_libraries", "pg_stat_statements"),
        ("autovacuum", "off"),
    ]);
    let (client, mut console) = watched(&server, "renewed", false).await;
    // Kept while the tables were never analyzed; then every read runs the plan the server makes
    // again once they are analyzed small.
    client.batch_execute("ANALYZE").await.unwrap();
    written(&client, &mut console, 2, 17).await;
    client.batch_execute(&grown(20_000)).await.unwrap();
    tokio::time::sleep(KEEPALIVE + Duration::from_secs(1)).await;

    let before = reads(&client).await;
    written(&client, &mut console, 18, 20).await;
    let after = read_again(&client, &before, 1).await;
    assert_by_key(&after, &before, None);
}
