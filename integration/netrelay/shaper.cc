// Links-file rules and per-link shaping (shaper.h).
#include "integration/netrelay/shaper.h"

#include <algorithm>
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "util/string_view.h"

namespace rnode::netrelay {
namespace {

absl::Status LineError(size_t line, std::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("links file, line ", line, ": ", std::string(what)));
}

// "MS" (a decimal number of milliseconds) in microseconds, within [0, max].
std::optional<int64_t> Millis(std::string_view text, int64_t max_us) {
  double ms = 0;
  if (!absl::SimpleAtod(AbslView(text), &ms) || !std::isfinite(ms) || ms < 0) {
    return std::nullopt;
  }
  const double us = ms * 1000;
  if (us > static_cast<double>(max_us)) return std::nullopt;
  return static_cast<int64_t>(std::llround(us));
}

absl::Status ParseField(size_t line, std::string_view field, LinkRule* rule) {
  if (field == "cut") {
    rule->cut = true;
    return absl::OkStatus();
  }
  if (field == "up") {
    rule->cut = false;
    return absl::OkStatus();
  }
  const size_t eq = field.find('=');
  if (eq == std::string_view::npos) {
    return LineError(line, absl::StrCat("unknown word '", std::string(field),
                                        "' (delay=, jitter=, loss=, rate=, "
                                        "cut or up)"));
  }
  const std::string_view name = field.substr(0, eq);
  const std::string_view value = field.substr(eq + 1);
  if (name == "delay" || name == "jitter") {
    const std::optional<int64_t> us = Millis(value, kMaxDelayUs);
    if (!us) {
      return LineError(
          line, absl::StrCat(std::string(name), " must be milliseconds in [0, ",
                             kMaxDelayUs / 1000, "]"));
    }
    (name == "delay" ? rule->delay_us : rule->jitter_us) = *us;
    return absl::OkStatus();
  }
  if (name == "loss") {
    double pct = 0;
    if (!absl::SimpleAtod(AbslView(value), &pct) || !std::isfinite(pct) ||
        pct < 0 || pct > 100) {
      return LineError(line, "loss must be a percentage in [0, 100]");
    }
    rule->loss = pct / 100;
    return absl::OkStatus();
  }
  if (name == "rate") {
    int64_t kbit = 0;
    if (!absl::SimpleAtoi(AbslView(value), &kbit) || kbit < 0 ||
        (kbit != 0 && kbit * 1000 < kMinRateBps) || kbit > 100'000'000) {
      return LineError(line, absl::StrCat("rate must be kbit/s: 0 (no limit) "
                                          "or in [",
                                          kMinRateBps / 1000, ", 100000000]"));
    }
    rule->rate_bps = kbit * 1000;
    return absl::OkStatus();
  }
  return LineError(line,
                   absl::StrCat("unknown field '", std::string(name), "'"));
}

}  // namespace

absl::StatusOr<std::vector<LinkRule>> ParseLinks(std::string_view text) {
  std::vector<LinkRule> rules;
  size_t number = 0;
  for (absl::string_view line : absl::StrSplit(AbslView(text), '\n')) {
    ++number;
    line = line.substr(0, line.find('#'));
    std::vector<std::string_view> words;
    for (absl::string_view w :
         absl::StrSplit(line, absl::ByAnyChar(" \t\r"), absl::SkipEmpty())) {
      words.emplace_back(w.data(), w.size());
    }
    if (words.empty()) continue;
    if (words.size() < 2) {
      return LineError(number, "a rule starts with <from> <to>");
    }
    LinkRule rule;
    rule.from = std::string(words[0]);
    rule.to = std::string(words[1]);
    for (size_t i = 2; i < words.size(); ++i) {
      if (absl::Status s = ParseField(number, words[i], &rule); !s.ok()) {
        return s;
      }
    }
    rules.push_back(std::move(rule));
  }
  return rules;
}

LinkParams Resolve(const std::vector<LinkRule>& rules, std::string_view from,
                   std::string_view to) {
  LinkParams p;
  for (const LinkRule& r : rules) {
    if ((r.from != "*" && r.from != from) || (r.to != "*" && r.to != to)) {
      continue;
    }
    if (r.delay_us) p.delay_us = *r.delay_us;
    if (r.jitter_us) p.jitter_us = *r.jitter_us;
    if (r.loss) p.loss = *r.loss;
    if (r.rate_bps) p.rate_bps = *r.rate_bps;
    if (r.cut) p.cut = *r.cut;
  }
  return p;
}

std::optional<int64_t> Link::Admit(const LinkParams& params, int64_t now_us,
                                   size_t bytes, std::mt19937_64& rng,
                                   Fate* why) {
  const auto drop = [&](Fate fate,
                        uint64_t* counter) -> std::optional<int64_t> {
    ++*counter;
    if (why != nullptr) *why = fate;
    return std::nullopt;
  };
  if (params.cut) return drop(Fate::kCut, &cut_);
  if (params.loss > 0 &&
      std::uniform_real_distribution<double>(0, 1)(rng) < params.loss) {
    return drop(Fate::kLost, &lost_);
  }
  int64_t sent_us = now_us;
  if (params.rate_bps > 0) {
    const int64_t start_us = std::max(now_us, free_at_us_);
    const int64_t queued_bytes =
        (start_us - now_us) * params.rate_bps / 8 / 1'000'000;
    if (queued_bytes + static_cast<int64_t>(bytes) > kLinkQueueBytes) {
      return drop(Fate::kQueueFull, &queue_full_);
    }
    const int64_t serialize_us =
        static_cast<int64_t>(bytes) * 8 * 1'000'000 / params.rate_bps;
    free_at_us_ = start_us + serialize_us;
    sent_us = free_at_us_;
  }
  int64_t delay_us = params.delay_us;
  if (params.jitter_us > 0) {
    delay_us += std::uniform_int_distribution<int64_t>(-params.jitter_us,
                                                       params.jitter_us)(rng);
  }
  const int64_t at_us =
      std::max(sent_us + std::max<int64_t>(delay_us, 0), last_delivery_us_);
  last_delivery_us_ = at_us;
  ++delivered_;
  if (why != nullptr) *why = Fate::kDelivered;
  return at_us;
}

}  // namespace rnode::netrelay
