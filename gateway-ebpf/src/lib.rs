//! Nothing here: the programs are in main.rs (built only by gateway/build.rs).
#![no_std]
