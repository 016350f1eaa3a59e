//! The test every Ember binding has (issue 12): the digits MLP trained as examples/c/train_digits.c does saves a
//! record byte-identical to the C example's; a shape mismatch and a freed handle come back as `Err(ember::Error)`
//! with Ember's status and message; the generated structs have the description's layout; Send / Sync follow the
//! description.
//!
//! Environment (set by bindings/rust/meson.build through run_cargo.sh):
//!   EMBER_DIGITS         data/digits.csv.gz (default: the source tree's)
//!   EMBER_REF_RECORD     the record `train_digits_c DIGITS EPOCHS ref.emr` saved (required by the digits test)
//!   EMBER_DIGITS_EPOCHS  epochs, as given to train_digits_c (default 2)
//! Run with EMBER_NUM_THREADS=1, like the C run, so both are bit-reproducible.
mod common;

use common::digits::{self, Dataset, Shuffler, CLASSES, PIXELS};
use ember::{sys, LayerDesc, Module, Optimizer, OptimizerOptions, Tensor};
use std::marker::PhantomData;

const BATCH: usize = 64;

fn batch(d: &Dataset, idx: &[usize]) -> (Tensor, Tensor) {
    let mut x = Vec::with_capacity(idx.len() * PIXELS);
    let mut y = Vec::with_capacity(idx.len());
    for &i in idx {
        x.extend_from_slice(&d.x[i * PIXELS..(i + 1) * PIXELS]);
        y.push(d.y[i]);
    }
    let n = idx.len() as i64;
    (Tensor::from_slice(&x, &[n, PIXELS as i64]).unwrap(), Tensor::from_slice(&y, &[n]).unwrap())
}

fn accuracy(model: &Module, d: &Dataset, idx: &[usize]) -> f64 {
    let (x, _) = batch(d, idx);
    let logits = {
        let _scope = ember::no_grad().unwrap();
        assert!(!ember::is_grad_enabled().unwrap());
        model.forward(&x, false).unwrap()
    };
    assert!(ember::is_grad_enabled().unwrap(), "dropping the guard leaves the no-grad scope");
    let pred = logits.argmax(1, false).unwrap().to_vec::<i64>().unwrap();
    let correct = idx.iter().zip(&pred).filter(|&(&i, &p)| d.y[i] == p).count();
    correct as f64 / idx.len() as f64
}

#[test]
fn digits_record_is_byte_identical_to_the_c_example() {
    let path = std::env::var("EMBER_DIGITS")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/../../../data/digits.csv.gz").to_string());
    let reference = std::env::var("EMBER_REF_RECORD")
        .expect("EMBER_REF_RECORD: the record of `train_digits_c DIGITS EPOCHS ref.emr` (meson test sets it)");
    let epochs: usize = std::env::var("EMBER_DIGITS_EPOCHS").map_or(2, |e| e.parse().expect("a number of epochs"));

    let data = digits::load(&path);
    println!("ember {} (C ABI {}): {} digits from {}", ember::version(), ember::abi_version(), data.n, path);
    let mut rng = Shuffler::new();
    let mut order: Vec<usize> = (0..data.n).collect();
    rng.shuffle(&mut order);
    let n_train = data.n * 4 / 5;

    ember::seed(42).unwrap();
    let layers = [
        LayerDesc::linear(PIXELS as i64, 256).unwrap(),
        LayerDesc::new(sys::EMBER_LAYER_RELU).unwrap(),
        LayerDesc::linear(256, 256).unwrap(),
        LayerDesc::new(sys::EMBER_LAYER_RELU).unwrap(),
        LayerDesc::linear(256, CLASSES).unwrap(),
    ];
    let model = Module::sequential(&layers).unwrap();
    println!("model: {} parameter tensors", model.param_count().unwrap());
    assert_eq!(model.param_name(0).unwrap(), "layers.0.weight");
    let mut optim = Optimizer::new(&model, &OptimizerOptions::adam(1e-3).unwrap()).unwrap();

    let mut acc = 0.0;
    for epoch in 1..=epochs {
        let mut loss_sum = 0.0;
        rng.shuffle(&mut order[..n_train]);
        for start in (0..n_train).step_by(BATCH) {
            let rows = &order[start..n_train.min(start + BATCH)];
            let (x, y) = batch(&data, rows);
            let logits = model.forward(&x, true).unwrap();
            let loss = ember::cross_entropy(&logits, &y, sys::EMBER_REDUCTION_MEAN).unwrap();
            loss_sum += loss.item().unwrap() * rows.len() as f64;
            let grads = loss.backward().unwrap();
            optim.step(&grads).unwrap();
        }
        acc = accuracy(&model, &data, &order[n_train..]);
        println!("epoch {}/{}  loss {:.4}  test accuracy {:.1}%", epoch, epochs, loss_sum / n_train as f64,
                 100.0 * acc);
    }

    let saved = format!("{}/rust_digits.emr", env!("CARGO_TARGET_TMPDIR"));
    model.save(&saved).unwrap();
    let ours = std::fs::read(&saved).unwrap();
    let theirs = std::fs::read(&reference).unwrap_or_else(|e| panic!("cannot read {}: {}", reference, e));
    assert_eq!(ours.len(), theirs.len(), "record sizes differ: {} (Rust) vs {} (C)", saved, reference);
    assert!(ours == theirs, "{} (Rust) differs from {} (C)", saved, reference);
    // The in-memory record of the same params is the same bytes as the file.
    assert!(model.to_record().unwrap().to_bytes(None).unwrap() == ours);
    assert!(acc >= 0.9, "test accuracy {:.1}% is below 90%", 100.0 * acc);

    // The C record loads strictly into the Rust-built model (nothing missing or mismatching) ...
    let report = model.load(&reference, true).unwrap();
    assert_eq!(report.counts().unwrap(), (0, 0, 0));
    assert_eq!(report.text().unwrap(), "");
    // ... but not into a model of other shapes: a strict load fails with a record error naming the entries.
    let other = Module::sequential(&[LayerDesc::linear(PIXELS as i64, CLASSES).unwrap()]).unwrap();
    let err = other.load(&reference, true).unwrap_err();
    assert_eq!(err.status(), sys::EMBER_ERR_RECORD, "{}", err);
    assert!(err.message().contains("layers.0.weight"), "{}", err);
    // Reading a string (a length query first) succeeds without replacing the report of the failed load.
    assert_eq!(other.param_name(0).unwrap(), "layers.0.weight");
    // SAFETY: ember_last_error never returns NULL.
    let last = unsafe { std::ffi::CStr::from_ptr(sys::ember_last_error()) }.to_string_lossy().into_owned();
    assert_eq!(last, err.message(), "a length query keeps the last error");
}

#[test]
fn shape_mismatch_is_an_error_with_embers_message() {
    let a = Tensor::from_slice(&[0f32; 6], &[2, 3]).unwrap();
    let b = Tensor::from_slice(&[0f32; 20], &[4, 5]).unwrap();
    let err = a.matmul(&b).unwrap_err();
    println!("shape mismatch: {}", err);
    assert_eq!(err.status(), sys::EMBER_ERR_SHAPE, "{}", err);
    assert_eq!(err.status_name(), "EMBER_ERR_SHAPE");
    assert!(err.message().contains("ember_tensor_matmul"), "message names the function: {}", err);
    assert!(err.message().contains('3') && err.message().contains('4'), "message gives the dims: {}", err);
    // A data length that does not fit the shape fails before any tensor exists.
    let err = Tensor::from_slice(&[1f32, 2.0, 3.0], &[2, 2]).unwrap_err();
    assert_eq!(err.status(), sys::EMBER_ERR_SHAPE, "{}", err);
    assert!(err.message().contains("ember_tensor_from_data"), "{}", err);
}

#[test]
fn freed_handle_is_an_error_with_embers_message() {
    let live = Tensor::from_slice(&[1f32], &[1]).unwrap();
    let freed = Tensor::from_slice(&[2f32], &[1]).unwrap();
    let raw = freed.as_ptr();
    freed.free().unwrap();
    // A new tensor may take the freed slot; the stale handle's generation still tells them apart.
    let newer = Tensor::from_slice(&[5f32], &[1]).unwrap();
    // SAFETY: deliberately stale; Ember's handle table reports it instead of touching freed memory.
    let stale = unsafe { Tensor::from_raw(raw) };
    let err = live.add(&stale).unwrap_err();
    println!("stale handle: {}", err);
    assert_eq!(err.status(), sys::EMBER_ERR_INVALID_HANDLE, "{}", err);
    assert!(err.message().contains("ember_tensor_add"), "message names the function: {}", err);
    // Freeing it again is reported too, and never frees the newer tensor.
    let err = stale.free().unwrap_err();
    assert_eq!(err.status(), sys::EMBER_ERR_INVALID_HANDLE, "{}", err);
    assert_eq!(newer.to_vec::<f32>().unwrap(), vec![5.0]);
    assert_eq!(live.add(&live).unwrap().to_vec::<f32>().unwrap(), vec![2.0]);
}

#[test]
fn structs_have_the_descriptions_layout() {
    let mismatches = sys::struct_layout_mismatches();
    assert!(mismatches.is_empty(), "generated structs differ from the description:\n{}", mismatches.join("\n"));
    assert!(sys::STRUCT_LAYOUTS.iter().any(|s| s.0 == "ember_layer_desc"));
    // The library's own _init functions set struct_size = sizeof(the C struct): the same size as the Rust one.
    let sizes = sys::init_struct_sizes();
    let without_init: Vec<&str> =
        sys::STRUCT_LAYOUTS.iter().map(|s| s.0).filter(|name| !sizes.iter().any(|s| s.0 == *name)).collect();
    assert!(without_init.is_empty(), "structs without a callable _init: {:?}", without_init);
    for (name, status, c_size, rust_size) in sizes {
        assert_eq!(status, sys::EMBER_OK, "{}'s _init failed", name);
        assert_eq!(c_size as usize, rust_size, "{}: the library's sizeof differs from the Rust struct", name);
    }
    let layer = LayerDesc::new(sys::EMBER_LAYER_LINEAR).unwrap();
    assert_eq!(layer.struct_size as usize, std::mem::size_of::<sys::ember_layer_desc>());
    let opts = OptimizerOptions::adam(1e-3).unwrap();
    assert_eq!(opts.struct_size as usize, std::mem::size_of::<sys::ember_optimizer_options>());
    assert_eq!(opts.beta2, 0.999, "the C defaults land in the right fields");
    let mut record = sys::ember_record_options::default();
    // SAFETY: a whole ember_record_options.
    assert_eq!(unsafe { sys::ember_record_options_init(&mut record) }, sys::EMBER_OK);
    assert_eq!(record.struct_size as usize, std::mem::size_of::<sys::ember_record_options>());
}

// Whether a type is Send / Sync, decided at compile time: the inherent method exists only when the bound holds,
// otherwise method resolution falls back to the trait's.
struct Probe<T>(PhantomData<T>);
trait Fallback {
    fn send(&self) -> bool {
        false
    }
    fn sync(&self) -> bool {
        false
    }
}
impl<T> Fallback for Probe<T> {}
impl<T: Send> Probe<T> {
    #[allow(dead_code)]
    fn send(&self) -> bool {
        true
    }
}
impl<T: Sync> Probe<T> {
    #[allow(dead_code)]
    fn sync(&self) -> bool {
        true
    }
}
macro_rules! threads {
    ($t:ty) => {
        (Probe::<$t>(PhantomData).send(), Probe::<$t>(PhantomData).sync())
    };
}

#[test]
fn tensors_and_modules_are_shared_across_threads() {
    // Sync handles used from several threads at once, as the thread rules allow (immutable tensors, internally
    // synchronized modules).
    let model = Module::sequential(&[LayerDesc::linear(3, 2).unwrap()]).unwrap();
    let x = Tensor::from_slice(&[1f32, 2.0, 3.0], &[1, 3]).unwrap();
    let expected = model.forward(&x, false).unwrap().to_vec::<f32>().unwrap();
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..50 {
                    assert_eq!(model.forward(&x, false).unwrap().to_vec::<f32>().unwrap(), expected);
                }
            });
        }
    });
    // A Send tensor moves to another thread and is freed there.
    let y = x.add(&x).unwrap();
    let sum = std::thread::spawn(move || y.to_vec::<f32>().unwrap()).join().unwrap();
    assert_eq!(sum, vec![2.0, 4.0, 6.0]);
}

fn described(handle: &str) -> (bool, bool) {
    let h = sys::HANDLE_THREADS.iter().find(|h| h.0 == handle).unwrap_or_else(|| panic!("{} not described", handle));
    (h.1, h.2)
}

#[test]
fn send_and_sync_follow_the_description() {
    assert_eq!(threads!(ember::Tensor), described("ember_tensor"));
    assert_eq!(threads!(ember::Module), described("ember_module"));
    assert_eq!(threads!(ember::Optimizer), described("ember_optimizer"));
    assert_eq!(threads!(ember::Grads), described("ember_grads"));
    assert_eq!(threads!(ember::Record), described("ember_record"));
    assert_eq!(threads!(ember::LoadReport), described("ember_load_report"));
    assert_eq!(threads!(ember::NoGradGuard), (false, false), "the no-grad scope is per thread");
}

#[test]
fn every_described_function_is_linked() {
    let functions = sys::function_addresses();
    assert_eq!(functions.len(), sys::FUNCTION_NAMES.len());
    for (name, address) in functions {
        assert_ne!(address, 0, "{} has no address", name);
    }
}
