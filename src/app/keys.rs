//! The keys the console answers to, as the help overlay lists them.

/// `(keys, what they do)`, in the order the help overlay shows them.
pub const KEYS: &[(&str, &str)] = &[
    (
        "↑ ↓  k j",
        "move in the focused list; scroll a round's turns",
    ),
    (
        "Enter → l",
        "drill in: debates -> rounds -> a round's turns",
    ),
    ("Esc ← h", "back out"),
    (
        "Tab",
        "switch between the debates list and the rounds table",
    ),
    ("a", "accept the pending decision"),
    ("o", "override the pending decision (choose the decision)"),
    ("e", "force escalation (choose the persona)"),
    (
        "y",
        "confirm the action; n adds a note; any other key cancels",
    ),
    ("r", "retry an action whose write failed"),
    (
        "c",
        "calibration: the threshold grid replayed over finished debates",
    ),
    ("space", "pause / resume the feed"),
    ("+ -", "playback speed x2 / ÷2"),
    ("?", "this help; q quits, any other key closes it"),
    ("q  Ctrl-C", "quit"),
];
