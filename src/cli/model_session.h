// Everything `cohort run` and `cohort serve` need to generate: the opened model file, its
// tokenizer, and a Stepper that runs it on this node or across a cluster. The flags that
// choose those are registered once here for both commands.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <optional>
#include <string>

#include "comm/communicator.h"
#include "core/status.h"
#include "core/thread_pool.h"
#include "format/gguf.h"
#include "model/hparams.h"
#include "model/kv_cache.h"
#include "model/transformer.h"
#include "runtime/cluster_session.h"
#include "runtime/event_log.h"
#include "runtime/mpi_session.h"
#include "runtime/replacing_stepper.h"
#include "runtime/stepper.h"
#include "text/tokenizer.h"

namespace cohort::cli {

struct ModelFlags {
  std::string model_path;
  std::string tokenizer_path;
  int threads = 0;
  int64_t ctx = 0;
  std::string kv_type = "f16";
  bool huge_pages = false;  // copy the model into huge-page memory (core/mapped_file.h)
  int64_t batch = 64;
  int64_t slots = 1;  // sequence slots (`cohort serve` defaults to 4)
  // Cluster: empty workers = this node alone.
  std::string workers;
  std::string parallel = "auto";
  std::string transport = "tcp";
  std::string key_file;
  bool encrypt = false;  // seal every cluster connection (net/secure_channel.h)
  int64_t link_delay_us = 0;
  std::string bind_host = "127.0.0.1";
  std::string ship_weights = "auto";
  std::string balance = "measured";
  std::string discovery = "239.255.77.77:52416";
};

// Registers -m, --tokenizer, -t, -c, --kv-type, -b, --slots and the cluster flags on cmd;
// each flag's default is the value *flags holds.
void add_model_flags(CLI::App* cmd, ModelFlags* flags);

struct ModelSession {
  std::unique_ptr<format::GgufFile> file;
  std::unique_ptr<text::Tokenizer> tokenizer;
  model::HParams hparams;
  int64_t n_ctx = 0;
  std::unique_ptr<ThreadPool> pool;
  std::unique_ptr<comm::Communicator> local_comm;
  std::unique_ptr<model::Transformer> local_model;
  std::vector<model::KvCache> local_kvs;  // one per slot
  std::unique_ptr<runtime::Stepper> local_stepper;
  // Set when running on workers: the cluster, placed again when it loses a node.
  std::unique_ptr<runtime::ReplacingStepper> cluster;
  std::unique_ptr<runtime::MpiSession> mpi;  // set with --transport mpi
  // An MPI rank other than 0: it has already served its steps (mpi_served says how it
  // ended) and the command should exit with that, printing nothing else.
  bool mpi_worker = false;
  Status mpi_served;
  runtime::Stepper* stepper = nullptr;
};

// Opens the model and builds the stepper (starting the cluster when --workers is given).
// Logs what it did; errors are ready to print. Cluster events (a node lost, placed again,
// a key refused, a slow link) go to events when given; it must outlive the session.
Result<std::unique_ptr<ModelSession>> open_model_session(const ModelFlags& flags,
                                                         runtime::EventLog* events = nullptr);

}  // namespace cohort::cli
