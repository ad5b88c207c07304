//! Tests of the C++ front end (see `tests.rs` for the C front end).
