//! Themes: named semantic roles, one TOML file per theme in `themes/`. The console styles by
//! role (`ok`, `danger`, `pending`, ...), never by literal colour.
//!
//! A theme is chosen by name or path ([`Theme::load`]); when it comes from a file, [`watch`]
//! re-reads that file after each edit, and an edit that does not parse is reported while the
//! previous theme stays.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use notify::RecursiveMode;
use notify_debouncer_mini::{DebounceEventResult, Debouncer, new_debouncer};
use ratatui::style::{Color, Modifier, Style};
use serde::Deserialize;

use crate::config::{self, Error, Result};

/// The themes built into the binary, by name: copies of `themes/*.toml`.
const BUNDLED: &[(&str, &str)] = &[
    ("dark", include_str!("../../themes/dark.toml")),
    ("light", include_str!("../../themes/light.toml")),
    (
        "high-contrast",
        include_str!("../../themes/high-contrast.toml"),
    ),
];

/// The names of the themes built into the binary.
pub fn bundled_names() -> impl Iterator<Item = &'static str> {
    BUNDLED.iter().map(|(name, _)| *name)
}

/// Where the themes of the checkout this binary was built from live.
const SOURCE_THEMES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/themes");

/// A colour as written in a theme file.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(try_from = "String")]
pub struct RoleColor(pub Color);

impl TryFrom<String> for RoleColor {
    type Error = String;
    fn try_from(raw: String) -> Result<Self, String> {
        Color::from_str(&raw)
            .map(RoleColor)
            .map_err(|_| format!("{raw:?} is not a colour (a name, #rrggbb or 0-255)"))
    }
}

/// The roles a theme must define.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Roles {
    pub text: RoleColor,
    pub muted: RoleColor,
    pub accent: RoleColor,
    pub border: RoleColor,
    pub border_focus: RoleColor,
    pub selection: RoleColor,
    pub ok: RoleColor,
    pub warn: RoleColor,
    pub danger: RoleColor,
    pub pending: RoleColor,
    pub threshold: RoleColor,
    pub series: RoleColor,
    /// The setting in force on calibration charts; `pending` when a theme file predates it.
    #[serde(default)]
    pub in_force: Option<RoleColor>,
    /// The setting closest to the recorded decisions; `ok` when a theme file predates it.
    #[serde(default)]
    pub closest: Option<RoleColor>,
}

/// A loaded theme.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Theme {
    pub name: String,
    pub roles: Roles,
}

impl Theme {
    /// Parses a theme file's text; `origin` names it in errors, with the line at fault.
    pub fn parse(text: &str, origin: &str) -> Result<Theme> {
        toml::from_str(text).map_err(|e| config::invalid_toml(origin, text, "theme", &e))
    }

    /// The built-in default, `themes/dark.toml`.
    pub fn dark() -> Theme {
        Theme::bundled("dark").expect("the bundled dark theme is valid")
    }

    /// A theme built into the binary.
    pub fn bundled(name: &str) -> Result<Theme> {
        match BUNDLED.iter().find(|(n, _)| *n == name) {
            Some((name, text)) => Theme::parse(text, &format!("bundled theme {name}")),
            None => {
                let bundled = BUNDLED.iter().map(|(n, _)| *n).collect();
                Err(Error::NoTheme {
                    name: name.to_owned(),
                    bundled,
                })
            }
        }
    }

    /// Reads and parses a theme file.
    pub fn read(path: &Path) -> Result<Theme> {
        let text = config::read("theme", path)?;
        Theme::parse(&text, &path.display().to_string())
    }

    /// The theme `choice` names, and the file it came from (to watch for edits). A path (with a
    /// `/` or ending in `.toml`) is read as is; a name is looked up as `<name>.toml` in
    /// `<config dir>/gavel/themes/`, then in the `themes/` of the checkout gavel was built
    /// from, then among the themes built into the binary.
    pub fn load(choice: &str) -> Result<(Theme, Option<PathBuf>)> {
        if choice.contains('/') || choice.ends_with(".toml") {
            let path = PathBuf::from(choice);
            return Ok((Theme::read(&path)?, Some(path)));
        }
        let dirs = dirs::config_dir()
            .map(|d| d.join("gavel").join("themes"))
            .into_iter()
            .chain([PathBuf::from(SOURCE_THEMES)]);
        for dir in dirs {
            let path = dir.join(format!("{choice}.toml"));
            if path.is_file() {
                return Ok((Theme::read(&path)?, Some(path)));
            }
        }
        Ok((Theme::bundled(choice)?, None))
    }

    fn fg(color: RoleColor) -> Style {
        Style::new().fg(color.0)
    }

    pub fn text(&self) -> Style {
        Self::fg(self.roles.text)
    }
    pub fn muted(&self) -> Style {
        Self::fg(self.roles.muted)
    }
    pub fn accent(&self) -> Style {
        Self::fg(self.roles.accent)
    }
    pub fn ok(&self) -> Style {
        Self::fg(self.roles.ok)
    }
    pub fn warn(&self) -> Style {
        Self::fg(self.roles.warn)
    }
    pub fn danger(&self) -> Style {
        Self::fg(self.roles.danger)
    }
    pub fn pending(&self) -> Style {
        Self::fg(self.roles.pending).add_modifier(Modifier::BOLD)
    }
    pub fn threshold(&self) -> Style {
        Self::fg(self.roles.threshold)
    }
    pub fn series(&self) -> Style {
        Self::fg(self.roles.series)
    }
    pub fn in_force(&self) -> Style {
        Self::fg(self.roles.in_force.unwrap_or(self.roles.pending))
    }
    pub fn closest(&self) -> Style {
        Self::fg(self.roles.closest.unwrap_or(self.roles.ok))
    }
    pub fn title(&self) -> Style {
        self.accent().add_modifier(Modifier::BOLD)
    }
    pub fn selection(&self) -> Style {
        Style::new()
            .bg(self.roles.selection.0)
            .add_modifier(Modifier::BOLD)
    }
    /// A panel border: highlighted when the panel has focus.
    pub fn border(&self, focused: bool) -> Style {
        if focused {
            Self::fg(self.roles.border_focus)
        } else {
            Self::fg(self.roles.border)
        }
    }
}

/// Watches a theme file; after each burst of edits that changed its text calls `changed` with
/// the theme it now holds or why it cannot be used. Watching stops when the returned value is
/// dropped.
pub fn watch(
    path: &Path,
    changed: impl Fn(Result<Theme, String>) + Send + 'static,
) -> Result<Debouncer<notify::RecommendedWatcher>> {
    let file = path.to_owned();
    let name = path.file_name().map(ToOwned::to_owned);
    // Reading the file is itself an event on some systems: only a change of text counts.
    let mut last = std::fs::read_to_string(path).ok();
    let mut debouncer = new_debouncer(
        Duration::from_millis(150),
        move |events: DebounceEventResult| {
            let touched = match events {
                Ok(events) => events.iter().any(|e| e.path.file_name() == name.as_deref()),
                Err(e) => {
                    changed(Err(format!("watching {} failed: {e}", file.display())));
                    return;
                }
            };
            if !touched {
                return;
            }
            let text = std::fs::read_to_string(&file);
            if text.as_ref().ok() == last.as_ref() {
                return;
            }
            last = text.as_ref().ok().cloned();
            changed(match text {
                Ok(text) => {
                    Theme::parse(&text, &file.display().to_string()).map_err(|e| e.to_string())
                }
                Err(cause) => Err(Error::Read {
                    what: "theme",
                    path: file.clone(),
                    cause,
                }
                .to_string()),
            });
        },
    )
    .map_err(|cause| Error::Watch {
        path: path.to_owned(),
        cause,
    })?;
    // The directory, not the file: editors often save by writing a new file and renaming it.
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    debouncer
        .watcher()
        .watch(dir, RecursiveMode::NonRecursive)
        .map_err(|cause| Error::Watch {
            path: dir.to_owned(),
            cause,
        })?;
    Ok(debouncer)
}
