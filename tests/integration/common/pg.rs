//! Helpers for the tests against a real PostgreSQL: the test binary's one shared server with a
//! fresh database per test, a throwaway server for a test that changes the cluster itself, a
//! console model fed by the live backend, and the server's processes for fault injection.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use gavel::console::app::{Command, Context, Contexts, Event, Link, Model, Reading, update};
use gavel::store::postgres::{LocalServer, Sides, Target};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio_postgres::Client;

/// A server of the test's own, for a test that changes the cluster itself: stops or restarts
/// it, creates login roles or grants gavel's (roles are the cluster's, not a database's).
pub fn server() -> LocalServer {
    server_with(&[])
}

/// A server of the test's own started with `settings` besides a unix socket only (for example
/// a preloaded library).
pub fn server_with(settings: &[(&str, &str)]) -> LocalServer {
    let settings: Vec<_> = [("listen_addresses", "")]
        .into_iter()
        .chain(settings.iter().copied())
        .collect();
    LocalServer::start_with(5432, &settings)
        .expect("a throwaway PostgreSQL must start for these tests (install the server package)")
}

/// The test binary's one shared server: started by the first test that asks for a database,
/// stopped and removed when the binary exits.
static SHARED: Mutex<Option<LocalServer>> = Mutex::new(None);

extern "C" fn stop_shared() {
    drop(SHARED.lock().unwrap_or_else(PoisonError::into_inner).take());
}

/// A database of one test's own on the shared server.
pub struct Database {
    /// Its name: the name the test gave, numbered so that it is unique within the binary.
    pub name: String,
    /// Its connection string, as `postgres`.
    pub url: String,
    pub target: Target,
    /// A connection to it, as `postgres`.
    pub client: Client,
}

/// Creates a database named after `name` on the binary's shared server (started now if it is
/// not yet), for a test that changes nothing outside its database.
pub async fn fresh_database(name: &str) -> Database {
    static NEXT: AtomicU32 = AtomicU32::new(1);
    let name = format!("{name}_{}", NEXT.fetch_add(1, Ordering::Relaxed));
    let (admin, url) = {
        let mut shared = SHARED.lock().unwrap_or_else(PoisonError::into_inner);
        if shared.is_none() {
            *shared = Some(server());
            super::on_exit(stop_shared);
        }
        let server = shared.as_ref().expect("started above");
        (server.url("postgres"), server.url(&name))
    };
    let (target, client) = create(&admin, &name, &url).await;
    Database {
        name,
        url,
        target,
        client,
    }
}

/// Creates database `name` on `server`; its target and a connection to it, as `postgres`.
pub async fn database(server: &LocalServer, name: &str) -> (Target, Client) {
    create(&server.url("postgres"), name, &server.url(name)).await
}

/// Creates database `name`, through the server's `postgres` database at `admin`; the target of
/// the new one (at `url`) and a connection to it.
pub async fn create(admin: &str, name: &str, url: &str) -> (Target, Client) {
    let admin = Target::exact(admin)
        .unwrap()
        .connect_driven()
        .await
        .unwrap();
    admin
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .await
        .unwrap();
    let target = Target::exact(url).unwrap();
    let client = target.connect_driven().await.unwrap();
    (target, client)
}

/// The connection string of database `name` on `server` as login role `user`.
pub fn url_as(server: &LocalServer, name: &str, user: &str) -> String {
    server
        .url(name)
        .replace("user=postgres", &format!("user={user}"))
}

/// The target of database `name` on `server` as login role `user`, with `application_name`.
pub fn target_as(server: &LocalServer, name: &str, user: &str, application: &str) -> Target {
    let url = url_as(server, name, user);
    Target::exact(&format!("{url} application_name={application}")).unwrap()
}

/// Database `name` on `server`, migrated, with the login roles `viewers` made viewers and
/// `operators` operators: a connection to it as `postgres`.
pub async fn with_logins(
    server: &LocalServer,
    name: &str,
    viewers: &[&str],
    operators: &[&str],
) -> Client {
    let (_, mut owner) = database(server, name).await;
    gavel::store::postgres::migrate(&mut owner).await.unwrap();
    for role in viewers.iter().chain(operators) {
        owner
            .batch_execute(&format!("CREATE ROLE {role} LOGIN"))
            .await
            .unwrap();
    }
    let owned = |roles: &[&str]| roles.iter().map(|r| r.to_string()).collect::<Vec<_>>();
    gavel::store::postgres::grant(&owner, &owned(viewers), &owned(operators))
        .await
        .unwrap();
    owner
}

/// A gated debate with two personas: `$1` is its id.
pub const SESSION: &str = "INSERT INTO debate_sessions (id, question, controller_mode, personas, token_budget) \
    VALUES ($1, 'Is the test debate real?', 'gated', '[\"theorist\", \"skeptic\"]', 10000)";

/// [`fresh_database`], migrated.
pub async fn migrated_database(name: &str) -> Database {
    let mut database = fresh_database(name).await;
    gavel::store::postgres::migrate(&mut database.client)
        .await
        .unwrap();
    database
}

/// Plays `fixtures` into a migrated database at once, as an orchestrator with no pauses would.
pub async fn play_into(target: &Target, fixtures: Vec<gavel::simulate::Fixture>) {
    use gavel::config::{Config, SimulatorConfig};
    let config = std::sync::Arc::new(Config {
        simulator: SimulatorConfig {
            round_interval_secs: 0.0,
            turn_interval_secs: 0.0,
            gated_timeout_secs: 0.0,
        },
        ..Config::default()
    });
    let (_playback, clock) = tokio::sync::watch::channel(gavel::simulate::Playback::default());
    gavel::simulate::postgres::simulate(
        target,
        fixtures,
        config,
        clock,
        false,
        &gavel::progress::Progress::none(),
    )
    .await
    .unwrap();
}

/// A console model fed by the live backend.
pub struct Console {
    pub model: Model,
    pub events: UnboundedReceiver<Event>,
    pub commands: UnboundedSender<Command>,
    /// Every connection state the console was told of, in order.
    pub links: Vec<Link>,
}

impl Console {
    /// A console attached to `target`, acting as the operator "alice".
    pub fn attach(target: Target) -> Console {
        Console::attach_to(Sides::one(target), "alice")
    }

    /// A console reading and writing as `sides` says, acting as the operator `operator`.
    pub fn attach_to(sides: Sides, operator: &str) -> Console {
        let (sender, events) = unbounded_channel();
        let mut model = Model::live(
            "test".into(),
            operator.into(),
            &gavel::config::Config::default(),
        );
        if sides.reads_elsewhere() {
            model.live.reading = Some(Reading::new(sides.read().describe()));
        }
        let commands =
            gavel::console::backend::live::start(sides, sender, None, Default::default());
        Console {
            model,
            events,
            commands,
            links: Vec::new(),
        }
    }

    /// A console on several databases at once, each a context with the name given, acting as
    /// the operator "alice".
    pub fn attach_all(contexts: Vec<(&str, Target)>) -> Console {
        let (sender, events) = unbounded_channel();
        let mut model = Model::live(
            "test".into(),
            "alice".into(),
            &gavel::config::Config::default(),
        );
        model.live.contexts = Contexts::new(
            contexts
                .iter()
                .map(|(name, _)| Context::new((*name).to_owned(), false, None))
                .collect(),
        );
        let sides = contexts.into_iter().map(|(_, t)| Sides::one(t)).collect();
        let commands = gavel::console::backend::fleets::start(sides, sender, Default::default());
        Console {
            model,
            events,
            commands,
            links: Vec::new(),
        }
    }

    /// A console of `operator`'s that reads `read` (a subscriber) and writes `write` (its
    /// primary), once its feed is live and the primary has said what its role may write.
    pub async fn reading(write: &Target, read: &Target, operator: &str) -> Console {
        let sides = Sides::split(write.clone(), read.clone());
        let mut console = Console::attach_to(sides, operator);
        console
            .until("the live link and the role's rights", |m| {
                m.live.link == Some(Link::Live) && m.live.role.is_some()
            })
            .await;
        console
    }

    /// Hands `event` to `update()` (noting a change of link) and sends the commands it gives.
    pub fn handle(&mut self, event: Event) {
        if let Event::Link(link) = &event {
            self.links.push(link.clone());
        }
        for command in update(&mut self.model, event) {
            let _ = self.commands.send(command);
        }
    }

    /// A console attached to `target`, once its feed is live and the database has said what
    /// its role may write.
    pub async fn live(target: Target) -> Console {
        let mut console = Console::attach(target);
        console
            .until("the live link and the role's rights", |m| {
                m.live.link == Some(Link::Live) && m.live.role.is_some()
            })
            .await;
        console
    }

    /// A console attached to `target`, once its feed is live and shows the decision pending on
    /// debate `session`, which is selected.
    pub async fn at_pending(target: Target, session: &str) -> Console {
        let mut console = Console::live(target).await;
        console
            .until("the pending decision", |m| {
                m.debate(session).is_some_and(|d| d.pending().is_some())
            })
            .await;
        console.select(session);
        console
    }

    /// Stops `server`, presses `keys` (an action confirmed), waits for the write to fail and the
    /// feed to notice, then starts the server again and hands it back.
    pub async fn act_while_down(&mut self, server: LocalServer, keys: &str) -> LocalServer {
        let server = stopped(server).await;
        self.press(keys);
        self.until("the write to fail", |m| m.desk.retry.is_some())
            .await;
        self.until("the feed to notice", |m| m.live.link != Some(Link::Live))
            .await;
        resumed(server).await
    }

    /// Waits for the answer to the action just confirmed (the footer no longer says it is
    /// being sent), and returns what the footer says of it.
    pub async fn answer(&mut self) -> String {
        self.until("the action's answer", |m| {
            m.desk
                .flash
                .as_ref()
                .is_some_and(|f| !f.text.starts_with("sending"))
        })
        .await;
        self.flash()
    }

    /// Waits for turns `1..=count` of debate `session`, then for whatever else arrives within
    /// the next 2 s (a late duplicate), then asserts each is shown exactly once.
    pub async fn each_turn_once(&mut self, session: &str, count: u64) {
        self.until("every turn", |m| {
            m.debate(session)
                .is_some_and(|d| d.turns.len() as u64 >= count)
        })
        .await;
        self.settle(Duration::from_secs(2)).await;
        assert_each_turn_once(&self.model, session, count);
    }

    /// Applies whatever events arrive within `how_long`.
    pub async fn settle(&mut self, how_long: Duration) {
        let settled = Instant::now() + how_long;
        while let Ok(Some(event)) =
            tokio::time::timeout_at(settled.into(), self.events.recv()).await
        {
            self.handle(event);
        }
    }

    /// Applies events until `done` holds, failing after 30 s.
    pub async fn until(&mut self, what: &str, done: impl Fn(&Model) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !done(&self.model) {
            let left = deadline.saturating_duration_since(Instant::now());
            match tokio::time::timeout(left, self.events.recv()).await {
                Ok(Some(event)) => self.handle(event),
                _ => panic!(
                    "timed out waiting for {what}; link {:?}",
                    self.model.live.link
                ),
            }
        }
    }

    /// Presses `keys` one after the other, sending the commands they give.
    pub fn press(&mut self, keys: &str) {
        for key in keys.chars() {
            self.handle(Event::Key(crossterm::event::KeyEvent::from(
                crossterm::event::KeyCode::Char(key),
            )));
        }
    }

    /// Selects debate `id`.
    pub fn select(&mut self, id: &str) {
        let seq = self.model.debates.seq(id).expect("debate on screen");
        self.model.select(seq);
    }

    /// The footer's message, or "".
    pub fn flash(&self) -> String {
        self.model
            .desk
            .flash
            .as_ref()
            .map_or_else(String::new, |f| f.text.clone())
    }
}

/// `server` stopped (fast: its connections cut), off the async threads.
pub async fn stopped(mut server: LocalServer) -> LocalServer {
    tokio::task::spawn_blocking(move || {
        server.stop().unwrap();
        server
    })
    .await
    .unwrap()
}

/// `server` started again, off the async threads.
pub async fn resumed(mut server: LocalServer) -> LocalServer {
    tokio::task::spawn_blocking(move || {
        server.resume().unwrap();
        server
    })
    .await
    .unwrap()
}

/// Runs `sql` on database `url` with a fresh connection, from a test that is not async.
pub fn sql(url: &str, sql: &str) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let client = Target::exact(url).unwrap().connect_driven().await.unwrap();
        client.batch_execute(sql).await.unwrap();
    });
}

pub async fn table_count(client: &Client, sql: &str) -> i64 {
    client.query_one(sql, &[]).await.unwrap().get(0)
}

/// How many operator actions are recorded.
pub async fn action_count(client: &Client) -> i64 {
    table_count(client, "SELECT count(*) FROM debate_operator_actions").await
}

/// The first column of what `sql` returns, as text.
pub async fn texts(client: &Client, sql: &str) -> Vec<String> {
    client
        .query(sql, &[])
        .await
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect()
}

/// Writes the controller's `decision` (NULL for `None`) on round `round` of `session`.
pub async fn decide(client: &Client, session: &str, round: i32, decision: Option<&str>) {
    client
        .execute(
            "INSERT INTO debate_round_decisions (session_id, round_index, decision) \
             VALUES ($1, $2, $3)",
            &[&session, &round, &decision],
        )
        .await
        .unwrap();
}

/// Writes round `round` of `session` decided again as `decision` (an orchestrator's UPDATE).
pub async fn redecide(client: &Client, session: &str, round: i32, decision: &str) {
    client
        .execute(
            "UPDATE debate_round_decisions SET decision = $3 \
             WHERE session_id = $1 AND round_index = $2",
            &[&session, &round, &decision],
        )
        .await
        .unwrap();
}

/// Sends `signal` to `pids`; whether every one of them was there to receive it.
fn signal(pids: &[u32], signal: &str) -> bool {
    std::process::Command::new("kill")
        .arg(format!("-{signal}"))
        .args(pids.iter().map(u32::to_string))
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap()
        .success()
}

/// A backend stopped dead (SIGSTOP): its connection stays open and nothing answers on it, as
/// on a frozen host, while the rest of the server goes on. Thawed (SIGCONT) when dropped.
pub struct Frozen {
    pid: u32,
}

impl Frozen {
    pub fn backend(pid: u32) -> Frozen {
        assert!(signal(&[pid], "STOP"), "kill -STOP {pid}");
        Frozen { pid }
    }
}

impl Drop for Frozen {
    fn drop(&mut self) {
        signal(&[self.pid], "CONT");
    }
}

/// Writes turns `ids` of debate `session` (turn i in round i), one every `pause`, through any
/// outage: each insert is retried on a fresh connection until it lands, and the ids are given,
/// so an insert that landed but went unanswered is not doubled.
pub async fn write_turns(
    target: Target,
    session: &str,
    ids: std::ops::RangeInclusive<i64>,
    pause: Duration,
) {
    let mut client: Option<Client> = None;
    for id in ids {
        loop {
            if client.as_ref().is_none_or(Client::is_closed) {
                client = target.connect_driven().await.ok();
            }
            let inserted = match &client {
                Some(c) => c
                    .execute(
                        "INSERT INTO debate_rounds (id, session_id, round_number, agent_persona, content, tokens_used) \
                         VALUES ($1, $2, $3, 'theorist', 'turn', 10) ON CONFLICT (id) DO NOTHING",
                        &[&id, &session, &(id as i32)],
                    )
                    .await
                    .is_ok(),
                None => false,
            };
            if inserted {
                break;
            }
            client = None;
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        tokio::time::sleep(pause).await;
    }
}

/// Asserts that debate `session` shows turns `1..=count` each exactly once.
pub fn assert_each_turn_once(model: &Model, session: &str, count: u64) {
    let turns = &model.debate(session).expect("the debate on screen").turns;
    let ids: std::collections::BTreeSet<u64> = turns.iter().map(|t| t.id).collect();
    assert_eq!(turns.len() as u64, count, "no round shown twice: {ids:?}");
    assert_eq!(ids, (1..=count).collect(), "no round missed");
}
