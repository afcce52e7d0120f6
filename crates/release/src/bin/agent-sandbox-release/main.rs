//! The `agent-sandbox-release` binary: the maintainer verbs, kept out of the
//! program sessions exec (`agent-sandbox` hands them here). It links the
//! registry client and its TLS; `agent-sandbox` links neither.
//!
//! `agent-sandbox-release feature package|publish`, `templates
//! package|publish`, `image build|publish` (docs/publish.md, docs/image.md).

#[macro_use]
extern crate agent_sandbox_sys;

mod image;
mod publish;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Debug, Parser)]
#[command(
    name = "agent-sandbox-release",
    version,
    about = "Maintainers: package and publish the devcontainer feature and templates, build and publish the reference image",
    after_help = "`agent-sandbox feature|templates|image ...` runs this program. Logs: set RUST_LOG (e.g. RUST_LOG=debug)."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Package or publish the devcontainer feature (OCI artifact).
    #[command(subcommand)]
    Feature(publish::FeatureCommand),
    /// Package or publish the devcontainer templates (OCI artifacts).
    #[command(subcommand)]
    Templates(publish::TemplatesCommand),
    /// Build, verify and publish the reference image.
    #[command(subcommand)]
    Image(image::ImageCommand),
}

fn main() -> ExitCode {
    agent_sandbox_sys::output::init_logging();
    let result = match Cli::parse().command {
        Command::Feature(c) => publish::feature_cmd(c),
        Command::Templates(c) => publish::templates_cmd(c),
        Command::Image(c) => image::image_cmd(c),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("agent-sandbox-release: {e:#}");
            ExitCode::from(1)
        }
    }
}
