// Augmenting-path assignment for the spatial matcher (see the header).
#include "rholang/frontend/internal/bipartite_match.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>
#include <utility>

#include "util/status_macros.h"

namespace rnode::rholang::internal {
namespace {

class Assigner {
 public:
  Assigner(const AssignmentProblem& problem, EdgeOracle edge, StepCharger step)
      : p_(problem), edge_(edge), step_(step) {
    if (p_.row_keys.empty()) return;
    // Keyed rows see only the targets with their key, in target order.
    std::vector<std::pair<const Hash32*, size_t>> sorted;
    sorted.reserve(p_.target_keys.size());
    for (size_t j = 0; j < p_.target_keys.size(); ++j) {
      sorted.emplace_back(&p_.target_keys[j], j);
    }
    auto less = [](const std::pair<const Hash32*, size_t>& a,
                   const std::pair<const Hash32*, size_t>& b) {
      int c = std::memcmp(a.first->data(), b.first->data(), a.first->size());
      return c != 0 ? c < 0 : a.second < b.second;
    };
    std::sort(sorted.begin(), sorted.end(), less);
    keyed_candidates_.resize(p_.rows);
    for (size_t i = 0; i < p_.rows; ++i) {
      if (!p_.row_keys[i].has_value()) continue;
      const Hash32& key = *p_.row_keys[i];
      auto it = std::lower_bound(sorted.begin(), sorted.end(),
                                 std::make_pair(&key, size_t{0}), less);
      std::vector<size_t>& out = keyed_candidates_[i];
      for (; it != sorted.end() && *it->first == key; ++it) {
        out.push_back(it->second);
      }
    }
  }

  absl::StatusOr<std::optional<std::vector<int32_t>>> Run() {
    using Result = std::optional<std::vector<int32_t>>;
    if (p_.rows + p_.slots > p_.targets) return Result();
    ASSIGN_OR_RETURN(bool ok, Pass(/*complete=*/false));
    if (!ok) {
      ASSIGN_OR_RETURN(ok, Pass(/*complete=*/true));
    }
    if (!ok) return Result();
    return Result(std::move(owner_));
  }

 private:
  // A claimant looking for a target: `pos` is the next position in its
  // candidate list; `pending` is the target it will take once the claimant
  // it displaced (the next frame) has moved.
  struct Frame {
    int32_t row;
    size_t pos;
    size_t pending = 0;
    size_t pending_pos = 0;
  };

  static constexpr std::vector<size_t>* kAllTargets = nullptr;

  // The targets row `row` may take, in target order; nullptr for all.
  const std::vector<size_t>* Candidates(int32_t row) const {
    if (row < 0 || p_.row_keys.empty() || !p_.row_keys[row].has_value()) {
      return kAllTargets;
    }
    return &keyed_candidates_[row];
  }

  absl::StatusOr<bool> Edge(int32_t row, size_t j) {
    if (row == kSlotOwner) return static_cast<bool>(p_.closed[j]);
    uint64_t key = static_cast<uint64_t>(row) * p_.targets + j;
    auto it = memo_.find(key);
    if (it != memo_.end()) return it->second;
    ASSIGN_OR_RETURN(bool ok, edge_(static_cast<size_t>(row), j));
    memo_.emplace(key, ok);
    return ok;
  }

  void Claim(int32_t row, size_t j, size_t pos) {
    owner_[j] = row;
    if (row >= 0) held_pos_[row] = pos;
  }

  absl::StatusOr<bool> Pass(bool complete) {
    owner_.assign(p_.targets, kUnassigned);
    held_pos_.assign(p_.rows, 0);
    seen_.assign(p_.targets, 0);
    epoch_ = 0;
    size_t placed = 0;
    for (size_t j = 0; j < p_.targets && placed < p_.slots; ++j) {
      RETURN_IF_ERROR(step_());
      if (p_.closed[j]) {
        owner_[j] = kSlotOwner;
        ++placed;
      }
    }
    if (placed < p_.slots) return false;
    for (size_t row = 0; row < p_.rows; ++row) {
      ASSIGN_OR_RETURN(bool ok, Augment(static_cast<int32_t>(row), complete));
      if (!ok) return false;
    }
    return true;
  }

  // Finds a target for `row` (which holds none), moving earlier claimants.
  absl::StatusOr<bool> Augment(int32_t row, bool complete) {
    ++epoch_;
    std::vector<Frame> stack;
    stack.push_back({row, 0});
    while (!stack.empty()) {
      const size_t depth = stack.size() - 1;
      const std::vector<size_t>* list = Candidates(stack[depth].row);
      const size_t n = list == kAllTargets ? p_.targets : list->size();
      bool descended = false;
      while (stack[depth].pos < n) {
        Frame& f = stack[depth];
        const size_t pos = f.pos++;
        const size_t j = list == kAllTargets ? pos : (*list)[pos];
        RETURN_IF_ERROR(step_());
        if (seen_[j] == epoch_) continue;
        ASSIGN_OR_RETURN(bool ok, Edge(f.row, j));
        if (!ok) continue;
        seen_[j] = epoch_;
        const int32_t holder = owner_[j];
        if (holder == kUnassigned) {
          Claim(f.row, j, pos);
          for (size_t d = depth; d-- > 0;) {
            Claim(stack[d].row, stack[d].pending, stack[d].pending_pos);
          }
          return true;
        }
        // Slots are interchangeable: a slot displacing a slot is the same
        // slot looking further on.
        if (holder == kSlotOwner && f.row == kSlotOwner) continue;
        f.pending = j;
        f.pending_pos = pos;
        size_t from = 0;
        if (!complete) from = holder == kSlotOwner ? j : held_pos_[holder];
        stack.push_back({holder, from});
        descended = true;
        break;
      }
      if (!descended) stack.pop_back();
    }
    return false;
  }

  const AssignmentProblem& p_;
  EdgeOracle edge_;
  StepCharger step_;
  std::vector<std::vector<size_t>> keyed_candidates_;  // per keyed row
  std::unordered_map<uint64_t, bool> memo_;
  std::vector<int32_t> owner_;
  std::vector<size_t> held_pos_;
  std::vector<uint32_t> seen_;
  uint32_t epoch_ = 0;
};

}  // namespace

absl::StatusOr<std::optional<std::vector<int32_t>>> AssignTargets(
    const AssignmentProblem& problem, EdgeOracle edge, StepCharger step) {
  using Result = std::optional<std::vector<int32_t>>;
  if (problem.rows == 1 && problem.targets == 1 && problem.slots == 0) {
    // The commonest case, without the search state.
    RETURN_IF_ERROR(step());
    if (!problem.row_keys.empty() && problem.row_keys[0].has_value() &&
        *problem.row_keys[0] != problem.target_keys[0]) {
      return Result();
    }
    ASSIGN_OR_RETURN(bool ok, edge(0, 0));
    return ok ? Result(std::vector<int32_t>{0}) : Result();
  }
  Assigner assigner(problem, edge, step);
  return assigner.Run();
}

}  // namespace rnode::rholang::internal
