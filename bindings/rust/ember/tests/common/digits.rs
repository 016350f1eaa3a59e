//! The digits data set and the fixed shuffle of examples/c/digits_data.h, in Rust: the same rows, the same
//! float conversion and the same xorshift64* sequence, so training matches the C example bit for bit.
use std::ffi::CString;
use std::os::raw::{c_char, c_int, c_uint, c_void};

#[link(name = "z")]
extern "C" {
    fn gzopen(path: *const c_char, mode: *const c_char) -> *mut c_void;
    fn gzread(file: *mut c_void, buf: *mut c_void, len: c_uint) -> c_int;
    fn gzclose(file: *mut c_void) -> c_int;
}

pub const PIXELS: usize = 64;
pub const CLASSES: i64 = 10;

/// x: [n, 64] pixels / 16, y: [n] labels.
pub struct Dataset {
    pub x: Vec<f32>,
    pub y: Vec<i64>,
    pub n: usize,
}

/// Reads the gzip-compressed CSV (64 pixels 0..16 and a label per line; other lines skipped, as in C).
pub fn load(path: &str) -> Dataset {
    let text = gunzip(path);
    let mut d = Dataset { x: Vec::new(), y: Vec::new(), n: 0 };
    for line in text.lines() {
        let values: Vec<i32> = line.split(',').map_while(|v| v.trim().parse().ok()).collect();
        if values.len() != PIXELS + 1 {
            continue;
        }
        d.x.extend(values[..PIXELS].iter().map(|&v| v as f32 / 16.0f32));
        d.y.push(values[PIXELS] as i64);
        d.n += 1;
    }
    assert!(d.n > 0, "no digits in {}", path);
    d
}

fn gunzip(path: &str) -> String {
    let c_path = CString::new(path).expect("path without NUL");
    // SAFETY: zlib's gz* functions with a NUL-terminated path and mode, a buffer of the length passed, and the
    // file closed once.
    unsafe {
        let file = gzopen(c_path.as_ptr(), b"rb\0".as_ptr() as *const c_char);
        assert!(!file.is_null(), "cannot open {}", path);
        let mut bytes = Vec::new();
        let mut chunk = vec![0u8; 1 << 16];
        loop {
            let n = gzread(file, chunk.as_mut_ptr() as *mut c_void, chunk.len() as c_uint);
            assert!(n >= 0, "cannot read {}", path);
            if n == 0 {
                break;
            }
            bytes.extend_from_slice(&chunk[..n as usize]);
        }
        gzclose(file);
        String::from_utf8(bytes).expect("the digits CSV is ASCII")
    }
}

/// xorshift64* with the C example's seed: the same shuffles as `shuffle` in digits_data.h.
pub struct Shuffler {
    state: u64,
}

impl Shuffler {
    pub fn new() -> Shuffler {
        Shuffler { state: 2024 }
    }

    fn next(&mut self) -> u64 {
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        self.state.wrapping_mul(2685821657736338717)
    }

    pub fn shuffle(&mut self, idx: &mut [usize]) {
        for i in (2..=idx.len()).rev() {
            let j = (self.next() % i as u64) as usize;
            idx.swap(i - 1, j);
        }
    }
}
