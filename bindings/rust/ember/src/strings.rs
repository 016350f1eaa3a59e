//! Reading Ember's output strings (`buf, capacity, *length`): ask the length, then fetch the text.
use crate::error::{check, Result};
use crate::sys;
use std::os::raw::c_char;

/// Calls `fill(buf, capacity, &mut length)` until the text fits and returns it. The length query passes
/// capacity 0; it may answer EMBER_OK (headers that report lengths without an error) or EMBER_ERR_BUFFER_TOO_SMALL
/// (older libraries), both with the length set.
pub(crate) fn read_string<F>(mut fill: F) -> Result<String>
where
    F: FnMut(*mut c_char, usize, *mut usize) -> sys::ember_status,
{
    let mut length = 0usize;
    let status = fill(std::ptr::null_mut(), 0, &mut length);
    if status != sys::EMBER_ERR_BUFFER_TOO_SMALL {
        check(status)?;
    }
    loop {
        let mut buf = vec![0u8; length + 1];
        let status = fill(buf.as_mut_ptr() as *mut c_char, buf.len(), &mut length);
        if status == sys::EMBER_ERR_BUFFER_TOO_SMALL && length + 1 > buf.len() {
            continue; // it grew in between: ask again with the new length
        }
        check(status)?;
        buf.truncate(length);
        return Ok(String::from_utf8_lossy(&buf).into_owned());
    }
}

/// A path or name as the NUL-terminated string the C ABI takes (an interior NUL is Ember's INVALID_ARGUMENT).
pub(crate) fn c_string(text: &str) -> Result<std::ffi::CString> {
    std::ffi::CString::new(text).map_err(|_| crate::Error::invalid_argument(format!("'{}' contains a NUL byte", text)))
}
