//! Rows written again: a round decided again, a judgment revised, a turn marked superseded and
//! a session's status changed, each by plain SQL on a real server, are on screen in the first
//! frame drawn after the feed hands them over — drawn over the frames before, as the console
//! draws, with the debate's rounds table following the debate and the written round above its
//! page.

use gavel::console::app::Model;
use gavel::console::screen::Screen;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;

use super::*;

/// Rounds of the watched debate: more than its table shows at 160x48 beside a list of ten.
const ROUNDS: i32 = 20;

/// Draws a frame of `model` over the one before on `screen`, as the draw loop does, and returns
/// what the terminal shows.
fn frame<'a>(screen: &'a mut Screen<std::io::Sink>, model: &mut Model) -> &'a Buffer {
    common::record_frame(model);
    screen
        .draw(Rect::new(0, 0, 160, 48), |frame, kept| {
            gavel::console::ui::view(model, frame, kept)
        })
        .unwrap();
    screen.shown()
}

fn text(buffer: &Buffer) -> String {
    buffer
        .content()
        .chunks(usize::from(buffer.area.width))
        .map(|row| row.iter().map(|cell| cell.symbol()).collect::<String>() + "\n")
        .collect()
}

/// The first line of `buffer` that has `needle`, and its row.
fn line_with(buffer: &Buffer, needle: &str) -> Option<(u16, String)> {
    text(buffer)
        .lines()
        .enumerate()
        .find(|(_, line)| line.contains(needle))
        .map(|(y, line)| (y as u16, line.to_owned()))
}

/// The verdict of the watched debate's decision of `round`, as the console holds it.
fn verdict(model: &Model, round: u32) -> Option<&str> {
    let decision = model.debate("watched")?.decisions.get(&round)?;
    decision.signals.verdict.as_deref()
}

/// Applies the feed's events until `done` holds of the model, then draws the next frame.
async fn next_frame_after<'a>(
    console: &mut Console,
    screen: &'a mut Screen<std::io::Sink>,
    what: &str,
    done: impl Fn(&Model) -> bool,
) -> &'a Buffer {
    console.until(what, done).await;
    frame(screen, &mut console.model)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_written_again_is_on_screen_in_the_next_frame() {
    let Database { target, client, .. } = migrated_database("rewritten").await;
    client.execute(SESSION, &[&"watched"]).await.unwrap();
    client
        .execute(
            "INSERT INTO debate_rounds (session_id, round_number, agent_persona, content, \
             tokens_used) SELECT 'watched', r, 'theorist', 'round ' || r, 10 \
             FROM generate_series(1, $1::int) AS r",
            &[&ROUNDS],
        )
        .await
        .unwrap();
    client
        .execute(
            "INSERT INTO debate_round_decisions (session_id, round_index, decision, signal_json) \
             SELECT 'watched', r, 'continue_baseline', jsonb_build_object('verdict', 'first ' || r) \
             FROM generate_series(1, $1::int) AS r",
            &[&ROUNDS],
        )
        .await
        .unwrap();
    client
        .batch_execute(
            "INSERT INTO debate_round_judgments (session_id, round_index, agent_persona, \
             decision, score) VALUES ('watched', 3, 'theorist', 'continue', 0.9)",
        )
        .await
        .unwrap();
    for n in 1..10 {
        client
            .execute(SESSION, &[&format!("other{n}")])
            .await
            .unwrap();
    }
    let mut console = Console::live(target).await;
    console
        .until("every debate and round", |m| {
            m.debates.len() == 10 && m.debate("watched").is_some()
        })
        .await;
    console.select("watched");
    console
        .until("the watched debate's rounds", |m| {
            m.debate("watched")
                .is_some_and(|d| d.decisions.len() == ROUNDS as usize && d.judgments.len() == 1)
        })
        .await;
    let mut screen = Screen::of(std::io::sink(), Rect::new(0, 0, 160, 48)).unwrap();
    let shown = frame(&mut screen, &mut console.model);
    assert!(
        line_with(shown, "first 20").is_some(),
        "following the debate, its latest round shows:\n{}",
        text(shown)
    );
    assert!(
        line_with(shown, "first 2 ").is_none(),
        "its second round is above the table's page (else this test shows nothing):\n{}",
        text(shown)
    );

    // A round decided again, as the contract says an orchestrator does.
    client
        .batch_execute(
            "INSERT INTO debate_round_decisions (session_id, round_index, decision, signal_json, \
             decided_at) VALUES ('watched', 2, 'stop_converged', '{\"verdict\": \"decided again\"}', \
             now()) ON CONFLICT (session_id, round_index) DO UPDATE SET \
             decision = EXCLUDED.decision, signal_json = EXCLUDED.signal_json, decided_at = now()",
        )
        .await
        .unwrap();
    let shown = next_frame_after(&mut console, &mut screen, "round 2 decided again", |m| {
        verdict(m, 2) == Some("decided again")
    })
    .await;
    let (_, line) = line_with(shown, "decided again").unwrap_or_else(|| {
        panic!(
            "round 2 decided again is not in the frame:\n{}",
            text(shown)
        )
    });
    assert!(line.contains("stop_converged"), "{line}");

    // A judgment revised in place.
    client
        .batch_execute(
            "UPDATE debate_round_judgments SET decision = 'abort_debate', score = 0.1 \
             WHERE session_id = 'watched' AND round_index = 3",
        )
        .await
        .unwrap();
    let shown = next_frame_after(&mut console, &mut screen, "the judgment revised", |m| {
        m.debate("watched")
            .is_some_and(|d| d.judgments.iter().any(|j| j.score == Some(0.1)))
    })
    .await;
    let (_, line) = line_with(shown, "first 3 ")
        .unwrap_or_else(|| panic!("round 3 is not in the frame:\n{}", text(shown)));
    assert!(line.contains("0.10 abort"), "{line}");

    // A turn marked superseded (the judge halted its round and it is run again).
    client
        .batch_execute(
            "UPDATE debate_rounds SET superseded = true \
             WHERE session_id = 'watched' AND round_number = 4",
        )
        .await
        .unwrap();
    let shown = next_frame_after(&mut console, &mut screen, "the turn superseded", |m| {
        m.debate("watched")
            .is_some_and(|d| d.turns.iter().any(|t| t.superseded))
    })
    .await;
    let (y, line) = line_with(shown, "first 4 ")
        .unwrap_or_else(|| panic!("round 4 is not in the frame:\n{}", text(shown)));
    let x = line.chars().position(|c| c == 't').unwrap() as u16;
    assert!(
        shown[(x, y)].modifier.contains(Modifier::CROSSED_OUT),
        "round 4's turn is struck through: {line}"
    );

    // A session's status: another debate's, and the watched one's.
    client
        .batch_execute("UPDATE debate_sessions SET status = 'aborted' WHERE id = 'other5'")
        .await
        .unwrap();
    let shown = next_frame_after(&mut console, &mut screen, "other5 aborted", |m| {
        m.debates
            .get(m.debates.seq("other5").unwrap())
            .is_some_and(|s| !s.is_running())
    })
    .await;
    let (_, line) = line_with(shown, "other5")
        .unwrap_or_else(|| panic!("other5 is not in the frame:\n{}", text(shown)));
    assert!(line.contains("aborted"), "{line}");
    client
        .batch_execute("UPDATE debate_sessions SET status = 'completed' WHERE id = 'watched'")
        .await
        .unwrap();
    let shown = next_frame_after(
        &mut console,
        &mut screen,
        "the watched debate completed",
        |m| m.debate("watched").is_some_and(|d| !d.session.is_running()),
    )
    .await;
    let (_, line) = line_with(shown, "watched")
        .unwrap_or_else(|| panic!("the watched debate is not listed:\n{}", text(shown)));
    assert!(
        line.contains("done"),
        "a completed debate is listed done: {line}"
    );

    // The next write to the latest round brings the table back to it.
    client
        .batch_execute(
            "UPDATE debate_round_decisions SET signal_json = '{\"verdict\": \"latest again\"}' \
             WHERE session_id = 'watched' AND round_index = 20",
        )
        .await
        .unwrap();
    let shown = next_frame_after(&mut console, &mut screen, "round 20 decided again", |m| {
        verdict(m, 20) == Some("latest again")
    })
    .await;
    assert!(
        line_with(shown, "latest again").is_some(),
        "round 20 is back in the frame:\n{}",
        text(shown)
    );
}
