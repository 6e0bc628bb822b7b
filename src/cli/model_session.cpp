#include "cli/model_session.h"

#include "cli/model_source.h"
#include "core/clock.h"
#include "core/log.h"
#include "kernels/kernels.h"

namespace cohort::cli {
namespace {

// "auto" -> discover; "h:p,h:p" -> that list.
Result<runtime::ClusterOptions> cluster_options(const ModelFlags& f, int64_t n_ctx, DType kv_type) {
  runtime::ClusterOptions o;
  o.model_path = f.model_path;
  if (f.workers != "auto") {
    size_t at = 0;
    for (;;) {
      const size_t comma = f.workers.find(',', at);
      const std::string item =
          f.workers.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
      if (!item.empty()) {
        COHORT_ASSIGN_OR_RETURN(net::HostPort hp, net::parse_host_port(item));
        o.workers.push_back(hp);
      }
      if (comma == std::string::npos) break;
      at = comma + 1;
    }
  }
  COHORT_ASSIGN_OR_RETURN(o.plan.mode, cluster::parse_parallel_mode(f.parallel));
  if (f.key_file.empty()) {
    return Status::invalid_argument(
        "cluster: --workers needs --key-file (make one with `cohort key new > cluster.key`)");
  }
  COHORT_ASSIGN_OR_RETURN(o.key, net::load_key_file(f.key_file));
  o.key.encrypt_traffic = f.encrypt;
  o.transport = f.transport;
  o.link_delay_us = f.link_delay_us;
  o.ship_always = f.ship_weights == "always";
  o.plan.even_shares = f.balance == "even";
  COHORT_ASSIGN_OR_RETURN(o.multicast_group, net::parse_host_port(f.discovery));
  o.threads = f.threads;
  o.n_ctx = n_ctx;
  o.max_batch = f.batch;
  o.n_slots = f.slots;
  o.kv_type = kv_type;
  o.bind_host = f.bind_host;
  return o;
}

}  // namespace

void add_model_flags(CLI::App* cmd, ModelFlags* f) {
  cmd->add_option("-m,--model", f->model_path, "GGUF file or llama2.c checkpoint")->required();
  cmd->add_option("--tokenizer", f->tokenizer_path,
                  "llama2.c tokenizer file (for .bin checkpoints)");
  cmd->add_option("-t,--threads", f->threads, "Compute threads (default: all cores)")
      ->check(CLI::Range(0, 1024));
  cmd->add_option("-c,--ctx", f->ctx, "Context length cap (default: min(trained, 4096))")
      ->check(CLI::Range(0, 1 << 24));
  cmd->add_option("--kv-type,--cache-type", f->kv_type,
                  "KV cache type: f16, f32 or q8_0 (about half the bytes of f16)")
      ->check(CLI::IsMember({"f16", "f32", "q8_0"}));
  cmd->add_option("-b,--batch", f->batch, "Prompt tokens per forward step")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--slots", f->slots, "Sequence slots: requests decoded at once (a KV cache each)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  cmd->add_option("--workers", f->workers, "Run on a cluster: 'auto' (discover) or host:port,...");
  cmd->add_option("--parallel", f->parallel,
                  "auto | pipeline | tensor | hybrid | expert (MoE: whole experts per node)")
      ->check(CLI::IsMember({"auto", "pipeline", "tensor", "hybrid", "expert"}));
  cmd->add_option("--transport", f->transport,
                  "Data plane: tcp | shm (ranks on one host) | mpi (under mpirun; no --workers)")
      ->check(CLI::IsMember({"tcp", "shm", "mpi"}));
  cmd->add_option("--key-file", f->key_file, "Cluster key file (from `cohort key new`)");
  cmd->add_flag("--huge-pages", f->huge_pages,
                "Copy the model into memory backed by 2 MiB pages instead of mapping the file: "
                "faster decode (fewer TLB misses), the file's size in private memory");
  cmd->add_flag("--encrypt", f->encrypt,
                "Encrypt and authenticate all tcp cluster traffic (every worker needs "
                "--encrypt too)");
  cmd->add_option("--link-delay-us", f->link_delay_us,
                  "Extra one-way latency per message (experiments)")
      ->check(CLI::Range(0, 10'000'000));
  cmd->add_option("--bind", f->bind_host, "The head's data-plane address");
  cmd->add_option("--ship-weights", f->ship_weights,
                  "auto: ship shards to workers that lack the model; always: to every worker")
      ->check(CLI::IsMember({"auto", "always"}));
  cmd->add_option("--balance", f->balance,
                  "measured: share work by measured speed x free memory; even: equal shares")
      ->check(CLI::IsMember({"measured", "even"}));
  cmd->add_option("--multicast", f->discovery,
                  "Discovery group:port for --workers auto (workers' --peers send here too)");
}

Result<std::unique_ptr<ModelSession>> open_model_session(const ModelFlags& f,
                                                         runtime::EventLog* events) {
  const double t0 = now_s();
  auto ms = std::make_unique<ModelSession>();
  COHORT_ASSIGN_OR_RETURN(format::GgufFile file,
                          open_model(f.model_path, f.tokenizer_path, f.huge_pages));
  ms->file = std::make_unique<format::GgufFile>(std::move(file));
  COHORT_ASSIGN_OR_RETURN(ms->tokenizer, text::Tokenizer::from_gguf(*ms->file));
  COHORT_ASSIGN_OR_RETURN(ms->hparams, model::HParams::from_gguf(*ms->file));
  // Context: the model's trained length, capped at 4096 unless -c asks for more or less.
  ms->n_ctx = std::min<int64_t>(ms->hparams.n_ctx_train, 4096);
  if (f.ctx > 0) ms->n_ctx = std::min<int64_t>(f.ctx, ms->hparams.n_ctx_train);
  const DType kv_type = *dtype_from_name(f.kv_type);  // one of the names the flag accepts
  if (f.encrypt && f.workers.empty()) {
    return Status::invalid_argument(
        "--encrypt seals the connections between cluster nodes: it needs --workers (a single "
        "node and MPI ranks have none)");
  }
  if (f.transport == "mpi") {
    // Every rank of the MPI world runs this; rank 0 goes on as the head, the others serve
    // steps here until it stops them.
    if (!runtime::mpi_available()) {
      return Status::unsupported(
          "--transport mpi: this build has no MPI (install Open MPI and "
          "rebuild)");
    }
    if (!runtime::mpi_launched()) {
      return Status::invalid_argument(
          "--transport mpi: start under mpirun, e.g. `mpirun -np 2 cohort serve -m MODEL "
          "--transport mpi`");
    }
    if (!f.workers.empty()) {
      return Status::invalid_argument("--transport mpi: the MPI world replaces --workers");
    }
    runtime::MpiSessionOptions mo;
    COHORT_ASSIGN_OR_RETURN(mo.plan.mode, cluster::parse_parallel_mode(f.parallel));
    mo.plan.even_shares = f.balance == "even";
    mo.threads = f.threads;
    mo.n_ctx = ms->n_ctx;
    mo.max_batch = f.batch;
    mo.n_slots = f.slots;
    mo.plan.n_slots = f.slots;
    mo.kv_type = kv_type;
    mo.link_delay_us = f.link_delay_us;
    COHORT_ASSIGN_OR_RETURN(ms->mpi, runtime::MpiSession::start(mo, *ms->file));
    if (!ms->mpi->is_head()) {
      ms->mpi_served = ms->mpi->serve();
      ms->mpi_worker = true;
      return ms;
    }
    std::fprintf(stderr, "%s\n", ms->mpi->status_report().c_str());
    ms->stepper = &ms->mpi->stepper();
  } else if (!f.workers.empty()) {
    COHORT_ASSIGN_OR_RETURN(runtime::ClusterOptions opts, cluster_options(f, ms->n_ctx, kv_type));
    opts.events = events;
    COHORT_ASSIGN_OR_RETURN(auto first, runtime::ClusterSession::start(opts, *ms->file));
    std::fprintf(stderr, "%s", first->status_report().c_str());
    const format::GgufFile* model_file = ms->file.get();
    ms->cluster = std::make_unique<runtime::ReplacingStepper>(
        [opts, model_file](const std::vector<net::HostPort>& excluded) {
          runtime::ClusterOptions o = opts;
          o.excluded = excluded;
          return runtime::ClusterSession::start(o, *model_file);
        },
        std::move(first), /*retry_interval_s=*/2.0, events);
    ms->stepper = ms->cluster.get();
  } else {
    ms->pool = std::make_unique<ThreadPool>(f.threads);
    ms->local_comm = comm::make_local_communicator();
    COHORT_ASSIGN_OR_RETURN(
        ms->local_model,
        model::Transformer::create(*ms->file, model::ShardSpec::whole(ms->hparams), *ms->local_comm,
                                   *ms->pool, kernels::best(), f.batch));
    for (int64_t s = 0; s < f.slots; ++s) {
      COHORT_ASSIGN_OR_RETURN(model::KvCache kv, ms->local_model->new_cache(ms->n_ctx, kv_type));
      ms->local_kvs.push_back(std::move(kv));
    }
    ms->local_stepper = std::make_unique<runtime::LocalStepper>(*ms->local_model, ms->local_kvs);
    ms->stepper = ms->local_stepper.get();
  }
  COHORT_LOG_INFO("model: %s: %s; %s kernels, ctx %lld x %lld slots (%s KV), %s, ready in %.2f s",
                  ms->file->name().c_str(), ms->hparams.summary().c_str(), kernels::best().isa,
                  static_cast<long long>(ms->n_ctx), static_cast<long long>(f.slots),
                  f.kv_type.c_str(), ms->cluster || ms->mpi ? "on the cluster" : "on this node",
                  now_s() - t0);
  return ms;
}

}  // namespace cohort::cli
