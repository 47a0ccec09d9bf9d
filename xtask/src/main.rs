//! Developer tasks: `cargo xtask demo`, `cargo xtask bench`.
fn main() {}
