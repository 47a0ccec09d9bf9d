//! Types shared by the eBPF programs and the daemon: map keys, values and well-known names.
#![no_std]
