//! Untrusted text made safe to print to a terminal, figures and plain-text tables for people.
//! Used by the console and by every command that prints debate content.

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

/// The width of each column: its widest cell, header included.
pub fn widths(header: &[&str], rows: &[Vec<String>]) -> Vec<usize> {
    (0..header.len())
        .map(|i| {
            rows.iter()
                .map(|r| r[i].chars().count())
                .chain([header[i].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect()
}

/// Rows under a header, each column padded to its widest cell, two spaces apart.
pub fn columns(header: &[&str], rows: &[Vec<String>]) -> String {
    let widths = widths(header, rows);
    let line = |cells: &mut dyn Iterator<Item = &str>| -> String {
        let padded: Vec<String> = cells
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        padded.join("  ").trim_end().to_owned() + "\n"
    };
    let mut out = line(&mut header.iter().copied());
    for row in rows {
        out.push_str(&line(&mut row.iter().map(String::as_str)));
    }
    out
}
