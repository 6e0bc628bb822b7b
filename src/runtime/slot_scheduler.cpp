#include "runtime/slot_scheduler.h"

#include <algorithm>

#include "core/log.h"
#include "runtime/sequence.h"

namespace cohort::runtime {

struct SlotScheduler::Active {
  Active(Pending* p, int64_t s, int64_t n_vocab, int64_t n_ctx,
         const std::function<bool(int32_t)>& eog)
      : pending(p),
        slot(s),
        sampler(p->job.sampling, static_cast<int32_t>(n_vocab)),
        seq(static_cast<int64_t>(p->job.prompt.size()), p->job.n_predict, n_ctx, sampler,
            p->job.on_token, eog) {}
  const std::vector<int32_t>& prompt() const { return pending->job.prompt; }
  Pending* pending;
  int64_t slot;
  text::Sampler sampler;
  Sequence seq;
  int64_t prefilled = 0;        // prompt tokens submitted to the slot so far
  std::vector<int32_t> cached;  // the tokens submitted to the slot, from position 0
};

namespace {

int64_t common_prefix(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  const auto diff = std::mismatch(a.begin(), a.begin() + std::min(a.size(), b.size()), b.begin());
  return diff.first - a.begin();
}

}  // namespace

SlotScheduler::SlotScheduler(Stepper& stepper, std::function<bool(int32_t)> eog)
    : stepper_(stepper),
      eog_(std::move(eog)),
      slot_tokens_(static_cast<size_t>(stepper.n_slots())),
      logits_(static_cast<size_t>(stepper.n_slots() * stepper.n_vocab())) {
  // Slot 0 first, so a lone request runs where `cohort run` would.
  for (int64_t s = stepper_.n_slots() - 1; s >= 0; --s) free_slots_.push_back(s);
  entries_.reserve(static_cast<size_t>(stepper_.n_slots()));
  decode_tokens_.reserve(static_cast<size_t>(stepper_.n_slots()));
  thread_ = std::thread([this] { loop(); });
}

SlotScheduler::~SlotScheduler() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

Status SlotScheduler::run(GenerationJob job) {
  Pending p{std::move(job), {}};
  std::future<Status> done = p.done.get_future();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return Status::unavailable("engine: stopping");
    queue_.push_back(&p);
  }
  cv_.notify_all();
  return done.get();
}

Status SlotScheduler::embed(EmbeddingJob job) {
  PendingEmbedding e{std::move(job), {}};
  std::future<Status> done = e.done.get_future();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return Status::unavailable("engine: stopping");
    embed_queue_.push_back(&e);
  }
  cv_.notify_all();
  return done.get();
}

Status SlotScheduler::run_embedding(PendingEmbedding* e) {
  const std::vector<int32_t>& tokens = e->job.tokens;
  const int64_t n_tokens = static_cast<int64_t>(tokens.size());
  if (stepper_.n_embd() <= 0) {
    e->done.set_value(Status::unsupported("embed: this model gives no hidden states"));
    return Status::ok();
  }
  if (n_tokens == 0 || n_tokens > stepper_.n_ctx()) {
    e->done.set_value(Status::out_of_range("embed: " + std::to_string(n_tokens) +
                                           " tokens; the context holds " +
                                           std::to_string(stepper_.n_ctx())));
    return Status::ok();
  }
  // The free slot that admit() would pick last, so cached chat prefixes are kept longest.
  const int64_t slot = free_slots_.front();
  std::vector<int32_t>& cached = slot_tokens_[static_cast<size_t>(slot)];
  cached.clear();
  const int64_t dim = stepper_.n_embd();
  hidden_.resize(static_cast<size_t>(stepper_.max_batch() * dim));
  for (int64_t pos = 0; pos < n_tokens;) {
    const int64_t n = std::min(stepper_.max_batch(), n_tokens - pos);
    const Status s = stepper_.step_hidden(slot, tokens.data() + pos, n, pos, hidden_.data());
    if (!s.is_ok()) {
      e->done.set_value(s);
      return s;
    }
    e->job.on_rows(hidden_.data(), n);
    pos += n;
  }
  cached = tokens;
  e->done.set_value(Status::ok());  // last: the caller's job may go away now
  return Status::ok();
}

void SlotScheduler::finish(Active* a, const Status& s) {
  free_slots_.push_back(a->slot);
  slot_tokens_[static_cast<size_t>(a->slot)] = std::move(a->cached);
  Pending* p = a->pending;
  auto it = std::find_if(active_.begin(), active_.end(),
                         [a](const std::unique_ptr<Active>& x) { return x.get() == a; });
  active_.erase(it);
  p->done.set_value(s);  // last: the caller's job (and p itself) may go away now
}

void SlotScheduler::fail_all(const Status& s) {
  stepper_.abandon();
  prefilling_.clear();
  ready_.clear();
  in_flight_.clear();
  while (!active_.empty()) finish(active_.back().get(), s);
  for (auto& t : slot_tokens_) t.clear();  // the slots' contents are unspecified now
}

void SlotScheduler::admit(Pending* p) {
  const std::vector<int32_t>& prompt = p->job.prompt;
  size_t best = free_slots_.size() - 1;  // ties: the slot that would come first anyway
  int64_t best_len = -1;
  for (size_t i = free_slots_.size(); i-- > 0;) {
    const int64_t len = common_prefix(slot_tokens_[static_cast<size_t>(free_slots_[i])], prompt);
    if (len > best_len) {
      best = i;
      best_len = len;
    }
  }
  const int64_t slot = free_slots_[best];
  free_slots_.erase(free_slots_.begin() + static_cast<std::ptrdiff_t>(best));
  active_.push_back(std::make_unique<Active>(p, slot, stepper_.n_vocab(), stepper_.n_ctx(), eog_));
  Active* a = active_.back().get();
  const int64_t n_prompt = static_cast<int64_t>(prompt.size());
  if (n_prompt == 0) {
    finish(a, Status::invalid_argument("generate: empty prompt"));
    return;
  }
  if (n_prompt > stepper_.n_ctx()) {
    finish(a, Status::out_of_range("generate: prompt of " + std::to_string(n_prompt) +
                                   " tokens exceeds the context of " +
                                   std::to_string(stepper_.n_ctx())));
    return;
  }
  // Keep the shared prefix, but run at least the last prompt token: its logits are needed.
  a->prefilled = std::min(best_len, n_prompt - 1);
  a->cached = std::move(slot_tokens_[static_cast<size_t>(slot)]);
  a->cached.resize(static_cast<size_t>(a->prefilled));
  if (p->job.n_predict < 1) {
    finish(a, Status::ok());
    return;
  }
  for (int32_t id : prompt) a->sampler.accept(id);
  prefilling_.push_back(a);
}

Status SlotScheduler::submit_batch() {
  entries_.clear();
  decode_tokens_.clear();
  std::vector<Active*> batch;
  // Spread the decoding slots over the free places of the pipeline.
  const int64_t places = stepper_.max_in_flight() - static_cast<int64_t>(in_flight_.size());
  const int64_t ready = static_cast<int64_t>(ready_.size());
  int64_t rows_left = stepper_.max_batch();
  int64_t n_decode = std::min((ready + places - 1) / places, rows_left);
  for (; n_decode > 0; --n_decode, --rows_left) {
    Active* a = ready_.front();
    ready_.pop_front();
    decode_tokens_.push_back(a->seq.next_token());
    a->cached.push_back(a->seq.next_token());
    entries_.push_back({a->slot, nullptr, 1, a->seq.feed_pos()});
    batch.push_back(a);
  }
  for (size_t i = 0; i < entries_.size(); ++i) entries_[i].tokens = &decode_tokens_[i];
  // Prompt chunks fill the rows left, in admission order.
  while (rows_left > 0 && !prefilling_.empty()) {
    Active* a = prefilling_.front();
    prefilling_.pop_front();
    const std::vector<int32_t>& prompt = a->prompt();
    const int64_t n = std::min(rows_left, static_cast<int64_t>(prompt.size()) - a->prefilled);
    entries_.push_back({a->slot, prompt.data() + a->prefilled, n, a->prefilled});
    a->cached.insert(a->cached.end(), prompt.begin() + a->prefilled,
                     prompt.begin() + a->prefilled + n);
    a->prefilled += n;
    rows_left -= n;
    batch.push_back(a);
  }
  in_flight_.push_back(std::move(batch));  // first: an error below ends these jobs too
  return stepper_.submit_batch(entries_);
}

Status SlotScheduler::collect_batch() {
  std::vector<Active*> batch = std::move(in_flight_.front());
  in_flight_.pop_front();
  COHORT_RETURN_IF_ERROR(
      stepper_.collect_batch(static_cast<int64_t>(batch.size()), logits_.data()));
  for (size_t i = 0; i < batch.size(); ++i) {
    Active* a = batch[i];
    if (a->prefilled < static_cast<int64_t>(a->prompt().size())) {
      prefilling_.push_back(a);  // more of the prompt to go; these logits are not needed
    } else if (a->seq.advance(&logits_[i * static_cast<size_t>(stepper_.n_vocab())])) {
      ready_.push_back(a);
    } else {
      finish(a, Status::ok());
    }
  }
  return Status::ok();
}

Status SlotScheduler::turn(const std::vector<PendingEmbedding*>& embeddings,
                           const std::vector<Pending*>& admitted) {
  for (size_t i = 0; i < embeddings.size(); ++i) {
    const Status s = run_embedding(embeddings[i]);
    if (!s.is_ok()) {
      // The stepper broke: the embeddings taken with this one end with its error too.
      for (size_t j = i + 1; j < embeddings.size(); ++j) embeddings[j]->done.set_value(s);
      for (Pending* p : admitted) p->done.set_value(s);
      return s;
    }
  }
  for (Pending* p : admitted) admit(p);
  while (static_cast<int64_t>(in_flight_.size()) < stepper_.max_in_flight() &&
         (!ready_.empty() || !prefilling_.empty())) {
    COHORT_RETURN_IF_ERROR(submit_batch());
  }
  if (in_flight_.empty()) return Status::ok();
  return collect_batch();
}

void SlotScheduler::relocate() {
  const Status s = stepper_.relocate();
  if (!s.is_ok()) COHORT_LOG_WARN("engine: moving the model: %s", s.message().c_str());
  for (auto& t : slot_tokens_) t.clear();  // the slots' contents are gone
}

void SlotScheduler::loop() {
  for (;;) {
    std::vector<Pending*> admitted;
    std::vector<PendingEmbedding*> embeddings;
    bool moving = false;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] {
        // While the stepper wants to move, nothing new starts: the running jobs drain, and
        // the next job queued finds it moved.
        moving = stepper_.wants_relocation();
        const bool queued = !queue_.empty() || !embed_queue_.empty();
        return stop_ || (moving ? active_.empty() && queued : queued && !free_slots_.empty()) ||
               !ready_.empty() || !prefilling_.empty() || !in_flight_.empty();
      });
      if (stop_) break;
      // Embeddings run one after another on one free slot, kept from this turn's admissions.
      size_t slots_left = moving ? 0 : free_slots_.size();
      if (slots_left > 0 && !embed_queue_.empty()) {
        embeddings.assign(embed_queue_.begin(), embed_queue_.end());
        embed_queue_.clear();
        --slots_left;
      }
      while (!queue_.empty() && admitted.size() < slots_left) {
        admitted.push_back(queue_.front());
        queue_.pop_front();
      }
    }
    if (moving && active_.empty()) {
      relocate();
      continue;
    }
    Status s = turn(embeddings, admitted);
    if (!s.is_ok()) fail_all(s);
  }
  fail_all(Status::unavailable("engine: stopped"));
  std::lock_guard<std::mutex> lock(mu_);
  for (Pending* p : queue_) p->done.set_value(Status::unavailable("engine: stopped"));
  queue_.clear();
  for (PendingEmbedding* e : embed_queue_)
    e->done.set_value(Status::unavailable("engine: stopped"));
  embed_queue_.clear();
}

}  // namespace cohort::runtime
