//! The terminal: raw mode and the alternate screen (and mouse capture, when on) for the
//! console's lifetime, restored on quit, error and panic; keys read on their own thread; the
//! active theme file watched for edits; the draw loop.
//!
//! The loop never awaits I/O: it waits for the next event, drains every event already queued,
//! applies them all, and draws once, at most 60 times a second.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Result;
use crossterm::event::{self, DisableMouseCapture, EnableMouseCapture, Event as TermEvent};
use crossterm::execute;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

use crate::app::{Command, Event, Model, update};
use crate::theme;
use crate::ui::view;

const FRAME: Duration = Duration::from_millis(16);

/// Runs the console until the operator quits or the events end; edits to `theme_file` apply
/// live.
pub async fn run(
    mut model: Model,
    theme_file: Option<&Path>,
    events: (UnboundedSender<Event>, UnboundedReceiver<Event>),
    commands: UnboundedSender<Command>,
) -> Result<()> {
    let (sender, mut receiver) = events;
    let _watcher = match theme_file {
        Some(path) => {
            let sender = sender.clone();
            Some(theme::watch(path, move |theme| {
                let _ = sender.send(Event::Theme(theme.map(Box::new)));
            })?)
        }
        None => None,
    };
    // ratatui::init also installs a panic hook that restores the terminal first.
    let mut terminal = ratatui::init();
    if model.mouse {
        execute!(std::io::stdout(), EnableMouseCapture)?;
        let restore = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let _ = execute!(std::io::stdout(), DisableMouseCapture);
            restore(info);
        }));
    }
    let size = terminal.size()?;
    model.screen = (size.width, size.height);
    let stop = Arc::new(AtomicBool::new(false));
    let reader = spawn_key_reader(sender, stop.clone());

    let result = async {
        model.settle();
        terminal.draw(|frame| view(&model, frame))?;
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
            terminal.draw(|frame| view(&model, frame))?;
            last_draw = Instant::now();
        }
        anyhow::Ok(())
    }
    .await;

    stop.store(true, Ordering::Relaxed);
    if model.mouse {
        let _ = execute!(std::io::stdout(), DisableMouseCapture);
    }
    ratatui::restore();
    let _ = reader.join();
    result
}

/// Reads terminal input (keys, mouse, resizes) on a thread of its own and forwards it as events.
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
                Ok(TermEvent::Resize(width, height)) => events.send(Event::Resize(width, height)),
                Ok(TermEvent::Mouse(mouse)) => events.send(Event::Mouse(mouse)),
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
