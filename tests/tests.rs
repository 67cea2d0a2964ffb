//! Integration tests, one module per area.

mod mapreduce;
