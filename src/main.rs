use clap::Parser;

/// The explorer clones small graphs at every branch: mimalloc makes that markedly cheaper
/// than the system allocator.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let cli = fensyn::cli::Cli::parse();
    std::process::exit(fensyn::cli::run(cli));
}
