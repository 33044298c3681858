//! Exported rows keep control characters out wherever they are written: CSV shows them as
//! pictures, JSON Lines escapes them and keeps the data exact.

use gavel::audit::{ExportRow, Format, export};
use gavel::domain::{ActionKind, Change, Decision, OperatorAction, Stored};

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
