//! The debates the console holds, at a cost that follows the screen: one small [`Summary`] per
//! debate (what the list shows and filters on), kept up to date as rows land; the list's order
//! and filter kept as an ordered set (in arrival order unfiltered, the arrival index itself),
//! so that a frame reads only the rows it draws; counts kept as they change; and the retention
//! of finished debates. Turn contents are not held here: the console keeps the full rows of the
//! selected debate and the most recently changed (see [`super::Model`]).

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::ops::Bound;
use std::sync::Arc;
use std::time::Duration;

use super::wait_clock::{Instant, WaitClock};
use crate::domain::limits::MAX_ROUND_CEILING;
use crate::domain::{
    Change, ControllerMode, Decision, Ending, JudgeDecision, Reported, Resolution, SessionStatus,
};
use crate::text::one_line;

use super::contexts::Ctx;
use super::filter::{Filter, Subject};

/// A debate's number in the order debates first appeared: never reused, never moved.
pub type Seq = u64;

/// Characters of a question kept for the list and the filter (the detail's title shows it
/// whole).
const QUESTION_CHARS: usize = 500;
/// Personas kept per debate for the filter.
const PERSONAS: usize = 32;
/// Persona names remembered across debates for the filter (a roster repeats across a fleet);
/// names beyond this many are not filtered on, and each is kept to its first characters.
const PERSONA_NAMES: usize = 65_536;
const PERSONA_CHARS: usize = 64;

/// A row of a debate, known by its table and key: what [`Summary`] remembers of rows with issues.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum RowKey {
    Session,
    Turn(u64),
    Decision(u32),
    Judgment(u64),
    Action(u32),
    Note(u64),
}

impl RowKey {
    fn of(change: &Change) -> RowKey {
        match change {
            Change::Session(_) => RowKey::Session,
            Change::Turn(t) => RowKey::Turn(t.id),
            Change::Decision(d) => RowKey::Decision(d.round_index),
            Change::Judgment(j) => RowKey::Judgment(j.id),
            Change::Action(a) => RowKey::Action(a.round_index),
            Change::Note(n) => RowKey::Note(n.id),
        }
    }
}

/// What the debates list shows of one debate, updated row by row.
#[derive(Debug, Clone)]
pub struct Summary {
    pub seq: Seq,
    pub id: Arc<str>,
    /// The database it is in, of several (0 on one): with its id, who it is.
    pub ctx: Ctx,
    /// The question on one line, cut to `QUESTION_CHARS`.
    pub question: Box<str>,
    pub status: Reported<SessionStatus>,
    pub mode: Reported<ControllerMode>,
    pub max_rounds: u32,
    /// The highest round any placed turn or decision names.
    pub latest_round: u32,
    /// The final round count the session row gives, once the debate finished.
    num_rounds: Option<u32>,
    /// The decision of the highest round decided.
    pub last_decision: Option<Reported<Decision>>,
    /// When that decision was made, on the console's clock.
    pub decided: Instant,
    /// How long a gated decision waits for an operator, as the session row says, in
    /// milliseconds (a day at most fits; held small: see [`Summary::gated_timeout`]).
    gated_timeout_ms: Option<u32>,
    /// Rounds with a decision, and rounds with an operator action (sorted).
    decided_rounds: Box<[u32]>,
    acted: Box<[u32]>,
    /// The roster and whoever spoke, for the filter: numbers in [`Names`].
    personas: Box<[u32]>,
    /// What few debates have, apart (see [`Rare`]).
    rare: Option<Box<Rare>>,
    /// Whether an operator pinned a note to it.
    pub noted: bool,
    /// How many rows were filed under it (wrapping; a frame compares it with the frame
    /// before's only): with its `seq` (never used again), what it shows apart from the clock and
    /// the other consoles.
    pub revision: u32,
    /// Its class in the list's order, when the filter lets it through: with the order, its
    /// id and its arrival, its place in the list (see [`SortOrder::key`]).
    class: Option<u8>,
}

/// What a summary keeps of what few debates have, boxed apart so that a plain debate's summary
/// stays small (the fleet holds one per debate).
#[derive(Debug, Clone, Default)]
struct Rare {
    /// How the decision of the highest round acted on was resolved.
    resolution: Option<Resolution>,
    /// The judgments (by row id) whose latest version rules abort, sorted.
    aborts: Vec<u64>,
    /// Rows whose latest version was read with issues.
    flagged: BTreeSet<RowKey>,
}

/// Persona names, each held once for the whole fleet.
#[derive(Debug, Clone, Default)]
struct Names {
    names: Vec<Box<str>>,
    numbers: HashMap<Box<str>, u32>,
}

impl Names {
    /// The number of `name`, remembering it unless too many are.
    fn number(&mut self, name: &str) -> Option<u32> {
        let name = match name.char_indices().nth(PERSONA_CHARS) {
            Some((end, _)) => &name[..end],
            None => name,
        };
        if let Some(&number) = self.numbers.get(name) {
            return Some(number);
        }
        let number = u32::try_from(self.names.len())
            .ok()
            .filter(|&n| (n as usize) < PERSONA_NAMES)?;
        self.names.push(name.into());
        self.numbers.insert(name.into(), number);
        Some(number)
    }
}

/// Whether a row's round is one a debate files it under.
fn placed(round: u32) -> bool {
    (1..=MAX_ROUND_CEILING).contains(&round)
}

/// Inserts `value` into the sorted `set` unless present (sets are small and rarely grow: each
/// is one allocation of its exact size).
fn insert_sorted(set: &mut Box<[u32]>, value: u32) {
    if let Err(at) = set.binary_search(&value) {
        let mut grown = std::mem::take(set).into_vec();
        grown.insert(at, value);
        *set = grown.into_boxed_slice();
    }
}

impl Summary {
    fn new(seq: Seq, ctx: Ctx, id: Arc<str>) -> Summary {
        Summary {
            seq,
            id,
            ctx,
            question: Box::default(),
            status: SessionStatus::Running.into(),
            mode: Reported::Unknown(Box::default()),
            max_rounds: 0,
            latest_round: 0,
            num_rounds: None,
            last_decision: None,
            decided: Instant::default(),
            gated_timeout_ms: None,
            decided_rounds: Box::default(),
            acted: Box::default(),
            personas: Box::default(),
            rare: None,
            noted: false,
            revision: 0,
            class: None,
        }
    }

    fn add_persona(&mut self, persona: &str, names: &mut Names) {
        if self.personas.len() >= PERSONAS {
            return;
        }
        if let Some(number) = names.number(persona)
            && !self.personas.contains(&number)
        {
            let mut personas = std::mem::take(&mut self.personas).into_vec();
            personas.push(number);
            self.personas = personas.into_boxed_slice();
        }
    }

    /// Files what the list needs of one row; applying a row again changes nothing.
    fn apply(&mut self, change: &Change, names: &mut Names, clock: &WaitClock) {
        self.revision = self.revision.wrapping_add(1);
        let key = RowKey::of(change);
        if change.issues().is_empty() {
            if let Some(rare) = &mut self.rare {
                rare.flagged.remove(&key);
            }
        } else {
            self.rare().flagged.insert(key);
        }
        match change {
            Change::Session(s) => {
                let question: String = one_line(&s.question).chars().take(QUESTION_CHARS).collect();
                self.question = question.into_boxed_str();
                self.status = s.status.clone();
                self.mode = s.controller_mode.clone();
                self.max_rounds = s.max_rounds;
                self.num_rounds = s.num_rounds;
                self.gated_timeout_ms = s
                    .gated_timeout
                    .map(|wait| u32::try_from(wait.as_millis()).unwrap_or(u32::MAX));
                for persona in &s.personas {
                    self.add_persona(persona, names);
                }
            }
            Change::Turn(t) if placed(t.round_number) => {
                self.latest_round = self.latest_round.max(t.round_number);
                self.add_persona(&t.agent_persona, names);
            }
            Change::Decision(d) if placed(d.round_index) => {
                self.latest_round = self.latest_round.max(d.round_index);
                insert_sorted(&mut self.decided_rounds, d.round_index);
                if self.decided_rounds.last() == Some(&d.round_index) {
                    self.decided = clock.since(d.decided_at);
                    self.last_decision = Some(d.decision.clone());
                }
            }
            Change::Note(_) => self.noted = true,
            Change::Action(a) if placed(a.round_index) => {
                insert_sorted(&mut self.acted, a.round_index);
                if self.acted.last() == Some(&a.round_index) {
                    self.rare().resolution = Some(Resolution::of(a));
                }
            }
            Change::Judgment(j) => {
                let at = self
                    .rare
                    .as_ref()
                    .map_or(Err(0), |rare| rare.aborts.binary_search(&j.id));
                let abort = j.decision == JudgeDecision::Abort.into() && placed(j.round_index);
                if abort != at.is_ok() {
                    let aborts = &mut self.rare().aborts;
                    match at {
                        Ok(i) => drop(aborts.remove(i)),
                        Err(i) => aborts.insert(i, j.id),
                    }
                }
            }
            _ => {}
        }
    }

    pub fn is_running(&self) -> bool {
        self.status == Reported::Known(SessionStatus::Running)
    }

    /// The rounds the list shows: a finished debate's final count as its session row gives it
    /// (the same whether or not its turns are loaded), else the highest round its rows name.
    pub fn rounds(&self) -> u32 {
        match self.num_rounds {
            Some(n) if !self.is_running() => n,
            _ => self.latest_round,
        }
    }

    /// The round of the decision awaiting the operator: while the debate runs, any decision no
    /// action resolved is pending (the contract); of those, the latest.
    pub fn pending(&self) -> Option<u32> {
        if !self.is_running() {
            return None;
        }
        self.decided_rounds
            .iter()
            .rev()
            .find(|round| self.acted.binary_search(round).is_err())
            .copied()
    }

    /// Whether the pending decision waits for an operator (a gated debate); elsewhere a
    /// pending decision is advisory.
    pub fn waiting(&self) -> bool {
        self.pending().is_some() && self.mode == ControllerMode::Gated.into()
    }

    /// How the debate ended; `None` while it runs.
    pub fn ending(&self) -> Option<Ending> {
        if self.is_running() {
            return None;
        }
        let last = self.decided_rounds.last().zip(self.last_decision.as_ref());
        Some(Ending::of(
            &self.mode,
            self.rare
                .as_ref()
                .is_some_and(|rare| !rare.aborts.is_empty()),
            last.map(|(round, decision)| (*round, decision)),
            self.rare.as_ref().and_then(|rare| rare.resolution.as_ref()),
        ))
    }

    /// How long a gated decision waits for an operator, as the session row says.
    pub fn gated_timeout(&self) -> Option<Duration> {
        self.gated_timeout_ms
            .map(|ms| Duration::from_millis(ms.into()))
    }

    /// Whether any of its rows was read with issues.
    pub fn flagged(&self) -> bool {
        self.rare
            .as_ref()
            .is_some_and(|rare| !rare.flagged.is_empty())
    }

    fn rare(&mut self) -> &mut Rare {
        self.rare.get_or_insert_default()
    }

    /// Whether `filter` lets it through.
    fn matches(&self, filter: &Filter) -> bool {
        let status = self.status.to_wire();
        let shown = match &self.status {
            Reported::Known(known) => known.shown(),
            Reported::Unknown(_) => "",
        };
        filter.is_empty()
            || filter.matches(&Subject {
                id: &self.id,
                question: &self.question,
                status: [&status, shown],
                mode: &self.mode.to_wire(),
                personas: &self.personas,
                ctx: self.ctx,
                pending: self.pending().is_some(),
                waiting: self.waiting(),
            })
    }
}

/// The order of the debates list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SortOrder {
    /// As the debates first appeared.
    #[default]
    Arrival,
    /// Debates waiting for an operator, then those with an advisory decision pending, then
    /// running ones, then the rest.
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

    /// The class `summary` goes in, first in the list's order.
    fn class(self, summary: &Summary) -> u8 {
        match self {
            SortOrder::Arrival | SortOrder::Id => 0,
            SortOrder::PendingFirst => {
                match (summary.waiting(), summary.pending(), summary.is_running()) {
                    (true, _, _) => 0,
                    (false, Some(_), _) => 1,
                    (false, None, true) => 2,
                    (false, None, false) => 3,
                }
            }
        }
    }

    /// Where `summary` goes in the list, in `class`.
    fn key(self, class: u8, summary: &Summary) -> ListKey {
        let id = (self == SortOrder::Id).then(|| summary.id.clone());
        (class, id, summary.seq)
    }
}

/// A place in the list: a class, an id (for the id order) and the arrival number.
type ListKey = (u8, Option<Arc<str>>, Seq);

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
    /// A decision now waits for an operator that did not before.
    pub waits: bool,
}

/// A debate's pending decision, as the counts see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pending {
    None,
    Advisory,
    /// Waiting for an operator since the instant given.
    Waiting(Instant),
}

impl Pending {
    fn of(summary: &Summary) -> Pending {
        match (summary.pending(), summary.waiting()) {
            (None, _) => Pending::None,
            (Some(_), false) => Pending::Advisory,
            (Some(_), true) => Pending::Waiting(summary.decided),
        }
    }

    fn waits(self) -> bool {
        matches!(self, Pending::Waiting(_))
    }
}

/// The summaries, in slots reused as debates are let go (a map of 100,000 would cost half
/// as much again), and their arrival order.
#[derive(Debug, Clone, Default)]
struct Summaries {
    slots: Vec<Option<Summary>>,
    free: Vec<u32>,
    slot: HashMap<Seq, u32>,
    /// The list when it is in arrival order and unfiltered.
    arrival: BTreeSet<Seq>,
}

impl Summaries {
    fn insert(&mut self, summary: Summary) {
        let seq = summary.seq;
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = Some(summary);
                slot
            }
            None => {
                self.slots.push(Some(summary));
                u32::try_from(self.slots.len() - 1).expect("fewer than 2^32 debates held")
            }
        };
        self.slot.insert(seq, slot);
        self.arrival.insert(seq);
    }

    fn get(&self, seq: Seq) -> Option<&Summary> {
        self.slots[*self.slot.get(&seq)? as usize].as_ref()
    }

    fn get_mut(&mut self, seq: Seq) -> Option<&mut Summary> {
        self.slots[*self.slot.get(&seq)? as usize].as_mut()
    }

    fn remove(&mut self, seq: Seq) -> Option<Summary> {
        let slot = self.slot.remove(&seq)?;
        self.arrival.remove(&seq);
        self.free.push(slot);
        self.slots[slot as usize].take()
    }

    fn len(&self) -> usize {
        self.slot.len()
    }

    fn values(&self) -> impl Iterator<Item = &Summary> {
        self.slots.iter().flatten()
    }

    fn values_mut(&mut self) -> impl Iterator<Item = &mut Summary> {
        self.slots.iter_mut().flatten()
    }
}

/// Every debate held, in the list's order and filter.
#[derive(Debug, Clone)]
pub struct Fleet {
    summaries: Summaries,
    /// Each context's debates by id (the same id may be a debate in two databases).
    by_id: Vec<HashMap<Arc<str>, Seq>>,
    /// The one context the list shows (`:ctx NAME`); `None`: every one.
    context: Option<Ctx>,
    names: Names,
    next_seq: Seq,
    sort: SortOrder,
    filter: Filter,
    /// The debates the filter lets through, in the list's order, unless the list is every
    /// debate in arrival order; a row landing moves its debate in O(log n).
    ordered: Option<BTreeSet<ListKey>>,
    listed: usize,
    /// Debates whose pending decision waits for an operator, oldest decision first.
    waiting: BTreeSet<(Instant, Seq)>,
    /// Debates with an advisory decision pending.
    advisory: usize,
    /// Finished debates, oldest finish first; beyond `keep_finished` the oldest are dropped.
    finished: VecDeque<Seq>,
    keep_finished: usize,
}

impl Fleet {
    /// A fleet that holds the running debates and the `keep_finished` most recently finished.
    pub fn new(keep_finished: usize) -> Fleet {
        Fleet {
            summaries: Summaries::default(),
            by_id: vec![HashMap::new()],
            context: None,
            names: Names::default(),
            next_seq: 0,
            sort: SortOrder::default(),
            filter: Filter::default(),
            ordered: None,
            listed: 0,
            waiting: BTreeSet::new(),
            advisory: 0,
            finished: VecDeque::new(),
            keep_finished,
        }
    }

    /// Files a row under its debate, creating the debate on first sight; a decision's time is
    /// read on `clock`.
    pub fn apply(&mut self, change: &Change, clock: &WaitClock) -> Filed {
        self.apply_in(0, change, clock)
    }

    /// Files a row of context `ctx`'s database under its debate there (see [`Fleet::apply`]).
    pub fn apply_in(&mut self, ctx: Ctx, change: &Change, clock: &WaitClock) -> Filed {
        let id = change.session_id();
        let at = usize::from(ctx);
        if self.by_id.len() <= at {
            self.by_id.resize_with(at + 1, HashMap::new);
        }
        let (seq, created) = match self.by_id[at].get(id) {
            Some(&seq) => (seq, false),
            None => {
                let seq = self.next_seq;
                self.next_seq += 1;
                let id: Arc<str> = id.into();
                self.by_id[at].insert(id.clone(), seq);
                self.summaries.insert(Summary::new(seq, ctx, id));
                (seq, true)
            }
        };
        let summary = self.summaries.get_mut(seq).expect("filed above");
        let was = Pending::of(summary);
        let was_running = summary.is_running();
        summary.apply(change, &mut self.names, clock);
        let is = Pending::of(summary);
        if was_running && !summary.is_running() {
            self.finished.push_back(seq);
        }
        self.count(seq, was, -1);
        self.count(seq, is, 1);
        let moved = self.relist(seq);
        Filed {
            seq,
            created,
            reordered: created || moved || was != is,
            waits: is.waits() && is != was,
        }
    }

    /// Puts the debate `seq` where the order and filter say; whether its place changed.
    fn relist(&mut self, seq: Seq) -> bool {
        self.match_new_names();
        let sort = self.sort;
        let context = self.context;
        let summary = self.summaries.get_mut(seq).expect("held");
        let class = (context.is_none_or(|c| c == summary.ctx) && summary.matches(&self.filter))
            .then(|| sort.class(summary));
        if summary.class == class {
            return false;
        }
        let old = std::mem::replace(&mut summary.class, class);
        self.listed = self.listed + usize::from(class.is_some()) - usize::from(old.is_some());
        if let Some(ordered) = &mut self.ordered {
            if let Some(old) = old {
                ordered.remove(&sort.key(old, summary));
            }
            if let Some(class) = class {
                ordered.insert(sort.key(class, summary));
            }
        }
        true
    }

    /// Notes which persona names remembered since the filter was set it matches.
    fn match_new_names(&mut self) {
        self.filter.note_names(&self.names.names);
    }

    /// The list's order.
    pub fn sort(&self) -> SortOrder {
        self.sort
    }

    /// The filter as typed.
    pub fn filter(&self) -> &str {
        self.filter.text()
    }

    /// The filter as the list applies it.
    pub(crate) fn filter_terms(&self) -> &Filter {
        &self.filter
    }

    /// Drops the longest-finished debates beyond what is kept, except `keep` (the selection,
    /// which does not count) and any that run again.
    pub fn retain(&mut self, keep: Option<Seq>) {
        let mut kept = None;
        while self.finished.len() > self.keep_finished {
            let Some(seq) = self.finished.pop_front() else {
                break;
            };
            match self.summaries.get(seq) {
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
        let Some(summary) = self.summaries.remove(seq) else {
            return;
        };
        if let Some(ids) = self.by_id.get_mut(usize::from(summary.ctx)) {
            ids.remove(&summary.id);
        }
        self.count(seq, Pending::of(&summary), -1);
        if let Some(class) = summary.class {
            self.listed -= 1;
            if let Some(ordered) = &mut self.ordered {
                ordered.remove(&self.sort.key(class, &summary));
            }
        }
    }

    /// Orders and filters the list anew (`filter` in any case, its terms also matched against
    /// the names of the `contexts`, by number; none on one database).
    pub fn arrange(&mut self, sort: SortOrder, filter: &str, contexts: &[&str]) {
        if sort == self.sort && filter == self.filter.text() {
            return;
        }
        self.sort = sort;
        self.filter = Filter::parse(filter);
        self.filter.note_contexts(contexts);
        self.rearrange();
    }

    /// The one context the list shows (`:ctx NAME`), or `None`: every one.
    pub fn context(&self) -> Option<Ctx> {
        self.context
    }

    /// Lists only context `ctx`'s debates, or (`None`) every context's.
    pub fn show_context(&mut self, ctx: Option<Ctx>) {
        if ctx != self.context {
            self.context = ctx;
            self.rearrange();
        }
    }

    /// Every debate placed again in the list's order, filter and context.
    fn rearrange(&mut self) {
        let sort = self.sort;
        let context = self.context;
        self.match_new_names();
        let every = sort == SortOrder::Arrival && self.filter.is_empty() && context.is_none();
        let mut ordered = (!every).then(BTreeSet::new);
        self.listed = 0;
        for summary in self.summaries.values_mut() {
            let shown = context.is_none_or(|c| c == summary.ctx);
            summary.class = (shown && summary.matches(&self.filter)).then(|| sort.class(summary));
            if let (Some(ordered), Some(class)) = (&mut ordered, summary.class) {
                ordered.insert(sort.key(class, summary));
            }
            self.listed += usize::from(summary.class.is_some());
        }
        self.ordered = ordered;
    }

    pub fn get(&self, seq: Seq) -> Option<&Summary> {
        self.summaries.get(seq)
    }

    /// The debate with this id (of several databases, the first's that has one).
    pub fn seq(&self, id: &str) -> Option<Seq> {
        self.by_id.iter().find_map(|ids| ids.get(id).copied())
    }

    /// The debates with this id, one per database that holds one, in the contexts' order.
    pub fn seqs(&self, id: &str) -> Vec<Seq> {
        self.by_id
            .iter()
            .filter_map(|ids| ids.get(id).copied())
            .collect()
    }

    /// The debate with this id in context `ctx`'s database.
    pub fn seq_in(&self, ctx: Ctx, id: &str) -> Option<Seq> {
        self.by_id.get(usize::from(ctx))?.get(id).copied()
    }

    /// Debates held.
    pub fn len(&self) -> usize {
        self.summaries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.summaries.len() == 0
    }

    /// Debates the filter lets through.
    pub fn listed(&self) -> usize {
        self.listed
    }

    /// Whether the list shows the debate `seq`.
    pub fn is_listed(&self, seq: Seq) -> bool {
        self.summaries.get(seq).is_some_and(|s| s.class.is_some())
    }

    /// Debates whose pending decision waits for an operator.
    pub fn waiting(&self) -> usize {
        self.waiting.len()
    }

    /// Debates with an advisory decision pending.
    pub fn advisory(&self) -> usize {
        self.advisory
    }

    /// The debate waiting for an operator after `from` in the order their decisions were made
    /// (oldest first), round to the oldest after the newest; the oldest when `from` is not
    /// waiting.
    pub fn next_waiting(&self, from: Option<Seq>) -> Option<Seq> {
        self.next_waiting_where(from, |_| true)
    }

    /// [`Fleet::next_waiting`], preferring the debates `free` holds for (those no other
    /// console is deciding); the next of any when none is free.
    pub(crate) fn next_waiting_where(
        &self,
        from: Option<Seq>,
        free: impl Fn(&Summary) -> bool,
    ) -> Option<Seq> {
        let after = from
            .and_then(|seq| self.summaries.get(seq))
            .filter(|s| s.waiting())
            .map(|s| (s.decided, s.seq));
        let (later, earlier) = match after {
            Some(key) => (
                self.waiting.range((Bound::Excluded(key), Bound::Unbounded)),
                Some(self.waiting.range(..=key)),
            ),
            None => (self.waiting.range(..), None),
        };
        let order = later
            .chain(earlier.into_iter().flatten())
            .map(|(_, seq)| *seq);
        order
            .clone()
            .find(|&seq| self.summaries.get(seq).is_some_and(&free))
            .or_else(|| order.clone().next())
    }

    /// Adds (`sign` 1) or takes away (-1) a debate's pending decision from the counts.
    fn count(&mut self, seq: Seq, pending: Pending, sign: i8) {
        match pending {
            Pending::None => {}
            Pending::Advisory => {
                self.advisory = self.advisory.saturating_add_signed(isize::from(sign));
            }
            Pending::Waiting(decided) if sign > 0 => {
                self.waiting.insert((decided, seq));
            }
            Pending::Waiting(decided) => {
                self.waiting.remove(&(decided, seq));
            }
        }
    }

    /// Every debate held, in no particular order.
    pub fn summaries(&self) -> impl Iterator<Item = &Summary> {
        self.summaries.values()
    }

    /// Up to `limit` debates of the list from its start.
    fn first_n(&self, limit: usize) -> Vec<Seq> {
        match &self.ordered {
            Some(ordered) => ordered.iter().take(limit).map(|key| key.2).collect(),
            None => self.summaries.arrival.iter().take(limit).copied().collect(),
        }
    }

    /// Up to `limit` debates of the list before the one at `key`, nearest first.
    fn before(&self, key: &ListKey, limit: usize) -> Vec<Seq> {
        match &self.ordered {
            Some(ordered) => ordered
                .range((Bound::Unbounded, Bound::Excluded(key)))
                .rev()
                .take(limit)
                .map(|key| key.2)
                .collect(),
            None => self
                .summaries
                .arrival
                .range(..key.2)
                .rev()
                .take(limit)
                .copied()
                .collect(),
        }
    }

    /// Up to `limit` debates of the list from the one at `key` on.
    fn from(&self, key: &ListKey, limit: usize) -> Vec<Seq> {
        match &self.ordered {
            Some(ordered) => ordered.range(key..).take(limit).map(|key| key.2).collect(),
            None => self
                .summaries
                .arrival
                .range(key.2..)
                .take(limit)
                .copied()
                .collect(),
        }
    }

    fn key(&self, seq: Option<Seq>) -> Option<ListKey> {
        let summary = self.summaries.get(seq?)?;
        Some(self.sort.key(summary.class?, summary))
    }

    /// The first debate the list shows.
    pub fn first(&self) -> Option<Seq> {
        self.first_n(1).first().copied()
    }

    /// The last debate the list shows.
    pub fn last(&self) -> Option<Seq> {
        match &self.ordered {
            Some(ordered) => ordered.last().map(|key| key.2),
            None => self.summaries.arrival.last().copied(),
        }
    }

    /// Up to `limit` ids of debates held that start with `prefix`, in no particular order.
    pub(crate) fn ids_starting(&self, prefix: &str, limit: usize) -> Vec<&str> {
        self.summaries
            .values()
            .map(|s| &*s.id)
            .filter(|id| id.starts_with(prefix))
            .take(limit)
            .collect()
    }

    /// The debate `step` places from `from` in the list, stopping at its ends; the first one
    /// when `from` is not listed.
    pub fn step(&self, from: Option<Seq>, step: i64) -> Option<Seq> {
        let Some(key) = self.key(from) else {
            return self.first();
        };
        let distance = step.unsigned_abs() as usize;
        if step >= 0 {
            self.from(&key, distance + 1).last().copied()
        } else {
            let before = self.before(&key, distance);
            before.last().copied().or(from)
        }
    }

    /// The `shown` rows a list of that height draws around `selected`: from the top while the
    /// selection fits on the first page, else ending at the selection.
    pub fn window(&self, selected: Option<Seq>, shown: usize) -> Window {
        if shown == 0 {
            return Window::default();
        }
        let Some(key) = self.key(selected) else {
            return Window {
                rows: self.first_n(shown),
                selected: None,
            };
        };
        let before = self.before(&key, shown - 1);
        if before.len() < shown - 1 {
            let rows = self.first_n(shown);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The fleet holds a summary per debate, 100,000 of them in the scale bench: what it keeps
    /// of each stays small (a place in the list is its class; what few debates have is boxed).
    #[test]
    fn a_summary_stays_within_two_hundred_bytes() {
        let size = std::mem::size_of::<Summary>();
        assert!(size <= 200, "a summary is {size} bytes");
    }
}
