//! The debates filter: terms separated by spaces, every one of which must match (AND). A term
//! is a text that the debate's id, question, status, mode, a persona or (on several databases)
//! its context's name contains (in any case), or the same limited to one field with a prefix —
//! `id:`, `q:` (the question), `persona:`, `status:`, `mode:`, `ctx:` — or `is:pending` (a decision is pending) or `is:waiting` (a gated
//! decision waits for the operator); a leading `!` or `-`
//! negates it. An unknown prefix is part of the text.
//!
//! Persona names are matched once per name and filter (see [`Filter::note_names`]), not once per
//! debate: a fleet repeats a few rosters.

/// Where a term looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// Id, question, status, mode, a persona or the context's name.
    Any,
    Id,
    Question,
    Persona,
    Status,
    Mode,
    /// The name of the database it is in, of several.
    Context,
    /// `is:pending`: the debate has a decision pending, waiting or advisory.
    Pending,
    /// `is:waiting`: the debate's pending decision waits for the operator (gated).
    Waiting,
}

/// The prefixes of the fields, as typed.
const PREFIXES: &[(&str, Field)] = &[
    ("id:", Field::Id),
    ("q:", Field::Question),
    ("persona:", Field::Persona),
    ("status:", Field::Status),
    ("mode:", Field::Mode),
    ("ctx:", Field::Context),
];

/// One term of a filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    pub field: Field,
    /// Lower-case; empty for [`Field::Pending`] and [`Field::Waiting`].
    pub needle: String,
    pub negated: bool,
}

impl Term {
    /// Reads one space-free word.
    fn parse(word: &str) -> Term {
        let (negated, rest) = match word.strip_prefix(['!', '-']) {
            Some(rest) if !rest.is_empty() => (true, rest),
            _ => (false, word),
        };
        let lower = rest.to_lowercase();
        let state = match lower.as_str() {
            "is:pending" => Some(Field::Pending),
            "is:waiting" => Some(Field::Waiting),
            _ => None,
        };
        if let Some(field) = state {
            return Term {
                field,
                needle: String::new(),
                negated,
            };
        }
        let (field, needle) = PREFIXES
            .iter()
            .find_map(|(prefix, field)| {
                lower
                    .strip_prefix(prefix)
                    .filter(|n| !n.is_empty())
                    .map(|n| (*field, n.to_owned()))
            })
            .unwrap_or((Field::Any, lower));
        Term {
            field,
            needle,
            negated,
        }
    }

    /// Whether the term looks at persona names.
    fn reads_personas(&self) -> bool {
        matches!(self.field, Field::Any | Field::Persona)
    }

    /// Whether the term looks at context names.
    fn reads_contexts(&self) -> bool {
        matches!(self.field, Field::Any | Field::Context)
    }
}

/// What a term is matched against: one debate's fields.
pub struct Subject<'a> {
    pub id: &'a str,
    pub question: &'a str,
    /// The status as stored, and as the status badge shows it (`completed`, `done`).
    pub status: [&'a str; 2],
    pub mode: &'a str,
    /// Its persona names, by their numbers (see [`Filter::note_names`]).
    pub personas: &'a [u32],
    /// The number of the database it is in (see [`Filter::note_contexts`]).
    pub ctx: u16,
    pub pending: bool,
    pub waiting: bool,
}

/// A filter as the list applies it.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// As typed.
    text: String,
    terms: Vec<Term>,
    /// Per term, whether each persona name (by its number) contains its needle; empty for the
    /// terms that do not look at personas.
    names: Vec<Vec<bool>>,
    /// Names matched so far.
    noted: usize,
    /// Per term, whether each context's name (by its number) contains its needle; empty for the
    /// terms that do not look at contexts, and on one database.
    contexts: Vec<Vec<bool>>,
}

impl Filter {
    /// Reads a filter as typed.
    pub fn parse(text: &str) -> Filter {
        let terms: Vec<Term> = text.split_whitespace().map(Term::parse).collect();
        Filter {
            text: text.to_owned(),
            names: vec![Vec::new(); terms.len()],
            contexts: vec![Vec::new(); terms.len()],
            terms,
            noted: 0,
        }
    }

    /// The filter as typed.
    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn terms(&self) -> &[Term] {
        &self.terms
    }

    /// Whether it lets every debate through.
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// Notes which of the persona names from `names[noted..]` on each term matches; `names` is
    /// every name known, by number, and only grows.
    pub fn note_names<S: AsRef<str>>(&mut self, names: &[S]) {
        for name in &names[self.noted.min(names.len())..] {
            let lower = name.as_ref().to_lowercase();
            for (term, matched) in self.terms.iter().zip(&mut self.names) {
                if term.reads_personas() {
                    matched.push(lower.contains(&term.needle));
                }
            }
        }
        self.noted = names.len();
    }

    /// Notes which of the contexts' `names` (by number; none on one database) each term
    /// matches.
    pub fn note_contexts<S: AsRef<str>>(&mut self, names: &[S]) {
        for (term, matched) in self.terms.iter().zip(&mut self.contexts) {
            *matched = match term.reads_contexts() {
                true => names
                    .iter()
                    .map(|name| name.as_ref().to_lowercase().contains(&term.needle))
                    .collect(),
                false => Vec::new(),
            };
        }
    }

    /// Whether every term matches `subject`.
    pub fn matches(&self, subject: &Subject) -> bool {
        self.terms
            .iter()
            .zip(self.names.iter().zip(&self.contexts))
            .all(|(term, noted)| term_matches(term, noted, subject) != term.negated)
    }

    /// The text a database search looks for: the longest term that must match and has text
    /// (a search finds debates whose id, question, status, mode or roster contains it; the
    /// list then applies the whole filter to what it loaded).
    pub fn search_text(&self) -> Option<&str> {
        self.terms
            .iter()
            .filter(|t| {
                !t.negated && !matches!(t.field, Field::Pending | Field::Waiting | Field::Context)
            })
            .map(|t| t.needle.as_str())
            .max_by_key(|n| n.chars().count())
    }
}

fn term_matches(
    term: &Term,
    (names, contexts): (&Vec<bool>, &Vec<bool>),
    subject: &Subject,
) -> bool {
    let contains = |text: &str| text.to_lowercase().contains(&term.needle);
    let persona = || {
        subject
            .personas
            .iter()
            .any(|&p| names.get(p as usize).copied().unwrap_or(false))
    };
    let status = || subject.status.iter().any(|s| contains(s));
    let context = || {
        contexts
            .get(usize::from(subject.ctx))
            .copied()
            .unwrap_or(false)
    };
    match term.field {
        Field::Any => {
            contains(subject.id)
                || contains(subject.question)
                || status()
                || contains(subject.mode)
                || persona()
                || context()
        }
        Field::Id => contains(subject.id),
        Field::Question => contains(subject.question),
        Field::Persona => persona(),
        Field::Status => status(),
        Field::Mode => contains(subject.mode),
        Field::Context => context(),
        Field::Pending => subject.pending,
        Field::Waiting => subject.waiting,
    }
}

/// `filter` with its terms on `field` replaced by `term` (none: only removed), the other terms
/// kept as typed; for `:pending` and `:mode`.
pub fn with_term(filter: &str, field: Field, term: Option<&str>) -> String {
    let mut words: Vec<&str> = filter
        .split_whitespace()
        .filter(|w| Term::parse(w).field != field)
        .collect();
    words.extend(term);
    words.join(" ")
}
