//! Exported rows keep control characters out wherever they are written: CSV shows them as
//! pictures, JSON Lines escapes them and keeps the data exact. A note's row has no decision:
//! `null` in JSON Lines, an empty cell in CSV.

use gavel::audit::{ExportRow, Format, export};
use gavel::domain::{ActionKind, Change, DebateNote, Decision, OperatorAction, Stored};

fn hostile() -> Vec<ExportRow> {
    let action = OperatorAction {
        session_id: "s\u{1b}]0;pwned\u{7}".into(),
        round_index: 2,
        action: ActionKind::Override.into(),
        decision: Decision::StopConverged.into(),
        persona: None,
        operator: "ana".into(),
        role: None,
        note: Some("clear\u{1b}[2J".into()),
        created_at: None,
        issues: Vec::new(),
    };
    let stored = Stored {
        change: Change::Action(action),
        round_index: Some(2),
        signal_json: None,
    };
    ExportRow::of(stored).into_iter().collect()
}

fn written(format: Format) -> String {
    let mut out = Vec::new();
    assert_eq!(export::write(hostile(), format, &mut out).unwrap(), 1);
    String::from_utf8(out).unwrap()
}

#[test]
fn csv_shows_control_characters_as_pictures() {
    let shown = written(Format::Csv);
    assert!(
        !shown.contains('\u{1b}') && !shown.contains('\u{7}'),
        "{shown:?}"
    );
    assert!(shown.contains("clear␛[2J"), "{shown:?}");
    assert!(shown.contains("s␛]0;pwned␇"), "{shown:?}");
    assert!(shown.starts_with("table,session_id,round_index,at,decision,"));
}

#[test]
fn jsonl_escapes_control_characters() {
    let line = written(Format::Jsonl);
    assert!(!line.contains('\u{1b}'));
    let row: serde_json::Value = serde_json::from_str(line.trim()).unwrap();
    assert_eq!(row["table"], "debate_operator_actions");
    assert_eq!(row["note"], "clear\u{1b}[2J");
    assert_eq!(row["decision"], "stop_converged");
}

/// A note's row, as `format` writes it.
fn note_written(format: Format) -> String {
    let note = DebateNote::draft("s", "ana", "over to bob").unwrap();
    let stored = Stored {
        change: Change::Note(note),
        round_index: None,
        signal_json: None,
    };
    let mut out = Vec::new();
    let rows: Vec<ExportRow> = ExportRow::of(stored).into_iter().collect();
    assert_eq!(export::write(rows, format, &mut out).unwrap(), 1);
    String::from_utf8(out).unwrap()
}

#[test]
fn a_notes_row_has_no_decision_null_in_json_and_an_empty_cell_in_csv() {
    let line = note_written(Format::Jsonl);
    let row: serde_json::Value = serde_json::from_str(line.trim()).unwrap();
    assert_eq!(row["table"], "gavel_debate_notes");
    assert_eq!(row["note"], "over to bob");
    assert!(row["decision"].is_null(), "{line}");
    assert!(row["round_index"].is_null(), "{line}");

    let csv = note_written(Format::Csv);
    let mut table = csv::Reader::from_reader(csv.as_bytes());
    let header = table.headers().unwrap().clone();
    let decision = header.iter().position(|h| h == "decision").unwrap();
    let record = table.records().next().unwrap().unwrap();
    assert_eq!(&record[0], "gavel_debate_notes");
    assert_eq!(&record[decision], "", "{csv}");
}
