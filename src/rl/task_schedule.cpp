// The order in which GRPO takes its tasks (rl/task_schedule.h).
#include "cuset/rl/task_schedule.h"

#include <utility>

#include "cuset/core/error.h"
#include "cuset/core/hash.h"

namespace cuset::rl {

namespace {

uint64_t splitmix64(uint64_t& x) {
    uint64_t z = (x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

}  // namespace

std::vector<size_t> grpo_pass_order(uint64_t seed, size_t n, int64_t pass) {
    std::vector<size_t> p(n);
    for (size_t i = 0; i < n; ++i) p[i] = i;
    uint64_t state = Hasher().add("grpo task order").add_u64(seed).add_u64(static_cast<uint64_t>(pass)).value();
    for (size_t i = n; i > 1; --i) {  // Fisher-Yates; the modulo bias is < n / 2^64
        const size_t j = static_cast<size_t>(splitmix64(state) % i);
        std::swap(p[i - 1], p[j]);
    }
    return p;
}

std::vector<size_t> grpo_step_tasks(uint64_t seed, size_t n, int64_t per_step, int64_t step, int64_t rank,
                                    int64_t world) {
    if (n == 0 || per_step <= 0 || world <= 0 || per_step % world != 0)
        throw UsageError("config error: 'objective.grpo.tasks_per_step' (" + std::to_string(per_step) +
                         ") must be a positive multiple of the number of ranks (" + std::to_string(world) +
                         "): a task's completions never split over ranks");
    const int64_t mine = per_step / world;
    std::vector<size_t> out;
    int64_t cached_pass = -1;
    std::vector<size_t> order;
    for (int64_t j = rank * mine; j < (rank + 1) * mine; ++j) {
        const int64_t pos = step * per_step + j;
        const int64_t pass = pos / static_cast<int64_t>(n);
        if (pass != cached_pass) {
            order = grpo_pass_order(seed, n, pass);
            cached_pass = pass;
        }
        out.push_back(order[static_cast<size_t>(pos % static_cast<int64_t>(n))]);
    }
    return out;
}

TaskSchedule::TaskSchedule(uint64_t seed, size_t n) : seed_(seed), n_(n), order_(grpo_pass_order(seed, n, 0)) {
    if (n == 0) throw UsageError("a task schedule needs at least one task");
}

std::vector<ScheduledTask> TaskSchedule::take(int64_t count) {
    std::vector<ScheduledTask> out;
    for (int64_t i = 0; i < count; ++i) {
        if (pos_ >= n_ + retries_.size()) {  // the pass is used up: the next one
            ++pass_;
            pos_ = 0;
            order_ = grpo_pass_order(seed_, n_, pass_);
            retries_.clear();
            queued_once_.clear();
        }
        out.push_back(pos_ < n_ ? ScheduledTask{order_[pos_], false} : ScheduledTask{retries_[pos_ - n_], true});
        ++pos_;
    }
    return out;
}

bool TaskSchedule::queue_retry(size_t task) {
    if (task >= n_) throw RuntimeFailure("task schedule: task " + std::to_string(task) + " of " + std::to_string(n_));
    if (!queued_once_.insert(task).second) return false;
    retries_.push_back(task);
    return true;
}

nlohmann::json TaskSchedule::to_json() const {
    return {{"tasks", n_}, {"pass", pass_}, {"position", pos_}, {"retries", retries_},
            {"queued", std::vector<size_t>(queued_once_.begin(), queued_once_.end())}};
}

TaskSchedule TaskSchedule::from_json(const nlohmann::json& j, uint64_t seed, size_t n, const std::string& where) {
    auto bad = [&](const std::string& what) {
        throw InputError(where + ": " + what + " (a damaged task schedule; resume from another checkpoint)");
    };
    auto index_list = [&](const char* key) {
        std::vector<size_t> v;
        if (!j.contains(key) || !j[key].is_array()) bad(std::string("\"") + key + "\" must be an array");
        for (const auto& x : j[key]) {
            if (!x.is_number_integer() || x.get<int64_t>() < 0 || x.get<uint64_t>() >= n)
                bad(std::string("\"") + key + "\" holds something other than a task index below " + std::to_string(n));
            v.push_back(x.get<size_t>());
        }
        return v;
    };
    if (!j.is_object()) bad("not a JSON object");
    for (const char* key : {"tasks", "pass", "position"})
        if (!j.contains(key) || !j[key].is_number_integer() || j[key].get<int64_t>() < 0)
            bad(std::string("\"") + key + "\" must be a count");
    if (j["tasks"].get<uint64_t>() != n)
        throw InputError(where + ": a schedule over " + j["tasks"].dump() + " task(s), but the task file holds " +
                         std::to_string(n) + ": resume with the task file that wrote it");
    TaskSchedule s(seed, n);
    s.pass_ = j["pass"].get<int64_t>();
    s.pos_ = j["position"].get<size_t>();
    s.retries_ = index_list("retries");
    const std::vector<size_t> queued = index_list("queued");
    s.queued_once_ = std::set<size_t>(queued.begin(), queued.end());
    if (s.pos_ > n + s.retries_.size()) bad("\"position\" is past the pass's tasks and retries");
    for (size_t t : s.retries_)
        if (!s.queued_once_.count(t)) bad("a retry that is not among the tasks queued in the pass");
    s.order_ = grpo_pass_order(seed, n, s.pass_);
    return s;
}

}  // namespace cuset::rl
