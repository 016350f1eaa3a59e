//! Ember's failures as a Rust error: the status code and the message Ember stored for the failing call.
use crate::sys;
use std::ffi::CStr;
use std::fmt;

/// A failed Ember call: `status` is an `EMBER_ERR_*` value, `message` what `ember_last_error()` said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    status: sys::ember_status,
    message: String,
}

/// `Result` with Ember's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// The `EMBER_ERR_*` status the call returned.
    pub fn status(&self) -> sys::ember_status {
        self.status
    }

    /// Ember's message for the failure (names the function and the problem).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// "EMBER_ERR_SHAPE", ... (Ember's own name of the status).
    pub fn status_name(&self) -> String {
        // SAFETY: ember_status_name returns a static NUL-terminated string for any value.
        unsafe { CStr::from_ptr(sys::ember_status_name(self.status)) }.to_string_lossy().into_owned()
    }

    /// An error found on the Rust side before calling Ember (the status Ember would give the same input).
    pub(crate) fn invalid_argument(message: String) -> Error {
        Error { status: sys::EMBER_ERR_INVALID_ARGUMENT, message }
    }

    /// The error of a call that just returned `status` on this thread (the message is per thread).
    pub(crate) fn last(status: sys::ember_status) -> Error {
        // SAFETY: ember_last_error never returns NULL; the text stays valid until the next failing call here,
        // and it is copied at once.
        let message = unsafe { CStr::from_ptr(sys::ember_last_error()) }.to_string_lossy().into_owned();
        Error { status, message }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.status_name(), self.message)
    }
}

impl std::error::Error for Error {}

/// Ok for EMBER_OK, else the thread's last error.
pub(crate) fn check(status: sys::ember_status) -> Result<()> {
    if status == sys::EMBER_OK {
        Ok(())
    } else {
        Err(Error::last(status))
    }
}
