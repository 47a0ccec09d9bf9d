//! Tests of the SQL analysis: examples, differential corpus, random input.

mod corpus;
mod differential;
mod examples;
mod hostile;
mod random;
