//! The text input of the note editor, the filter and the `:` line: cursor movement, word and
//! line deletion, the limits, control characters refused, the wrapping and sideways scrolling
//! that keep the cursor in view, and the terminal's cursor drawn where the text's is.

use crate::common;

use common::{char, demo_model, key};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use gavel::console::app::prompt::{Prompt, Typed, wrap};
use gavel::console::app::{Event, Intent, MAX_LINE, Model, Overlay, update};
use proptest::prelude::*;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Position;
use unicode_width::UnicodeWidthStr;

fn with(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
    KeyEvent::new(code, modifiers)
}

fn plain(code: KeyCode) -> KeyEvent {
    with(code, KeyModifiers::NONE)
}

fn ctrl(c: char) -> KeyEvent {
    with(KeyCode::Char(c), KeyModifiers::CONTROL)
}

fn typed(prompt: &mut Prompt, text: &str) {
    for c in text.chars() {
        assert_eq!(prompt.key(&plain(KeyCode::Char(c))), Typed::Typing);
    }
}

#[test]
fn the_cursor_moves_and_text_goes_in_where_it_is() {
    let mut prompt = Prompt::new("", 100);
    typed(&mut prompt, "stop early");
    prompt.key(&plain(KeyCode::Home));
    assert_eq!(prompt.cursor(), 0);
    typed(&mut prompt, "do not ");
    assert_eq!(prompt.value(), "do not stop early");
    prompt.key(&ctrl('e'));
    assert_eq!(prompt.cursor(), 17);
    prompt.key(&ctrl('a'));
    prompt.key(&plain(KeyCode::Right));
    prompt.key(&plain(KeyCode::Right));
    prompt.key(&plain(KeyCode::Delete));
    assert_eq!(prompt.value(), "donot stop early");
    prompt.key(&plain(KeyCode::End));
    prompt.key(&plain(KeyCode::Left));
    prompt.key(&plain(KeyCode::Backspace));
    assert_eq!(prompt.value(), "donot stop eary");
    assert_eq!(prompt.key(&plain(KeyCode::Enter)), Typed::Done);
    assert_eq!(prompt.key(&plain(KeyCode::Esc)), Typed::Cancelled);
}

#[test]
fn words_and_lines_are_deleted_back_from_the_cursor() {
    let mut prompt = Prompt::new("the skeptic keeps repeating", 100);
    prompt.key(&ctrl('w'));
    assert_eq!(prompt.value(), "the skeptic keeps ");
    prompt.key(&with(KeyCode::Backspace, KeyModifiers::ALT));
    assert_eq!(prompt.value(), "the skeptic ");
    prompt.key(&with(KeyCode::Char('b'), KeyModifiers::ALT));
    assert_eq!(prompt.cursor(), 4);
    prompt.key(&ctrl('k'));
    assert_eq!(prompt.value(), "the ");
    prompt.key(&ctrl('y'));
    assert_eq!(
        prompt.value(),
        "the skeptic ",
        "Ctrl-Y puts back what Ctrl-K took"
    );
    prompt.key(&ctrl('u'));
    assert_eq!(prompt.value(), "");
}

#[test]
fn the_limit_holds_for_typing_and_for_putting_text_back() {
    let mut prompt = Prompt::new("", 5);
    typed(&mut prompt, "abcdefgh");
    assert_eq!(prompt.value(), "abcde");
    prompt.key(&ctrl('w'));
    typed(&mut prompt, "xyz");
    prompt.key(&ctrl('y'));
    assert_eq!(
        prompt.value(),
        "xyz",
        "putting back 5 more would pass the limit"
    );
    assert_eq!(
        Prompt::new(&"n".repeat(900), 500).value().chars().count(),
        500
    );
}

#[test]
fn control_characters_are_never_taken() {
    let mut prompt = Prompt::new("a\u{1b}[2J\u{202e}b\u{7}", 100);
    assert_eq!(prompt.value(), "a[2Jb");
    for c in [
        '\u{1b}', '\u{9b}', '\u{7f}', '\u{200b}', '\u{2028}', '\n', '\t',
    ] {
        prompt.key(&plain(KeyCode::Char(c)));
    }
    assert_eq!(prompt.value(), "a[2Jb");
    prompt.key(&plain(KeyCode::Tab));
    assert_eq!(prompt.value(), "a[2Jb");
}

#[test]
fn a_long_line_scrolls_so_that_the_cursor_stays_in_view() {
    let mut prompt = Prompt::new(&"x".repeat(50), 100);
    let (scroll, column) = prompt.line(20);
    assert_eq!(
        (scroll, column),
        (31, 19),
        "the end and the cursor after it"
    );
    prompt.key(&plain(KeyCode::Home));
    assert_eq!(prompt.line(20), (0, 0));
}

#[test]
fn a_long_note_wraps_at_spaces_and_the_cursor_row_is_found() {
    let (rows, cursor) = wrap("alpha beta gamma delta", 22, 11);
    assert_eq!(rows, ["alpha beta ", "gamma delta", ""]);
    assert_eq!(
        cursor,
        (2, 0),
        "after a full last row the cursor starts a row"
    );
    let (rows, cursor) = wrap("abcdefghij", 3, 4);
    assert_eq!(rows, ["abcd", "efgh", "ij"]);
    assert_eq!(cursor, (0, 3));
    assert_eq!(wrap("", 0, 10), (vec![""], (0, 0)));
}

proptest! {
    /// Wrapping loses nothing, no row is wider than the width, and the cursor is inside it.
    #[test]
    fn wrapping_keeps_the_text_and_the_cursor_in_view(
        text in "[a-z 界é]{0,80}",
        cursor in 0usize..90,
        width in 2u16..30,
    ) {
        let cursor = cursor.min(text.chars().count());
        let (rows, (row, column)) = wrap(&text, cursor, width);
        prop_assert_eq!(rows.concat(), text.clone());
        for r in &rows {
            prop_assert!(r.width() <= usize::from(width), "{:?} wider than {}", r, width);
        }
        prop_assert!(row <= rows.len());
        prop_assert!(column < width);
        let before: String = text.chars().take(cursor).collect();
        let upto: String = rows[..row.min(rows.len())].concat();
        prop_assert!(before.starts_with(&upto));
    }

    /// Whatever is typed, the text stays within its limit, holds no control character, and
    /// the one-line view keeps the cursor inside the width.
    #[test]
    fn any_keys_keep_the_limit_and_the_cursor_in_view(
        keys in proptest::collection::vec(0usize..12, 0..120),
        chars in proptest::collection::vec(any::<char>(), 120),
        width in 1u16..40,
    ) {
        let mut prompt = Prompt::new("", 30);
        for (i, k) in keys.into_iter().enumerate() {
            let event = match k {
                0 => plain(KeyCode::Left),
                1 => plain(KeyCode::Right),
                2 => plain(KeyCode::Home),
                3 => plain(KeyCode::End),
                4 => plain(KeyCode::Backspace),
                5 => plain(KeyCode::Delete),
                6 => ctrl('w'),
                7 => ctrl('y'),
                _ => plain(KeyCode::Char(chars[i])),
            };
            prompt.key(&event);
            prop_assert!(prompt.value().chars().count() <= 30);
            prop_assert!(gavel::text::inert(prompt.value()) == prompt.value());
            let (_, column) = prompt.line(width);
            prop_assert!(column < width);
        }
    }
}

use common::draw;

/// The screen's last row: the footer.
fn last_line(terminal: &Terminal<TestBackend>) -> String {
    let screen = terminal.backend().to_string();
    screen.lines().last().unwrap_or_default().to_owned()
}

fn press(model: &mut Model, event: KeyEvent) {
    update(model, Event::Key(event));
}

fn type_text(model: &mut Model, text: &str) {
    for c in text.chars() {
        update(model, char(c));
    }
}

/// Opens the note editor on the pending decision of the first debate.
fn note_editor(model: &mut Model) {
    update(model, char('a'));
    assert!(matches!(model.desk.overlay, Some(Overlay::Confirm(_))));
    update(model, char('n'));
    assert!(matches!(model.desk.overlay, Some(Overlay::Note(_))));
}

fn note_of(model: &Model) -> Option<String> {
    match &model.desk.overlay {
        Some(Overlay::Note(intent) | Overlay::Confirm(intent)) => intent.note.clone(),
        _ => None,
    }
}

#[test]
fn the_note_is_edited_in_place_and_kept_on_enter() {
    let (mut model, _) = demo_model();
    note_editor(&mut model);
    type_text(&mut model, "stop early");
    press(&mut model, plain(KeyCode::Home));
    type_text(&mut model, "do not ");
    assert_eq!(note_of(&model).as_deref(), Some("do not stop early"));
    press(&mut model, ctrl('w'));
    press(&mut model, plain(KeyCode::Enter));
    assert!(matches!(model.desk.overlay, Some(Overlay::Confirm(_))));
    assert_eq!(
        note_of(&model).as_deref(),
        Some("do stop early"),
        "Ctrl-W took the word before the cursor"
    );
    // Editing again starts from the note kept, the cursor at its end.
    update(&mut model, char('n'));
    type_text(&mut model, "!");
    assert_eq!(note_of(&model).as_deref(), Some("do stop early!"));
    press(&mut model, plain(KeyCode::Esc));
    assert_eq!(note_of(&model), None, "Esc drops the note");
}

#[test]
fn a_note_longer_than_its_window_scrolls_with_the_cursor() {
    let (mut model, _) = demo_model();
    note_editor(&mut model);
    let words: Vec<String> = (1..=95).map(|n| format!("n{n:03}")).collect();
    type_text(&mut model, &words.join(" "));
    assert_eq!(note_of(&model).unwrap().chars().count(), 95 * 5 - 1);
    let mut terminal = draw(&model, 80, 24);
    let screen = terminal.backend().to_string();
    assert!(
        screen.contains("n095"),
        "the end, where the cursor is, shows"
    );
    assert!(
        !screen.contains("n001 "),
        "the start scrolled off:\n{screen}"
    );
    assert!(
        screen.contains("474/500 characters · rows 2-7 of 7"),
        "{screen}"
    );
    let cursor = terminal.get_cursor_position().unwrap();
    let row = screen
        .lines()
        .nth(usize::from(cursor.y))
        .unwrap()
        .to_owned();
    assert!(
        row.contains("n095"),
        "the cursor is on the row of the text's end: {row}"
    );
    press(&mut model, ctrl('a'));
    let screen = draw(&model, 80, 24).backend().to_string();
    assert!(
        screen.contains("n001 n002"),
        "Home scrolls back to the start"
    );
    assert!(!screen.contains("n095"));
    // The limit holds.
    type_text(&mut model, &"x".repeat(600));
    assert_eq!(note_of(&model).unwrap().chars().count(), Intent::MAX_NOTE);
}

#[test]
fn the_filter_line_scrolls_sideways_and_draws_the_cursor() {
    let (mut model, _) = demo_model();
    update(&mut model, char('/'));
    let long = format!("q:{}", "z".repeat(120));
    type_text(&mut model, &long);
    let mut terminal = draw(&model, 80, 24);
    let Position { x, y } = terminal.get_cursor_position().unwrap();
    assert_eq!(y, 23, "the footer row");
    assert!(x < 80);
    let footer = last_line(&terminal);
    assert!(footer.contains(" filter /"));
    assert!(
        footer.contains("zzzz"),
        "the end of the filter shows: {footer}"
    );
    assert!(!footer.contains("q:"), "its start scrolled off: {footer}");
    update(&mut model, key(KeyCode::Home));
    let footer = last_line(&draw(&model, 80, 24));
    assert!(footer.contains("/q:zzz"), "{footer}");
    assert_eq!(model.filter().chars().count(), long.chars().count());
    type_text(&mut model, &"y".repeat(300));
    assert_eq!(model.filter().chars().count(), MAX_LINE);
}
