//! Rebuilds the server when the demo catalog or the migrations change: both are embedded in
//! the binary (`include_dir!`, `sqlx::migrate!`), and cargo does not see through macros.

fn main() {
    println!("cargo:rerun-if-changed=../catalog");
    println!("cargo:rerun-if-changed=../migrations");
}
