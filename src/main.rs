use clap::Parser;

fn main() {
    let cli = fensyn::cli::Cli::parse();
    std::process::exit(fensyn::cli::run(cli));
}
