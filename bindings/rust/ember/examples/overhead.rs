//! Per-call overhead of a tiny op through the safe API: `Tensor::add` of two 1-element tensors and the drop
//! (ember_tensor_free) of the result, N times. Prints one line, `rust ns_per_call=<float>`, which bench/'s
//! ffi_overhead runner reads beside the other languages.
//!
//!   overhead [N]   (default 200000)
use ember::Tensor;
use std::time::Instant;

fn main() {
    let n: u32 = std::env::args().nth(1).map_or(200_000, |a| a.parse().expect("N: a number of calls"));
    let a = Tensor::from_slice(&[1.0f32], &[1]).expect("a");
    let b = Tensor::from_slice(&[2.0f32], &[1]).expect("b");
    for _ in 0..n / 10 {
        drop(a.add(&b).expect("add")); // warm-up: allocator, caches
    }
    let start = Instant::now();
    for _ in 0..n {
        drop(a.add(&b).expect("add"));
    }
    let ns = start.elapsed().as_nanos() as f64 / f64::from(n);
    println!("rust ns_per_call={:.1}", ns);
}
