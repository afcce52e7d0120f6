//! The maintainer verbs (`feature`, `templates`, `image`) live in
//! agent-sandbox-release, so the program every session execs links no
//! registry client and no TLS: here they are handed, arguments unchanged,
//! to that program in this one's own folder (never one found on PATH).

use anyhow::Context as _;
use std::ffi::OsString;
use std::os::unix::process::CommandExt;

/// The maintainer program's file name, beside `agent-sandbox`.
const RELEASE_BIN: &str = "agent-sandbox-release";

/// Replaces this process with `agent-sandbox-release VERB ARGS...`.
pub(crate) fn run(verb: &str, args: Vec<OsString>) -> anyhow::Result<u8> {
    let exe = std::env::current_exe().context("cannot find this program's own path")?;
    let dir = exe.parent().context("this program's path has no folder")?;
    let release = dir.join(RELEASE_BIN);
    if !release.is_file() {
        anyhow::bail!(
            "`{verb}` is a maintainer verb of {RELEASE_BIN}, which is not beside this program in {}: build it from the project (cargo build --release --workspace, or bash scripts/build-static.sh) and run it from there",
            dir.display()
        );
    }
    let err = std::process::Command::new(&release).arg(verb).args(args).exec();
    Err(err).with_context(|| format!("cannot run {}", release.display()))
}
