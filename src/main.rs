//! psd2-console: the console (default), the sandbox server, and command-line tools. The
//! commands live in [`cli`], one file each; this file starts the async runtime.

use std::process::ExitCode;

use clap::Parser as _;

mod cli;

/// mimalloc instead of glibc's malloc: allocation was about 13 % of the sandbox's CPU per
/// signed read under load (perf; BENCHMARKS.md, "Everyday reads").
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        // `sandbox serve`'s access-log lines are written in batches, when a worker has
        // nothing left to do (psd2_console::logging::StderrLines).
        .on_thread_park(psd2_console::logging::flush_pending_lines)
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(cli::run(cli));
    drop(runtime);
    psd2_console::logging::flush_pending_lines();
    match result {
        Ok(code) => code,
        Err(e) => {
            cli::say!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
