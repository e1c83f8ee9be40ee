// rnode-loadgen: drives a running local shard with signed deploys at exactly
// paced rates (open loop), follows their inclusion and finalization, and
// reports per phase (issue #19).
//
// Exit status: 0 when every acknowledged deploy finalized and none failed
// (failures of a ramp's last step, or any with --allow-failures, are
// reported and tolerated), 1 otherwise (the reasons are printed), 2 on a
// usage or connection error.
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "crypto/rev_address.h"
#include "integration/loadgen/events_client.h"
#include "integration/loadgen/keys.h"
#include "integration/loadgen/metrics_scrape.h"
#include "integration/loadgen/phases.h"
#include "integration/loadgen/report.h"
#include "integration/loadgen/run_clock.h"
#include "integration/loadgen/runner.h"
#include "integration/loadgen/sender.h"
#include "integration/loadgen/tracker.h"
#include "integration/loadgen/workload.h"
#include "util/status_macros.h"

namespace rnode::loadgen {
namespace {

constexpr int kExitPassed = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

// The nodes' HTTP ports are followed on this host (a local shard).
constexpr char kLocalHost[] = "127.0.0.1";

// Default top of --ramp: past what a local shard of a few validators
// sustains, so the ramp normally stops on its latency limit first.
constexpr double kDefaultRampMaxRate = 3200;
// How long to wait for a first block event before falling back on the
// nodes' last finalized block number. The node replays its recent events
// to a new subscriber, so one normally comes at once.
constexpr auto kFirstBlockWait = std::chrono::seconds(3);

constexpr double kDefaultDrainSeconds = 60;
// Acknowledged deploys not finalized that the verdict names.
constexpr size_t kPendingListed = 8;
// Longest drain: an hour is past any finalization delay worth waiting for.
constexpr double kMaxDrainSeconds = 3600;

std::atomic<bool> g_interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free,
              "the SIGINT handler stores to it");

void OnInterrupt(int) { g_interrupted.store(true); }

// First Ctrl-C stops the run and still writes the report; a second one
// kills the process (SA_RESETHAND).
void InstallInterruptHandler() {
  struct sigaction action = {};
  action.sa_handler = OnInterrupt;
  action.sa_flags = SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

struct Options {
  std::vector<std::string> grpc;
  std::string http;
  std::vector<std::string> metrics_ports;
  // Parsed from the two above.
  HttpEndpoint followed;
  std::vector<HttpEndpoint> metrics;
  std::string keys_file;
  std::string phases_spec;
  bool public_test = false;
  bool quick = false;
  bool ramp = false;
  bool smoke = false;
  double max_rate = kDefaultRampMaxRate;
  std::string out_dir;
  double drain_seconds = kDefaultDrainSeconds;
  std::string shard_id = "root";
  int64_t phlo_limit = 100000;
  int64_t phlo_price = 1;
  size_t senders = kDefaultSenderThreads;
  bool allow_failures = false;
  std::string workload = "noop";
  int64_t transfer_amount = 1;
  bool read_answers = false;
};

// The phases chosen on the command line, and how the report names them.
struct PhasePlan {
  std::vector<Phase> phases;
  std::string label;
  bool ramp = false;
};

absl::StatusOr<PhasePlan> PlanPhases(const Options& o) {
  PhasePlan plan;
  if (o.smoke) {
    plan.phases = SmokePhases();
    plan.label = "smoke";
  } else if (o.public_test) {
    plan.phases = PublicPhases(o.quick);
    plan.label = o.quick ? "public (quick)" : "public";
  } else if (o.ramp) {
    absl::StatusOr<std::vector<Phase>> ramp = RampPhases(o.max_rate);
    if (!ramp.ok()) return ramp.status();
    plan.phases = *std::move(ramp);
    plan.label = absl::StrCat("ramp to ", o.max_rate, "/s");
    plan.ramp = true;
  } else {
    absl::StatusOr<std::vector<Phase>> parsed = ParsePhases(o.phases_spec);
    if (!parsed.ok()) return parsed.status();
    plan.phases = *std::move(parsed);
    plan.label = o.phases_spec;
  }
  if (TotalDeploys(plan.phases) > static_cast<int64_t>(kMaxTrackedDeploys)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the phases send ", TotalDeploys(plan.phases),
                     " deploys; one run tracks at most ", kMaxTrackedDeploys));
  }
  return plan;
}

absl::Status WriteFile(const std::filesystem::path& path,
                       const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) {
    return absl::UnavailableError(absl::StrCat("cannot write ", path.string()));
  }
  return absl::OkStatus();
}

absl::Status WriteReports(const std::string& dir, const std::string& markdown,
                          const std::string& json_text,
                          const std::string& csv) {
  const std::filesystem::path root(dir);
  absl::Status s = WriteFile(root / "report.md", markdown);
  if (s.ok()) s = WriteFile(root / "report.json", json_text);
  if (s.ok()) s = WriteFile(root / "series.csv", csv);
  return s;
}

// Parses the command line into `o`; returns an exit code to stop with, or
// nullopt to run.
std::optional<int> ParseCommandLine(int argc, char** argv, Options& o) {
  CLI::App app{
      "Drives a running local shard with signed deploys at paced rates and "
      "reports inclusion and finalization per phase."};
  app.add_option("--grpc", o.grpc,
                 "HOST:PORT of a validator's external gRPC API (repeatable; "
                 "deploys go round-robin)")
      ->required();
  app.add_option("--http", o.http,
                 "HTTP API (HOST:PORT, or PORT on 127.0.0.1) of the node "
                 "whose /ws/events and /metrics are followed (default: the "
                 "first --metrics-ports)");
  app.add_option("--metrics-ports", o.metrics_ports,
                 "each validator's HTTP API (HOST:PORT, or PORT on "
                 "127.0.0.1), scraped before and after each phase")
      ->delimiter(',');
  app.add_option("--keys-file", o.keys_file,
                 "JSON {\"keys\":[{\"private\":HEX},...]}, e.g. "
                 "<shard>/genesis/keys.json; deploys are signed round-robin")
      ->required();
  CLI::Option* spec =
      app.add_option("--phases", o.phases_spec,
                     "comma-separated RATE/s:DURATION or burst:COUNT, e.g. "
                     "1/s:30s,5/s:20s,burst:32");
  CLI::Option* pub =
      app.add_flag("--public", o.public_test, "the public node's load test");
  app.add_flag("--quick", o.quick, "with --public: sustained phase of 30 s")
      ->needs(pub);
  CLI::Option* ramp = app.add_flag(
      "--ramp", o.ramp,
      "25, 50, 100, ... /s for 30 s each up to --max-rate; stops after a "
      "step with failed deploys or a median finalization over 5 s");
  app.add_option("--max-rate", o.max_rate, "top rate of --ramp")
      ->needs(ramp)
      ->capture_default_str();
  CLI::Option* smoke = app.add_flag(
      "--smoke", o.smoke,
      "5/s for 20 s then 20/s for 20 s, drain 60 s; passes with no failed "
      "and every deploy finalized");
  spec->excludes(pub)->excludes(ramp)->excludes(smoke);
  pub->excludes(ramp)->excludes(smoke);
  ramp->excludes(smoke);
  app.add_option("--out", o.out_dir,
                 "directory for report.md, report.json and series.csv");
  app.add_option("--drain-seconds", o.drain_seconds,
                 "after the last phase, wait up to this long for every "
                 "acknowledged deploy to finalize")
      ->check(CLI::Range(0.0, kMaxDrainSeconds))
      ->capture_default_str();
  app.add_flag("--allow-failures", o.allow_failures,
               "refused or failed deploys do not fail the run (a fault "
               "campaign's nodes refuse on purpose); every acknowledged "
               "deploy must still finalize");
  app.add_option("--workload", o.workload,
                 "noop (@N!(N), never conflicting), counter (one shared "
                 "counter), transfer (REV among the keys' wallets), registry "
                 "(insert and look up) or mix")
      ->check(CLI::IsMember({"noop", "counter", "transfer", "registry", "mix"}))
      ->capture_default_str();
  app.add_flag("--read-answers", o.read_answers,
               "each deploy receives what it sends and nobody else reads "
               "(noop's value, transfer's and lookup's answers), so the run "
               "leaves no channel per deploy in the state (disk soaks)");
  app.add_option("--transfer-amount", o.transfer_amount,
                 "REV (dust) each transfer moves")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--shard-id", o.shard_id)->capture_default_str();
  app.add_option("--phlo-limit", o.phlo_limit)
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--phlo-price", o.phlo_price)
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--senders", o.senders,
                 "sender threads, each with one doDeploy call in flight")
      ->check(CLI::Range(size_t{1}, kMaxSenderThreads))
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kExitPassed : kExitUsage;
  }
  const int modes = (o.phases_spec.empty() ? 0 : 1) + (o.public_test ? 1 : 0) +
                    (o.ramp ? 1 : 0) + (o.smoke ? 1 : 0);
  if (modes != 1) {
    std::fprintf(stderr,
                 "error: give one of --phases, --public, --ramp, --smoke\n");
    return kExitUsage;
  }
  if (o.smoke) o.drain_seconds = kDefaultDrainSeconds;
  // A HOST:PORT (or PORT) option's value; false after saying why.
  const auto parse = [](const char* flag, const std::string& text,
                        HttpEndpoint* out) {
    absl::StatusOr<HttpEndpoint> e = ParseHttpEndpoint(text, kLocalHost);
    if (!e.ok()) {
      std::fprintf(stderr, "error: %s: %s\n", flag,
                   std::string(e.status().message()).c_str());
      return false;
    }
    *out = *std::move(e);
    return true;
  };
  for (const std::string& text : o.metrics_ports) {
    if (!parse("--metrics-ports", text, &o.metrics.emplace_back())) {
      return kExitUsage;
    }
  }
  if (o.http.empty() && o.metrics.empty()) {
    std::fprintf(stderr, "error: give --http or --metrics-ports\n");
    return kExitUsage;
  }
  if (o.http.empty()) {
    o.followed = o.metrics.front();
  } else if (!parse("--http", o.http, &o.followed)) {
    return kExitUsage;
  }
  return std::nullopt;
}

void PrintError(const absl::Status& status) {
  std::fprintf(stderr, "error: %s\n", std::string(status.message()).c_str());
}

// Follows the node's events into the tracker.
absl::StatusOr<std::unique_ptr<EventsClient>> StartEvents(
    const Options& o, DeployTracker& tracker, const RunClock& clock) {
  EventCallbacks callbacks;
  callbacks.on_added = [&tracker](const BlockPayload& block, double t) {
    for (const EventDeploy& d : block.deploys) {
      tracker.Included(d.id, t, d.errored);
    }
  };
  callbacks.on_finalised = [&tracker](const BlockPayload& block, double t) {
    for (const EventDeploy& d : block.deploys) {
      // A copy a merge rejected is not the deploy's finalization: it goes
      // in a block again.
      if (!d.rejected) tracker.Finalized(d.id, t, d.errored);
    }
  };
  callbacks.on_rejected = [&tracker](const std::string& id, int64_t, double) {
    tracker.Rejected(id);
  };
  callbacks.on_reproposed = [&tracker](const std::string& id, int64_t, double) {
    tracker.Reproposed(id);
  };
  EventsClientOptions options;
  options.host = o.followed.host;
  options.port = static_cast<uint16_t>(o.followed.port);
  return EventsClient::Start(options, std::move(callbacks), clock);
}

absl::StatusOr<std::unique_ptr<DeploySender>> StartSender(
    const Options& o, std::vector<crypto::Secp256k1PrivateKey> keys,
    DeployTracker& tracker, const RunClock& clock, Console& console) {
  SenderOptions options;
  options.grpc_targets = o.grpc;
  ASSIGN_OR_RETURN(options.workload.kind, ParseWorkload(o.workload));
  options.workload.run_tag =
      absl::StrCat(std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count());
  options.workload.transfer_amount = o.transfer_amount;
  options.workload.read_answers = o.read_answers;
  for (const crypto::Secp256k1PrivateKey& k : keys) {
    options.workload.wallets.push_back(
        crypto::RevAddressFromPublicKey(crypto::Secp256k1PublicKeyOf(k)));
  }
  RETURN_IF_ERROR(CheckWorkload(options.workload));
  options.keys = std::move(keys);
  options.shard_id = o.shard_id;
  options.phlo_limit = o.phlo_limit;
  options.phlo_price = o.phlo_price;
  options.threads = o.senders;
  absl::StatusOr<std::unique_ptr<DeploySender>> sender =
      DeploySender::Start(std::move(options), &tracker, clock);
  if (!sender.ok()) return sender;
  for (const TargetStatus& t : (*sender)->targets()) {
    if (!t.ready) {
      console.Note(absl::StrCat("warning: ", t.target, " is not ready"));
    }
    if (t.shard_id != o.shard_id) {
      console.Note(absl::StrCat("warning: ", t.target, " is in shard \"",
                                t.shard_id, "\", deploys name \"", o.shard_id,
                                "\""));
    }
  }
  return sender;
}

// validAfterBlockNumber for the first deploys: from the latest block event,
// waiting up to kFirstBlockWait for one, else from the nodes' highest last
// finalized block.
int64_t InitialValidAfter(const DeploySender& sender,
                          const EventsClient& events, Console& console) {
  const auto deadline = RunClock::Clock::now() + kFirstBlockWait;
  while (events.Counts().latest_block_number < 0 &&
         RunClock::Clock::now() < deadline) {
    std::this_thread::sleep_for(kBlockNumberRefresh);
  }
  if (const int64_t latest = events.Counts().latest_block_number; latest >= 0) {
    return ValidAfter(latest);
  }
  int64_t lfb = -1;
  for (const TargetStatus& t : sender.targets()) {
    lfb = std::max(lfb, t.last_finalized_block_number);
  }
  console.Note(absl::StrCat(
      "warning: no block event yet; validAfterBlockNumber starts from the "
      "last finalized block, ",
      lfb));
  return ValidAfter(lfb);
}

RunInfo MakeRunInfo(const Options& o, const PhasePlan& plan,
                    const ScrapeTargets& scrapes, size_t key_count,
                    const RunOutcome& outcome, const Verdict& verdict,
                    double run_seconds) {
  RunInfo info;
  info.phases = plan.label;
  info.grpc_targets = o.grpc;
  info.http = o.followed.Name();
  info.metrics = scrapes.names;
  info.shard_id = o.shard_id;
  info.phlo_limit = o.phlo_limit;
  info.phlo_price = o.phlo_price;
  info.keys = key_count;
  info.sender_threads = o.senders;
  info.drain_seconds = o.drain_seconds;
  info.run_seconds = run_seconds;
  info.passed = verdict.passed;
  info.verdict = verdict.text;
  info.failure_reasons = outcome.failure_reasons;
  info.local_failures = outcome.local_failures;
  info.resigned = outcome.resigned;
  info.finalized_unseen = outcome.totals.finalized_unseen;
  info.expired = outcome.expired;
  info.event_stream = outcome.event_stream.ok()
                          ? "open until the end"
                          : std::string(outcome.event_stream.message());
  return info;
}

// Prints the Markdown report and the verdict, and writes the files of
// --out. Returns the exit code.
int Report(const Options& o, const std::vector<PhaseRow>& rows,
           const RunInfo& info, const DeployTracker& tracker) {
  std::string markdown = RenderMarkdown(rows);
  if (info.ramp_ceiling.has_value()) {
    absl::StrAppend(&markdown, "\nramp ceiling: ", *info.ramp_ceiling,
                    " deploys/s (the highest step with no failed deploy, all "
                    "finalized, finalization p50 <= ",
                    kRampFinalizationLimitSeconds, " s)\n");
  }
  std::printf("%s\n%s\n", markdown.c_str(), info.verdict.c_str());
  if (!o.out_dir.empty()) {
    // Replace, not throw, should a node's refusal text be invalid UTF-8.
    const std::string json_text =
        RenderJson(rows, info)
            .dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    absl::Status written = WriteReports(
        o.out_dir, markdown + "\n" + info.verdict + "\n", json_text + "\n",
        TimeSeriesCsv(tracker.Series(info.run_seconds)));
    if (!written.ok()) {
      PrintError(written);
      return kExitUsage;
    }
  }
  return info.passed ? kExitPassed : kExitFailed;
}

int Run(const Options& o) {
  absl::StatusOr<PhasePlan> plan = PlanPhases(o);
  if (!plan.ok()) {
    PrintError(plan.status());
    return kExitUsage;
  }
  absl::StatusOr<std::vector<crypto::Secp256k1PrivateKey>> keys =
      LoadKeysFile(o.keys_file);
  if (!keys.ok()) {
    PrintError(keys.status());
    return kExitUsage;
  }
  const size_t key_count = keys->size();
  if (!o.out_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.out_dir, ec);
    if (ec) {
      PrintError(absl::InvalidArgumentError(
          absl::StrCat("--out ", o.out_dir, ": ", ec.message())));
      return kExitUsage;
    }
  }
  InstallInterruptHandler();
  Console console;
  const RunClock clock;
  DeployTracker tracker;
  absl::StatusOr<std::unique_ptr<EventsClient>> events =
      StartEvents(o, tracker, clock);
  if (!events.ok()) {
    PrintError(events.status());
    return kExitUsage;
  }
  absl::StatusOr<std::unique_ptr<DeploySender>> sender =
      StartSender(o, *std::move(keys), tracker, clock, console);
  if (!sender.ok()) {
    PrintError(sender.status());
    return kExitUsage;
  }
  std::atomic<int64_t> valid_after{
      InitialValidAfter(**sender, **events, console)};

  Monitor monitor(&console, &tracker, events->get(), &valid_after);
  monitor.Start();
  const ScrapeTargets scrapes = PlanScrapes(o.metrics, o.followed);
  RunContext ctx{clock,   tracker,     **sender, **events,     monitor,
                 console, valid_after, scrapes,  g_interrupted};
  const std::vector<PhaseMeasurement> measured =
      RunPhases(plan->phases, plan->ramp, ctx);
  int64_t expired = 0;
  if (!g_interrupted.load()) {
    const double drain_end = clock.Now() + o.drain_seconds;
    Drain(o.drain_seconds, ctx);
    expired = SettleByQuery(std::max(0.0, drain_end - clock.Now()), ctx);
  }
  monitor.Stop();
  console.EndProgress();
  (*sender)->Stop();

  RunOutcome outcome;
  outcome.totals = tracker.Totals();
  outcome.pending_sample = tracker.PendingDeploys(kPendingListed);
  outcome.failure_reasons = tracker.FailureReasons();
  outcome.local_failures = (*sender)->local_failures();
  outcome.first_local_failure = (*sender)->first_local_failure();
  outcome.resigned = (*sender)->resigned();
  outcome.expired = expired;
  outcome.event_stream = (*events)->status();
  outcome.interrupted = g_interrupted.load();
  outcome.drain_seconds = o.drain_seconds;
  (*events)->Stop();

  std::vector<PhaseRow> rows;
  for (size_t i = 0; i < measured.size(); ++i) {
    const PhaseMeasurement& m = measured[i];
    rows.push_back(
        BuildRow(m, tracker.Summarize(static_cast<int>(i), m.wall_seconds)));
  }
  // A ramp stops at the first step with failed deploys, so only its last
  // step can have them.
  if (o.allow_failures) {
    outcome.tolerated_failures = outcome.totals.failed;
  } else if (plan->ramp && !rows.empty()) {
    outcome.tolerated_failures = rows.back().failed;
  }
  const Verdict verdict = Judge(outcome);
  RunInfo info =
      MakeRunInfo(o, *plan, scrapes, key_count, outcome, verdict, clock.Now());
  if (plan->ramp) {
    info.ramp_ceiling = RampCeiling(rows, kRampFinalizationLimitSeconds);
  }
  return Report(o, rows, info, tracker);
}

}  // namespace
}  // namespace rnode::loadgen

int main(int argc, char** argv) {
  rnode::loadgen::Options options;
  if (std::optional<int> code =
          rnode::loadgen::ParseCommandLine(argc, argv, options)) {
    return *code;
  }
  return rnode::loadgen::Run(options);
}
