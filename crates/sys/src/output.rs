//! What the binaries print and log: standard output that ends quietly when
//! its reader goes away, and logs on stderr through `tracing`.

/// `println!` for what the verbs print (`output::out`). Binaries take it
/// with `#[macro_use] extern crate agent_sandbox`.
#[macro_export]
macro_rules! outln {
    () => { $crate::output::out(format_args!("\n")) };
    ($($t:tt)*) => { $crate::output::out(format_args!("{}\n", format_args!($($t)*))) };
}

/// `print!`, the same way.
#[macro_export]
macro_rules! out {
    ($($t:tt)*) => { $crate::output::out(format_args!($($t)*)) };
}

/// Writes to stdout: a reader that went away (`| head`) ends the program
/// quietly, as it ends coreutils, instead of a panic. (Not by restoring
/// SIGPIPE: the verbs also write to pipes of their children.)
pub fn out(args: std::fmt::Arguments) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_fmt(args).and_then(|()| stdout.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            // 128 + SIGPIPE: what a shell reports for a writer its reader left.
            std::process::exit(141);
        }
        eprintln!("agent-sandbox: cannot write the output: {e}");
        std::process::exit(1);
    }
}

/// Logs go to stderr. Directive parsing is only paid for when RUST_LOG is
/// set: launch time is a product feature.
pub fn init_logging() {
    use tracing_subscriber::{filter::LevelFilter, EnvFilter};
    let builder = tracing_subscriber::fmt().with_writer(std::io::stderr).without_time();
    let _ = match std::env::var_os(crate::env_vars::RUST_LOG) {
        Some(_) => builder.with_env_filter(EnvFilter::from_default_env()).try_init(),
        None => builder.with_max_level(LevelFilter::WARN).try_init(),
    };
}
