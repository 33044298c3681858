//! The terminal: raw mode and the alternate screen for the console's lifetime, restored on quit,
//! error and panic; keys read on their own thread; the draw loop.
//!
//! The loop never awaits I/O: it waits for the next event, drains every event already queued,
//! applies them all, and draws once, at most 60 times a second.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Result;
use crossterm::event::{self, Event as TermEvent};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

use crate::app::{Command, Event, Model, update};
use crate::theme::Theme;
use crate::ui::view;

const FRAME: Duration = Duration::from_millis(16);

/// Runs the console until the operator quits or the events end.
pub async fn run(
    mut model: Model,
    theme: Theme,
    events: (UnboundedSender<Event>, UnboundedReceiver<Event>),
    commands: UnboundedSender<Command>,
) -> Result<()> {
    let (sender, mut receiver) = events;
    // ratatui::init also installs a panic hook that restores the terminal first.
    let mut terminal = ratatui::init();
    let stop = Arc::new(AtomicBool::new(false));
    let reader = spawn_key_reader(sender, stop.clone());

    let result = async {
        model.settle();
        terminal.draw(|frame| view(&model, &theme, frame))?;
        let mut last_draw = Instant::now();
        while let Some(event) = receiver.recv().await {
            let mut pending = vec![event];
            loop {
                while let Ok(event) = receiver.try_recv() {
                    pending.push(event);
                }
                for event in pending.drain(..) {
                    for command in update(&mut model, event) {
                        // The backend outlives the console; a closed channel means it is gone.
                        let _ = commands.send(command);
                    }
                }
                let wait = FRAME.saturating_sub(last_draw.elapsed());
                if wait.is_zero() || model.quit {
                    break;
                }
                tokio::time::sleep(wait).await;
            }
            if model.quit {
                break;
            }
            model.settle();
            terminal.draw(|frame| view(&model, &theme, frame))?;
            last_draw = Instant::now();
        }
        anyhow::Ok(())
    }
    .await;

    stop.store(true, Ordering::Relaxed);
    ratatui::restore();
    let _ = reader.join();
    result
}

/// Reads terminal input on a thread of its own and forwards it as events.
fn spawn_key_reader(
    events: UnboundedSender<Event>,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            match event::poll(Duration::from_millis(100)) {
                Ok(false) => continue,
                Ok(true) => {}
                Err(e) => {
                    tracing::error!("reading the terminal failed: {e}");
                    return;
                }
            }
            let forwarded = match event::read() {
                Ok(TermEvent::Key(key)) => events.send(Event::Key(key)),
                Ok(TermEvent::Resize(..)) => events.send(Event::Resize),
                Ok(_) => Ok(()),
                Err(e) => {
                    tracing::error!("reading the terminal failed: {e}");
                    return;
                }
            };
            if forwarded.is_err() {
                return;
            }
        }
    })
}
