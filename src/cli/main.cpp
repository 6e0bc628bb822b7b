// cohort: one binary, subcommands. Exit codes: 0 success, 1 runtime failure, 2 usage error.
#include <cstdio>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"cohort: pool machines into one LLM inference cluster"};
  app.require_subcommand(1);
  cohort::cli::Runner run;
  cohort::cli::add_run_command(app, &run);
  cohort::cli::add_inspect_command(app, &run);
  cohort::cli::add_synth_command(app, &run);
  cohort::cli::add_template_command(app, &run);
  cohort::cli::add_worker_command(app, &run);
  cohort::cli::add_key_command(app, &run);
  cohort::cli::add_serve_command(app, &run);
  cohort::cli::add_demo_command(app, &run);
  cohort::cli::add_tokenize_command(app, &run);
  cohort::cli::add_bench_command(app, &run);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 prints the message (or the help); its own codes are folded into "usage error".
    return app.exit(e) == 0 ? 0 : 2;
  }
  return run ? run() : 2;
}
