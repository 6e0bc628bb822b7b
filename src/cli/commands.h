// The `cohort` subcommands. Each registers its flags on the CLI11 app and returns the exit
// code when it runs; flags map to a config struct and nothing else happens in cli/.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace cohort::cli {

// Registers a subcommand; *run is set to the function to call if it was chosen.
using Runner = std::function<int()>;
void add_run_command(CLI::App& app, Runner* run);
void add_inspect_command(CLI::App& app, Runner* run);
void add_synth_command(CLI::App& app, Runner* run);
void add_template_command(CLI::App& app, Runner* run);
void add_worker_command(CLI::App& app, Runner* run);
void add_key_command(CLI::App& app, Runner* run);
void add_serve_command(CLI::App& app, Runner* run);
void add_demo_command(CLI::App& app, Runner* run);
void add_tokenize_command(CLI::App& app, Runner* run);
void add_bench_command(CLI::App& app, Runner* run);
// `bench cluster`, a subcommand of bench (registered by add_bench_command).
void add_bench_cluster_command(CLI::App& bench, Runner* run);

}  // namespace cohort::cli
