//! Computes 1 + 2 through the installed safe crate (its ember-sys generated from the installed description).
fn main() {
    let a = ember::Tensor::from_slice(&[1.0f32], &[1]).expect("a");
    let b = ember::Tensor::from_slice(&[2.0f32], &[1]).expect("b");
    let sum = a.add(&b).expect("add").item().expect("item");
    println!("1 + 2 = {}", sum);
}
