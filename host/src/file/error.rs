//! Why a file's bytes are not an input: [`FileError`], one line that the caller prefixes with
//! the file's name.

/// Why a file's bytes are not an input: one line, without the file's name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct FileError(pub String);

/// The error `message`, as a `Result`.
pub(super) fn fail<T>(message: impl Into<String>) -> Result<T, FileError> {
    Err(FileError(message.into()))
}
