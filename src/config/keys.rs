//! The keymap: the console's actions and the keys bound to them, the bundled defaults overridden
//! per action by the `[keys]` table of the config file. Ctrl-C always quits and Ctrl-Z always
//! suspends; `y`/`n` in a confirmation and typed text in a prompt are not remappable.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::ops::Range;
use std::str::FromStr;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde::Deserialize;

macro_rules! actions {
    ($($action:ident = $name:literal, [$($key:literal),*], $what:literal;)*) => {
        /// What the operator asks for with a key.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Action { $($action),* }

        impl Action {
            /// Every action, in the order the help overlay lists them.
            pub const ALL: &[Action] = &[$(Action::$action),*];

            /// The name used in the config's `[keys]` table.
            pub fn name(self) -> &'static str {
                match self { $(Action::$action => $name),* }
            }

            /// What the action does, for the help overlay and the README.
            pub fn describe(self) -> &'static str {
                match self { $(Action::$action => $what),* }
            }

            fn default_keys(self) -> &'static [&'static str] {
                match self { $(Action::$action => &[$($key),*]),* }
            }
        }
    };
}

actions! {
    Up = "up", ["up", "k"], "move up; scroll up";
    Down = "down", ["down", "j"], "move down; scroll down";
    PageUp = "page_up", ["pageup"], "scroll a page up";
    PageDown = "page_down", ["pagedown"], "scroll a page down";
    Top = "top", ["home"], "back to the top";
    Bottom = "bottom", ["end", "G"], "to the bottom: the last debate, the last round, the end of a text";
    DrillIn = "drill_in", ["enter", "right", "l"], "debates -> the detail; a round -> its transcript";
    Back = "back", ["esc", "left", "h"], "back to the debates list; from the past (time cursor), live";
    SwitchFocus = "switch_focus", ["tab"], "switch between the debates list and the detail";
    NextView = "next_view", ["v"], "next detail view";
    PreviousView = "previous_view", ["V"], "previous detail view";
    ViewRounds = "view_rounds", ["1"], "rounds: signals table, similarity chart, token gauge";
    ViewTranscript = "view_transcript", ["2"], "transcript: every turn, superseded ones struck through";
    ViewJudge = "view_judge", ["3"], "judge: each turn's ruling, score, reasons, model, PMIDs";
    ViewTrace = "view_trace", ["4"], "trace: why the debate stopped where it did";
    ViewFormat = "view_format", ["5"], "format: panel aspects, takes, clashes, cruxes, shifts; extended debate cost";
    Accept = "accept", ["a"], "accept the pending decision";
    Override = "override", ["o"], "override the pending decision (choose the decision)";
    Escalate = "escalate", ["e"], "force escalation (choose the persona)";
    StepBack = "step_back", ["["], "time: the debate as it stood at the decision before (Esc: live)";
    StepForward = "step_forward", ["]"], "time: the debate as it stood at the next decision, then live";
    FirstDecision = "first_decision", ["{"], "time: the debate as it stood at its first decision";
    LatestDecision = "latest_decision", ["}"], "time: the debate as it stood at its latest decision";
    NextWaiting = "next_waiting", ["p"], "jump to the next decision waiting for you (oldest first)";
    Retry = "retry", ["r"], "retry an action whose write failed";
    Note = "note", ["N"], "pin a note to the debate for whoever watches it next (not an action)";
    Unlock = "unlock", ["U"], "read-only: unlock actions (asks to confirm)";
    Filter = "filter", ["/"], "filter: all words match; id: q: persona: status: mode: is:pending, !not";
    ColonLine = "command", [":"], "the command line; its commands are listed below";
    Sort = "sort", ["s"], "sort debates: arrival, pending first, id";
    Pause = "pause", ["space"], "pause / resume the feed (filter and scroll stay); in the past, play history";
    Faster = "faster", ["+", "="], "playback speed x2";
    Slower = "slower", ["-"], "playback speed ÷2";
    Calibration = "calibration", ["c"], "calibration: the threshold grid over finished debates";
    ShadowWeek = "shadow_week", ["w"], "shadow week: would-stop vs fixed loop, savings, agreement";
    PreviousSetting = "previous_setting", ["<", ","], "calibration: the previous setting (fewer flips); rollout: previous type";
    NextSetting = "next_setting", [">", "."], "calibration: the next setting (more saved); rollout: next type";
    Rollout = "rollout", ["R"], "rollout: a debate type's settings rollout, both arms compared";
    Publish = "publish", ["u"], "calibration: publish the cursor's setting (reason, share, confirm)";
    Promote = "promote", ["m"], "rollout: promote the canary to every new debate (reason, confirm)";
    Rollback = "rollback", ["b"], "rollout: roll back the canary or the version in force (reason, confirm)";
    Copy = "copy", ["y"], "copy (OSC 52): the debate id, the round's turns, the trace";
    Pager = "pager", ["P"], "open the round's turns (the trace in the trace view) in $PAGER";
    Help = "help", ["?"], "this help";
    Quit = "quit", ["q"], "quit (Ctrl-C always quits)";
}

impl FromStr for Action {
    type Err = String;
    fn from_str(name: &str) -> Result<Action, String> {
        Action::ALL
            .iter()
            .copied()
            .find(|a| a.name() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = Action::ALL.iter().map(|a| a.name()).collect();
                format!("unknown action {name:?} (known: {})", names.join(", "))
            })
    }
}

/// One key with its modifiers, as written in the config: `a`, `U`, `ctrl-r`, `alt-enter`,
/// `space`, `pageup`, `f5`, ...
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key {
    code: KeyCode,
    ctrl: bool,
    alt: bool,
}

/// Named keys and how they are written.
const NAMED: &[(&str, KeyCode)] = &[
    ("enter", KeyCode::Enter),
    ("esc", KeyCode::Esc),
    ("tab", KeyCode::Tab),
    ("backtab", KeyCode::BackTab),
    ("backspace", KeyCode::Backspace),
    ("delete", KeyCode::Delete),
    ("insert", KeyCode::Insert),
    ("space", KeyCode::Char(' ')),
    ("up", KeyCode::Up),
    ("down", KeyCode::Down),
    ("left", KeyCode::Left),
    ("right", KeyCode::Right),
    ("pageup", KeyCode::PageUp),
    ("pagedown", KeyCode::PageDown),
    ("home", KeyCode::Home),
    ("end", KeyCode::End),
];

impl Key {
    /// The key of a terminal event. Shift is part of the character (`U`, `?`), so it is not
    /// kept as a modifier.
    pub fn of(event: &KeyEvent) -> Key {
        Key {
            code: event.code,
            ctrl: event.modifiers.contains(KeyModifiers::CONTROL),
            alt: event.modifiers.contains(KeyModifiers::ALT),
        }
    }
}

impl FromStr for Key {
    type Err = String;
    fn from_str(raw: &str) -> Result<Key, String> {
        let mut rest = raw;
        let (mut ctrl, mut alt) = (false, false);
        loop {
            if let Some(r) = rest.strip_prefix("ctrl-").filter(|r| !r.is_empty()) {
                (ctrl, rest) = (true, r);
            } else if let Some(r) = rest.strip_prefix("alt-").filter(|r| !r.is_empty()) {
                (alt, rest) = (true, r);
            } else {
                break;
            }
        }
        let mut chars = rest.chars();
        let code = match (chars.next(), chars.next()) {
            (Some(c), None) if !c.is_control() => KeyCode::Char(c),
            _ => match NAMED.iter().find(|(name, _)| *name == rest) {
                Some((_, code)) => *code,
                None => match rest.strip_prefix('f').and_then(|n| n.parse::<u8>().ok()) {
                    Some(n @ 1..=12) => KeyCode::F(n),
                    _ => {
                        return Err(format!(
                            "{raw:?} is not a key (a character, ctrl-/alt- plus a key, or one of: {}, f1-f12)",
                            NAMED.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
                        ));
                    }
                },
            },
        };
        if ctrl && code == KeyCode::Char('c') {
            return Err("ctrl-c always quits and cannot be bound".to_owned());
        }
        if ctrl && code == KeyCode::Char('z') {
            return Err("ctrl-z always suspends and cannot be bound".to_owned());
        }
        Ok(Key { code, ctrl, alt })
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.ctrl {
            f.write_str("ctrl-")?;
        }
        if self.alt {
            f.write_str("alt-")?;
        }
        match NAMED.iter().find(|(_, code)| *code == self.code) {
            Some((name, _)) => f.write_str(name),
            None => match self.code {
                KeyCode::Char(c) => write!(f, "{c}"),
                KeyCode::F(n) => write!(f, "f{n}"),
                other => write!(f, "{other:?}"),
            },
        }
    }
}

/// The `[keys]` table as written: an action's name (with where it stands in the file) and the
/// key or keys that replace its defaults.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(transparent)]
pub struct KeyOverrides(BTreeMap<toml::Spanned<String>, OneOrMany>);

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

/// A `[keys]` entry that cannot be applied, and the byte range of its name in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyError {
    pub message: String,
    pub span: Range<usize>,
}

/// Which action each key asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keymap {
    bindings: BTreeMap<Action, Vec<Key>>,
}

impl Default for Keymap {
    fn default() -> Self {
        let bindings = Action::ALL
            .iter()
            .map(|&action| {
                let keys = action
                    .default_keys()
                    .iter()
                    .map(|k| k.parse().expect("the bundled key bindings parse"))
                    .collect();
                (action, keys)
            })
            .collect();
        Keymap { bindings }
    }
}

impl Keymap {
    /// The defaults with `overrides` applied; an unknown action, an action left without keys
    /// or a key bound to two actions is an error at the entry that makes it (of two entries
    /// binding one key, the later in the file).
    pub fn with(overrides: &KeyOverrides) -> Result<Keymap, KeyError> {
        let mut keymap = Keymap::default();
        let mut entries: Vec<_> = overrides.0.iter().collect();
        entries.sort_by_key(|(name, _)| name.span().start);
        let mut written: HashMap<Action, Range<usize>> = HashMap::new();
        for (entry, keys) in entries {
            let (name, span) = (entry.get_ref(), entry.span());
            let at = |message: String| KeyError {
                message,
                span: span.clone(),
            };
            let action: Action = name.parse().map_err(at)?;
            let keys = match keys {
                OneOrMany::One(key) => std::slice::from_ref(key),
                OneOrMany::Many(keys) => keys.as_slice(),
            };
            let keys = keys
                .iter()
                .map(|k| k.parse().map_err(|e| at(format!("{name}: {e}"))))
                .collect::<Result<Vec<Key>, KeyError>>()?;
            if keys.is_empty() {
                return Err(at(format!("{name} has no key: every action needs one")));
            }
            keymap.bindings.insert(action, keys);
            written.insert(action, span);
        }
        let mut owner: HashMap<Key, Action> = HashMap::new();
        for (&action, keys) in &keymap.bindings {
            for &key in keys {
                if let Some(other) = owner.insert(key, action).filter(|o| *o != action) {
                    // The bundled defaults share no key, so one of the two was written.
                    let span = [other, action]
                        .iter()
                        .filter_map(|a| written.get(a))
                        .max_by_key(|span| span.start)
                        .cloned()
                        .unwrap_or_default();
                    return Err(KeyError {
                        message: format!(
                            "key {key} is bound to both {} and {}",
                            other.name(),
                            action.name()
                        ),
                        span,
                    });
                }
            }
        }
        Ok(keymap)
    }

    /// The action a key press asks for.
    pub fn action(&self, event: &KeyEvent) -> Option<Action> {
        let key = Key::of(event);
        self.bindings
            .iter()
            .find(|(_, keys)| keys.contains(&key))
            .map(|(action, _)| *action)
    }

    /// The first key of an action, as short as the footer shows it: `↑`, `Enter`, `a`.
    pub fn hint(&self, action: Action) -> String {
        let Some(key) = self.bindings[&action].first() else {
            return String::new();
        };
        let plain = !key.ctrl && !key.alt;
        match key.code {
            KeyCode::Up if plain => "↑".to_owned(),
            KeyCode::Down if plain => "↓".to_owned(),
            KeyCode::Left if plain => "←".to_owned(),
            KeyCode::Right if plain => "→".to_owned(),
            KeyCode::Enter if plain => "Enter".to_owned(),
            KeyCode::Esc if plain => "Esc".to_owned(),
            KeyCode::Tab if plain => "Tab".to_owned(),
            _ => key.to_string(),
        }
    }

    /// The keys of an action as shown to the operator, e.g. `up k`.
    pub fn keys(&self, action: Action) -> String {
        let keys: Vec<String> = self.bindings[&action].iter().map(Key::to_string).collect();
        keys.join(" ")
    }
}
