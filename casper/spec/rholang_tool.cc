// The `rholang` tool: `check FILE...` parses and normalizes, printing
// FILE:LINE:COL errors; `fmt FILE` prints the normalized program; `hash
// FILE...` prints each normalized program's hash; `run FILE` evaluates a
// program on a fresh in-memory space, printing its output and its cost;
// `spec FILE...` runs RhoSpec-style test files (docs/spec-runner.md).
#include <cstdint>
#include <cstdio>
#include <exception>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "casper/spec/spec_runner.h"
#include "crypto/hash.h"
#include "crypto/secp256k1.h"
#include "rholang/frontend/diagnostic.h"
#include "rholang/frontend/limits.h"
#include "rholang/frontend/normalizer.h"
#include "rholang/frontend/printer.h"
#include "rholang/interpreter/reducer.h"
#include "rholang/interpreter/system_processes.h"
#include "rholang/interpreter/term_codec.h"
#include "rspace/deploy_scope.h"
#include "rspace/event_log.h"
#include "rspace/space.h"
#include "rspace/storage/kv_store.h"
#include "util/bytes.h"

namespace {

using rnode::rholang::Diagnostic;

// Reads at most kMaxSourceBytes + 1 bytes, so an oversized file is reported
// by the lexer's size check without being loaded whole.
bool ReadSource(const std::string& path, std::string* out, Diagnostic* err) {
  if (path == "-") {
    out->resize(rnode::rholang::kMaxSourceBytes + 1);
    std::cin.read(out->data(), static_cast<std::streamsize>(out->size()));
    out->resize(static_cast<size_t>(std::cin.gcount()));
    if (std::cin.bad()) {
      err->message = "cannot read standard input";
      return false;
    }
    return true;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    err->message = "cannot open file";
    return false;
  }
  out->resize(rnode::rholang::kMaxSourceBytes + 1);
  in.read(out->data(), static_cast<std::streamsize>(out->size()));
  out->resize(static_cast<size_t>(in.gcount()));
  if (in.bad()) {
    err->message = "cannot read file";
    return false;
  }
  return true;
}

// Reads and compiles `file`; on failure prints `FILE:LINE:COL: error: ...`
// to stderr and returns null.
rnode::rholang::ir::ParPtr CompileFile(const std::string& file) {
  std::string source;
  Diagnostic err;
  if (!ReadSource(file, &source, &err)) {
    std::fprintf(stderr, "%s\n",
                 rnode::rholang::FormatDiagnostic(file, err).c_str());
    return nullptr;
  }
  auto par = rnode::rholang::Compile(source);
  if (!par.ok()) {
    Diagnostic d = *rnode::rholang::DiagnosticFromStatus(par.status());
    std::fprintf(stderr, "%s\n",
                 rnode::rholang::FormatDiagnostic(file, d).c_str());
    return nullptr;
  }
  return *std::move(par);
}

int Check(const std::vector<std::string>& files) {
  int status = 0;
  for (const std::string& file : files) {
    if (CompileFile(file) == nullptr) status = 1;
  }
  return status;
}

int Format(const std::string& file) {
  rnode::rholang::ir::ParPtr par = CompileFile(file);
  if (par == nullptr) return 1;
  auto text = rnode::rholang::Print(*par);
  if (!text.ok()) {
    std::fprintf(stderr, "%s: error: %s\n", file.c_str(),
                 std::string(text.status().message()).c_str());
    return 1;
  }
  std::printf("%s\n", text->c_str());
  return 0;
}

int HashFiles(const std::vector<std::string>& files) {
  int status = 0;
  for (const std::string& file : files) {
    rnode::rholang::ir::ParPtr par = CompileFile(file);
    if (par == nullptr) {
      status = 1;
      continue;
    }
    std::printf("%s  %s\n", rnode::HexEncode(par->hash).c_str(), file.c_str());
  }
  return status;
}

namespace interp = rnode::rholang::interp;

// Prints program output as it comes (the reducer's sequential phase calls
// it in a deterministic order).
class PrintingSink final : public interp::OutputSink {
 public:
  void Stdout(std::string_view line) override {
    std::fwrite(line.data(), 1, line.size(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
  }
  void Stderr(std::string_view line) override {
    std::fwrite(line.data(), 1, line.size(), stderr);
    std::fputc('\n', stderr);
    std::fflush(stderr);
  }
};

// Columns of the history's store (as the rspace tests use).
constexpr size_t kStoreColumns = 3;

// The deploy `run` evaluates: the secp256k1 key 1 as deployer, and the
// compact signature of the source's Blake2b-256 as deploy id, so a program's
// names are reproducible run to run.
interp::DeployInfo ToolDeploy(const std::string& source) {
  rnode::crypto::Secp256k1PrivateKey key{};
  key[31] = 1;
  interp::DeployInfo d;
  d.timestamp = 0;
  auto pk = rnode::crypto::Secp256k1PublicKeyOf(key);
  d.deployer_public_key.assign(pk.begin(), pk.end());
  rnode::Hash32 digest = rnode::crypto::Blake2b256(rnode::AsBytes(source));
  auto sig = rnode::crypto::Secp256k1SignCompact(digest, key);
  if (sig.ok()) {
    d.deploy_id = *sig;
  } else {
    d.deploy_id.assign(digest.begin(), digest.end());
  }
  return d;
}

std::string Quiet(const rnode::rholang::ir::Par& p) {
  auto text = rnode::rholang::Print(p);
  return text.ok() ? *text : "<unprintable>";
}

// One line per datum (`chan!(data)`) and per waiting continuation (`for`),
// grouped by channel hash, data before continuations, each group in the
// space's candidate order.
void PrintState(interp::Runtime& rt,
                const rnode::rspace::StateChanges& changes) {
  using rnode::rholang::ir::ParBuilder;
  using rnode::rholang::ir::ReceiveBind;
  for (const auto& ch : changes.channels) {
    auto it = rt.TrackedChannels().find(ch.channel);
    for (const auto& d : ch.added_data) {
      std::shared_ptr<const interp::StoredValue> h;
      auto data = interp::DataOf(*d.value, h);
      if (!data.ok() || it == rt.TrackedChannels().end()) continue;
      auto send =
          rnode::rholang::ir::Send::Make(it->second, (*data)->pars, d.persist);
      std::printf("%s\n", Quiet(*ParBuilder().Add(send).Build()).c_str());
    }
    for (const auto& k : ch.added_continuations) {
      std::shared_ptr<const interp::StoredValue> kh;
      auto cont = interp::ContinuationOf(*k.continuation, kh);
      if (!cont.ok() || (*cont)->system) continue;
      std::vector<ReceiveBind> binds;
      uint32_t bind_count = 0;
      bool ok = true;
      for (size_t i = 0; i < k.channels.size() && ok; ++i) {
        std::shared_ptr<const interp::StoredValue> ph;
        auto chan = interp::ChannelOf(*k.channels[i]);
        auto pat = interp::PatternOf(*k.patterns[i], ph);
        if (!chan.ok() || !pat.ok()) {
          ok = false;
          break;
        }
        ReceiveBind b;
        b.patterns = (*pat)->patterns;
        b.source = *chan;
        b.remainder = (*pat)->remainder;
        b.free_count = (*pat)->free_count;
        bind_count += b.free_count;
        binds.push_back(std::move(b));
      }
      if (!ok) continue;
      auto recv = rnode::rholang::ir::Receive::Make(
          std::move(binds), (*cont)->body, k.persist, k.peek, bind_count);
      std::printf("%s\n", Quiet(*ParBuilder().Add(recv).Build()).c_str());
    }
  }
}

int Run(const std::string& file, int64_t phlo, int threads, bool state) {
  std::string source;
  Diagnostic err;
  if (!ReadSource(file, &source, &err)) {
    std::fprintf(stderr, "%s\n",
                 rnode::rholang::FormatDiagnostic(file, err).c_str());
    return 1;
  }
  rnode::rspace::InMemoryStore store(kStoreColumns);
  rnode::rspace::SpaceOptions so;
  so.term_factory = interp::StoredTermFactory();
  auto space = rnode::rspace::Space::Open(&store, so);
  if (!space.ok()) {
    std::fprintf(stderr, "%s: error: %s\n", file.c_str(),
                 std::string(space.status().message()).c_str());
    return 1;
  }
  PrintingSink sink;
  interp::RuntimeOptions ro;
  ro.threads = threads;
  ro.output = &sink;
  ro.track_channels = state;
  auto rt = interp::Runtime::Create(space->get(), ro);
  if (!rt.ok()) {
    std::fprintf(stderr, "%s: error: %s\n", file.c_str(),
                 std::string(rt.status().message()).c_str());
    return 1;
  }
  rnode::rspace::EventLog log;
  rnode::rspace::DeployScope scope(*space->get());
  const rnode::rspace::DeployScope::Mark start = scope.mark();
  interp::EvalResult r = (*rt)->EvaluateSource(
      source, ToolDeploy(source), phlo, &log,
      /*block=*/nullptr, /*check_replay_done=*/true, &scope);
  if (r.static_error) {
    Diagnostic d = *rnode::rholang::DiagnosticFromStatus(r.error);
    std::fprintf(stderr, "%s\n",
                 rnode::rholang::FormatDiagnostic(file, d).c_str());
    return 1;
  }
  if (r.failed()) {
    std::fprintf(stderr, "%s: error: %s\n", file.c_str(),
                 std::string(r.error.message()).c_str());
  } else if (state) {
    absl::StatusOr<rnode::rspace::StateChanges> changes =
        scope.ChangesSince(start);
    if (!changes.ok()) {
      std::fprintf(stderr, "%s: error: %s\n", file.c_str(),
                   std::string(changes.status().message()).c_str());
      return 1;
    }
    PrintState(**rt, *changes);
  }
  std::printf("cost: %lld\n", static_cast<long long>(r.cost));
  return r.failed() ? 1 : 0;
}

// Runs each spec file on its own fresh state; prints `ok NAME` or
// `FAIL NAME: reason` per case and a line per file that did not pass as a
// whole. 0 only when every file passed.
int Spec(const std::vector<std::string>& files,
         const std::string& framework_file, const std::string& deployer_key,
         int64_t phlo, int threads, bool verbose) {
  namespace spec = rnode::casper::spec;
  spec::SpecOptions options;
  options.phlo_limit = phlo;
  options.threads = threads;
  options.deployer_key = deployer_key;
  std::string framework;
  if (!framework_file.empty()) {
    Diagnostic err;
    if (!ReadSource(framework_file, &framework, &err)) {
      std::fprintf(
          stderr, "%s\n",
          rnode::rholang::FormatDiagnostic(framework_file, err).c_str());
      return 2;
    }
    options.framework = framework;
  }
  int status = 0;
  for (const std::string& file : files) {
    std::string source;
    Diagnostic err;
    if (!ReadSource(file, &source, &err)) {
      std::fprintf(stderr, "%s\n",
                   rnode::rholang::FormatDiagnostic(file, err).c_str());
      status = 1;
      continue;
    }
    absl::StatusOr<spec::SpecReport> report = spec::RunSpec(source, options);
    if (!report.ok()) {
      std::fprintf(stderr, "%s: error: %s\n", file.c_str(),
                   std::string(report.status().message()).c_str());
      return 2;  // the framework itself is broken: every file would fail
    }
    std::printf("# %s\n", file.c_str());
    if (verbose) {
      for (const std::string& line : report->output) {
        std::printf("  | %s\n", line.c_str());
      }
    }
    for (const spec::SpecCase& c : report->cases) {
      if (c.passed) {
        std::printf("ok %s\n", c.name.c_str());
      } else {
        std::printf("FAIL %s: %s\n", c.name.c_str(), c.reason.c_str());
      }
    }
    if (!report->error.empty()) {
      std::printf("FAIL %s: the deploy failed: %s\n", file.c_str(),
                  report->error.c_str());
    } else if (!report->completed) {
      std::printf("FAIL %s: the suite did not complete\n", file.c_str());
    } else if (report->cases.empty()) {
      std::printf("FAIL %s: no assertion was made\n", file.c_str());
    }
    if (!report->passed()) status = 1;
  }
  return status;
}

// The tool's commands; main adds only the last-resort catch.
int Main(int argc, char** argv) {
  CLI::App app{
      "Rholang tool: check, format, hash, run and spec-test Rholang programs"};
  app.require_subcommand(1);
  std::vector<std::string> check_files;
  CLI::App* check = app.add_subcommand(
      "check", "parse and normalize; print FILE:LINE:COL errors");
  check->add_option("files", check_files, "Rholang source files")->required();
  std::string fmt_file;
  CLI::App* fmt =
      app.add_subcommand("fmt", "print the normalized program as source");
  fmt->add_option("file", fmt_file, "Rholang source file")->required();
  std::vector<std::string> hash_files;
  CLI::App* hash = app.add_subcommand(
      "hash", "print the Blake2b-256 hash of each normalized program");
  hash->add_option("files", hash_files, "Rholang source files")->required();
  std::string run_file;
  int64_t run_phlo = interp::kDefaultToolPhloLimit;
  int run_threads = 1;
  bool run_state = false;
  CLI::App* run = app.add_subcommand(
      "run",
      "evaluate a program on a fresh in-memory space; print its "
      "output and `cost: N`");
  run->add_option("file", run_file, "Rholang source file, or - for stdin")
      ->required();
  run->add_option("--phlo", run_phlo, "phlo limit (< 0: unlimited)");
  run->add_option("--threads", run_threads, "worker threads (>= 1)")
      ->check(CLI::PositiveNumber);
  run->add_flag("--state", run_state,
                "print the data and continuations left in the space");
  std::vector<std::string> spec_files;
  std::string spec_framework;
  int64_t spec_phlo = rnode::casper::spec::SpecOptions{}.phlo_limit;
  int spec_threads = 1;
  bool spec_verbose = false;
  std::string spec_deployer(rnode::casper::spec::kDefaultSpecDeployerKey);
  CLI::App* spec_cmd = app.add_subcommand(
      "spec",
      "run RhoSpec-style test files, each on a fresh state with the system "
      "contracts; print `ok NAME` or `FAIL NAME: reason` per case");
  spec_cmd->add_option("files", spec_files, "Rholang spec files")->required();
  spec_cmd->add_option("--framework", spec_framework,
                       "register this framework instead of ours (such as "
                       "the public RhoSpecContract.rho)");
  spec_cmd->add_option("--phlo", spec_phlo, "phlo limit of each deploy");
  spec_cmd->add_option("--threads", spec_threads, "worker threads (>= 1)")
      ->check(CLI::PositiveNumber);
  spec_cmd->add_option("--deployer-key", spec_deployer,
                       "hex private key of the spec deploys' deployer "
                       "(default: the public test key)");
  spec_cmd->add_flag("--verbose", spec_verbose,
                     "also print every output line of each file");
  CLI11_PARSE(app, argc, argv);
  if (spec_cmd->parsed()) {
    return Spec(spec_files, spec_framework, spec_deployer, spec_phlo,
                spec_threads, spec_verbose);
  }
  if (run->parsed()) return Run(run_file, run_phlo, run_threads, run_state);
  if (hash->parsed()) return HashFiles(hash_files);
  if (check->parsed()) return Check(check_files);
  if (fmt->parsed()) return Format(fmt_file);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rholang: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "rholang: an unknown exception\n");
  }
  return 2;
}
