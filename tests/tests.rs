//! Integration tests, one module per area, in one binary.

mod extract;
