//! The in-memory store: the contract's five tables and gavel's notes in one process, with subscriptions. A row
//! whose round lies outside the store's [`Limits`] is flagged and kept under round 0, as the
//! database reader would.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use chrono::Utc;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use super::ResolveError;
use crate::domain::{
    Change, ControllerDecision, DebateNote, DecisionState, Judgment, Limits, OperatorAction,
    Session, Turn,
};

#[derive(Debug, Default)]
struct Tables {
    limits: Limits,
    sessions: BTreeMap<String, Session>,
    turns: BTreeMap<u64, Turn>,
    decisions: BTreeMap<(String, u32), ControllerDecision>,
    judgments: BTreeMap<u64, Judgment>,
    actions: BTreeMap<(String, u32), OperatorAction>,
    notes: BTreeMap<u64, DebateNote>,
    subscribers: Vec<UnboundedSender<Change>>,
}

impl Tables {
    fn rows(&self) -> impl Iterator<Item = Change> + '_ {
        let sessions = self.sessions.values().cloned().map(Change::Session);
        let turns = self.turns.values().cloned().map(Change::Turn);
        let decisions = self.decisions.values().cloned().map(Change::Decision);
        let judgments = self.judgments.values().cloned().map(Change::Judgment);
        let actions = self.actions.values().cloned().map(Change::Action);
        let notes = self.notes.values().cloned().map(Change::Note);
        sessions
            .chain(turns)
            .chain(decisions)
            .chain(judgments)
            .chain(actions)
            .chain(notes)
    }

    fn upsert(&mut self, change: &Change) {
        match change {
            Change::Session(s) => {
                self.sessions.insert(s.id.clone(), s.clone());
            }
            Change::Turn(t) => {
                self.turns.insert(t.id, t.clone());
            }
            Change::Decision(d) => {
                self.decisions
                    .insert((d.session_id.clone(), d.round_index), d.clone());
            }
            Change::Judgment(j) => {
                self.judgments.insert(j.id, j.clone());
            }
            Change::Action(a) => {
                self.actions
                    .insert((a.session_id.clone(), a.round_index), a.clone());
            }
            Change::Note(n) => {
                self.notes.insert(n.id, n.clone());
            }
        }
    }

    fn record(&mut self, mut action: OperatorAction) -> Result<OperatorAction, ResolveError> {
        let key = (action.session_id.clone(), action.round_index);
        if let Some(existing) = self.actions.get(&key) {
            return Err(ResolveError::AlreadyResolved(Box::new(existing.clone())));
        }
        action.created_at = Some(Utc::now());
        self.publish(Change::Action(action.clone()));
        Ok(action)
    }

    /// What the tables say of the decision `action` resolves.
    fn decision_state(&self, action: &OperatorAction) -> DecisionState {
        let session = &action.session_id;
        DecisionState {
            status: self.sessions.get(session).map(|s| s.status.clone()),
            decision: self
                .decisions
                .get(&(session.clone(), action.round_index))
                .map(|d| d.decision.to_wire()),
        }
    }

    fn publish(&mut self, mut change: Change) {
        self.limits.check(&mut change);
        self.upsert(&change);
        self.subscribers.retain(|s| s.send(change.clone()).is_ok());
    }
}

/// A shared handle on the in-memory tables.
#[derive(Debug, Clone, Default)]
pub struct MemoryStore {
    tables: Arc<Mutex<Tables>>,
}

impl MemoryStore {
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }

    /// A store whose rows are checked against `limits`.
    pub fn with_limits(limits: Limits) -> MemoryStore {
        let store = MemoryStore::default();
        store.lock().limits = limits;
        store
    }

    fn lock(&self) -> MutexGuard<'_, Tables> {
        // A panic while holding the lock cannot leave a table half-written (each write is one
        // insert), so a poisoned lock is safe to keep using.
        self.tables
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Inserts or replaces a row and tells every subscriber.
    pub fn write(&self, change: Change) {
        self.lock().publish(change);
    }

    /// Records an operator action unless its decision is already resolved; then the action that
    /// won is returned instead and nothing is overwritten.
    pub fn resolve(&self, action: OperatorAction) -> Result<OperatorAction, ResolveError> {
        self.lock().record(action)
    }

    /// Records an operator's action on a decision that is still open (see
    /// [`OperatorAction::check_open`]); otherwise nothing is written and the refusal says why.
    pub fn resolve_open(&self, action: OperatorAction) -> Result<OperatorAction, ResolveError> {
        let mut tables = self.lock();
        let resolved = tables
            .actions
            .contains_key(&(action.session_id.clone(), action.round_index));
        if !resolved && let Err(why) = action.check_open(&tables.decision_state(&action)) {
            return Err(ResolveError::refused(&action, why));
        }
        tables.record(action)
    }

    /// Pins `note` to its debate, numbered after the notes before it; the note as written.
    pub fn note(&self, mut note: DebateNote) -> DebateNote {
        let mut tables = self.lock();
        note.id = tables.notes.keys().next_back().map_or(1, |last| last + 1);
        note.created_at = Some(Utc::now());
        tables.publish(Change::Note(note.clone()));
        note
    }

    /// Every row of debate `id`, as it stands.
    pub fn history(&self, id: &str) -> Vec<Change> {
        self.lock()
            .rows()
            .filter(|row| row.session_id() == id)
            .collect()
    }

    /// Every row so far, then every later change, on one channel: nothing is missed.
    pub fn subscribe(&self) -> UnboundedReceiver<Change> {
        let (sender, receiver) = unbounded_channel();
        let mut tables = self.lock();
        for row in tables.rows() {
            // The receiver is alive: it is returned below.
            let _ = sender.send(row);
        }
        tables.subscribers.push(sender);
        receiver
    }
}
