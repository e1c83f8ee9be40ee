// libFuzzer target over the Rholang front end: any input must give a
// positioned error or an IR; accepted programs must print to source that
// normalizes again and must survive the canonical encoding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "rholang/frontend/diagnostic.h"
#include "rholang/frontend/ir_encoding.h"
#include "rholang/frontend/normalizer.h"
#include "rholang/frontend/printer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view source(reinterpret_cast<const char*>(data), size);
  auto par = rnode::rholang::Compile(source);
  if (!par.ok()) {
    auto d = rnode::rholang::DiagnosticFromStatus(par.status());
    if (!d || d->message.empty()) std::abort();
    return 0;
  }
  auto bytes = rnode::rholang::ir::EncodePar(**par);
  if (!bytes.ok()) std::abort();
  auto decoded = rnode::rholang::ir::DecodePar(*bytes);
  if (!decoded.ok() || (*decoded)->hash != (*par)->hash) std::abort();
  auto printed = rnode::rholang::Print(**par);
  if (!printed.ok()) std::abort();
  auto again = rnode::rholang::Compile(*printed);
  if (!again.ok()) std::abort();
  return 0;
}
