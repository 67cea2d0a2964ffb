//! Reading a configuration or prompt file safely: only a regular file, never more than a fixed
//! size, and never an open that can block.
//!
//! A path that names a FIFO, a device or a socket would block `read` (or even `open`) until some
//! writer shows up, and the proxy re-reads its config while serving. So the file is opened
//! without blocking, checked on the open handle (no window for a swap between check and read),
//! and read only when it is a regular file. A symlink is followed: its target must be a regular
//! file like any other.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// The largest configuration or prompt file read. A `condense.toml` is a few kilobytes; anything
/// near this is not a config file.
pub const MAX_CONFIG_FILE_BYTES: u64 = 1 << 20;

/// Reads `path` as UTF-8 text when it is (or links to) a regular file of at most
/// [`MAX_CONFIG_FILE_BYTES`].
///
/// # Errors
///
/// The open's own error; `InvalidInput` for anything that is not a regular file or is larger
/// than the limit (the message says which and names the limit); `InvalidData` for text that is
/// not UTF-8. No message holds any of the file's content.
pub(crate) fn read_regular_file(path: &Path) -> io::Result<String> {
    let file = open_without_blocking(path)?;
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "not a regular file (it is {}); only regular files are read",
                kind_of(&metadata.file_type())
            ),
        ));
    }
    if metadata.len() > MAX_CONFIG_FILE_BYTES {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or(0));
    // The size may have grown since the check: read one byte past the limit to tell.
    file.take(MAX_CONFIG_FILE_BYTES + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_CONFIG_FILE_BYTES {
        return Err(too_large());
    }
    String::from_utf8(bytes)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "the file is not UTF-8 text"))
}

fn too_large() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("larger than {MAX_CONFIG_FILE_BYTES} bytes (1 MiB), the most condense reads"),
    )
}

/// Opens for reading with `O_NONBLOCK`, so that opening a FIFO with no writer returns at once
/// instead of waiting; a regular file reads the same with or without the flag.
#[cfg(unix)]
fn open_without_blocking(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
}

#[cfg(not(unix))]
fn open_without_blocking(path: &Path) -> io::Result<File> {
    File::open(path)
}

fn kind_of(file_type: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a FIFO";
        }
        if file_type.is_socket() {
            return "a socket";
        }
        if file_type.is_char_device() || file_type.is_block_device() {
            return "a device";
        }
    }
    if file_type.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch() -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("condense-read-{}", fastrand::u64(..)));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_regular_file_and_a_link_to_one_are_read() {
        let dir = scratch();
        let path = dir.join("condense.toml");
        std::fs::write(&path, "[defaults]\n").unwrap();
        assert_eq!(read_regular_file(&path).unwrap(), "[defaults]\n");
        #[cfg(unix)]
        {
            let link = dir.join("link.toml");
            std::os::unix::fs::symlink(&path, &link).unwrap();
            assert_eq!(read_regular_file(&link).unwrap(), "[defaults]\n");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_at_once_instead_of_blocking() {
        let dir = scratch();
        let fifo = dir.join("condense.toml");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(status.success());
        let started = std::time::Instant::now();
        let error = read_regular_file(&fifo).unwrap_err();
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
        assert!(error.to_string().contains("a FIFO"), "{error}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_directory_and_an_oversized_file_are_refused_naming_why() {
        let dir = scratch();
        let error = read_regular_file(&dir).unwrap_err();
        assert!(error.to_string().contains("a directory"), "{error}");
        let big = dir.join("big.toml");
        std::fs::write(&big, vec![b'#'; MAX_CONFIG_FILE_BYTES as usize + 1]).unwrap();
        let error = read_regular_file(&big).unwrap_err();
        assert!(error.to_string().contains("1048576 bytes"), "{error}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
