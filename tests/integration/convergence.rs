//! Convergence checks from review-style debates: DISPUTE/MISSED sections and review findings.

use gavel::policy::{debate_converged, format_check, review_converged};
use gavel::signals::open_items;

#[test]
fn empty_markers_do_not_count_as_disputes() {
    for empty in ["none", "None.", "n/a", "N/A", "- none", "nothing", "-", ""] {
        let text = format!("Position.\n\n## DISPUTE\n{empty}\n\n## MISSED\nn/a\n\nVERDICT: accept");
        assert_eq!(
            open_items(&text),
            Some(vec![]),
            "{empty:?} counted as a dispute"
        );
    }
}

#[test]
fn bullets_and_prose_are_items_and_the_verdict_line_ends_a_section() {
    let text = "## Dispute\n- the threshold was tuned on validation data\n* no CIs by stage\n\n### MISSED:\nSpecificity in pancreatitis.\nVERDICT: major revisions";
    let items = open_items(text).unwrap();
    assert_eq!(items.len(), 3, "{items:?}");
    assert_eq!(items[2], "Specificity in pancreatitis.");
    assert_eq!(open_items("No sections here.\nVERDICT: accept"), None);
}

#[test]
fn a_debate_converges_when_no_debater_lists_an_open_item() {
    let settled = "## DISPUTE\nnone\n## MISSED\nnone";
    let open = "## DISPUTE\n- sample size\n## MISSED\nnone";
    let converged = debate_converged(&[("methods", settled), ("stats", settled)]);
    assert!(converged.converged, "{}", converged.reason);
    let split = debate_converged(&[("methods", settled), ("stats", open)]);
    assert!(!split.converged);
    assert!(split.reason.contains("stats (1)"), "{}", split.reason);
}

#[test]
fn review_findings_must_be_unanimous() {
    let a = "## FINDINGS\n- [F1] leakage between cohorts\n- [f2] no CIs";
    let b = "## FINDINGS\n- [F1] same leakage\n- [F2] agree";
    let c = "## FINDINGS\n- [F1] leakage";
    assert!(review_converged(&[("a", a), ("b", b)]).converged);
    let split = review_converged(&[("a", a), ("b", b), ("c", c)]);
    assert!(!split.converged);
    assert!(split.reason.contains("F2 (2/3)"), "{}", split.reason);
}

#[test]
fn reviews_with_no_findings_or_one_reviewer_converge() {
    let empty = "## FINDINGS\nnone";
    let none = review_converged(&[("a", empty), ("b", empty)]);
    assert!(none.converged);
    assert_eq!(none.reason, "no findings raised");
    let lone = review_converged(&[("a", "## FINDINGS\n- [F1] x")]);
    assert!(lone.converged);
    assert!(lone.reason.contains("1 reviewer"));
}

#[test]
fn the_format_decides_which_check_applies() {
    assert!(format_check(&[("a", "plain text, no sections")]).is_none());
    let disputes = format_check(&[("a", "## DISPUTE\n- x")]).unwrap();
    assert!(!disputes.converged);
    let findings = format_check(&[
        ("a", "## FINDINGS\n- [F1] x"),
        ("b", "## FINDINGS\n- [F1] y"),
    ])
    .unwrap();
    assert!(findings.converged);
}
