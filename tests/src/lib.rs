//! Test harness: starts real MariaDB servers and the gateway on loopback, and drives real clients.
