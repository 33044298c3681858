//! One debate's rows gathered by debate: what the console shows and what calibration replays.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::{Deref, RangeInclusive};

use super::limits::MAX_ROUND_CEILING;
use super::{
    Change, ControllerDecision, ControllerMode, DebateNote, DecisionState, Ending, JudgeDecision,
    Judgment, KEPT_NOTES, OperatorAction, Resolution, Session, Turn,
};

mod history;

pub use history::Moment;

/// One debate: its session row and every row that belongs to it.
#[derive(Debug, Clone)]
pub struct Debate {
    pub session: Session,
    /// In spoken order (by row id); a superseded turn is updated in place.
    pub turns: Vec<Turn>,
    pub decisions: BTreeMap<u32, ControllerDecision>,
    /// In the order they were made (by row id).
    pub judgments: Vec<Judgment>,
    pub actions: BTreeMap<u32, OperatorAction>,
    /// The notes pinned to it, in the order they were written (by row id): the latest
    /// [`KEPT_NOTES`] at most.
    pub notes: Vec<DebateNote>,
    /// Rows that belong to no round: a reader flagged their round (and left it 0), or it lies
    /// beyond any round a configuration may allow. Kept for their issues; nothing iterates
    /// over their round.
    pub unplaced: Vec<Change>,
    /// The round each persona first spoke in (of every version of its placed turns), so that
    /// who joined late is known without going over the turns before.
    first_spoke: HashMap<String, u32>,
    /// The placed turns' and judgments' ids by round, so that the rounds a view shows, and the
    /// latest round, are found without going over every row of a long debate.
    turn_rounds: ByRound,
    judgment_rounds: ByRound,
    /// How many problems [`Debate::issues`] gives, counted as rows are filed, so that a frame
    /// showing the count does not go over every row. Kept by `apply` and by time travel's
    /// `step_to` only: rows changed through the fields above leave it stale.
    issue_count: usize,
}

/// Row ids of one table by round: `(round, id)` in order.
#[derive(Debug, Clone, Default)]
struct ByRound(BTreeSet<(u32, u64)>);

impl ByRound {
    fn of<T: ById>(rows: &[T]) -> ByRound {
        ByRound(rows.iter().map(ById::key).collect())
    }

    fn latest(&self) -> Option<u32> {
        self.0.last().map(|&(round, _)| round)
    }

    /// The ids of the rows of rounds `first` to `last`, each with its round, in round then id
    /// order.
    fn within(&self, first: u32, last: u32) -> impl Iterator<Item = (u32, u64)> + '_ {
        self.0.range((first, 0)..=(last, u64::MAX)).copied()
    }
}

/// A row known by its id and filed by round: a turn, a ruling.
trait ById: Sized {
    /// Its round and id.
    fn key(&self) -> (u32, u64);
    /// How many problems it was read with.
    fn problems(&self) -> usize;
    /// Whether `change` is a version of the row numbered `id`.
    fn is_version(id: u64, change: &Change) -> bool;
    /// The row as a change, to keep among the rows placed in no round.
    fn into_change(self) -> Change;
}

impl ById for Turn {
    fn key(&self) -> (u32, u64) {
        (self.round_number, self.id)
    }

    fn problems(&self) -> usize {
        self.issues.len()
    }

    fn is_version(id: u64, change: &Change) -> bool {
        matches!(change, Change::Turn(t) if t.id == id)
    }

    fn into_change(self) -> Change {
        Change::Turn(self)
    }
}

impl ById for Judgment {
    fn key(&self) -> (u32, u64) {
        (self.round_index, self.id)
    }

    fn problems(&self) -> usize {
        self.issues.len()
    }

    fn is_version(id: u64, change: &Change) -> bool {
        matches!(change, Change::Judgment(j) if j.id == id)
    }

    fn into_change(self) -> Change {
        Change::Judgment(self)
    }
}

/// Whether a row's round is one a debate files it under.
fn placed(round: u32) -> bool {
    (1..=MAX_ROUND_CEILING).contains(&round)
}

/// Notes that `persona` spoke in `round`, keeping the first round each persona spoke in.
fn spoke(first_spoke: &mut HashMap<String, u32>, persona: &str, round: u32) {
    match first_spoke.get_mut(persona) {
        Some(first) => *first = (*first).min(round),
        None => {
            first_spoke.insert(persona.to_owned(), round);
        }
    }
}

/// Whether two unplaced decisions (or actions) are versions of one row: the same round as
/// carried and as flagged (the flag names the table, the key and the value a reader read).
fn same_unplaced(a: &Change, b: &Change) -> bool {
    fn version(change: &Change) -> Option<(std::mem::Discriminant<Change>, u32, Option<&String>)> {
        match change {
            Change::Decision(ControllerDecision {
                round_index,
                issues,
                ..
            })
            | Change::Action(OperatorAction {
                round_index,
                issues,
                ..
            }) => {
                let flagged = issues.iter().find(|i| i.contains(": round_index: "));
                Some((std::mem::discriminant(change), *round_index, flagged))
            }
            _ => None,
        }
    }
    version(a).is_some() && version(a) == version(b)
}

/// Files a row known by its id, keeping `rows` in id order (the order turns were spoken and
/// rulings made, whatever order they arrive in) and `index` by round: in place of its older
/// version, else inserted; a row whose round is not placed goes to `unplaced` instead (leaving
/// `rows`). Returns how many problems the older versions let go had.
fn file_by_id<T: ById>(
    rows: &mut Vec<T>,
    index: &mut ByRound,
    unplaced: &mut Vec<Change>,
    row: T,
) -> usize {
    let (round, id) = row.key();
    let mut let_go = let_go_unplaced(unplaced, |c| T::is_version(id, c));
    let at = rows.binary_search_by_key(&id, |r| r.key().1);
    if let Ok(i) = at {
        index.0.remove(&rows[i].key());
        let_go += rows[i].problems();
    }
    match (placed(round), at) {
        (true, Ok(i)) => rows[i] = row,
        (true, Err(i)) => rows.insert(i, row),
        (false, at) => {
            if let Ok(i) = at {
                rows.remove(i);
            }
            unplaced.push(row.into_change());
            return let_go;
        }
    }
    index.0.insert((round, id));
    let_go
}

/// Lets go of the unplaced rows `same` tells; returns how many problems they had.
fn let_go_unplaced(unplaced: &mut Vec<Change>, same: impl Fn(&Change) -> bool) -> usize {
    let let_go = unplaced
        .iter()
        .filter(|c| same(c))
        .map(|c| c.issues().len())
        .sum();
    unplaced.retain(|c| !same(c));
    let_go
}

/// The rows of one round, gathered.
#[derive(Debug, Clone)]
pub struct RoundRow<'a> {
    pub number: u32,
    pub turns: Vec<&'a Turn>,
    pub judgments: Vec<&'a Judgment>,
    pub decision: Option<&'a ControllerDecision>,
    pub action: Option<&'a OperatorAction>,
}

impl Debate {
    /// A debate known only by its id, until its rows arrive.
    pub fn new(id: &str) -> Debate {
        Debate {
            session: Session::placeholder(id),
            turns: Vec::new(),
            decisions: BTreeMap::new(),
            judgments: Vec::new(),
            actions: BTreeMap::new(),
            notes: Vec::new(),
            unplaced: Vec::new(),
            first_spoke: HashMap::new(),
            turn_rounds: ByRound::default(),
            judgment_rounds: ByRound::default(),
            issue_count: 0,
        }
    }

    /// The round `persona` first spoke in, if it has spoken.
    pub fn first_spoke(&self, persona: &str) -> Option<u32> {
        self.first_spoke.get(persona).copied()
    }

    /// Files one of this debate's rows: a newer version of a row replaces the older.
    pub fn apply(&mut self, change: Change) {
        // A note's problems are not the debate's (see `issues`).
        let filed = match &change {
            Change::Note(_) => 0,
            row => row.issues().len(),
        };
        let let_go = match change {
            Change::Session(session) => std::mem::replace(&mut self.session, session).issues.len(),
            Change::Turn(turn) => {
                let round = turn.round_number;
                if placed(round) {
                    spoke(&mut self.first_spoke, &turn.agent_persona, round);
                }
                file_by_id(
                    &mut self.turns,
                    &mut self.turn_rounds,
                    &mut self.unplaced,
                    turn,
                )
            }
            Change::Judgment(judgment) => file_by_id(
                &mut self.judgments,
                &mut self.judgment_rounds,
                &mut self.unplaced,
                judgment,
            ),
            Change::Decision(decision) if placed(decision.round_index) => self
                .decisions
                .insert(decision.round_index, decision)
                .map_or(0, |older| older.issues.len()),
            Change::Action(action) if placed(action.round_index) => self
                .actions
                .insert(action.round_index, action)
                .map_or(0, |older| older.issues.len()),
            Change::Note(note) => {
                self.pin(note);
                0
            }
            unplaced => {
                let let_go = let_go_unplaced(&mut self.unplaced, |c| same_unplaced(c, &unplaced));
                self.unplaced.push(unplaced);
                let_go
            }
        };
        debug_assert!(
            self.issue_count + filed >= let_go,
            "{let_go} problems let go"
        );
        self.issue_count = (self.issue_count + filed).saturating_sub(let_go);
    }

    /// The round of `change` when it is a row of a round held in another version: a round
    /// decided again, a judgment revised, a turn marked superseded.
    pub fn rewrites(&self, change: &Change) -> Option<u32> {
        fn differs<T: ById + PartialEq>(rows: &[T], row: &T) -> bool {
            let id = row.key().1;
            rows.binary_search_by_key(&id, |r| r.key().1)
                .is_ok_and(|i| rows[i] != *row)
        }
        let round = change.round().filter(|&r| placed(r))?;
        let rewritten = match change {
            Change::Turn(turn) => differs(&self.turns, turn),
            Change::Judgment(judgment) => differs(&self.judgments, judgment),
            Change::Decision(decision) => self
                .decisions
                .get(&round)
                .is_some_and(|held| held != decision),
            Change::Action(action) => self.actions.get(&round).is_some_and(|held| held != action),
            Change::Session(_) | Change::Note(_) => false,
        };
        rewritten.then_some(round)
    }

    /// How many problems [`Debate::issues`] gives, without going over the rows.
    pub fn issue_count(&self) -> usize {
        self.issue_count
    }

    /// Files a note in id order (a note read twice is filed once), keeping the latest
    /// [`KEPT_NOTES`].
    fn pin(&mut self, note: DebateNote) {
        match self.notes.binary_search_by_key(&note.id, |n| n.id) {
            Ok(i) => self.notes[i] = note,
            Err(i) => self.notes.insert(i, note),
        }
        if self.notes.len() > KEPT_NOTES {
            self.notes.remove(0);
        }
    }

    /// The highest round any placed turn or decision names.
    pub fn latest_round(&self) -> u32 {
        let turns = self.turn_rounds.latest();
        let decisions = self.decisions.keys().next_back().copied();
        turns.max(decisions).unwrap_or(0)
    }

    pub fn latest_decision(&self) -> Option<&ControllerDecision> {
        self.decisions.values().next_back()
    }

    /// The decision awaiting the operator: while the debate runs, any decision no action
    /// resolved is pending (the contract); of those, the latest, which the operator sees and
    /// acts on first.
    pub fn pending(&self) -> Option<&ControllerDecision> {
        if !self.session.is_running() {
            return None;
        }
        self.decisions
            .values()
            .rev()
            .find(|d| !self.actions.contains_key(&d.round_index))
    }

    /// The decision of `round` while it is pending (the debate runs, and no action resolved
    /// it): an operator may act on it, whether or not a newer decision is pending too.
    pub fn pending_at(&self, round: u32) -> Option<&ControllerDecision> {
        if !self.session.is_running() || self.actions.contains_key(&round) {
            return None;
        }
        self.decisions.get(&round)
    }

    /// Whether the pending decision waits for an operator: the orchestrator holds a gated debate
    /// until it is resolved or its wait runs out. Elsewhere a pending decision is advisory.
    pub fn waiting(&self) -> bool {
        self.pending().is_some() && self.session.controller_mode == ControllerMode::Gated.into()
    }

    /// How the debate ended; `None` while it runs.
    pub fn ending(&self) -> Option<Ending> {
        if self.session.is_running() {
            return None;
        }
        let judge_aborted = self
            .judgments
            .iter()
            .any(|j| j.decision == JudgeDecision::Abort.into());
        let last = self.decisions.iter().next_back();
        let resolution = self.actions.values().next_back().map(Resolution::of);
        Some(Ending::of(
            &self.session.controller_mode,
            judge_aborted,
            last.map(|(round, d)| (*round, &d.decision)),
            resolution.as_ref(),
        ))
    }

    /// What this debate's rows say of the decision of `round`, for
    /// [`OperatorAction::check_open`].
    pub(crate) fn decision_state(&self, round: u32) -> DecisionState {
        DecisionState {
            status: Some(self.session.status.clone()),
            decision: self.decisions.get(&round).map(|d| d.decision.to_wire()),
        }
    }

    /// Decisions of a running debate that no action resolved.
    pub fn unresolved(&self) -> usize {
        if !self.session.is_running() {
            return 0;
        }
        self.decisions
            .keys()
            .filter(|round| !self.actions.contains_key(round))
            .count()
    }

    /// One round's rows.
    pub fn round(&self, number: u32) -> RoundRow<'_> {
        self.rounds_in(number..=number)
            .pop()
            .unwrap_or_else(|| RoundRow {
                number,
                turns: Vec::new(),
                judgments: Vec::new(),
                decision: self.decisions.get(&number),
                action: self.actions.get(&number),
            })
    }

    /// Every round so far, first to latest, gathered in one pass over the rows.
    pub fn rounds(&self) -> Vec<RoundRow<'_>> {
        self.rounds_in(1..=u32::MAX)
    }

    /// The rounds numbered `numbers` that have happened, gathered in one pass over the rows:
    /// what a view shows of a long debate costs the rounds it shows.
    pub fn rounds_in(&self, numbers: RangeInclusive<u32>) -> Vec<RoundRow<'_>> {
        let first = (*numbers.start()).max(1);
        let last = (*numbers.end()).min(self.latest_round());
        if first > last {
            return Vec::new();
        }
        let mut rounds: Vec<RoundRow<'_>> = (first..=last)
            .map(|number| RoundRow {
                number,
                turns: Vec::new(),
                judgments: Vec::new(),
                decision: self.decisions.get(&number),
                action: self.actions.get(&number),
            })
            .collect();
        let at = |round: u32| (round - first) as usize;
        for (round, id) in self.turn_rounds.within(first, last) {
            if let Ok(i) = self.turns.binary_search_by_key(&id, |t| t.id) {
                rounds[at(round)].turns.push(&self.turns[i]);
            }
        }
        for (round, id) in self.judgment_rounds.within(first, last) {
            if let Ok(i) = self.judgments.binary_search_by_key(&id, |j| j.id) {
                rounds[at(round)].judgments.push(&self.judgments[i]);
            }
        }
        rounds
    }

    /// Every problem found reading this debate's rows: rows placed in no round first (nothing
    /// else shows them), then the session's, then the rest.
    pub fn issues(&self) -> impl Iterator<Item = &str> {
        let session = self.session.issues.iter();
        let turns = self.turns.iter().flat_map(|t| &t.issues);
        let decisions = self.decisions.values().flat_map(|d| &d.issues);
        let judgments = self.judgments.iter().flat_map(|j| &j.issues);
        let actions = self.actions.values().flat_map(|a| &a.issues);
        let unplaced = self.unplaced.iter().flat_map(Change::issues);
        unplaced
            .chain(session)
            .chain(turns)
            .chain(decisions)
            .chain(judgments)
            .chain(actions)
            .map(String::as_str)
    }

    /// Roster personas that have not spoken and were not brought in: escalation candidates.
    pub fn unused_personas(&self) -> Vec<String> {
        let brought_in: Vec<&str> = self
            .actions
            .values()
            .filter_map(|a| a.persona.as_deref())
            .collect();
        self.session
            .personas
            .iter()
            .filter(|p| !self.turns.iter().any(|t| &t.agent_persona == *p))
            .filter(|p| !brought_in.contains(&p.as_str()))
            .cloned()
            .collect()
    }
}

/// Debates in the order they first appeared, each found by id; positions never change.
#[derive(Debug, Clone, Default)]
pub struct Debates {
    list: Vec<Debate>,
    index: HashMap<String, usize>,
}

impl Debates {
    /// Files a row under its debate, creating the debate on first sight; returns its position.
    pub fn apply(&mut self, change: Change) -> usize {
        let id = change.session_id();
        let position = match self.index.get(id) {
            Some(&position) => position,
            None => {
                self.list.push(Debate::new(id));
                self.index.insert(id.to_owned(), self.list.len() - 1);
                self.list.len() - 1
            }
        };
        self.list[position].apply(change);
        position
    }

    /// The debate with this id.
    pub fn get_by_id(&self, id: &str) -> Option<&Debate> {
        self.index.get(id).map(|&i| &self.list[i])
    }

    /// The position of the debate with this id.
    pub fn position(&self, id: &str) -> Option<usize> {
        self.index.get(id).copied()
    }

    /// Moves the debate at `position` out, leaving its id there with no rows: for a reader
    /// that hands debates on one at a time.
    pub fn take(&mut self, position: usize) -> Debate {
        let id = self.list[position].session.id.clone();
        std::mem::replace(&mut self.list[position], Debate::new(&id))
    }
}

impl Deref for Debates {
    type Target = [Debate];

    fn deref(&self) -> &[Debate] {
        &self.list
    }
}

impl FromIterator<Change> for Debates {
    fn from_iter<I: IntoIterator<Item = Change>>(changes: I) -> Debates {
        let mut debates = Debates::default();
        for change in changes {
            debates.apply(change);
        }
        debates
    }
}
