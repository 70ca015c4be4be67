//! The disk I/O bake-off's handler: per request, a random 108 KB string is written to a file,
//! read back and returned.

use std::io::{Read, Write};

/// Size of the string each request writes and reads, as in the original Apache Bench comparison.
pub const SIZE: usize = 108 * 1024;

/// Writes a fresh random string of [`SIZE`] bytes to a new file in `dir`, reads it back and
/// returns what was read.
pub fn round_trip(dir: &std::path::Path) -> std::io::Result<Vec<u8>> {
    let mut rng = fastrand::Rng::new();
    let text: Vec<u8> = std::iter::repeat_with(|| rng.alphanumeric() as u8).take(SIZE).collect();
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    file.write_all(&text)?;
    file.as_file().sync_data()?;
    let mut back = Vec::with_capacity(SIZE);
    std::fs::File::open(file.path())?.read_to_end(&mut back)?;
    Ok(back)
}
