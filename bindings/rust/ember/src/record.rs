//! Records (a module's params or an optimizer's state as Ember's record format) and load reports.
use crate::error::{check, Result};
use crate::strings::{c_string, read_string};
use crate::sys;
use std::os::raw::c_void;
use std::ptr;

/// How a record is written: `ember_record_options` with Ember's defaults (binary, the recorder's precision).
#[derive(Clone, Copy, Debug)]
pub struct RecordOptions {
    raw: sys::ember_record_options,
}

impl RecordOptions {
    /// Ember's defaults (`ember_record_options_init`).
    pub fn new() -> Result<RecordOptions> {
        let mut raw = sys::ember_record_options::default();
        // SAFETY: raw is a whole ember_record_options.
        check(unsafe { sys::ember_record_options_init(&mut raw) })?;
        Ok(RecordOptions { raw })
    }

    /// Sets the recorder (`sys::EMBER_RECORDER_*`).
    pub fn recorder(mut self, recorder: sys::ember_recorder) -> RecordOptions {
        self.raw.recorder = recorder;
        self
    }

    /// Sets the precision (`sys::EMBER_PRECISION_*`).
    pub fn precision(mut self, precision: sys::ember_precision) -> RecordOptions {
        self.raw.precision = precision;
        self
    }

    pub(crate) fn as_raw(&self) -> *const sys::ember_record_options {
        &self.raw
    }
}

/// An owned `ember_record` handle (freed on drop).
#[derive(Debug)]
pub struct Record {
    raw: *mut sys::ember_record,
}

sys::impl_thread_traits!(ember_record, Record);

impl Record {
    /// Takes ownership of a raw handle.
    ///
    /// # Safety
    /// `raw` must be an `ember_record` handle that nothing else frees.
    pub unsafe fn from_raw(raw: *mut sys::ember_record) -> Record {
        Record { raw }
    }

    /// The raw handle, still owned by this `Record`.
    pub fn as_ptr(&self) -> *mut sys::ember_record {
        self.raw
    }

    /// Reads a record file.
    pub fn read_file(path: &str) -> Result<Record> {
        let path = c_string(path)?;
        let mut raw = ptr::null_mut();
        // SAFETY: path is NUL-terminated; the out pointer is a local.
        check(unsafe { sys::ember_record_read_file(path.as_ptr(), &mut raw) })?;
        Ok(Record { raw })
    }

    /// Number of tensor entries.
    pub fn entry_count(&self) -> Result<usize> {
        let mut count = 0;
        // SAFETY: the out value is a local.
        check(unsafe { sys::ember_record_entry_count(self.raw, &mut count) })?;
        Ok(count)
    }

    /// The file bytes (binary, full precision unless `options` say otherwise).
    pub fn to_bytes(&self, options: Option<&RecordOptions>) -> Result<Vec<u8>> {
        let opts = options.map_or(ptr::null(), |o| o.as_raw());
        let mut size = 0usize;
        // SAFETY: capacity 0 with a NULL buffer only asks the size.
        let status = unsafe { sys::ember_record_to_bytes(self.raw, opts, ptr::null_mut(), 0, &mut size) };
        if status != sys::EMBER_ERR_BUFFER_TOO_SMALL {
            check(status)?;
        }
        let mut bytes = vec![0u8; size];
        // SAFETY: bytes holds `size` bytes.
        check(unsafe {
            sys::ember_record_to_bytes(self.raw, opts, bytes.as_mut_ptr() as *mut c_void, bytes.len(), &mut size)
        })?;
        bytes.truncate(size);
        Ok(bytes)
    }
}

impl Drop for Record {
    fn drop(&mut self) {
        // SAFETY: this Record owns the handle.
        unsafe { sys::ember_record_free(self.raw) };
    }
}

/// What a load found missing, unexpected or mismatching (an owned `ember_load_report`, freed on drop).
#[derive(Debug)]
pub struct LoadReport {
    raw: *mut sys::ember_load_report,
}

sys::impl_thread_traits!(ember_load_report, LoadReport);

impl LoadReport {
    /// Takes ownership of a raw handle.
    ///
    /// # Safety
    /// `raw` must be an `ember_load_report` handle that nothing else frees.
    pub unsafe fn from_raw(raw: *mut sys::ember_load_report) -> LoadReport {
        LoadReport { raw }
    }

    /// (missing, unexpected, mismatched) entry counts.
    pub fn counts(&self) -> Result<(usize, usize, usize)> {
        let (mut missing, mut unexpected, mut mismatched) = (0, 0, 0);
        // SAFETY: the out values are locals.
        check(unsafe { sys::ember_load_report_counts(self.raw, &mut missing, &mut unexpected, &mut mismatched) })?;
        Ok((missing, unexpected, mismatched))
    }

    /// One line per problem ("" when everything matched).
    pub fn text(&self) -> Result<String> {
        // SAFETY: read_string passes a buffer of `capacity` bytes (or NULL with capacity 0).
        read_string(|buf, capacity, length| unsafe { sys::ember_load_report_text(self.raw, buf, capacity, length) })
    }
}

impl Drop for LoadReport {
    fn drop(&mut self) {
        // SAFETY: this LoadReport owns the handle (NULL frees as a no-op).
        unsafe { sys::ember_load_report_free(self.raw) };
    }
}
