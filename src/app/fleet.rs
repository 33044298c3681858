//! The debates the console holds, at a cost that follows the screen: one small [`Summary`] per
//! debate (what the list shows and filters on), kept up to date as rows land; the list's order
//! and filter kept as an ordered set, so that a frame reads only the rows it draws; counts kept
//! as they change; and the retention of finished debates. Turn contents are not held here: the
//! console keeps the full rows of the open debate only (see [`super::Model`]).

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::ops::Bound;

use crate::domain::limits::MAX_ROUND_CEILING;
use crate::domain::{Change, ControllerMode, Decision, Reported, SessionStatus};
use crate::text::one_line;

/// A debate's number in the order debates first appeared: never reused, never moved.
pub type Seq = u64;

/// Characters of a question kept for the list (the detail's title shows it whole).
const QUESTION_CHARS: usize = 160;
/// Personas kept per debate for the filter.
const PERSONAS: usize = 32;

/// A row of a debate, known by its table and key: what [`Summary`] remembers of rows with issues.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum RowKey {
    Session,
    Turn(u64),
    Decision(u32),
    Judgment(u64),
    Action(u32),
}

impl RowKey {
    fn of(change: &Change) -> RowKey {
        match change {
            Change::Session(_) => RowKey::Session,
            Change::Turn(t) => RowKey::Turn(t.id),
            Change::Decision(d) => RowKey::Decision(d.round_index),
            Change::Judgment(j) => RowKey::Judgment(j.id),
            Change::Action(a) => RowKey::Action(a.round_index),
        }
    }
}

/// What the debates list shows of one debate, updated row by row.
#[derive(Debug, Clone)]
pub struct Summary {
    pub seq: Seq,
    pub id: String,
    /// The question on one line, cut to [`QUESTION_CHARS`].
    pub question: String,
    pub status: Reported<SessionStatus>,
    pub mode: Reported<ControllerMode>,
    pub max_rounds: u32,
    /// The highest round any placed turn or decision names.
    pub latest_round: u32,
    /// The decision of the highest round decided.
    pub last_decision: Option<Reported<Decision>>,
    /// Rounds with a decision, and rounds with an operator action (sorted).
    decided: Vec<u32>,
    acted: Vec<u32>,
    /// The roster and whoever spoke, for the filter.
    personas: Vec<String>,
    /// Rows whose latest version was read with issues.
    flagged: BTreeSet<RowKey>,
}

/// Whether a row's round is one a debate files it under.
fn placed(round: u32) -> bool {
    (1..=MAX_ROUND_CEILING).contains(&round)
}

/// Inserts `value` into the sorted `set` unless present.
fn insert_sorted(set: &mut Vec<u32>, value: u32) {
    if let Err(at) = set.binary_search(&value) {
        set.insert(at, value);
    }
}

impl Summary {
    fn new(seq: Seq, id: &str) -> Summary {
        Summary {
            seq,
            id: id.to_owned(),
            question: String::new(),
            status: SessionStatus::Running.into(),
            mode: Reported::Unknown(String::new()),
            max_rounds: 0,
            latest_round: 0,
            last_decision: None,
            decided: Vec::new(),
            acted: Vec::new(),
            personas: Vec::new(),
            flagged: BTreeSet::new(),
        }
    }

    fn add_persona(&mut self, persona: &str) {
        if self.personas.len() < PERSONAS && !self.personas.iter().any(|p| p == persona) {
            self.personas.push(persona.to_owned());
        }
    }

    /// Files what the list needs of one row; applying a row again changes nothing.
    fn apply(&mut self, change: &Change) {
        let key = RowKey::of(change);
        if change.issues().is_empty() {
            self.flagged.remove(&key);
        } else {
            self.flagged.insert(key);
        }
        match change {
            Change::Session(s) => {
                self.question = one_line(&s.question).chars().take(QUESTION_CHARS).collect();
                self.status = s.status.clone();
                self.mode = s.controller_mode.clone();
                self.max_rounds = s.max_rounds;
                for persona in &s.personas {
                    self.add_persona(persona);
                }
            }
            Change::Turn(t) if placed(t.round_number) => {
                self.latest_round = self.latest_round.max(t.round_number);
                self.add_persona(&t.agent_persona);
            }
            Change::Decision(d) if placed(d.round_index) => {
                self.latest_round = self.latest_round.max(d.round_index);
                insert_sorted(&mut self.decided, d.round_index);
                if self.decided.last() == Some(&d.round_index) {
                    self.last_decision = Some(d.decision.clone());
                }
            }
            Change::Action(a) if placed(a.round_index) => {
                insert_sorted(&mut self.acted, a.round_index)
            }
            _ => {}
        }
    }

    pub fn is_running(&self) -> bool {
        self.status == Reported::Known(SessionStatus::Running)
    }

    /// The round of the decision awaiting the operator: the latest, while the debate runs, if no
    /// action resolved it.
    pub fn pending(&self) -> Option<u32> {
        let latest = *self.decided.last()?;
        (self.is_running() && self.acted.binary_search(&latest).is_err()).then_some(latest)
    }

    /// Decisions of a running debate that no action resolved.
    pub fn unresolved(&self) -> usize {
        if !self.is_running() {
            return 0;
        }
        self.decided
            .iter()
            .filter(|r| self.acted.binary_search(r).is_err())
            .count()
    }

    /// Whether any of its rows was read with issues.
    pub fn flagged(&self) -> bool {
        !self.flagged.is_empty()
    }

    /// Whether a filter (already lower-case) matches: its id, question, status, mode or a
    /// persona contains the text.
    pub fn matches(&self, needle: &str) -> bool {
        let contains = |text: &str| text.to_lowercase().contains(needle);
        needle.is_empty()
            || contains(&self.id)
            || contains(&self.question)
            || contains(&self.status.to_string())
            || contains(&self.mode.to_string())
            || self.personas.iter().any(|p| contains(p))
    }
}

/// The order of the debates list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SortOrder {
    /// As the debates first appeared.
    #[default]
    Arrival,
    /// Debates with a pending decision, then running ones, then the rest.
    PendingFirst,
    /// By session id.
    Id,
}

impl SortOrder {
    pub fn next(self) -> SortOrder {
        match self {
            SortOrder::Arrival => SortOrder::PendingFirst,
            SortOrder::PendingFirst => SortOrder::Id,
            SortOrder::Id => SortOrder::Arrival,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            SortOrder::Arrival => "arrival",
            SortOrder::PendingFirst => "pending first",
            SortOrder::Id => "id",
        }
    }

    /// Where `summary` goes in the list.
    fn key(self, summary: &Summary) -> ListKey {
        match self {
            SortOrder::Arrival => (0, String::new(), summary.seq),
            SortOrder::PendingFirst => {
                let class = match (summary.pending(), summary.is_running()) {
                    (Some(_), _) => 0,
                    (None, true) => 1,
                    (None, false) => 2,
                };
                (class, String::new(), summary.seq)
            }
            SortOrder::Id => (0, summary.id.clone(), summary.seq),
        }
    }
}

/// A place in the list: a class, an id (for the id order) and the arrival number.
type ListKey = (u8, String, Seq);

/// The rows of the list a screen shows: those drawn, and which of them is selected.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Window {
    pub rows: Vec<Seq>,
    pub selected: Option<usize>,
}

/// What filing a row did to the list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Filed {
    pub seq: Seq,
    /// The row is the first of its debate held.
    pub created: bool,
    /// The counts, the order or the membership of the list changed.
    pub reordered: bool,
}

/// Every debate held, in the list's order and filter.
#[derive(Debug, Clone)]
pub struct Fleet {
    summaries: HashMap<Seq, Summary>,
    by_id: HashMap<String, Seq>,
    next_seq: Seq,
    sort: SortOrder,
    /// Lower-case.
    filter: String,
    /// The debates the filter lets through, in the list's order; each debate's key is kept
    /// beside it so that a row landing moves it in O(log n).
    listed: BTreeSet<ListKey>,
    keys: HashMap<Seq, ListKey>,
    pending: usize,
    /// Finished debates, oldest finish first; beyond `keep_finished` the oldest are dropped.
    finished: VecDeque<Seq>,
    keep_finished: usize,
}

impl Fleet {
    /// A fleet that holds the running debates and the `keep_finished` most recently finished.
    pub fn new(keep_finished: usize) -> Fleet {
        Fleet {
            summaries: HashMap::new(),
            by_id: HashMap::new(),
            next_seq: 0,
            sort: SortOrder::default(),
            filter: String::new(),
            listed: BTreeSet::new(),
            keys: HashMap::new(),
            pending: 0,
            finished: VecDeque::new(),
            keep_finished,
        }
    }

    /// Files a row under its debate, creating the debate on first sight.
    pub fn apply(&mut self, change: &Change) -> Filed {
        let id = change.session_id();
        let (seq, created) = match self.by_id.get(id) {
            Some(&seq) => (seq, false),
            None => {
                let seq = self.next_seq;
                self.next_seq += 1;
                self.by_id.insert(id.to_owned(), seq);
                self.summaries.insert(seq, Summary::new(seq, id));
                (seq, true)
            }
        };
        let summary = self.summaries.get_mut(&seq).expect("filed above");
        let (was_pending, was_running) = (summary.pending().is_some(), summary.is_running());
        summary.apply(change);
        let (is_pending, is_running) = (summary.pending().is_some(), summary.is_running());
        self.pending = self.pending + usize::from(is_pending) - usize::from(was_pending);
        if was_running && !is_running {
            self.finished.push_back(seq);
        }
        let moved = self.relist(seq);
        Filed {
            seq,
            created,
            reordered: created || moved || was_pending != is_pending,
        }
    }

    /// Puts the debate `seq` where the order and filter say; whether its place changed.
    fn relist(&mut self, seq: Seq) -> bool {
        let summary = &self.summaries[&seq];
        let key = summary
            .matches(&self.filter)
            .then(|| self.sort.key(summary));
        let old = match &key {
            Some(key) => self.keys.insert(seq, key.clone()),
            None => self.keys.remove(&seq),
        };
        if old == key {
            return false;
        }
        if let Some(old) = old {
            self.listed.remove(&old);
        }
        if let Some(key) = key {
            self.listed.insert(key);
        }
        true
    }

    /// Drops the longest-finished debates beyond what is kept, except `keep` (the selection,
    /// which does not count) and any that run again.
    pub fn retain(&mut self, keep: Option<Seq>) {
        let mut kept = None;
        while self.finished.len() > self.keep_finished {
            let Some(seq) = self.finished.pop_front() else {
                break;
            };
            match self.summaries.get(&seq) {
                Some(summary) if summary.is_running() => {}
                Some(_) if Some(seq) == keep => kept = Some(seq),
                Some(_) => self.evict(seq),
                None => {}
            }
        }
        if let Some(seq) = kept {
            self.finished.push_front(seq);
        }
    }

    fn evict(&mut self, seq: Seq) {
        if let Some(summary) = self.summaries.remove(&seq) {
            self.by_id.remove(&summary.id);
            if summary.pending().is_some() {
                self.pending -= 1;
            }
        }
        if let Some(key) = self.keys.remove(&seq) {
            self.listed.remove(&key);
        }
    }

    /// Orders and filters the list anew (`filter` in any case).
    pub fn arrange(&mut self, sort: SortOrder, filter: &str) {
        let filter = filter.to_lowercase();
        if sort == self.sort && filter == self.filter {
            return;
        }
        self.sort = sort;
        self.filter = filter;
        self.listed.clear();
        self.keys.clear();
        for summary in self.summaries.values() {
            if summary.matches(&self.filter) {
                let key = self.sort.key(summary);
                self.keys.insert(summary.seq, key.clone());
                self.listed.insert(key);
            }
        }
    }

    pub fn get(&self, seq: Seq) -> Option<&Summary> {
        self.summaries.get(&seq)
    }

    /// The debate with this id.
    pub fn seq(&self, id: &str) -> Option<Seq> {
        self.by_id.get(id).copied()
    }

    /// Debates held.
    pub fn len(&self) -> usize {
        self.summaries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.summaries.is_empty()
    }

    /// Debates the filter lets through.
    pub fn listed(&self) -> usize {
        self.listed.len()
    }

    /// Whether the list shows the debate `seq`.
    pub fn is_listed(&self, seq: Seq) -> bool {
        self.keys.contains_key(&seq)
    }

    /// Debates with a decision awaiting the operator.
    pub fn pending(&self) -> usize {
        self.pending
    }

    /// Every debate held, in no particular order.
    pub fn summaries(&self) -> impl Iterator<Item = &Summary> {
        self.summaries.values()
    }

    /// The first debate the list shows.
    pub fn first(&self) -> Option<Seq> {
        self.listed.first().map(|key| key.2)
    }

    /// The debate `step` places from `from` in the list, stopping at its ends; the first one
    /// when `from` is not listed.
    pub fn step(&self, from: Option<Seq>, step: i64) -> Option<Seq> {
        let Some(key) = from.and_then(|seq| self.keys.get(&seq)) else {
            return self.first();
        };
        let distance = step.unsigned_abs() as usize;
        let found = if step >= 0 {
            self.listed.range(key..).take(distance + 1).last()
        } else {
            self.listed.range(..=key).rev().take(distance + 1).last()
        };
        found.map(|key| key.2)
    }

    /// The `shown` rows a list of that height draws around `selected`: from the top while the
    /// selection fits on the first page, else ending at the selection.
    pub fn window(&self, selected: Option<Seq>, shown: usize) -> Window {
        if shown == 0 {
            return Window::default();
        }
        let Some(key) = selected.and_then(|seq| self.keys.get(&seq)) else {
            return Window {
                rows: self.listed.iter().take(shown).map(|key| key.2).collect(),
                selected: None,
            };
        };
        let before: Vec<Seq> = self
            .listed
            .range((Bound::Unbounded, Bound::Excluded(key)))
            .rev()
            .take(shown - 1)
            .map(|key| key.2)
            .collect();
        if before.len() < shown - 1 {
            let rows: Vec<Seq> = self.listed.iter().take(shown).map(|key| key.2).collect();
            let selected = rows.iter().position(|&seq| Some(seq) == selected);
            return Window { rows, selected };
        }
        let mut rows: Vec<Seq> = before.into_iter().rev().collect();
        rows.push(key.2);
        Window {
            selected: Some(rows.len() - 1),
            rows,
        }
    }
}
