// Runs a placement plan's ranks as threads of this process over an in-process group: every
// rank loads its shard of the model with n_slots KV caches; ranks 1.. serve steps while rank
// 0 runs `head` on its ClusterStepper, then stops them. For tests of the stage protocol
// independent of any network transport.
#pragma once

#include <functional>
#include <thread>
#include <vector>

#include "cluster/planner.h"
#include "comm/in_process_group.h"
#include "comm/subgroup.h"
#include "core/thread_pool.h"
#include "format/gguf.h"
#include "kernels/kernels.h"
#include "model/transformer.h"
#include "runtime/cluster_stepper.h"

namespace cohort::testing {

inline constexpr int64_t kTestCtx = 256;
inline constexpr int64_t kTestBatch = 8;

struct ClusterHarness {
  // The world group (default: comm::make_in_process_group).
  std::function<std::vector<std::unique_ptr<comm::Communicator>>(int)> make_world;
  int64_t window_bytes = static_cast<int64_t>(comm::kOneStepMaxBytes);
};

// The head's status, or the first failing rank's.
inline Status run_in_process_cluster(const format::GgufFile& f, const cluster::Plan& plan,
                                     int64_t n_slots,
                                     const std::function<Status(runtime::Stepper&)>& head,
                                     const ClusterHarness& harness = {}) {
  const int size = static_cast<int>(plan.ranks.size());
  auto world = harness.make_world ? harness.make_world(size) : comm::make_in_process_group(size);
  std::vector<Status> st(size);
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r) {
    threads.emplace_back([&, r] {
      ThreadPool pool(1);
      const std::vector<int>& stage = plan.stage_ranks[plan.ranks[r].stage];
      // The stage group: the world (pure tensor), a group of one (pure pipeline), or a
      // subgroup of the world (hybrid).
      std::unique_ptr<comm::Communicator> own;
      comm::Communicator* tp = world[r].get();
      if (stage.size() == 1) {
        own = comm::make_local_communicator();
        tp = own.get();
      } else if (static_cast<int>(stage.size()) != size) {
        auto sub = comm::make_subgroup(*world[r], stage);
        if (!sub.is_ok()) {
          st[r] = sub.status();
          return;
        }
        own = std::move(sub).value();
        tp = own.get();
      }
      auto m = model::Transformer::create(f, plan.ranks[r].shard, *tp, pool, kernels::best(),
                                          kTestBatch);
      if (!m.is_ok()) {
        st[r] = m.status();
        return;
      }
      std::vector<model::KvCache> slots;
      for (int64_t s = 0; s < n_slots; ++s)
        slots.push_back(*(*m)->new_cache(kTestCtx, DType::kF32));
      runtime::ClusterRank cr(plan, r, *world[r], **m, slots, harness.window_bytes);
      if (r != 0) {
        st[r] = cr.serve(20000);
        return;
      }
      runtime::ClusterStepper stepper(cr, **m, slots);
      st[r] = head(stepper);
      Status stop = cr.stop();
      if (st[r].is_ok()) st[r] = stop;
    });
  }
  for (auto& t : threads) t.join();
  Status first = st[0];
  for (const Status& s : st) {
    if (first.is_ok() && !s.is_ok()) first = s;
  }
  return first;
}

}  // namespace cohort::testing
