//! Text handed out of the console: to the clipboard (`y`) or the pager (`P`).

use crate::audit::Trace;
use crate::console::app::copy::{COPY_LIMIT, capped, round_text};
use crate::console::app::event::Command;
use crate::console::app::model::{DetailView, Focus, Model};
use crate::text::{one_line, thousands};

/// `y`: the selected debate's id (in the list), the trace (in the trace view) or the selected
/// round's turns (in the other views) to the clipboard, cut to [`COPY_LIMIT`].
pub(super) fn copy(model: &mut Model) -> Vec<Command> {
    let Some(debate) = model.selected_debate() else {
        model.flash("nothing to copy: no debate selected", true);
        return Vec::new();
    };
    let id = one_line(&debate.session.id);
    let (what, text) = match (model.nav.focus, model.nav.view) {
        (Focus::Debates, _) => ("the id".to_owned(), Some(debate.session.id.to_string())),
        (Focus::Detail, DetailView::Trace) => {
            ("the trace".to_owned(), Some(Trace::of(debate).text()))
        }
        (Focus::Detail, _) => {
            let round = model.selected_round().unwrap_or(1);
            (format!("round {round}'s turns"), round_text(debate, round))
        }
    };
    let Some(text) = text else {
        model.flash(
            format!("nothing to copy: {what} of {id} has no turns yet"),
            true,
        );
        return Vec::new();
    };
    let text = crate::text::inert_lines(&text);
    let whole = text.len();
    let (text, cut) = capped(text, COPY_LIMIT);
    let message = if cut {
        format!(
            "copied the first {} of {} bytes of {what} of {id} (the clipboard takes {} at most; P pages it whole)",
            thousands(text.len() as u64),
            thousands(whole as u64),
            thousands(COPY_LIMIT as u64)
        )
    } else {
        format!("copied {what} of {id} ({} bytes)", thousands(whole as u64))
    };
    model.flash(message, false);
    vec![Command::Copy(text)]
}

/// `P`: the trace (in the trace view) or the selected round's turns in the pager.
pub(super) fn page(model: &mut Model) -> Vec<Command> {
    let Some(debate) = model.selected_debate() else {
        model.flash("nothing to page: no debate selected", true);
        return Vec::new();
    };
    let id = one_line(&debate.session.id);
    if model.nav.focus == Focus::Detail && model.nav.view == DetailView::Trace {
        let title = format!("trace · {id}");
        let text = Trace::of(debate).text();
        return vec![Command::Page { title, text }];
    }
    let round = model.selected_round().unwrap_or(1);
    match round_text(debate, round) {
        Some(text) => {
            let title = format!("{id} · round {round}");
            vec![Command::Page { title, text }]
        }
        None => {
            model.flash(
                format!("nothing to page: round {round} of {id} has no turns yet"),
                true,
            );
            Vec::new()
        }
    }
}
