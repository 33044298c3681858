//! Untrusted text made safe to print to a terminal, figures and plain-text tables for people.
//! Used by the console and by every command that prints debate content.

use std::borrow::Cow;

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
pub(crate) fn stand_in(c: char) -> Option<char> {
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

/// `text` with its line breaks kept and each line made [`inert`] (a tab as four spaces): for
/// text handed out whole, to a pager or the clipboard.
pub(crate) fn inert_lines(text: &str) -> String {
    let lines: Vec<String> = text
        .lines()
        .map(|line| inert(&line.replace('\t', "    ")))
        .collect();
    lines.join("\n")
}

/// `text` on one line: runs of whitespace (newlines included) become one space, then
/// [`inert`].
pub fn one_line(text: &str) -> String {
    on_one_line(text).into_owned()
}

/// [`one_line`], borrowing `text` when it is already on one line and inert (most ids, names
/// and decisions are): for the views drawn every frame.
pub fn on_one_line(text: &str) -> Cow<'_, str> {
    let mut after_space = true;
    let already = text.chars().all(|c| {
        let fine = match c {
            ' ' => !after_space,
            _ => !c.is_whitespace() && stand_in(c).is_none(),
        };
        after_space = c == ' ';
        fine
    }) && (!after_space || text.is_empty());
    if already {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(inert(
            &text.split_whitespace().collect::<Vec<_>>().join(" "),
        ))
    }
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

/// A figure against the threshold it must reach, as a true statement of how they stand:
/// `0.97 ≥ 0.90`, `0.64 < 0.90`; two decimals, more where two would show different figures
/// alike (`0.8999 < 0.9000`); `NaN vs 0.90` when they do not compare.
pub fn against(value: f64, threshold: f64) -> String {
    let relation = if value >= threshold {
        "≥"
    } else if value < threshold {
        "<"
    } else {
        "vs"
    };
    let alike = |digits: usize| format!("{value:.digits$}") == format!("{threshold:.digits$}");
    match (2..=6).find(|&digits| value == threshold || !alike(digits)) {
        Some(d) => format!("{value:.d$} {relation} {threshold:.d$}"),
        None => format!("{value} {relation} {threshold}"),
    }
}

/// A count against the bound it must stay under, as a true statement: `0 < 1`, `8 ≥ 1`.
pub fn under(count: u32, bound: u32) -> String {
    let relation = if count < bound { "<" } else { "≥" };
    format!("{count} {relation} {bound}")
}

/// `n` shortened to three significant figures at most: 950, 5.7k, 60k, 1.2M, 3G.
pub fn compact(n: u64) -> String {
    if n < 1_000 {
        return n.to_string();
    }
    let units: [(u64, &str); 6] = [
        (1_000, "k"),
        (1_000_000, "M"),
        (1_000_000_000, "G"),
        (1_000_000_000_000, "T"),
        (1_000_000_000_000_000, "P"),
        (1_000_000_000_000_000_000, "E"),
    ];
    for (unit, suffix) in units {
        // A whole number of units (a debate's 10k rounds, redrawn with every round) is shown
        // as the arithmetic below shows it, without formatting a float.
        let whole = n / unit;
        if n.is_multiple_of(unit) && whole < 1_000 {
            return format!("{whole}{suffix}");
        }
        let value = n as f64 / unit as f64;
        if value < 9.95 {
            let shown = format!("{value:.1}");
            return format!("{}{suffix}", shown.trim_end_matches(".0"));
        }
        if value < 999.5 {
            return format!("{value:.0}{suffix}");
        }
    }
    format!("{:.0}E", n as f64 / 1e18)
}

/// A wait left, in at most five characters under 100 hours: `0:05`, `1:23`, `59:59` (seconds
/// rounded up), then `1h05m`, `23h59m`.
pub fn countdown(left: std::time::Duration) -> String {
    let secs = u64::try_from(left.as_millis().div_ceil(1000)).unwrap_or(u64::MAX);
    let (hours, minutes, seconds) = (secs / 3600, secs / 60 % 60, secs % 60);
    if hours > 0 {
        format!("{hours}h{minutes:02}m")
    } else {
        format!("{minutes}:{seconds:02}")
    }
}

/// `text` cut to `width` terminal columns, ending in `…` when cut.
pub fn fit(text: &str, width: usize) -> String {
    fitted(text, width).into_owned()
}

/// [`fit`], borrowing `text` when it fits whole.
pub fn fitted(text: &str, width: usize) -> Cow<'_, str> {
    use unicode_width::UnicodeWidthChar;
    let total: usize = text.chars().map(|c| c.width().unwrap_or(0)).sum();
    if total <= width {
        return Cow::Borrowed(text);
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w + 1 > width {
            break;
        }
        used += w;
        out.push(c);
    }
    if width > 0 {
        out.push('…');
    }
    Cow::Owned(out)
}

/// `text` wrapped at spaces into at most `lines` lines of `width` columns (a word wider than a
/// line is cut); the last line ends in `…` when text is left over.
pub fn wrap(text: &str, width: usize, lines: usize) -> Vec<String> {
    use unicode_width::UnicodeWidthStr;
    let mut out: Vec<String> = Vec::new();
    let mut words = text.split_whitespace().peekable();
    while out.len() < lines && words.peek().is_some() {
        let mut line = String::new();
        while let Some(word) = words.peek() {
            let room = width.saturating_sub(line.width() + usize::from(!line.is_empty()));
            if word.width() <= room {
                if !line.is_empty() {
                    line.push(' ');
                }
                line.push_str(word);
                words.next();
            } else if line.is_empty() {
                line = fit(word, width);
                words.next();
                break;
            } else {
                break;
            }
        }
        out.push(line);
    }
    if words.peek().is_some()
        && let Some(last) = out.last_mut()
        && !last.ends_with('…')
    {
        *last = fit(&format!("{last} …"), width);
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
