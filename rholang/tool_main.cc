// The `rholang` tool: `check FILE...` parses and normalizes, printing
// FILE:LINE:COL errors; `fmt FILE` prints the normalized program; `hash
// FILE...` prints each normalized program's hash.
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "rholang/diagnostic.h"
#include "rholang/limits.h"
#include "rholang/normalizer.h"
#include "rholang/printer.h"
#include "util/bytes.h"

namespace {

using rnode::rholang::Diagnostic;

// Reads at most kMaxSourceBytes + 1 bytes, so an oversized file is reported
// by the lexer's size check without being loaded whole.
bool ReadSource(const std::string& path, std::string* out, Diagnostic* err) {
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
    std::printf("%s  %s\n", rnode::HexEncode(par->hash).c_str(),
                file.c_str());
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Rholang front end: check and format Rholang programs"};
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
  CLI11_PARSE(app, argc, argv);
  if (hash->parsed()) return HashFiles(hash_files);
  if (check->parsed()) return Check(check_files);
  if (fmt->parsed()) return Format(fmt_file);
  return 2;
}
