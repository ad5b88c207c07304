use clap::Parser;

/// The explorer clones small graphs at every branch: mimalloc makes that markedly cheaper
/// than the system allocator.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let cli = match fensyn::cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            // `--help` and `--version` succeed; a usage error is an input error (exit code 3:
            // clap's own 2 means "not fixable" here).
            std::process::exit(if e.use_stderr() {
                fensyn::cli::EXIT_INPUT
            } else {
                0
            });
        }
    };
    std::process::exit(fensyn::cli::run(cli));
}
