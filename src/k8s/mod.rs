//! Kubernetes objects as plain data: quantities, GPU resources, lean typed bodies, and readers.
//!
//! The data flows down this list: `text` and [`quantity`] are the leaves (shared strings, exact
//! quantities), [`gpus`] counts GPU resources, [`types`], [`dra`] and [`object`] are the objects read;
//! a read owns a [`session`], in which `document` turns parsed documents into objects and `admit`
//! cuts them to the API's limits and shares their strings; `json` and `yaml` drive the parsers
//! (`yaml_block` parses YAML's fast-path subset, which `yaml_value` reads into objects, and
//! `yaml_list` reads a large `List` an item at a time), and [`read`] is the door: files, strings and API pages in, objects out.

mod admit;
pub mod affinity;
mod document;
pub mod dra;
mod exact;
pub mod gpus;
mod json;
mod json_window;
pub mod lenient;
pub mod object;
pub mod quantity;
pub mod queue;
pub mod read;
pub mod session;
mod text;
pub mod types;
mod yaml;
mod yaml_block;
mod yaml_list;
mod yaml_value;
