//! A debate as it stood at a moment of its history, for the time cursor. What had landed by
//! then follows the order the database committed the rows in, as they record it: a turn, a
//! ruling or a note by its own time (`created_at`) against the moment's (a decision's
//! `decided_at`, an action's `created_at`), by its round where either time is missing; the
//! decisions and the actions on them in round order, as they can only be written (an action
//! resolves the latest decision). So every console, and a restart, shows the same past whatever
//! order the rows reached it in. A step reuses the rows the past already holds: only the rows
//! it gains are copied.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use super::{ByRound, Debate, spoke};
use crate::domain::{DebateNote, Session, SessionStatus, Turn};

/// A moment the time cursor shows: the decision of `round` had landed and, when `acted`, the
/// operator action on it too. Moments order as they happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Moment {
    pub round: u32,
    pub acted: bool,
}

impl Moment {
    /// The moment the decision of `round` landed.
    pub fn decided(round: u32) -> Moment {
        Moment {
            round,
            acted: false,
        }
    }
}

impl Debate {
    /// Every moment of the debate's history, in order: each decision landing, then the action
    /// on it (where an operator or a timeout resolved it).
    pub fn moments(&self) -> impl Iterator<Item = Moment> + '_ {
        self.decisions.keys().flat_map(|&round| {
            let acted = self
                .actions
                .contains_key(&round)
                .then_some(Moment { round, acted: true });
            std::iter::once(Moment::decided(round)).chain(acted)
        })
    }

    /// The moments `[` and `]` stop at: each decision as it was settled, with the action on it
    /// once that had landed (the decision alone where none resolved it).
    pub fn stops(&self) -> impl Iterator<Item = Moment> + '_ {
        self.decisions.keys().map(|&round| self.settled(round))
    }

    /// The settled stop of the decision of `round` ([`Debate::stops`]).
    pub fn settled(&self, round: u32) -> Moment {
        Moment {
            round,
            acted: self.actions.contains_key(&round),
        }
    }

    /// When `moment` happened, as its row records it: the action's time (the decision's where
    /// the action has none), or the decision's.
    pub fn time_of(&self, moment: Moment) -> Option<DateTime<Utc>> {
        let decided = self.decisions.get(&moment.round).and_then(|d| d.decided_at);
        let acted = self.actions.get(&moment.round).and_then(|a| a.created_at);
        if moment.acted {
            acted.or(decided)
        } else {
            decided
        }
    }

    /// This debate as it stood at `moment`: the rows that had landed by then, its tokens what
    /// those turns spent (its cost too, where the session gives a price), and still running
    /// unless it had finished by then.
    pub(crate) fn as_of(&self, moment: Moment) -> Debate {
        let mut past = Debate::new(&self.session.id);
        past.step_to(self, moment);
        past
    }

    /// Moves this past of `live` (made by [`Debate::as_of`] from `live` as it is now, or an
    /// empty debate) to `moment`: rows after it are dropped, rows it gains are copied from
    /// `live`, the rows it keeps stay where they are.
    pub(crate) fn step_to(&mut self, live: &Debate, moment: Moment) {
        let cut = Cut {
            round: moment.round,
            at: live.time_of(moment),
        };
        keep(
            &mut self.turns,
            &live.turns,
            |t| t.id,
            |t| cut.landed(t.round_number, t.created_at),
        );
        keep(
            &mut self.judgments,
            &live.judgments,
            |j| j.id,
            |j| cut.landed(j.round_index, j.created_at),
        );
        keep_rounds(
            &mut self.decisions,
            &live.decisions,
            moment.round.saturating_add(1),
        );
        keep_rounds(
            &mut self.actions,
            &live.actions,
            moment.round.saturating_add(moment.acted.into()),
        );
        self.notes = live
            .notes
            .iter()
            .filter(|n| cut.written(n))
            .cloned()
            .collect();
        self.unplaced.clear();
        self.first_spoke.clear();
        for turn in &self.turns {
            spoke(
                &mut self.first_spoke,
                &turn.agent_persona,
                turn.round_number,
            );
        }
        self.turn_rounds = ByRound::of(&self.turns);
        self.judgment_rounds = ByRound::of(&self.judgments);
        self.session = if cut.finished(live, moment) {
            live.session.clone()
        } else {
            running(&live.session, &self.turns)
        };
        self.issue_count = self.issues().count();
    }
}

/// Where the past is cut: after the decision of `round` (and the action on it), at `at` when
/// the moment's row records its time.
struct Cut {
    round: u32,
    at: Option<DateTime<Utc>>,
}

impl Cut {
    /// Whether a row of `round` written at `at` had landed.
    fn landed(&self, round: u32, at: Option<DateTime<Utc>>) -> bool {
        match (at, self.at) {
            (Some(at), Some(by)) => at <= by,
            _ => round <= self.round,
        }
    }

    /// Whether `note` had been written (a note or a moment without a time counts as written:
    /// nothing says otherwise).
    fn written(&self, note: &DebateNote) -> bool {
        match (note.created_at, self.at) {
            (Some(written), Some(by)) => written <= by,
            _ => true,
        }
    }

    /// Whether `live` had finished by `moment`: by its `finished_at` where both times are
    /// known; and at its last decision, settled (the debate finishes on it: the session row
    /// that says so follows it).
    fn finished(&self, live: &Debate, moment: Moment) -> bool {
        if live.session.is_running() {
            return false;
        }
        let later = live.decisions.keys().next_back() > Some(&moment.round);
        let last = !later && live.settled(moment.round) == moment;
        match (live.session.finished_at, self.at) {
            (Some(finished), Some(by)) => last || finished <= by,
            _ => last,
        }
    }
}

/// `live`'s session as it stood while running with `turns` spoken: its tokens what they spent,
/// its cost at its price (the session row keeps only its latest).
fn running(live: &Session, turns: &[Turn]) -> Session {
    let mut session = live.clone();
    session.status = SessionStatus::Running.into();
    session.num_rounds = None;
    session.finished_at = None;
    session.tokens_used = turns.iter().map(|t| u64::from(t.tokens_used)).sum();
    if let Some(price) = session.metadata.usd_per_1k_tokens {
        session.metadata.cost_usd = Some(session.tokens_used as f64 / 1000.0 * price);
    }
    session
}

/// Makes `held` (rows in id order, each one of `live`'s) the rows of `live` that `landed`:
/// the rows it keeps are moved, only the ones it gains are copied.
fn keep<T: Clone>(
    held: &mut Vec<T>,
    live: &[T],
    id: impl Fn(&T) -> u64,
    landed: impl Fn(&T) -> bool,
) {
    let mut kept = std::mem::take(held).into_iter().peekable();
    *held = live
        .iter()
        .filter(|row| landed(row))
        .map(|row| {
            while kept.next_if(|k| id(k) < id(row)).is_some() {}
            kept.next_if(|k| id(k) == id(row))
                .unwrap_or_else(|| row.clone())
        })
        .collect();
}

/// Makes `held` (a past of `live`'s rows by round) `live`'s rows of the rounds before `end`.
fn keep_rounds<T: Clone>(held: &mut BTreeMap<u32, T>, live: &BTreeMap<u32, T>, end: u32) {
    held.split_off(&end);
    let from = held.keys().next_back().map_or(0, |&round| round + 1);
    if from < end {
        held.extend(
            live.range(from..end)
                .map(|(&round, row)| (round, row.clone())),
        );
    }
}

#[cfg(test)]
mod tests {
    use chrono::{Duration, TimeZone};
    use proptest::prelude::*;

    use super::*;
    use crate::domain::{
        ActionKind, Change, ControllerDecision, Decision, JudgeDecision, Judgment, OperatorAction,
        Reported,
    };

    /// Six rounds of two turns, each round's ruling written after its decision, an action on
    /// every other decision written after the next round's first turn, a note now and then;
    /// second `s` of the debate is `at(s)`.
    fn debate() -> Debate {
        let start = Utc.with_ymd_and_hms(2026, 11, 25, 10, 0, 0).unwrap();
        let at = |s: i64| Some(start + Duration::seconds(s));
        let mut debate = Debate::new("d");
        for round in 1..=6u32 {
            let t = i64::from(round) * 10;
            for (i, persona) in ["theorist", "skeptic"].into_iter().enumerate() {
                debate.apply(Change::Turn(Turn {
                    id: u64::from(round) * 2 + i as u64,
                    session_id: "d".into(),
                    round_number: round,
                    agent_persona: persona.into(),
                    content: format!("round {round}"),
                    tokens_used: 100,
                    superseded: false,
                    metadata: Default::default(),
                    created_at: at(t + 2 * i as i64),
                    issues: Vec::new(),
                }));
            }
            debate.apply(Change::Decision(ControllerDecision {
                session_id: "d".into(),
                round_index: round,
                decision: Reported::Known(Decision::ContinueBaseline),
                signals: Default::default(),
                decided_at: at(t + 3),
                issues: Vec::new(),
            }));
            debate.apply(Change::Judgment(Judgment {
                id: u64::from(round),
                session_id: "d".into(),
                round_index: round,
                agent_persona: "skeptic".into(),
                decision: JudgeDecision::Continue.into(),
                score: None,
                reasons: Vec::new(),
                judge_model: None,
                pmids: Vec::new(),
                created_at: at(t + 5),
                issues: Vec::new(),
            }));
            if round % 2 == 0 {
                debate.apply(Change::Action(OperatorAction {
                    session_id: "d".into(),
                    round_index: round,
                    action: ActionKind::Accept.into(),
                    decision: Reported::Known(Decision::ContinueBaseline),
                    persona: None,
                    operator: "ana".into(),
                    role: None,
                    note: None,
                    created_at: at(t + 11),
                    issues: Vec::new(),
                }));
            }
            if round % 3 == 0 {
                let mut note = DebateNote::draft("d", "ana", "hand-over").unwrap();
                note.id = u64::from(round);
                note.created_at = at(t + 4);
                debate.apply(Change::Note(note));
            }
        }
        debate
    }

    #[test]
    fn a_moment_holds_what_had_landed_by_its_time() {
        let live = debate();
        let decided_2 = live.as_of(Moment::decided(2));
        let rounds: Vec<u32> = decided_2.turns.iter().map(|t| t.round_number).collect();
        assert_eq!(rounds, [1, 1, 2, 2]);
        assert_eq!(decided_2.judgments.len(), 1, "round 2's ruling came after");
        assert!(decided_2.actions.is_empty());
        assert!(decided_2.pending().is_some());
        let acted_2 = live.as_of(live.settled(2));
        let rounds: Vec<u32> = acted_2.turns.iter().map(|t| t.round_number).collect();
        assert_eq!(
            rounds,
            [1, 1, 2, 2, 3],
            "round 3's first turn came before the action"
        );
        assert_eq!(acted_2.judgments.len(), 2);
        assert_eq!(acted_2.actions.keys().collect::<Vec<_>>(), [&2]);
        assert_eq!(acted_2.session.tokens_used, 500);
        assert!(live.as_of(Moment::decided(2)).notes.is_empty());
        assert_eq!(live.as_of(Moment::decided(4)).notes.len(), 1);
    }

    #[test]
    fn a_past_counts_the_problems_of_the_rows_it_holds() {
        let mut live = debate();
        let mut flagged = live.turns[4].clone();
        flagged.issues = vec!["debate_rounds (id 6): content: cut".into()];
        live.apply(Change::Turn(flagged));
        assert_eq!(live.issue_count(), 1);
        for moment in live.moments() {
            let past = live.as_of(moment);
            assert_eq!(past.issue_count(), past.issues().count(), "{moment:?}");
        }
        assert_eq!(live.as_of(Moment::decided(1)).issue_count(), 0);
        assert_eq!(live.as_of(Moment::decided(3)).issue_count(), 1);
    }

    /// Every row of `debate`, written out in a fixed order.
    fn rows(debate: &Debate) -> String {
        let mut first: Vec<_> = debate.first_spoke.iter().collect();
        first.sort();
        format!(
            "{:?} {:?} {:?} {:?} {:?} {:?} {:?} {first:?}",
            debate.session,
            debate.turns,
            debate.judgments,
            debate.decisions,
            debate.actions,
            debate.notes,
            debate.unplaced
        )
    }

    proptest! {
        /// However the cursor wanders, moving a past along gives the past made afresh.
        #[test]
        fn a_step_gives_what_a_fresh_past_gives(walk in prop::collection::vec(0usize..9, 1..20)) {
            let live = debate();
            let moments: Vec<Moment> = live.moments().collect();
            let mut past = Debate::new("d");
            for i in walk {
                let moment = moments[i % moments.len()];
                past.step_to(&live, moment);
                prop_assert_eq!(rows(&past), rows(&live.as_of(moment)));
            }
        }
    }
}
