//! Untrusted text made safe to print to a terminal, and figures for people. Used by the console
//! and by every command that prints debate content.

/// `text` with every control character made visible and harmless: C0 controls become their
/// Unicode control pictures (ESC shows as ␛), DEL as ␡, C1 controls and bidirectional
/// overrides as �. Nothing in the result can move the cursor or restyle the terminal.
pub fn inert(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\u{0}'..='\u{1f}' => char::from_u32(0x2400 + c as u32).unwrap_or('�'),
            '\u{7f}' => '␡',
            '\u{80}'..='\u{9f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => '�',
            other => other,
        })
        .collect()
}

/// `text` on one line: runs of whitespace (newlines included) become one space, then
/// [`inert`].
pub fn one_line(text: &str) -> String {
    inert(&text.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// `n` with thousands separators: 41200 -> "41,200".
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}
