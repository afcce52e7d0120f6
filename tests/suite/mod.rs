//! The suite, one module per area; each module's top comment says what it
//! proves and what it needs.

mod arm64;
mod docker;
mod doctor;
mod feature_e2e;
mod host_view;
mod image;
mod install;
mod jail;
mod kubernetes;
mod protect;
mod publish;
mod review;
mod sandbox;
mod terminal;
mod verify;
