//! Reading the config file: the only file-system access of the module.
//! A missing file means "defaults"; anything else that stops the read is an
//! error. For the default path the file must be trusted (root-owned, not
//! group/world writable): the sandbox's policy must not be editable by the
//! user it confines. Not responsible for the text's meaning.

use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::error::{ConfigError, Hint};

/// Larger than any sensible config; bounds memory on a wrong path.
const MAX_BYTES: u64 = 1024 * 1024;

/// The file's text, or `None` when it does not exist. `trust` applies
/// [`check_file_trust`] to the file actually opened (not to the path, which
/// could be swapped between a check and the read).
pub(crate) fn read_config(path: &Path, trust: bool) -> Result<Option<String>, ConfigError> {
    // Look before opening: opening a FIFO would block.
    match std::fs::metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(unreadable(path, &e)),
        Ok(meta) => regular_file(path, &meta)?,
    }
    let file = File::open(path).map_err(|e| unreadable(path, &e))?;
    let meta = file.metadata().map_err(|e| unreadable(path, &e))?;
    regular_file(path, &meta)?;
    if trust {
        check_file_trust(path, meta.uid(), meta.mode())?;
    }
    let bytes = read_bounded(path, file)?;
    decode(path, bytes).map(Some)
}

/// Refuses a config file that someone other than root could change: not
/// owned by uid 0, or writable by its group or by others. Takes the owner
/// and mode as values so it can be tested without root.
pub fn check_file_trust(path: &Path, uid: u32, mode: u32) -> Result<(), ConfigError> {
    let shown = path.display();
    let foreign = uid != 0;
    let writable = mode & 0o022 != 0;
    let (problem, fix) = match (foreign, writable) {
        (false, false) => return Ok(()),
        (true, false) => (format!("owned by uid {uid}, not root"), format!("chown root:root {shown}")),
        (false, true) => (format!("writable by group or others (mode {:04o})", mode & 0o7777), format!("chmod 644 {shown}")),
        (true, true) => (
            format!("owned by uid {uid}, not root, and writable by group or others (mode {:04o})", mode & 0o7777),
            format!("chown root:root {shown} && chmod 644 {shown}"),
        ),
    };
    Err(ConfigError::Untrusted { file: path.to_path_buf(), problem, fix })
}

fn regular_file(path: &Path, meta: &Metadata) -> Result<(), ConfigError> {
    let message = if meta.is_dir() {
        "it is a directory"
    } else if !meta.is_file() {
        "it is not a regular file"
    } else {
        return Ok(());
    };
    Err(ConfigError::Unreadable { file: path.to_path_buf(), message: message.to_string(), hint: Hint::new("the configuration must be a JSON5 file") })
}

fn unreadable(path: &Path, err: &io::Error) -> ConfigError {
    let hint = if err.kind() == io::ErrorKind::PermissionDenied { Hint::new(format!("make it readable: chmod 644 {}", path.display())) } else { Hint::none() };
    ConfigError::Unreadable { file: path.to_path_buf(), message: err.to_string(), hint }
}

fn read_bounded(path: &Path, file: File) -> Result<Vec<u8>, ConfigError> {
    let mut bytes = Vec::new();
    file.take(MAX_BYTES + 1).read_to_end(&mut bytes).map_err(|e| unreadable(path, &e))?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(ConfigError::Unreadable { file: path.to_path_buf(), message: format!("it is larger than {MAX_BYTES} bytes"), hint: Hint::none() });
    }
    Ok(bytes)
}

/// UTF-8 is required; the error points at the first bad byte.
fn decode(path: &Path, bytes: Vec<u8>) -> Result<String, ConfigError> {
    String::from_utf8(bytes).map_err(|e| {
        let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = 1 + good.iter().filter(|b| **b == b'\n').count();
        let line_start = good.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        let column = 1 + String::from_utf8_lossy(&good[line_start..]).chars().count();
        ConfigError::Syntax { file: path.to_path_buf(), line, column, message: "the file is not valid UTF-8".to_string() }
    })
}
