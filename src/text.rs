//! Untrusted text made safe to print to a terminal, figures and plain-text tables for people.
//! Used by the console and by every command that prints debate content.

/// `text` with every character that could act on a terminal, or hide from a reader, made
/// visible and harmless: C0 controls become their Unicode control pictures (ESC shows as ␛), DEL
/// as ␡, and C1 controls, bidirectional overrides, line and paragraph separators (U+2028,
/// U+2029), zero-width and other invisible format characters as �. Nothing in the result can
/// move the cursor, restyle the terminal, reorder or hide text.
pub fn inert(text: &str) -> String {
    text.chars().map(|c| stand_in(c).unwrap_or(c)).collect()
}

/// What [`inert`] shows instead of `c`, or `None` when `c` is safe as it is. Unsafe are
/// Unicode's controls (Cc), format characters (Cf: bidirectional controls, zero-width
/// characters, the byte order mark, tags) and line and paragraph separators (Zl, Zp).
pub fn stand_in(c: char) -> Option<char> {
    match c {
        '\u{0}'..='\u{1f}' => char::from_u32(0x2400 + c as u32),
        '\u{7f}' => Some('␡'),
        '\u{80}'..='\u{9f}'
        | '\u{ad}'
        | '\u{600}'..='\u{605}'
        | '\u{61c}'
        | '\u{6dd}'
        | '\u{70f}'
        | '\u{890}'..='\u{891}'
        | '\u{8e2}'
        | '\u{180e}'
        | '\u{200b}'..='\u{200f}'
        | '\u{2028}'..='\u{202e}'
        | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{206f}'
        | '\u{feff}'
        | '\u{fff9}'..='\u{fffb}'
        | '\u{110bd}'
        | '\u{110cd}'
        | '\u{13430}'..='\u{1343f}'
        | '\u{1bca0}'..='\u{1bca3}'
        | '\u{1d173}'..='\u{1d17a}'
        | '\u{e0001}'
        | '\u{e0020}'..='\u{e007f}' => Some('�'),
        _ => None,
    }
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
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
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
