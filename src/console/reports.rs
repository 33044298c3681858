//! The reports worker: the console's reports over many debates — the calibration grid replayed
//! over the finished debates, the shadow-week rollup, and the arms of each settings rollout in
//! progress compared — computed on a thread of their own,
//! never in the draw loop. The run loop owns it ([`ReportsWorker`]): it starts it, and once a frame
//! hands it the rows the model gathered ([`ReportsWorker::sync`]), together, so that a stream of rows
//! wakes the worker once a frame rather than once a row, with the report on screen and the
//! calibration cursor's setting. The worker keeps the rows of running and just-finished
//! debates, reduces a debate to its calibration record and shadow row when its rows change — a
//! finished debate once its rows say they are all in (`settled`), since a batch of rows lands
//! table by table and a record made before its decisions would measure rounds their decisions
//! hold the signals of — (a late row of a debate whose rows were let go leaves its record as it
//! was), and replays the grid only while the calibration window is open, at most every
//! `REFRESH`. Each finished debate is also counted in its rollout arm's tally (a
//! [`Ledger`]: sums, not debates), and the rollouts in progress the model last handed over are
//! compared after each reduction, whatever window is open (the guards watch them). Its figures
//! go back to the console as [`Event::Reports`] when they change, and `update` stores them in
//! the model: a view reads plain data.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{
    Receiver, RecvTimeoutError, Sender, SyncSender, TrySendError, channel, sync_channel,
};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use tokio::sync::mpsc::UnboundedSender;

use crate::audit::{ShadowRow, ShadowWeek};
use crate::calibrate::grid::{self, AxisSpec};
use crate::calibrate::rollout::{ArmKey, Comparison, Facts, Ledger, Rollout};
use crate::calibrate::{Measuring, RecordedDebate, Report, Row, Setting};
use crate::config::Config;
use crate::console::app::{
    CALIBRATED, Event, Figures, Model, RUNNING_ROWS, SETTLING, Watched, update,
};
use crate::domain::{Arm, Change, ControllerMode, Debate, SessionStatus};
use crate::policy::ControllerConfig;

/// Rows that may wait for the worker (a few MiB); beyond, rows are left out of the reports.
pub(crate) const QUEUED: usize = 4_096;
/// Rows gathered in the model before the run loop hands them over even if no frame is due.
const GATHERED: usize = 256;
/// The shortest time between two replays of the grid while rows keep landing.
pub(crate) const REFRESH: Duration = Duration::from_millis(500);
/// Messages taken from the queue before the figures are looked at again.
const DRAIN: usize = 4096;
/// Debates whose rows may wait to be reduced before the worker looks at them again.
const DRAIN_DEBATES: usize = 256;
/// Untracked debates remembered, so that a row of one does not start it afresh.
const UNTRACKED: usize = 100_000;
/// How long the worker waits for rows when nothing is due.
const IDLE: Duration = Duration::from_secs(10);
/// Finished debates whose rows stay held for rows that arrive late (an operator's label, a
/// corrected decision).
const LATE_ROWS: usize = 256;

enum Feed {
    Rows(Vec<Change>),
    Watch(Option<Watched>),
    Select(Setting),
    Follow(Vec<Rollout>),
    Wake(UnboundedSender<Event>),
    /// Compute everything now, then answer with the figures.
    CatchUp(Sender<Figures>),
}

/// The run loop's handle on the worker.
#[derive(Debug)]
pub struct ReportsWorker {
    feed: SyncSender<Feed>,
    /// Rows handed over that the worker has not filed yet.
    queued: Arc<AtomicUsize>,
    /// Rows not handed over because the worker was that far behind.
    skipped: Arc<AtomicU64>,
    /// The debates of those rows, until the worker lets go of them.
    left_out: Arc<Mutex<HashSet<String>>>,
    /// The report last said to be on screen.
    watched: Option<Watched>,
    /// The setting last asked for by [`ReportsWorker::select`].
    selected: Option<Setting>,
    /// The generation of the model's rollouts last handed over.
    following: u64,
}

impl std::fmt::Debug for Feed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Feed")
    }
}

impl ReportsWorker {
    /// Starts the worker replaying the grid `specs` over `base`, the configuration in force,
    /// with similarities found as `measuring` says (embeddings, when it measures them, are
    /// computed on the worker); a grid that cannot be used leaves the setting in force alone,
    /// and says why.
    pub fn start(
        specs: &[AxisSpec],
        base: &ControllerConfig,
        measuring: Measuring,
    ) -> ReportsWorker {
        let left_out = Arc::new(Mutex::new(HashSet::new()));
        let skipped = Arc::new(AtomicU64::new(0));
        let worker = Worker::new(specs, base, measuring, left_out.clone(), skipped.clone());
        let (feed, receiver) = sync_channel(QUEUED);
        let queued = Arc::new(AtomicUsize::new(0));
        let filed = queued.clone();
        std::thread::Builder::new()
            .name("gavel-reports".to_owned())
            .spawn(move || worker.run(receiver, &filed))
            .expect("a thread for the reports");
        ReportsWorker {
            feed,
            queued,
            skipped,
            left_out,
            watched: None,
            selected: None,
            following: 0,
        }
    }

    /// [`ReportsWorker::start`] as `config` says: its grid, its controller, its similarity measure
    /// (recorded similarities first).
    pub fn of(config: &Config) -> ReportsWorker {
        ReportsWorker::start(
            &config.calibration.grid,
            &config.controller,
            Measuring::recorded(config.signals.measure()),
        )
    }

    /// Brings the worker up to date with `model`, once a frame: hands it the rows landed since
    /// the last call, and says which report is on screen, the calibration cursor's setting and
    /// the rollouts in progress when they changed.
    pub fn sync(&mut self, model: &mut Model) {
        self.hand_over(model.reports.take_rows());
        self.watch(model.reports.watched());
        if let Some(setting) = model.reports.selecting() {
            self.select(setting);
        }
        self.follow(model);
    }

    /// Hands over the rollouts in progress when the model's changed since last handed over
    /// (never waiting: while the worker's queue is full, again at the next frame).
    fn follow(&mut self, model: &Model) {
        let generation = model.rollout.generation();
        if generation != self.following
            && self
                .feed
                .try_send(Feed::Follow(model.rollout.rollouts().to_vec()))
                .is_ok()
        {
            self.following = generation;
        }
    }

    /// Hands over the rows `model` gathered if they are many (`GATHERED`), after an event,
    /// so that a long burst between two frames reaches the worker a part at a time.
    pub fn relieve(&self, model: &mut Model) {
        if model.reports.waiting() >= GATHERED {
            self.hand_over(model.reports.take_rows());
        }
    }

    /// Hands `rows` to the worker, together. The console never waits for the worker: while
    /// `QUEUED` rows wait for it, rows are left out of the reports and counted, and so are
    /// their debates (see [`Figures::skipped`]).
    pub fn hand_over(&self, rows: Vec<Change>) {
        if rows.is_empty() {
            return;
        }
        let count = rows.len();
        if self.queued.fetch_add(count, Ordering::Relaxed) + count > QUEUED {
            self.leave_out(&rows);
            return;
        }
        if let Err(
            TrySendError::Full(Feed::Rows(rows)) | TrySendError::Disconnected(Feed::Rows(rows)),
        ) = self.feed.try_send(Feed::Rows(rows))
        {
            self.leave_out(&rows);
        }
    }

    /// Rows not handed over (they were counted as queued): they and their debates are left out.
    fn leave_out(&self, rows: &[Change]) {
        self.queued.fetch_sub(rows.len(), Ordering::Relaxed);
        self.skipped.fetch_add(rows.len() as u64, Ordering::Relaxed);
        let mut left_out = lock(&self.left_out);
        for change in rows {
            if left_out.len() < UNTRACKED {
                left_out.insert(change.session_id().to_owned());
            }
        }
    }

    /// The report on screen (only it is kept current); said again only when it changed.
    pub fn watch(&mut self, watched: Option<Watched>) {
        if watched != self.watched && self.feed.send(Feed::Watch(watched)).is_ok() {
            self.watched = watched;
        }
    }

    /// The calibration window's cursor is on `setting`: its debates' outcomes are kept in
    /// [`Figures::selected`] from now on (one setting's, not the grid's). Asking again for the
    /// setting asked for last does nothing. The console never waits: while the worker's queue
    /// is full the ask is dropped, and made again at the next frame.
    pub fn select(&mut self, setting: &Setting) {
        if self.selected.as_ref().is_some_and(|s| s.same_as(setting)) {
            return;
        }
        if self.feed.try_send(Feed::Select(setting.clone())).is_ok() {
            self.selected = Some(setting.clone());
        }
    }

    /// Sends [`Event::Reports`] to `events` with the figures now, and whenever they change.
    pub fn wake(&self, events: UnboundedSender<Event>) {
        let _ = self.feed.send(Feed::Wake(events));
    }

    /// Waits until every row handed over so far is in both reports; their figures (for tests
    /// and scripted use).
    pub fn caught_up(&self) -> Figures {
        let (sender, receiver) = channel();
        if self.feed.send(Feed::CatchUp(sender)).is_ok()
            && let Ok(figures) = receiver.recv()
        {
            return figures;
        }
        Figures::default()
    }

    /// Brings `model`'s figures up to date without a run loop (tests, benches, scripted use):
    /// syncs the worker with it, waits for every row to be in, and applies the figures as the
    /// run loop would deliver them; again while that moves the calibration cursor's setting.
    pub fn catch_up(&mut self, model: &mut Model) {
        loop {
            self.sync(model);
            let asked = self.selected.clone();
            update(model, Event::Reports(Box::new(self.caught_up())));
            let moved = model
                .reports
                .selecting()
                .is_some_and(|setting| !asked.as_ref().is_some_and(|a| a.same_as(setting)));
            if !moved {
                return;
            }
        }
    }
}

fn lock<T>(shared: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while filing a debate left out leaves a whole set: safe to read.
    shared
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// How an untracked debate is remembered: a 64-bit hash of its id, not the id (a flood may
/// leave out tens of thousands; two ids sharing a hash are all but impossible).
fn untracked_key(id: &str) -> u64 {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one(id)
}

/// A debate's rows as held by the worker.
struct Held {
    debate: Debate,
    /// When a row of it last landed, by the count of rows filed.
    touched: u64,
}

/// When a finished debate started and ended, as its session row says.
type Span = (Option<DateTime<Utc>>, Option<DateTime<Utc>>);

/// Which stale debates a reduction takes.
#[derive(Clone, Copy)]
enum Take {
    /// Running debates, and finished ones whose rows are all in ([`settled`]).
    Settled,
    /// All of them.
    All,
}

/// Whether a finished debate's rows are all in, as far as its rows can say: a decision for
/// every round up to its final round count (the session's `num_rounds`, or the latest round a
/// row names), as the round controller decides each round; but an aborted debate's last round,
/// which may have been cut short before its decision, and, where the controller is off, a turn
/// for every round instead. A session row lands before its turns and decisions when a batch is
/// read table by table (after a reconnect, thousands at once), and a round reduced without its
/// decision would be measured from its turns: with a semantic measure, an embedding. Rows, not
/// time, say so: a console starved for seconds between them reduces nothing early.
fn settled(debate: &Debate) -> bool {
    let session = &debate.session;
    let last = session.num_rounds.unwrap_or(0).max(debate.latest_round());
    if session.controller_mode == ControllerMode::Off.into() {
        return (1..=last).all(|round| debate.turns.iter().any(|t| t.round_number == round));
    }
    let cut_short = session.status == SessionStatus::Aborted.into();
    (1..=last - u32::from(cut_short && last > 0)).all(|round| debate.decisions.contains_key(&round))
}

/// The worker's state.
struct Worker {
    measuring: Measuring,
    settings: Vec<Setting>,
    skipped: usize,
    current: Setting,
    base: ControllerConfig,
    problem: Option<String>,
    /// Rows of the [`RUNNING_ROWS`] most recently active running debates, of the [`LATE_ROWS`]
    /// last finished and of finished debates still settling.
    rows: HashMap<String, Held>,
    /// Rows filed, for the above.
    clock: u64,
    /// Running debates among them.
    running: usize,
    /// Debates whose rows were let go while they ran (the least active beyond
    /// [`RUNNING_ROWS`]): their rows are incomplete, so they are left out. The latest
    /// [`UNTRACKED`] are remembered.
    untracked: HashSet<u64>,
    untracked_order: VecDeque<u64>,
    /// Debates untracked so far because too many ran, or finished, at once.
    untracked_count: u64,
    /// Debates a row of which the console left out (see [`ReportsWorker::hand_over`]), to be
    /// untracked.
    left_out: Arc<Mutex<HashSet<String>>>,
    /// Rows the console left out, counted there.
    rows_skipped: Arc<AtomicU64>,
    /// Finished debates in the order they were reduced (an id once per reduction, numbered),
    /// and the number of each one's latest reduction: its rows go with that one.
    late: VecDeque<(String, u64)>,
    latest: HashMap<String, u64>,
    reductions: u64,
    /// Debates whose rows changed since they were last reduced.
    stale: HashSet<String>,
    /// How many stale debates make the worker reduce before the queue is drained.
    reduce_at: usize,
    /// The most recently finished debates' records, with when each started and ended, by id;
    /// their order of finishing.
    records: BTreeMap<String, (RecordedDebate, Span)>,
    finished: VecDeque<String>,
    shadow: BTreeMap<String, (ShadowRow, Vec<String>)>,
    calibration: Arc<Report>,
    /// The first and last time of the debates calibrated.
    window: Option<(DateTime<Utc>, DateTime<Utc>)>,
    week: Arc<ShadowWeek>,
    /// Every finished debate counted in its rollout arm.
    ledger: Ledger,
    /// The rollouts in progress, as the model last handed them over, and their comparisons.
    rollouts: Vec<Rollout>,
    comparisons: Arc<Vec<Comparison>>,
    /// The comparisons changed since the figures were last sent.
    compared: bool,
    /// The setting the calibration window's cursor is on, and its row with outcomes.
    selecting: Option<Setting>,
    selected: Option<Arc<Row>>,
    watched: Option<Watched>,
    /// Records or shadow rows changed since the report was last computed.
    calibration_stale: bool,
    week_stale: bool,
    wake: Option<UnboundedSender<Event>>,
}

impl Worker {
    fn new(
        specs: &[AxisSpec],
        base: &ControllerConfig,
        measuring: Measuring,
        left_out: Arc<Mutex<HashSet<String>>>,
        rows_skipped: Arc<AtomicU64>,
    ) -> Worker {
        let current = Setting::current(base);
        let (settings, skipped, problem) = match grid::settings(specs, &current) {
            Ok((settings, skipped)) => (settings, skipped, None),
            Err(e) => (vec![current.clone()], 0, Some(e)),
        };
        let calibration = Arc::new(Report::run::<RecordedDebate>(
            &[],
            settings.clone(),
            skipped,
            &current,
            base,
            false,
        ));
        Worker {
            measuring,
            settings,
            skipped,
            current,
            base: base.clone(),
            problem,
            rows: HashMap::new(),
            clock: 0,
            running: 0,
            untracked: HashSet::new(),
            untracked_order: VecDeque::new(),
            untracked_count: 0,
            left_out,
            rows_skipped,
            late: VecDeque::new(),
            latest: HashMap::new(),
            reductions: 0,
            stale: HashSet::new(),
            reduce_at: DRAIN_DEBATES,
            records: BTreeMap::new(),
            finished: VecDeque::new(),
            shadow: BTreeMap::new(),
            calibration,
            window: None,
            week: Arc::new(ShadowWeek::default()),
            ledger: Ledger::default(),
            rollouts: Vec::new(),
            comparisons: Arc::default(),
            compared: false,
            selecting: None,
            selected: None,
            watched: None,
            calibration_stale: false,
            week_stale: true,
            wake: None,
        }
    }

    fn figures(&self) -> Figures {
        let refreshing = match self.watched {
            Some(Watched::Calibration) => self.calibration_stale || !self.stale.is_empty(),
            Some(Watched::ShadowWeek) => self.week_stale || !self.stale.is_empty(),
            Some(Watched::Rollout) => !self.stale.is_empty(),
            None => false,
        };
        Figures {
            calibration: self.calibration.clone(),
            shadow: self.week.clone(),
            selected: self.selected.clone(),
            rollout: self.comparisons.clone(),
            window: self.window,
            refreshing,
            problem: self.problem.clone(),
            skipped: self.rows_skipped.load(Ordering::Relaxed),
            untracked: self.untracked_count,
        }
    }

    /// Files what `feed` brings, counting down `queued` as rows are filed, and sends the
    /// figures to the console when they change.
    fn run(mut self, feed: Receiver<Feed>, queued: &AtomicUsize) {
        // When the watched report was last computed; `None` refreshes at once.
        let mut last: Option<Instant> = None;
        // The figures last sent that may change without a refresh.
        let mut shown = (false, 0, 0);
        loop {
            let since = last.map_or(REFRESH, |at| at.elapsed());
            let wait = if self.behind() {
                REFRESH.saturating_sub(since)
            } else {
                IDLE
            };
            let first = match feed.recv_timeout(wait) {
                Ok(message) => Some(message),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => return,
            };
            let mut catching_up = Vec::new();
            let mut selected = false;
            let waiting = std::iter::from_fn(|| feed.try_recv().ok()).take(DRAIN);
            for message in first.into_iter().chain(waiting) {
                match message {
                    Feed::Rows(rows) => {
                        queued.fetch_sub(rows.len(), Ordering::Relaxed);
                        self.file_all(rows);
                    }
                    Feed::Watch(watched) => {
                        self.watched = watched;
                        last = None;
                    }
                    Feed::Select(setting) => {
                        self.selecting = Some(setting);
                        self.select();
                        selected = true;
                    }
                    Feed::Follow(rollouts) => {
                        self.rollouts = rollouts;
                        self.compare();
                    }
                    Feed::Wake(events) => {
                        self.wake = Some(events);
                        selected = true;
                    }
                    Feed::CatchUp(answer) => catching_up.push(answer),
                }
            }
            let everything = !catching_up.is_empty();
            // Unwatched, a refresh reduces debates but leaves the figures shown as they were.
            let refreshed = self.refresh(everything, &mut last);
            let changed = (refreshed && (everything || self.watched.is_some()))
                || selected
                || std::mem::take(&mut self.compared);
            let figures = self.report(changed, &mut shown);
            for answer in catching_up {
                let _ = answer.send(figures.clone());
            }
        }
    }

    /// Files rows handed over, reducing whenever many debates' rows wait (rows wait in memory
    /// until reduced: never many debates' worth).
    fn file_all(&mut self, rows: Vec<Change>) {
        for change in rows {
            self.file(change);
            if self.stale.len() >= self.reduce_at {
                self.reduce(Take::Settled);
            }
        }
    }

    /// Sends the figures to the console when they `changed`, or when what they say of a refresh
    /// under way or of what was left out differs from what was last `shown`; the figures.
    fn report(&mut self, changed: bool, shown: &mut (bool, u64, u64)) -> Figures {
        let figures = self.figures();
        let now = (figures.refreshing, figures.skipped, figures.untracked);
        if (changed || now != *shown)
            && let Some(events) = &self.wake
            && events
                .send(Event::Reports(Box::new(figures.clone())))
                .is_err()
        {
            self.wake = None;
        }
        *shown = now;
        figures
    }

    /// Brings the figures up to date: all of them when `everything` (a catch-up), else the
    /// watched report when it is behind and was last computed (`last`) at least [`REFRESH`]
    /// ago. Whether anything was computed.
    fn refresh(&mut self, everything: bool, last: &mut Option<Instant>) -> bool {
        if everything {
            self.reduce(Take::All);
            self.replay();
            self.sum_week();
            return true;
        }
        let due = last.is_none_or(|at| at.elapsed() >= REFRESH);
        if !(due && self.behind()) {
            return false;
        }
        *last = Some(Instant::now());
        self.reduce(Take::Settled);
        match self.watched {
            Some(Watched::Calibration) if self.calibration_stale => self.replay(),
            Some(Watched::ShadowWeek) if self.week_stale => self.sum_week(),
            _ => {}
        }
        true
    }

    /// Rows wait to be reduced, or the watched report to be recomputed.
    fn behind(&self) -> bool {
        !self.stale.is_empty()
            || match self.watched {
                Some(Watched::Calibration) => self.calibration_stale,
                Some(Watched::ShadowWeek) => self.week_stale,
                Some(Watched::Rollout) | None => false,
            }
    }

    /// Files a row.
    fn file(&mut self, change: Change) {
        let id = change.session_id();
        // A late row of a debate finished long ago, whose rows were let go: its record stands
        // (rebuilt from this row alone it would be wrong).
        let let_go = !self.rows.contains_key(id) && self.records.contains_key(id);
        if let_go && !matches!(change, Change::Session(_)) {
            return;
        }
        if self.untracked.contains(&untracked_key(id)) {
            return;
        }
        if !self.stale.contains(id) {
            self.stale.insert(id.to_owned());
        }
        if !self.rows.contains_key(id) {
            if self.running >= RUNNING_ROWS {
                self.untrack_least_active();
            }
            // A debate is running until its session row says otherwise.
            self.running += 1;
        }
        self.clock += 1;
        let held = self.rows.entry(id.to_owned()).or_insert_with(|| Held {
            debate: Debate::new(id),
            touched: 0,
        });
        held.touched = self.clock;
        let was_running = held.debate.session.is_running();
        held.debate.apply(change);
        let is_running = held.debate.session.is_running();
        self.running = self.running + usize::from(is_running) - usize::from(was_running);
    }

    /// Lets go of the rows of the running debate whose last row is the oldest.
    fn untrack_least_active(&mut self) {
        let least = self
            .rows
            .iter()
            .filter(|(_, held)| held.debate.session.is_running())
            .min_by_key(|(_, held)| held.touched)
            .map(|(id, _)| id.clone());
        if let Some(id) = least {
            self.untracked_count += 1;
            self.untrack(id);
        }
    }

    /// Lets go of the debates a row of which the console left out.
    fn untrack_left_out(&mut self) {
        let left_out = std::mem::take(&mut *lock(&self.left_out));
        for id in left_out {
            self.untrack(id);
        }
    }

    /// Leaves debate `id` out of the reports: its rows, record and shadow row go, and rows of
    /// it that land later are not taken.
    fn untrack(&mut self, id: String) {
        let key = untracked_key(&id);
        if self.untracked.contains(&key) {
            return;
        }
        if let Some(held) = self.rows.remove(&id)
            && held.debate.session.is_running()
        {
            self.running -= 1;
        }
        self.stale.remove(&id);
        if self.records.remove(&id).is_some() {
            self.calibration_stale = true;
        }
        self.ledger.withdraw(&id);
        if self.shadow.remove(&id).is_some() {
            self.week_stale = true;
        }
        self.untracked.insert(key);
        self.untracked_order.push_back(key);
        if self.untracked_order.len() > UNTRACKED
            && let Some(oldest) = self.untracked_order.pop_front()
        {
            self.untracked.remove(&oldest);
        }
    }

    /// Reduces the debates whose rows changed that `take` takes: a finished debate to its
    /// record, a shadow debate to its row; then lets go of rows no longer needed.
    fn reduce(&mut self, take: Take) {
        self.untrack_left_out();
        let mut ids: Vec<String> = self.stale.drain().collect();
        if let Take::Settled = take {
            let settling = |id: &String| {
                self.rows
                    .get(id)
                    .is_some_and(|held| !held.debate.session.is_running() && !settled(&held.debate))
            };
            let (mut waiting, ready): (Vec<String>, Vec<String>) =
                ids.into_iter().partition(settling);
            ids = ready;
            if waiting.len() > SETTLING {
                // The longest waiting first: rows that never come leave no room for others.
                waiting.sort_by_key(|id| std::cmp::Reverse(self.rows.get(id).map(|h| h.touched)));
                for id in waiting.split_off(SETTLING) {
                    self.untracked_count += 1;
                    self.untrack(id);
                }
            }
            self.stale.extend(waiting);
        }
        self.reduce_at = self.stale.len() + DRAIN_DEBATES;
        for id in ids {
            let Some(Held { debate, .. }) = self.rows.get(&id) else {
                continue;
            };
            if ShadowRow::is_shadow(debate) {
                self.shadow.insert(id.clone(), ShadowRow::of(debate));
                self.week_stale = true;
            } else if self.shadow.remove(&id).is_some() {
                self.week_stale = true;
            }
            if debate.session.is_running() {
                if self.records.remove(&id).is_some() {
                    self.calibration_stale = true;
                    self.ledger.withdraw(&id);
                }
                continue;
            }
            let record = RecordedDebate::from_debate(debate, &self.measuring);
            let facts = Facts::of(debate, &record);
            self.ledger.count(&id, ArmKey::of(&debate.session), facts);
            let span = (debate.session.created_at, debate.session.finished_at);
            if self.records.insert(id.clone(), (record, span)).is_none() {
                self.finished.push_back(id.clone());
            }
            self.calibration_stale = true;
            self.reductions += 1;
            self.latest.insert(id.clone(), self.reductions);
            self.late.push_back((id, self.reductions));
        }
        while self.late.len() > LATE_ROWS {
            let Some((id, number)) = self.late.pop_front() else {
                break;
            };
            if self.latest.get(&id) == Some(&number) {
                self.latest.remove(&id);
                if self
                    .rows
                    .get(&id)
                    .is_some_and(|held| !held.debate.session.is_running())
                {
                    self.rows.remove(&id);
                }
            }
        }
        while self.finished.len() > CALIBRATED {
            if let Some(id) = self.finished.pop_front() {
                self.records.remove(&id);
                // It leaves the calibration, not its arm's tally.
                self.ledger.settle(&id);
                if self.shadow.remove(&id).is_some() {
                    self.week_stale = true;
                }
            }
        }
        if !self.rollouts.is_empty() {
            self.compare();
        }
    }

    /// Compares the arms of each rollout in progress, with the debates running in each now
    /// (of those whose rows the worker holds); notes when the comparisons changed.
    fn compare(&mut self) {
        let mut running = vec![[0u64; 2]; self.rollouts.len()];
        let sessions = self.rows.values().map(|held| &held.debate.session);
        for session in sessions.filter(|s| s.is_running()) {
            for (rollout, counts) in self.rollouts.iter().zip(&mut running) {
                if let Some(arm) = rollout.side(&session.debate_type, session.settings) {
                    counts[usize::from(arm == Arm::Canary)] += 1;
                }
            }
        }
        let comparisons: Vec<Comparison> = self
            .rollouts
            .iter()
            .zip(running)
            .map(|(rollout, running)| self.ledger.compare(rollout, running))
            .collect();
        if *self.comparisons != comparisons {
            self.comparisons = Arc::new(comparisons);
            self.compared = true;
        }
    }

    fn replay(&mut self) {
        let records: Vec<&RecordedDebate> = self.records.values().map(|(r, _)| r).collect();
        self.window = self
            .records
            .values()
            .fold(None, |window, (_, (start, end))| {
                let times = [*start, *end].into_iter().flatten();
                times.fold(window, |window, at| match window {
                    None => Some((at, at)),
                    Some((first, last)) => Some((first.min(at), last.max(at))),
                })
            });
        self.calibration = Arc::new(Report::run(
            &records,
            self.settings.clone(),
            self.skipped,
            &self.current,
            &self.base,
            false,
        ));
        self.calibration_stale = false;
        self.select();
    }

    /// Replays the selected setting again over the records, keeping each debate's outcome.
    fn select(&mut self) {
        let records: Vec<&RecordedDebate> = self.records.values().map(|(r, _)| r).collect();
        self.selected = self.selecting.as_ref().and_then(|setting| {
            self.calibration
                .with_outcomes(setting, &records, &self.base)
                .map(Arc::new)
        });
    }

    fn sum_week(&mut self) {
        self.week = Arc::new(ShadowWeek::sum(self.shadow.values().cloned()));
        self.week_stale = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{
        ControllerDecision, Decision, Reported, Session, Signals, Turn, TurnMetadata,
    };
    use crate::signals::Measure;

    /// A finished debate of one round in shadow mode, in the order a batch lands: its session
    /// row, its turn, then its decision, which records the round's similarity as 0.5.
    fn finished(id: &str) -> [Change; 3] {
        finished_with(id, |_| {})
    }

    /// [`finished`], its session row changed by `edit`.
    fn finished_with(id: &str, edit: impl FnOnce(&mut Session)) -> [Change; 3] {
        let mut session = Session::placeholder(id);
        session.status = SessionStatus::Completed.into();
        session.controller_mode = ControllerMode::Shadow.into();
        edit(&mut session);
        session.num_rounds = Some(1);
        let turn = Turn {
            id: 1,
            session_id: id.into(),
            round_number: 1,
            agent_persona: "a".into(),
            content: "The trial was unblinded.\n\nVERDICT: wait".into(),
            tokens_used: 100,
            superseded: false,
            metadata: TurnMetadata::default(),
            created_at: None,
            issues: Vec::new(),
        };
        let decision = ControllerDecision {
            session_id: id.into(),
            round_index: 1,
            decision: Reported::Known(Decision::StopConverged),
            signals: Signals {
                similarity: Some(0.5),
                verdict: Some("wait".into()),
                verdict_split: Some(false),
                new_claims: Some(0),
                ..Signals::default()
            },
            decided_at: None,
            issues: Vec::new(),
        };
        [
            Change::Session(session),
            Change::Turn(turn),
            Change::Decision(decision),
        ]
    }

    fn worker() -> Worker {
        let measuring = Measuring::recorded(Measure::Lexical);
        let left_out = Arc::new(Mutex::new(HashSet::new()));
        let skipped = Arc::new(AtomicU64::new(0));
        Worker::new(
            &[],
            &ControllerConfig::default(),
            measuring,
            left_out,
            skipped,
        )
    }

    /// A console starved between a debate's rows (seconds after a reconnect, say) used to
    /// reduce it 0.25 s after its last row landed, its decision not in yet: the round was
    /// measured from its turn (semantically: the model loaded). Its rows say when it is whole.
    #[test]
    fn a_finished_debate_waits_for_its_decisions_however_long_they_take_to_land() {
        let mut worker = worker();
        let [session, turn, decision] = finished("d1");
        worker.file(session);
        worker.reduce(Take::Settled);
        worker.file(turn);
        worker.reduce(Take::Settled);
        assert!(
            worker.records.is_empty(),
            "reduced before the decision of round 1 landed"
        );

        worker.file(decision);
        worker.reduce(Take::Settled);
        let (record, _) = &worker.records["d1"];
        assert_eq!(
            record.rounds[0].signals.similarity,
            Some(0.5),
            "the decision's similarity, not one measured from the turn"
        );
        assert!(worker.stale.is_empty());
    }

    #[test]
    fn an_aborted_debates_last_round_and_a_debate_without_a_controller_need_no_decision() {
        let mut worker = worker();
        let [aborted, turn, _] =
            finished_with("aborted", |s| s.status = SessionStatus::Aborted.into());
        worker.file(aborted);
        worker.file(turn);
        worker.reduce(Take::Settled);
        assert!(
            worker.records.contains_key("aborted"),
            "cut short in round 1"
        );

        let [off, turn, _] =
            finished_with("off", |s| s.controller_mode = ControllerMode::Off.into());
        worker.file(off);
        worker.reduce(Take::Settled);
        assert!(!worker.records.contains_key("off"), "its turn is not in");
        worker.file(turn);
        worker.reduce(Take::Settled);
        assert!(worker.records.contains_key("off"));
    }

    #[test]
    fn only_so_many_finished_debates_wait_to_settle_the_longest_waiting_are_left_out() {
        let mut worker = worker();
        let beyond = 10;
        let debates: Vec<[Change; 3]> = (0..SETTLING + beyond)
            .map(|n| finished(&format!("d{n:05}")))
            .collect();
        for [session, turn, _] in &debates {
            worker.file(session.clone());
            worker.file(turn.clone());
        }
        worker.reduce(Take::Settled);
        assert!(worker.records.is_empty(), "nothing was reduced unsettled");
        assert_eq!(worker.stale.len(), SETTLING);
        assert!(worker.untracked.contains(&untracked_key("d00000")));
        assert!(!worker.rows.contains_key("d00000"));
        assert_eq!(worker.untracked_count, beyond as u64);

        for [_, _, decision] in debates {
            worker.file(decision);
        }
        worker.reduce(Take::Settled);
        assert_eq!(worker.records.len(), SETTLING);
        let latest = format!("d{:05}", SETTLING + beyond - 1);
        assert!(worker.records.contains_key(&latest), "the latest stayed");
    }

    #[test]
    fn a_debate_a_row_of_which_the_console_left_out_is_left_out_of_the_reports() {
        let mut worker = worker();
        let [session, turn, decision] = finished("d1");
        worker.file(session);
        // The worker was behind: the console could not hand the turn over.
        lock(&worker.left_out).insert("d1".to_owned());
        worker.file(decision);
        worker.reduce(Take::All);
        assert!(worker.records.is_empty(), "a record of part of its rows");
        worker.file(turn);
        worker.reduce(Take::All);
        assert!(worker.records.is_empty() && worker.rows.is_empty());
        assert_eq!(worker.untracked_count, 0, "not counted as too many running");
    }

    #[test]
    fn a_running_debate_is_reduced_at_once() {
        let mut worker = worker();
        let [session, turn, _] = finished_with("d1", |s| s.status = SessionStatus::Running.into());
        worker.file(session);
        worker.file(turn);
        worker.reduce(Take::Settled);
        assert!(worker.stale.is_empty(), "a running debate is not held back");
        assert!(worker.records.is_empty());
    }
}
