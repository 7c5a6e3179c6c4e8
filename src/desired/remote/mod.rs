//! Fetching what a repository's apps name outside it — charts from Helm repositories and OCI
//! registries, chart dependencies, kustomize's remote bases and manifests — as the controllers
//! fetch them, before anything renders.
//!
//! [`Fetcher`] does the I/O for a whole run: the safety [`policy`], the one [`http`] client, the
//! content-addressed [`store`] (`--cache-dir`), and a memory of what it fetched, so that a chart
//! many apps use (and a check's base and head share) is fetched once. [`Remote`] is one rendered
//! ref's view of it: whether it may fetch at all (`--offline`), from which source hosts (a check's
//! head only from the hosts its base uses and `render.remote.allow`), and the source hosts the
//! ref names, which a check hands from base to head. The fetchers are one file per kind of
//! source: [`helm_repo`] (`index.yaml` and archives), [`oci`] (the distribution API with Helm's
//! media types), [`git`] (smart HTTP, for kustomize), with [`semver`] for version ranges,
//! [`archive`] for chart packages, [`deps`] for what `helm dependency build` would add to a chart
//! and [`bases`] for mounting kustomize's remote resources into the tree. Their shared types are
//! in [`refs`] and [`error`].

pub mod archive;
pub mod bases;
pub mod deps;
pub mod error;
mod fetch;
pub mod git;
pub mod helm_repo;
pub mod http;
pub mod oci;
pub mod policy;
pub mod refs;
pub mod semver;
pub mod store;

pub use fetch::{Fetcher, Options, Remote};
