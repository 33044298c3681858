//! Closed vocabularies (decisions, modes, statuses) as enums that keep an unknown value.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A value from a closed vocabulary as a writer reported it: known, or an unknown string kept
/// verbatim so that the console can show it as such (boxed: rows and the fleet's summaries
/// hold several, and an unknown value is rare).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reported<T> {
    Known(T),
    Unknown(Box<str>),
}

impl<T: Copy> Reported<T> {
    /// The known value, if the writer used one.
    pub fn known(&self) -> Option<T> {
        match self {
            Reported::Known(v) => Some(*v),
            Reported::Unknown(_) => None,
        }
    }
}

impl<T: fmt::Display> Reported<T> {
    /// The string as written to the database: the known value's name, or the unknown one as
    /// it came.
    pub fn to_wire(&self) -> String {
        match self {
            Reported::Known(v) => v.to_string(),
            Reported::Unknown(raw) => raw.to_string(),
        }
    }
}

impl<T> From<T> for Reported<T> {
    fn from(value: T) -> Self {
        Reported::Known(value)
    }
}

impl<T: FromStr> Reported<T> {
    /// Parses a wire string; anything outside the vocabulary is kept as `Unknown`.
    pub fn parse(raw: &str) -> Self {
        raw.parse()
            .map(Reported::Known)
            .unwrap_or_else(|_| Reported::Unknown(raw.into()))
    }
}

impl<T: fmt::Display> fmt::Display for Reported<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reported::Known(v) => v.fmt(f),
            Reported::Unknown(raw) => write!(f, "unknown({raw})"),
        }
    }
}

impl<T: fmt::Display> Serialize for Reported<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Reported::Known(v) => serializer.collect_str(v),
            Reported::Unknown(raw) => serializer.serialize_str(raw),
        }
    }
}

impl<'de, T: FromStr> Deserialize<'de> for Reported<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(deserializer)?;
        Ok(Reported::parse(&raw))
    }
}

/// Defines a closed vocabulary: an enum with its wire names (and accepted aliases), `as_str`,
/// `FromStr`, `Display`, serde as strings, and `ALL` in declaration order.
macro_rules! vocabulary {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $wire:literal $(| $alias:literal)*),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name { $($(#[$vmeta])* $variant),+ }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The contract's name for this value.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $wire),+ }
            }
        }

        impl std::str::FromStr for $name {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                match s {
                    $($wire $(| $alias)* => Ok($name::$variant),)+
                    other => Err(format!(
                        "unknown {} {other:?} (expected one of: {})",
                        stringify!($name),
                        [$($wire),+].join(", ")
                    )),
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let raw = String::deserialize(deserializer)?;
                raw.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}
pub(crate) use vocabulary;
