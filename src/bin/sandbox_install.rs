fn main() { eprintln!("sandbox-install: not built yet"); std::process::exit(1) }
