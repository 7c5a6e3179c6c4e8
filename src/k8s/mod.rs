//! Kubernetes objects as plain data: quantities, GPU resources, lean typed bodies, and readers.

pub mod gpus;
mod json;
pub mod object;
pub mod quantity;
pub mod read;
pub mod types;
