//! Round vectors kept on disk, one file per model, so a round embedded once (by the console,
//! a simulation or a calibration) is read back instead of embedded again, by this process or a
//! later one: calibrating a watched shadow week semantically then costs reads, not embeddings.
//!
//! The file is a 16-byte header (`gavelvec`, the format version, the vector's length) and then
//! records of a round text's SHA-256 and its unit vector (little-endian `f32`), appended one
//! write each. Opening reads the keys into an index (40 bytes a vector in memory); a lookup
//! reads its one record. A torn last record (a crash mid-append) is cut off; a vector that is
//! not a unit vector is not trusted (the round is embedded again and appended anew). The file
//! holds at most `MAX_VECTORS`; past that, vectors are no longer kept.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{BufReader, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::Error;

/// Vectors a file holds at most: about 400 MB at 384 dimensions, five weeks of a fleet running
/// 10,000 debates of 8 rounds a week.
pub(crate) const MAX_VECTORS: usize = 262_144;
const MAGIC: &[u8; 8] = b"gavelvec";
/// Bumped whenever what a round's vector means changes (chunking, pooling, the text's cap).
pub(crate) const VERSION: u32 = 1;
const HEADER: u64 = 16;
const KEY: usize = 32;
/// The longest vector a file may declare (BERT-large is 1,024).
const MAX_DIMENSIONS: usize = 4_096;

/// A model's file of round vectors, open for lookups and appends.
#[derive(Debug)]
pub struct VectorFile {
    path: PathBuf,
    file: File,
    /// The vectors' length.
    dimensions: usize,
    /// Where each key's record starts.
    index: HashMap<[u8; KEY], u64>,
}

impl VectorFile {
    /// Opens the file of vectors of `dimensions` at `path`, creating it if it is not there, and
    /// reads its keys. The error says what is wrong with the file and where.
    pub fn open(path: &Path, dimensions: usize) -> Result<VectorFile, Error> {
        if !(1..=MAX_DIMENSIONS).contains(&dimensions) {
            let path = path.to_owned();
            return Err(Error::Unkeepable { path, dimensions });
        }
        if !path.exists() {
            create(path, dimensions)?;
        }
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .open(path)
            .map_err(failed(path, "cannot open"))?;
        let mut vectors = VectorFile {
            path: path.to_owned(),
            file,
            dimensions,
            index: HashMap::new(),
        };
        vectors.read_index()?;
        Ok(vectors)
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How many vectors the file holds.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether the file holds no vector.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// The vector kept for `key`, if there is one and it is a unit vector.
    pub fn get(&self, key: &[u8; KEY]) -> Option<Vec<f32>> {
        let dimensions = self.dimensions;
        let &at = self.index.get(key)?;
        let mut bytes = vec![0u8; dimensions * 4];
        self.file.read_exact_at(&mut bytes, at + KEY as u64).ok()?;
        let vector: Vec<f32> = bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        let norm: f64 = vector.iter().map(|&v| f64::from(v).powi(2)).sum();
        ((norm - 1.0).abs() < 1e-3).then_some(vector)
    }

    /// Keeps `vector` for `key`. Does nothing when the file is full or the key is there with a
    /// good vector; refuses a vector of another length than the file's.
    pub fn put(&mut self, key: [u8; KEY], vector: &[f32]) -> Result<(), Error> {
        if self.index.len() >= MAX_VECTORS || self.get(&key).is_some() {
            return Ok(());
        }
        if vector.len() != self.dimensions {
            return Err(Error::OtherLength {
                path: self.path.clone(),
                holds: self.dimensions,
                given: vector.len(),
            });
        }
        let mut record = Vec::with_capacity(KEY + vector.len() * 4);
        record.extend_from_slice(&key);
        vector
            .iter()
            .for_each(|v| record.extend_from_slice(&v.to_le_bytes()));
        // Appended in one write; other processes may append too, so the record's place is
        // where this write left the file's offset.
        let end = self
            .file
            .write_all(&record)
            .and_then(|()| self.file.stream_position())
            .map_err(failed(&self.path, "cannot write"))?;
        self.index.insert(key, end - record.len() as u64);
        Ok(())
    }

    /// Reads the header and every record's key; cuts off a torn last record.
    fn read_index(&mut self) -> Result<(), Error> {
        let path = &self.path;
        let cannot_read = failed(path, "cannot read");
        let length = self.file.metadata().map_err(&cannot_read)?.len();
        let mut reader = BufReader::with_capacity(1 << 20, &self.file);
        reader.seek(SeekFrom::Start(0)).map_err(&cannot_read)?;
        let mut header = [0u8; HEADER as usize];
        reader
            .read_exact(&mut header)
            .map_err(|_| Error::NotAVectorFile(path.clone()))?;
        if header != header_of(self.dimensions) {
            let declared = u32::from_le_bytes(header[12..16].try_into().expect("4 bytes"));
            return Err(if header[..12] == header_of(self.dimensions)[..12] {
                Error::OtherModel {
                    path: path.clone(),
                    holds: declared,
                    model: self.dimensions,
                }
            } else {
                Error::NotAVectorFile(path.clone())
            });
        }
        let record = (KEY + self.dimensions * 4) as u64;
        let whole = (length - HEADER) / record;
        let mut key = [0u8; KEY];
        for at in (0..whole.min(MAX_VECTORS as u64)).map(|n| HEADER + n * record) {
            reader.read_exact(&mut key).map_err(&cannot_read)?;
            reader
                .seek_relative(record as i64 - KEY as i64)
                .map_err(&cannot_read)?;
            self.index.insert(key, at);
        }
        if length != HEADER + whole * record {
            self.file
                .set_len(HEADER + whole * record)
                .map_err(failed(path, "cannot cut off a torn record"))?;
        }
        Ok(())
    }
}

/// The header of a file of vectors of `dimensions`.
fn header_of(dimensions: usize) -> [u8; HEADER as usize] {
    let mut header = [0u8; HEADER as usize];
    header[..8].copy_from_slice(MAGIC);
    header[8..12].copy_from_slice(&VERSION.to_le_bytes());
    header[12..].copy_from_slice(&(dimensions as u32).to_le_bytes());
    header
}

/// Creates the file with its header whole, or leaves the one another process made first: the
/// header is written to a file of this process's own, then linked into place.
fn create(path: &Path, dimensions: usize) -> Result<(), Error> {
    let parent = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(failed(parent, "cannot create"))?;
    let draft = path.with_extension(format!("new-{}", std::process::id()));
    let written = File::create(&draft)
        .and_then(|mut f| f.write_all(&header_of(dimensions)))
        .and_then(|()| match std::fs::hard_link(&draft, path) {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
            linked => linked,
        });
    let _ = std::fs::remove_file(&draft);
    written.map_err(failed(path, "cannot create"))
}

/// Makes a failed file operation on `path` an [`Error`] saying it was `doing` it.
fn failed(path: &Path, doing: &'static str) -> impl Fn(std::io::Error) -> Error {
    let path = path.to_owned();
    move |cause| Error::VectorFile {
        path: path.clone(),
        doing,
        cause,
    }
}
