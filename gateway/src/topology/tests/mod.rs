//! Unit tests of the cluster model, the entry state machine, the cache, feedback and the locator.

mod cache;
mod cluster;
mod entry;
mod locator;
