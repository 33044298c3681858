//! Operators as a team with real consoles: `gavel watch --db` processes (the built binary),
//! each in a tmux of its own, on one throwaway database. What only real processes show:
//! presence in the header and in `:who` under the role each process connected as; a claim on
//! another process's screen within a second; the take-over question; both confirming still one
//! action in the database; what a viewer's console says when it tries to claim or note; a
//! forged presence row (written by another role, naming itself another operator) listed under
//! that role, its escape sequences kept from the terminal; a console killed with SIGKILL gone from the others'
//! screens within two heartbeats. With ten consoles: each counts the nine others, a claim
//! reaches all nine within a second, and three killed at once leave the other seven's screens.
//!
//! The library-level rules (ordering, rate bounds, when a claim ends, the forged message's
//! lingering) are tested in presence.rs and notes.rs.

use std::time::{Duration, Instant};

use gavel::store::postgres::HEARTBEAT;

use crate::common;
use common::pg::{SESSION, decide, migrated_database, server, table_count, url_as, with_logins};
use common::tmux::Tmux;

/// How long a claim may take to show on another console.
const CLAIM: Duration = Duration::from_secs(1);
/// How long a killed console may stay on the others' screens: two heartbeats from the kill
/// (it is dropped two heartbeats after it was last heard, which was before the kill), and a
/// second for the frame and the screen's capture on a busy machine.
const GONE: Duration = HEARTBEAT
    .saturating_mul(2)
    .saturating_add(Duration::from_secs(1));

/// `gavel watch` on database `url` as operator `operator`, in a tmux of its own, once live. The
/// console is the pane's process (`exec`), so [`Tmux::pid`] is gavel's.
fn watch(url: &str, operator: &str) -> Tmux {
    let tmux = Tmux::new();
    tmux.start(&format!(
        "exec {} watch --db '{url}' --operator {operator} --log-dir {}",
        env!("CARGO_BIN_EXE_gavel"),
        tmux.dir.join("logs").display()
    ));
    tmux.wait_for("the live feed", |s| s.contains("● live"));
    tmux
}

/// The header's count of the other consoles.
fn others(n: usize) -> String {
    match n {
        1 => "│ 1 other here ".to_owned(),
        n => format!("│ {n} others here "),
    }
}

/// Opens debate `id` on `console`.
fn open(console: &Tmux, id: &str) {
    console.type_line(&format!(":{id}"));
    console.wait_for("the debate opened", |s| {
        s.contains(&format!("rounds · {id} ·"))
    });
}

/// Kills `console`'s gavel with SIGKILL: nothing of it says goodbye.
fn kill9(console: &Tmux) {
    let pid = console.pid().to_string();
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &pid])
        .status()
        .unwrap();
    assert!(killed.success(), "kill -9 {pid}");
}

/// Waits until each of `consoles` shows `ready`, all of them by `limit` after `since`: how
/// long after `since` each was seen to (to within a capture of the screens).
fn all_within(
    consoles: &[&Tmux],
    since: Instant,
    limit: Duration,
    what: &str,
    ready: impl Fn(&str) -> bool,
) -> Vec<Duration> {
    consoles
        .iter()
        .map(|console| {
            let left = (since + limit).saturating_duration_since(Instant::now());
            console.wait_within(what, left, &ready);
            since.elapsed()
        })
        .collect()
}

/// A line of `screen` that holds every one of `words`.
fn line_with<'a>(screen: &'a str, words: &[&str]) -> Option<&'a str> {
    screen.lines().find(|l| words.iter().all(|w| l.contains(w)))
}

#[test]
fn two_operators_and_a_viewer_in_tmux_on_one_database() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = server();
    let owner = runtime.block_on(async {
        let owner = with_logins(&server, "team", &["carol", "mallory"], &["bob"]).await;
        for id in ["ward-a", "ward-b"] {
            owner.execute(SESSION, &[&id]).await.unwrap();
            decide(&owner, id, 1, Some("continue_baseline")).await;
        }
        owner
    });
    // alice connects as postgres, bob as bob (an operator), carol as carol (a viewer).
    let alice = watch(&url_as(&server, "team", "postgres"), "alice");
    let bob = watch(&url_as(&server, "team", "bob"), "bob");
    let carol = watch(&url_as(&server, "team", "carol"), "carol");
    for console in [&alice, &bob, &carol] {
        console.wait_for("the two others in the header", |s| s.contains(&others(2)));
    }
    bob.type_line(":who");
    bob.wait_for("alice and carol in :who", |s| {
        s.contains("who else is here: 2 other consoles")
            && line_with(s, &["alice", "postgres", " UTC"]).is_some()
            && line_with(s, &["carol", "carol", " UTC"]).is_some()
    });
    bob.keys("Escape");

    // The viewer can neither claim nor note: her console says so, the database has neither.
    let read_only = carol.wait_for("the viewer's header", |s| s.contains("│ read-only: "));
    open(&carol, "ward-b");
    carol.keys("a");
    let refused = carol.wait_for("accept refused", |s| {
        s.contains("read-only: nothing is recorded")
    });
    assert!(!refused.contains("[y] confirm"), "{refused}");
    carol.keys("N");
    let unnoted = carol.wait_for("the note refused", |s| s.contains("cannot pin a note: "));
    eprintln!(
        "a viewer's console:\n{}\n{}\n{}",
        line_with(&read_only, &["read-only: "]).unwrap_or_default(),
        line_with(&refused, &["nothing is recorded"]).unwrap_or_default(),
        line_with(&unnoted, &["cannot pin a note"]).unwrap_or_default(),
    );

    // alice opens the confirmation: bob's and carol's consoles show her deciding within a
    // second. Her message came after whatever carol's `a` sent, and the others hear the channel
    // in order: so ward-b shows nobody deciding.
    open(&alice, "ward-a");
    open(&bob, "ward-a");
    alice.keys("a");
    let sent = Instant::now();
    let took = all_within(&[&bob, &carol], sent, CLAIM, "alice deciding", |s| {
        // The list's marker and who, cut to the column.
        line_with(s, &["◐", "ward-a", "alice (role postgres)"]).is_some()
    });
    eprintln!("alice's claim on the two other consoles after {took:?}");
    for console in [&bob, &carol] {
        let screen = console.screen();
        let ward_b = line_with(&screen, &["ward-b"]).unwrap();
        assert!(
            !ward_b.contains("deciding") && !ward_b.contains('◐'),
            "{ward_b}"
        );
    }

    // bob acts on it: asked first; then both confirm, and the database takes one.
    bob.keys("a");
    bob.wait_for("the take-over question", |s| {
        s.contains("alice (role postgres) is deciding (0:") && s.contains("take over?")
    });
    bob.keys("y");
    bob.wait_for("bob's confirmation", |s| s.contains("[y] confirm"));
    alice.keys("y");
    bob.keys("y");
    let landed = |s: &str| s.contains("recorded: ");
    let lost = |s: &str| s.contains("resolved by ");
    let a = alice.wait_for("alice's outcome", |s| landed(s) || lost(s));
    let b = bob.wait_for("bob's outcome", |s| landed(s) || lost(s));
    assert!(landed(&a) != landed(&b), "one wins:\n{a}\n{b}");
    let actions = runtime.block_on(table_count(
        &owner,
        "SELECT count(*) FROM debate_operator_actions",
    ));
    assert_eq!(actions, 1);
    let notes = runtime.block_on(table_count(
        &owner,
        "SELECT count(*) FROM gavel_debate_notes",
    ));
    assert_eq!(notes, 0);

    // mallory writes a presence row as alice, with a terminal title in her name: listed under
    // mallory, the escape shown inert, the title untouched.
    let title = bob.display("#{pane_title}");
    runtime.block_on(async {
        let mallory = gavel::store::postgres::Target::exact(&url_as(&server, "team", "mallory"))
            .unwrap()
            .connect_driven()
            .await
            .unwrap();
        let forged = r#"{"operator": "alice\u001b]2;owned\u0007", "looking": "ward-a"}"#;
        mallory
            .execute(
                "INSERT INTO gavel_presence (console, status) VALUES (99, $1)",
                &[&forged],
            )
            .await
            .unwrap();
    });
    bob.type_line(":who");
    let forged = bob.wait_for("the forged message", |s| {
        s.contains("who else is here: 3 other consoles")
    });
    assert!(
        line_with(&forged, &["alice␛]2;owned␇", "mallory", "ward-a"]).is_some(),
        "{forged}"
    );
    assert_eq!(bob.display("#{pane_title}"), title);
    bob.keys("Escape");

    // alice's console killed with SIGKILL: gone from the others within two heartbeats.
    bob.wait_for("the forgery gone", |s| s.contains(&others(2)));
    kill9(&alice);
    let took = all_within(&[&bob, &carol], Instant::now(), GONE, "alice gone", |s| {
        s.contains(&others(1))
    });
    eprintln!("a console killed with SIGKILL gone from the others' screens after {took:?}");
}

#[test]
fn ten_consoles_in_tmux_count_each_other_see_a_claim_and_lose_three_killed() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let database = runtime.block_on(async {
        let database = migrated_database("team_ten").await;
        database.client.execute(SESSION, &[&"ward"]).await.unwrap();
        decide(&database.client, "ward", 1, Some("continue_baseline")).await;
        database
    });
    let consoles: Vec<Tmux> = (0..10)
        .map(|n| watch(&database.url, &format!("op{n}")))
        .collect();
    for console in &consoles {
        console.wait_for("the nine others", |s| s.contains(&others(9)));
    }
    consoles[1].type_line(":who");
    consoles[1].wait_for("the nine others listed", |s| {
        s.contains("who else is here: 9 other consoles")
            && (0..10)
                .filter(|&n| n != 1)
                .all(|n| line_with(s, &[&format!(" op{n} "), "postgres"]).is_some())
    });
    consoles[1].keys("Escape");

    open(&consoles[0], "ward");
    consoles[0].keys("a");
    let sent = Instant::now();
    let rest: Vec<&Tmux> = consoles[1..].iter().collect();
    let took = all_within(&rest, sent, CLAIM, "op0 deciding", |s| {
        s.contains("op0 (role postgres) deciding")
    });
    eprintln!("op0's claim on the nine other consoles after {took:?}");

    for console in &consoles[7..] {
        kill9(console);
    }
    let rest: Vec<&Tmux> = consoles[..7].iter().collect();
    let took = all_within(&rest, Instant::now(), GONE, "three consoles gone", |s| {
        s.contains(&others(6))
    });
    eprintln!("three consoles killed with SIGKILL gone from the seven others after {took:?}");
}
