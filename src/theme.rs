//! Themes: named semantic roles, one TOML file per theme in `themes/`. The console styles by
//! role (`ok`, `danger`, `pending`, ...), never by literal colour.

use std::str::FromStr;

use anyhow::{Context, Result};
use ratatui::style::{Color, Modifier, Style};
use serde::Deserialize;

const DARK: &str = include_str!("../themes/dark.toml");

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
}

/// A loaded theme.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Theme {
    pub name: String,
    pub roles: Roles,
}

impl Theme {
    /// Parses a theme file's text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Theme> {
        toml::from_str(text).with_context(|| format!("{origin}: invalid theme"))
    }

    /// The built-in default, `themes/dark.toml`.
    pub fn dark() -> Theme {
        Theme::parse(DARK, "themes/dark.toml").expect("the bundled dark theme is valid")
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
