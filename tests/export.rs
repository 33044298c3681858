//! Export rows written for a terminal keep control characters off it; written to a file they
//! keep the data as stored.

use gavel::audit::{ExportRow, Format, export};
use gavel::domain::{ActionKind, Change, Decision, OperatorAction};

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
    };
    ExportRow::of(Change::Action(action)).into_iter().collect()
}

fn written(format: Format, terminal: bool) -> String {
    let mut out = Vec::new();
    assert_eq!(
        export::write(hostile(), format, &mut out, terminal).unwrap(),
        1
    );
    String::from_utf8(out).unwrap()
}

#[test]
fn csv_for_a_terminal_is_inert_and_csv_for_a_file_is_verbatim() {
    let shown = written(Format::Csv, true);
    assert!(
        !shown.contains('\u{1b}') && !shown.contains('\u{7}'),
        "{shown:?}"
    );
    assert!(shown.contains("clear␛[2J"), "{shown:?}");
    let stored = written(Format::Csv, false);
    assert!(stored.contains("clear\u{1b}[2J"), "{stored:?}");
    assert!(stored.starts_with("table,session_id,round_index,at,decision,"));
}

#[test]
fn jsonl_escapes_control_characters_either_way() {
    let line = written(Format::Jsonl, false);
    assert!(!line.contains('\u{1b}'));
    let row: serde_json::Value = serde_json::from_str(line.trim()).unwrap();
    assert_eq!(row["table"], "debate_operator_actions");
    assert_eq!(row["note"], "clear\u{1b}[2J");
    assert_eq!(row["decision"], "stop_converged");
}
